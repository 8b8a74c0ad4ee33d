//! `gitloom consolidate`: merge near-duplicate memories (improvement plan I8).
//!
//! Within one topic (same tier and topic path), two memories are duplicates when
//! they are very similar — cosine of their cue texts or of their bodies at or above
//! `vector_threshold` with an embedder, else token overlap (Jaccard) of title, cues
//! and body at or above `lexical_threshold` — **and** agree on their subject: a
//! shared entity, or real lexical overlap (`subject_overlap`). Duplicates are
//! clustered (transitively) and each cluster becomes one memory: the oldest member's
//! path and body, the union of cues, entities, tags, links and timelines, a
//! `## Timeline` section with one dated line per member, and `supersedes:` naming
//! every retired path (DESIGN §1: the superseding memory names what it replaces).
//! The retired files are removed from HEAD and stay in history. The whole pass is
//! one `consolidate:` commit made under the write lock, so one `git revert` undoes
//! it. Nothing that fails to parse is touched.

use std::collections::{BTreeMap, HashSet};

use gitloom_model::{Memory, StorePath, TimelineEntry, When, fold_name};
use gitloom_store::Batch;
use serde::Serialize;

use crate::engine::Engine;
use crate::error::Result;
use crate::sync::SyncReport;

/// How to consolidate.
#[derive(Debug, Clone)]
pub struct ConsolidateOptions {
    pub dry_run: bool,
    /// Cosine (cue texts or bodies) at or above which two memories may merge.
    pub vector_threshold: f32,
    /// Without an embedder: token Jaccard at or above which two memories may merge.
    pub lexical_threshold: f32,
    /// Subject agreement without a shared entity: token Jaccard at least this.
    pub subject_overlap: f32,
    /// Time of the merged memories' `updated:`; now if `None`.
    pub now: Option<jiff::Timestamp>,
}

impl Default for ConsolidateOptions {
    fn default() -> Self {
        ConsolidateOptions {
            dry_run: false,
            vector_threshold: 0.92,
            lexical_threshold: 0.6,
            subject_overlap: 0.3,
            now: None,
        }
    }
}

/// One cluster and what becomes of it.
#[derive(Debug, Clone, Serialize)]
pub struct MergePlan {
    /// The memory that stays (rewritten with the merged content).
    pub keep: String,
    /// The memories folded into it (deleted from HEAD; in history).
    pub retire: Vec<String>,
    /// The weakest link of the cluster: its lowest pairwise similarity used.
    pub similarity: f32,
    /// How subjects agreed: `entity: <name>` or `overlap`.
    pub agreement: String,
}

/// What `consolidate` did (or would do).
#[derive(Debug, Clone, Serialize)]
pub struct ConsolidateReport {
    pub dry_run: bool,
    /// `vectors (<model>)` or `lexical`.
    pub measure: String,
    pub memories: usize,
    pub merges: Vec<MergePlan>,
    pub commit: Option<String>,
    pub sync: Option<SyncReport>,
}

struct Item {
    path: StorePath,
    memory: Memory,
    tokens: HashSet<String>,
    entities: HashSet<String>,
}

fn tokens(m: &Memory) -> HashSet<String> {
    let mut text = m.front.title.clone();
    for c in &m.front.cues {
        text.push(' ');
        text.push_str(c);
    }
    text.push(' ');
    text.push_str(&m.body);
    gitloom_model::norms(&text)
        .into_iter()
        .filter(|w| w.chars().count() >= 3 && !gitloom_model::is_stopword(w))
        .collect()
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f32 / union as f32
    }
}

fn cue_text(m: &Memory) -> String {
    let mut t = m.front.title.clone();
    for c in &m.front.cues {
        t.push_str(". ");
        t.push_str(c);
    }
    t
}

/// Union-find over indices.
fn find(parent: &mut [usize], i: usize) -> usize {
    let mut r = i;
    while parent[r] != r {
        r = parent[r];
    }
    let mut j = i;
    while parent[j] != r {
        let next = parent[j];
        parent[j] = r;
        j = next;
    }
    r
}

