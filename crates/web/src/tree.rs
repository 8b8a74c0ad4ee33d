//! The topic tree at a commit, from git alone: tiers, topics below them with how many
//! memories each holds (directly and below), and the files of one topic with their
//! titles. Read from the commit's tree rather than the index, so a past moment
//! (`?at=`) is shown exactly like the present.

use std::collections::BTreeMap;

use gitloom_model::{Memory, StorePath, Tier};
use gitloom_store::{ObjectId, Store};

use crate::error::WebError;

/// A tier or topic with its counts and subtopics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicNode {
    /// Its last segment (`replication`), or the tier (`facts`).
    pub name: String,
    /// Its full name below the store root (`facts/database/replication`).
    pub topic: String,
    /// Memories directly in it.
    pub direct: usize,
    /// Memories in it and every topic below it.
    pub total: usize,
    pub children: Vec<TopicNode>,
}

/// Every tier of a commit's tree, and what else the tree holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicTree {
    /// The four tiers, in their fixed order (empty ones included).
    pub tiers: Vec<TopicNode>,
    /// Memories in all tiers.
    pub memories: usize,
    /// Session transcripts (`sessions/`).
    pub sessions: usize,
    /// Vocabulary files (`vocab/`).
    pub vocab: usize,
}

impl TopicTree {
    /// The node of `topic` (`facts/work`), if the tree has it.
    pub fn find(&self, topic: &str) -> Option<&TopicNode> {
        let topic = topic.trim_matches('/');
        let mut parts = topic.split('/');
        let tier = parts.next()?;
        let mut node = self.tiers.iter().find(|t| t.name == tier)?;
        for part in parts {
            node = node.children.iter().find(|c| c.name == part)?;
        }
        Some(node)
    }
}

/// Builds the tree of `commit`. Paths git holds that are not store paths (a hand
/// commit can add anything) are not memories and are left out.
pub fn topic_tree(store: &Store, commit: ObjectId) -> Result<TopicTree, WebError> {
    let tree = store.tree_of(commit)?;
    // tier -> topic path -> direct count
    let mut direct: BTreeMap<Tier, BTreeMap<String, usize>> = BTreeMap::new();
    let (mut sessions, mut vocab, mut memories) = (0, 0, 0);
    for entry in store.walk(tree)? {
        let Ok(path) = StorePath::parse(&entry.path) else {
            continue;
        };
        match path.tier() {
            Some(tier) => {
                memories += 1;
                *direct
                    .entry(tier)
                    .or_default()
                    .entry(path.topic().to_owned())
                    .or_default() += 1;
            }
            None if entry.path.starts_with("sessions/") => sessions += 1,
            None => vocab += 1,
        }
    }
    let tiers = Tier::ALL
        .into_iter()
        .map(|tier| {
            let counts = direct.remove(&tier).unwrap_or_default();
            let mut node = TopicNode {
                name: tier.as_str().to_owned(),
                topic: tier.as_str().to_owned(),
                direct: 0,
                total: 0,
                children: Vec::new(),
            };
            for (topic, n) in counts {
                insert(&mut node, &topic, n);
            }
            node
        })
        .collect();
    Ok(TopicTree {
        tiers,
        memories,
        sessions,
        vocab,
    })
}

/// Adds `n` memories at `topic` (relative to `node`), creating the topics on the way
/// and adding to every total along it.
fn insert(node: &mut TopicNode, topic: &str, n: usize) {
    node.total += n;
    if topic.is_empty() {
        node.direct += n;
        return;
    }
    let (head, rest) = topic.split_once('/').unwrap_or((topic, ""));
    let pos = match node.children.iter().position(|c| c.name == head) {
        Some(i) => i,
        None => {
            node.children.push(TopicNode {
                name: head.to_owned(),
                topic: format!("{}/{head}", node.topic),
                direct: 0,
                total: 0,
                children: Vec::new(),
            });
            // Walk order is git order; keep children sorted by name for display.
            node.children.sort_by(|a, b| a.name.cmp(&b.name));
            node.children
                .iter()
                .position(|c| c.name == head)
                .unwrap_or_default()
        }
    };
    insert(&mut node.children[pos], rest, n);
}

/// A file of a topic with its title, or why it has none (a file that does not
/// parse is listed with its error, never dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicFile {
    pub path: String,
    pub title: Result<String, String>,
}

/// The memories directly in `topic` (`facts/work`) at `commit`, by path.
pub fn topic_files(
    store: &Store,
    commit: ObjectId,
    topic: &str,
) -> Result<Vec<TopicFile>, WebError> {
    let topic = topic.trim_matches('/');
    let (tier, below) = topic.split_once('/').unwrap_or((topic, ""));
    if Tier::from_dir(tier).is_none() {
        return Err(WebError::bad_request(
            "invalid_topic",
            format!("topic {topic:?} is not in a tier (facts, incidents, rules, skills)"),
        ));
    }
    let tree = store.tree_of(commit)?;
    let Some(sub) = subtree(store, tree, topic)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in store.walk(sub)? {
        // Only the files directly in the topic, not those of its subtopics.
        if entry.path.contains('/') {
            continue;
        }
        let full = format!("{topic}/{}", entry.path);
        let Ok(path) = StorePath::parse(&full) else {
            continue;
        };
        if !path.is_memory() || path.topic() != below {
            continue;
        }
        let bytes = store.read_blob(entry.blob)?;
        let title = Memory::parse(path.as_str(), &bytes)
            .map(|m| m.front.title)
            .map_err(|e| e.to_string());
        out.push(TopicFile {
            path: path.to_string(),
            title,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn subtree(store: &Store, tree: ObjectId, topic: &str) -> Result<Option<ObjectId>, WebError> {
    let mut at = tree;
    for part in topic.split('/') {
        match store.subtree(at, part)? {
            Some(t) => at = t,
            None => return Ok(None),
        }
    }
    Ok(Some(at))
}
