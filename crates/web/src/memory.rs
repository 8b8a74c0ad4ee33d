//! Everything the memory page shows about one file at a moment: the file and its
//! parse, the supersession chain both ways, links out and in, the transcripts it
//! was extracted from, and its history with the diff of each commit.

use std::collections::{BTreeSet, HashSet};

use gitloom_engine::Engine;
use gitloom_index::{LinkKind, LinkRow};
use gitloom_model::{Memory, StorePath};
use gitloom_store::{ObjectId, Store};

use crate::error::WebError;
use crate::history::{Version, read_text, versions};
use crate::links::{GraphCache, links_at};
use crate::moment::Moment;

/// Versions listed on a memory page.
pub const HISTORY_LIMIT: usize = 50;
/// How far a supersession chain is followed each way.
const CHAIN_DEPTH: usize = 16;
/// Transcripts shown for one memory.
const SOURCES_SHOWN: usize = 8;

/// A linked memory, with its title at the moment (if it exists then and parses).
#[derive(Debug, Clone)]
pub struct Linked {
    pub path: String,
    pub title: Option<String>,
}

/// A link with the title of the memory at its other end.
#[derive(Debug, Clone)]
pub struct LinkView {
    pub row: LinkRow,
    /// The other end: the target for a link out, the source for a link in.
    pub other: Option<Linked>,
}

/// One message of a transcript (`## m<i> <role>` sections).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub index: usize,
    pub role: String,
    pub text: String,
    /// The memory names this message as its source.
    pub cited: bool,
}

/// A source the memory names: a session transcript and the messages it cites, or a
/// free-text source.
#[derive(Debug, Clone)]
pub struct Source {
    /// As written in `source:` / `sources:`.
    pub raw: String,
    /// The transcript's store path, when the source is one.
    pub path: Option<String>,
    /// Its messages; `None` when the transcript is not in the store at the moment.
    pub messages: Option<Vec<Message>>,
}

/// The memory page's data.
#[derive(Debug)]
pub struct MemoryView {
    pub path: StorePath,
    /// The file at the moment; `None` when it did not exist then.
    pub content: Option<String>,
    /// Its parse (the error names the file and line).
    pub parsed: Option<Result<Memory, String>>,
    /// Memories this one supersedes, then the ones those supersede, … (depth, memory).
    pub older: Vec<(usize, Linked)>,
    /// Memories superseding this one, and so on.
    pub newer: Vec<(usize, Linked)>,
    pub outgoing: Vec<LinkView>,
    pub incoming: Vec<LinkView>,
    pub sources: Vec<Source>,
    pub versions: Vec<Version>,
}

impl MemoryView {
    pub fn memory(&self) -> Option<&Memory> {
        self.parsed.as_ref().and_then(|p| p.as_ref().ok())
    }
}

/// Reads everything about `path` at `moment`. A path never in the store's history
/// (up to the moment) is a 404; one that existed only earlier or later shows its
/// history with no content.
pub fn memory_view(
    cache: &GraphCache,
    store_name: &str,
    engine: &Engine,
    moment: &Moment,
    path: &str,
) -> Result<MemoryView, WebError> {
    let path = StorePath::parse(path).map_err(|e| {
        WebError::bad_request("invalid_path", format!("{path:?} is not a store path: {e}"))
    })?;
    let commit = moment.commit()?;
    let store = engine.store();
    let content = read_text(store, commit, &path)?;
    let versions = versions(store, commit, &path, HISTORY_LIMIT)?;
    if content.is_none() && versions.is_empty() {
        return Err(WebError::not_found(format!(
            "no memory {path} in the store's history{}",
            moment
                .at
                .as_ref()
                .map(|a| format!(" up to {a}"))
                .unwrap_or_default()
        )));
    }
    let parsed = match (&content, path.is_memory()) {
        (Some(text), true) => {
            Some(Memory::parse(path.as_str(), text.as_bytes()).map_err(|e| e.to_string()))
        }
        _ => None,
    };
    let mut view = MemoryView {
        path,
        content,
        parsed,
        older: Vec::new(),
        newer: Vec::new(),
        outgoing: Vec::new(),
        incoming: Vec::new(),
        sources: Vec::new(),
        versions,
    };
    if view.content.is_some() && view.path.is_memory() {
        let links = |p: &str| links_at(cache, store_name, engine, commit, p);
        let (outgoing, incoming) = links(view.path.as_str())?;
        view.older = chain(view.path.as_str(), &links, Direction::Older)?
            .into_iter()
            .map(|(d, p)| (d, linked(store, commit, &p)))
            .collect();
        view.newer = chain(view.path.as_str(), &links, Direction::Newer)?
            .into_iter()
            .map(|(d, p)| (d, linked(store, commit, &p)))
            .collect();
        view.outgoing = outgoing
            .into_iter()
            .map(|row| {
                let other = row.resolved.as_deref().map(|p| linked(store, commit, p));
                LinkView { row, other }
            })
            .collect();
        view.incoming = incoming
            .into_iter()
            .map(|row| {
                let other = Some(linked(store, commit, &row.src));
                LinkView { row, other }
            })
            .collect();
        if let Some(m) = view.memory() {
            view.sources = sources(store, commit, m)?;
        }
    }
    Ok(view)
}