fn when_key(m: &Memory) -> i64 {
    m.front
        .created
        .or(m.front.valid_from)
        .map_or(i64::MAX, |w| w.unix_seconds())
}

/// Folds `members` (oldest first) into one memory.
fn merge(members: &[&Item], now: jiff::Timestamp) -> Memory {
    let keep = members[0];
    let mut m = keep.memory.clone();
    let f = &mut m.front;
    let retired: Vec<&str> = members[1..].iter().map(|i| i.path.as_str()).collect();
    let mut seen_cues: HashSet<String> = f.cues.iter().map(|c| c.to_lowercase()).collect();
    let mut seen_ents: HashSet<String> = f.entities.iter().map(|e| fold_name(&e.name)).collect();
    let mut seen_tags: HashSet<String> = f.tags.iter().cloned().collect();
    let mut seen_rel: HashSet<String> = f.related.iter().map(|r| r.target.clone()).collect();
    for other in &members[1..] {
        let o = &other.memory.front;
        for c in &o.cues {
            if seen_cues.insert(c.to_lowercase()) {
                f.cues.push(c.clone());
            }
        }
        for e in &o.entities {
            if seen_ents.insert(fold_name(&e.name)) {
                f.entities.push(e.clone());
            }
        }
        for t in &o.tags {
            if seen_tags.insert(t.clone()) {
                f.tags.push(t.clone());
            }
        }
        for r in &o.related {
            // A link to a member of the cluster would now point at itself.
            if !retired.contains(&r.target.as_str())
                && r.target != keep.path.as_str()
                && seen_rel.insert(r.target.clone())
            {
                f.related.push(r.clone());
            }
        }
        f.timeline.extend(o.timeline.iter().cloned());
        f.confidence = match (f.confidence, o.confidence) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        f.created = match (f.created, o.created) {
            (Some(a), Some(b)) => Some(if a.unix_seconds() <= b.unix_seconds() {
                a
            } else {
                b
            }),
            (a, b) => a.or(b),
        };
        for s in &o.supersedes {
            if !f.supersedes.contains(s) && s != keep.path.as_str() {
                f.supersedes.push(s.clone());
            }
        }
    }
    for r in &retired {
        if !f.supersedes.iter().any(|s| s == r) {
            f.supersedes.push((*r).to_owned());
        }
    }
    // One dated line per member, so the merged memory keeps every version's claim.
    for i in members {
        if let Some(date) = i.memory.front.valid_from.or(i.memory.front.created) {
            let text = i.memory.front.title.clone();
            if !f.timeline.iter().any(|t| t.date == date && t.text == text) {
                f.timeline.push(TimelineEntry { date, text });
            }
        }
    }
    f.timeline.sort_by_key(|t| t.date.unix_seconds());
    f.updated = Some(When::Instant(now));
    let mut body = m.body.trim_end().to_owned();
    body.push_str("\n\n## Timeline\n");
    for i in members {
        let date = i
            .memory
            .front
            .valid_from
            .or(i.memory.front.created)
            .map_or_else(|| "undated".to_owned(), |w| w.to_string());
        let first = i
            .memory
            .body
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or_default();
        body.push_str(&format!(
            "- {date}: {} — {first} (was {})\n",
            i.memory.front.title, i.path
        ));
    }
    m.body = body;
    m
}

impl Engine {
    /// Plans (and unless `dry_run`, commits) the merges; see the module docs.
    pub fn consolidate(&self, opts: &ConsolidateOptions) -> Result<ConsolidateReport> {
        let lock = self.store.lock_writes()?;
        let now = opts.now.unwrap_or_else(jiff::Timestamp::now);
        let items = self.memories_at_head()?;
        let vectors = self.item_vectors(&items)?;
        let measure = match &self.semantic {
            Some(sem) => format!("vectors ({})", sem.model_id()),
            None => "lexical".to_owned(),
        };
        let edges = similar_pairs(&items, vectors.as_ref(), opts);
        let (merges, changes) = plan_merges(&items, &edges, now);
        let commit = if opts.dry_run || merges.is_empty() {
            None
        } else {
            self.commit_merges(&lock, &merges, changes, &measure, now)?
        };
        drop(lock);
        let sync = if commit.is_some() {
            Some(self.sync()?)
        } else {
            None
        };
        Ok(ConsolidateReport {
            dry_run: opts.dry_run,
            measure,
            memories: items.len(),
            merges,
            commit,
            sync,
        })
    }

    /// Every memory at HEAD that parses, with its tokens and entities. A file that
    /// does not parse is left alone (`doctor` reports it).
    fn memories_at_head(&self) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        let Some(head) = self.store.head()? else {
            return Ok(items);
        };
        let tree = self.store.tree_of(head)?;
        for e in self.store.walk(tree)? {
            let Ok(path) = StorePath::parse(&e.path) else {
                continue;
            };
            if !path.is_memory() {
                continue;
            }
            let bytes = self.store.read_blob(e.blob)?;
            let Ok(memory) = Memory::parse(path.as_str(), &bytes) else {
                continue;
            };
            items.push(Item {
                tokens: tokens(&memory),
                entities: memory
                    .front
                    .entities
                    .iter()
                    .map(|e| fold_name(&e.name))
                    .collect(),
                path,
                memory,
            });
        }
        Ok(items)
    }

    /// Each item's cue and body vectors, when the engine has an embedder.
    fn item_vectors(&self, items: &[Item]) -> Result<Option<Vectors>> {
        let Some(sem) = &self.semantic else {
            return Ok(None);
        };
        let cues: Vec<String> = items.iter().map(|i| cue_text(&i.memory)).collect();
        let bodies: Vec<String> = items
            .iter()
            .map(|i| format!("{}\n{}", i.memory.front.title, i.memory.body))
            .collect();
        let c = sem.embed_texts(&cues.iter().map(String::as_str).collect::<Vec<_>>())?;
        let b = sem.embed_texts(&bodies.iter().map(String::as_str).collect::<Vec<_>>())?;
        Ok(Some((c, b)))
    }

    /// Validates the merged files as any write is validated, then commits them with a
    /// message listing every merge, under the write lock taken for the whole run.
    fn commit_merges(
        &self,
        lock: &gitloom_store::WriteLock,
        merges: &[MergePlan],
        changes: Vec<Change>,
        measure: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<String>> {
        let retired: usize = merges.iter().map(|m| m.retire.len()).sum();
        let mut message = format!(
            "consolidate: merge {retired} near-duplicate(s) into {} memor{}\n\n",
            merges.len(),
            if merges.len() == 1 { "y" } else { "ies" }
        );
        for m in merges {
            message.push_str(&format!(
                "- {} <- {} ({} {:.3}, {})\n",
                m.keep,
                m.retire.join(", "),
                measure,
                m.similarity,
                m.agreement
            ));
        }
        let errors: Vec<_> = changes
            .iter()
            .filter_map(|(p, bytes)| {
                bytes
                    .as_ref()
                    .and_then(|b| crate::write::validate(p, b, now).err())
            })
            .collect();
        if !errors.is_empty() {
            return Err(crate::error::EngineError::Invalid(errors));
        }
        let batch = Batch {
            changes,
            message,
            time: None,
            allow_dirty_overwrite: false,
            base: None,
        };
        Ok(self
            .store
            .commit_locked(lock, &batch)?
            .map(|o| o.commit.to_string()))
    }
}

/// A file's new content (`None` deletes it).
type Change = (StorePath, Option<Vec<u8>>);

/// Cue and body vectors, one of each per item.
type Vectors = (Vec<Vec<f32>>, Vec<Vec<f32>>);