/// A memory's title at a commit, if it is there and parses.
pub fn title_at(store: &Store, commit: ObjectId, path: &str) -> Option<String> {
    let p = StorePath::parse(path).ok()?;
    let bytes = store.read(commit, &p).ok()??;
    Memory::parse(path, &bytes).ok().map(|m| m.front.title)
}

fn linked(store: &Store, commit: ObjectId, path: &str) -> Linked {
    Linked {
        path: path.to_owned(),
        title: title_at(store, commit, path),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// What a memory supersedes (its `supersedes:` links).
    Older,
    /// What supersedes it (`supersedes:` links into it).
    Newer,
}

type LinksOf<'a> = dyn Fn(&str) -> Result<(Vec<LinkRow>, Vec<LinkRow>), WebError> + 'a;

/// The supersession chain from `start` one way, breadth first: (depth, path).
/// Cycles (a hand edit can make one) end the walk where a memory repeats.
fn chain(
    start: &str,
    links: &LinksOf<'_>,
    dir: Direction,
) -> Result<Vec<(usize, String)>, WebError> {
    let mut seen: HashSet<String> = HashSet::from([start.to_owned()]);
    let mut out = Vec::new();
    let mut frontier = vec![start.to_owned()];
    for depth in 1..=CHAIN_DEPTH {
        let mut next = Vec::new();
        for p in &frontier {
            let (from, to) = links(p)?;
            let step: Vec<String> = match dir {
                Direction::Older => from
                    .into_iter()
                    .filter(|r| r.kind == LinkKind::Supersedes)
                    .filter_map(|r| r.resolved)
                    .collect(),
                Direction::Newer => to
                    .into_iter()
                    .filter(|r| r.kind == LinkKind::Supersedes)
                    .map(|r| r.src)
                    .collect(),
            };
            for s in step {
                if seen.insert(s.clone()) {
                    out.push((depth, s.clone()));
                    next.push(s);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    Ok(out)
}

/// The sources a memory names (`source:` and the ingester's `sources:` list), each
/// transcript read at the commit with the cited messages marked. Several citations
/// of one transcript are shown once, with all their messages marked.
fn sources(store: &Store, commit: ObjectId, m: &Memory) -> Result<Vec<Source>, WebError> {
    let raws: Vec<String> = m
        .front
        .source
        .iter()
        .cloned()
        .chain(gitloom_model::cite::sources(&m.front.extra).map(str::to_owned))
        .collect();
    let mut out: Vec<Source> = Vec::new();
    // transcript path -> cited message indexes
    let mut cited: Vec<(String, BTreeSet<usize>)> = Vec::new();
    for raw in raws {
        let citation = gitloom_model::Citation::parse(&raw);
        let file = citation.file;
        let is_transcript = file.starts_with("sessions/") && StorePath::parse(file).is_ok();
        if !is_transcript {
            if !out.iter().any(|s| s.raw == raw) {
                out.push(Source {
                    raw: raw.clone(),
                    path: None,
                    messages: None,
                });
            }
            continue;
        }
        let indexes: BTreeSet<usize> = citation.messages.into_iter().collect();
        match cited.iter_mut().find(|(p, _)| p == file) {
            Some((_, set)) => set.extend(indexes),
            None => {
                cited.push((file.to_owned(), indexes));
                out.push(Source {
                    raw: raw.clone(),
                    path: Some(file.to_owned()),
                    messages: None,
                });
            }
        }
    }
    for (file, indexes) in cited.iter().take(SOURCES_SHOWN) {
        let Ok(p) = StorePath::parse(file) else {
            continue;
        };
        let messages = read_text(store, commit, &p)?.map(|t| {
            let mut ms = transcript_messages(&t);
            for m in &mut ms {
                m.cited = indexes.contains(&m.index);
            }
            ms
        });
        if let Some(s) = out.iter_mut().find(|s| s.path.as_deref() == Some(file)) {
            s.messages = messages;
        }
    }
    Ok(out)
}

/// The messages of a transcript as the ingester writes it (`## m<i> <role>`, then
/// the text). Sections whose heading is not of that form are kept as role-less text.
pub fn transcript_messages(text: &str) -> Vec<Message> {
    gitloom_model::body::sections(text, 1)
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let (index, role) = s
                .heading
                .strip_prefix('m')
                .and_then(|rest| rest.split_once(' '))
                .and_then(|(n, role)| Some((n.parse().ok()?, role.trim().to_owned())))
                .unwrap_or((i, String::new()));
            Message {
                index,
                role,
                text: s.text.trim().to_owned(),
                cited: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_split_into_numbered_messages() {
        let t = "# Session s1\n\ndate: 2026-01-02\n\n## m0 user\n\nHi, I moved to Lisbon.\n\n## m1 assistant\n\nNoted.\n";
        let ms = transcript_messages(t);
        assert_eq!(ms.len(), 2);
        assert_eq!((ms[0].index, ms[0].role.as_str()), (0, "user"));
        assert_eq!(ms[0].text, "Hi, I moved to Lisbon.");
        assert_eq!((ms[1].index, ms[1].role.as_str()), (1, "assistant"));
    }
}