/// A pair of items that may merge: their indices, their similarity, and how their
/// subjects agree (`entity: <name>` or `overlap`).
type Edge = (usize, usize, f32, String);

/// Pairs within one tier and topic whose similarity (the better of cue and body
/// cosine, or token Jaccard without vectors) reaches the bar and whose subjects agree
/// (a shared entity, or enough shared tokens).
fn similar_pairs(
    items: &[Item],
    vectors: Option<&Vectors>,
    opts: &ConsolidateOptions,
) -> Vec<Edge> {
    // Topic → member indices.
    let mut topics: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        let tier = it
            .path
            .tier()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default();
        topics
            .entry((tier, it.path.topic().to_owned()))
            .or_default()
            .push(i);
    }
    let bar = if vectors.is_some() {
        opts.vector_threshold
    } else {
        opts.lexical_threshold
    };
    let mut edges = Vec::new();
    for members in topics.values() {
        for (x, &a) in members.iter().enumerate() {
            for &b in &members[x + 1..] {
                let (ia, ib) = (&items[a], &items[b]);
                let overlap = jaccard(&ia.tokens, &ib.tokens);
                let sim = match vectors {
                    Some((c, bd)) => gitloom_embed::cosine(&c[a], &c[b])
                        .max(gitloom_embed::cosine(&bd[a], &bd[b])),
                    None => overlap,
                };
                if sim < bar {
                    continue;
                }
                let shared = ia.entities.intersection(&ib.entities).min().cloned();
                let agreement = match shared {
                    Some(e) => format!("entity: {e}"),
                    None if overlap >= opts.subject_overlap => "overlap".to_owned(),
                    None => continue,
                };
                edges.push((a, b, sim, agreement));
            }
        }
    }
    edges
}

/// The clusters the pairs join (union-find), each merged into its oldest member:
/// the plans, sorted by the memory kept, and the file changes that make them.
fn plan_merges(
    items: &[Item],
    edges: &[Edge],
    now: jiff::Timestamp,
) -> (Vec<MergePlan>, Vec<Change>) {
    let mut parent: Vec<usize> = (0..items.len()).collect();
    for (a, b, _, _) in edges {
        let (ra, rb) = (find(&mut parent, *a), find(&mut parent, *b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    // The weakest link of each cluster, and how its subjects agreed.
    let mut weakest: BTreeMap<usize, (f32, String)> = BTreeMap::new();
    for (a, _, sim, agreement) in edges {
        let r = find(&mut parent, *a);
        let e = weakest
            .entry(r)
            .or_insert((f32::INFINITY, agreement.clone()));
        if *sim < e.0 {
            *e = (*sim, agreement.clone());
        }
    }
    let mut clusters: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..items.len() {
        let r = find(&mut parent, i);
        clusters.entry(r).or_default().push(i);
    }
    let mut merges = Vec::new();
    let mut changes = Vec::new();
    for (root, mut members) in clusters {
        if members.len() < 2 {
            continue;
        }
        members.sort_by(|&a, &b| {
            when_key(&items[a].memory)
                .cmp(&when_key(&items[b].memory))
                .then_with(|| items[a].path.cmp(&items[b].path))
        });
        let refs: Vec<&Item> = members.iter().map(|&i| &items[i]).collect();
        let merged = merge(&refs, now);
        let (sim, agreement) = weakest.get(&root).cloned().unwrap_or((0.0, String::new()));
        merges.push(MergePlan {
            keep: refs[0].path.to_string(),
            retire: refs[1..].iter().map(|i| i.path.to_string()).collect(),
            similarity: sim,
            agreement,
        });
        changes.push((refs[0].path.clone(), Some(merged.render().into_bytes())));
        for i in &refs[1..] {
            changes.push((i.path.clone(), None));
        }
    }
    merges.sort_by(|a, b| a.keep.cmp(&b.keep));
    (merges, changes)
}
