//! A memory's links both ways (wikilinks, `related:`, `supersedes`) at a moment.
//!
//! Now (HEAD), they come from the index, exactly as the `related` op returns them.
//! At a past commit the index is of no help (it holds HEAD), so the links are read
//! from that commit's files: every memory is parsed and its links resolved by the
//! index's rule (`gitloom-index` `links.rs`: exact path with or without `.md`, else
//! the first file by path whose folded title matches, else a slug that exactly one
//! file has). A test holds the two to the same answer at HEAD. The engine has no
//! "links at a revision" call; if one is added (over the per-commit index that
//! `retrieve --at` builds), this module should use it instead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gitloom_engine::Engine;
use gitloom_index::{LinkKind, LinkRow};
use gitloom_model::{Memory, StorePath, fold_name, slugify};
use gitloom_store::{ObjectId, Store};

use crate::error::WebError;

/// Every link of a commit's memories, resolved.
#[derive(Debug, Default)]
pub struct LinkGraph {
    /// Links out of each file, in file order (wikilinks, related, supersedes).
    out: HashMap<String, Vec<LinkRow>>,
    /// Resolved target → links into it, by source path then order.
    into: HashMap<String, Vec<LinkRow>>,
}

impl LinkGraph {
    /// Reads every memory of `commit` and resolves their links.
    pub fn build(store: &Store, commit: ObjectId) -> Result<LinkGraph, WebError> {
        let tree = store.tree_of(commit)?;
        let mut files: Vec<(String, Memory)> = Vec::new();
        for entry in store.walk(tree)? {
            let Ok(path) = StorePath::parse(&entry.path) else {
                continue;
            };
            if !path.is_memory() {
                continue;
            }
            let bytes = store.read_blob(entry.blob)?;
            // A file that does not parse is not in the index either: it links nowhere
            // and nothing resolves to it.
            if let Ok(m) = Memory::parse(path.as_str(), &bytes) {
                files.push((path.to_string(), m));
            }
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let resolver = Resolver::new(&files);
        let mut graph = LinkGraph::default();
        for (path, m) in &files {
            let mut rows = Vec::new();
            for w in m.wikilinks() {
                rows.push(row(path, LinkKind::Wiki, &w.target, w.label, w.section));
            }
            for r in &m.front.related {
                rows.push(row(
                    path,
                    LinkKind::Related,
                    &r.target,
                    r.label.clone(),
                    None,
                ));
            }
            for s in &m.front.supersedes {
                rows.push(row(path, LinkKind::Supersedes, s, None, None));
            }
            for r in &mut rows {
                r.resolved = resolver.resolve(&r.target_raw);
                if let Some(t) = &r.resolved {
                    graph.into.entry(t.clone()).or_default().push(r.clone());
                }
            }
            graph.out.insert(path.clone(), rows);
        }
        Ok(graph)
    }

    pub fn links_from(&self, path: &str) -> Vec<LinkRow> {
        self.out.get(path).cloned().unwrap_or_default()
    }

    pub fn links_to(&self, path: &str) -> Vec<LinkRow> {
        self.into.get(path).cloned().unwrap_or_default()
    }
}

fn row(
    src: &str,
    kind: LinkKind,
    target: &str,
    label: Option<String>,
    section: Option<String>,
) -> LinkRow {
    LinkRow {
        src: src.to_owned(),
        kind,
        target_raw: target.to_owned(),
        label,
        section,
        resolved: None,
    }
}

/// The index's resolution rule over one commit's files.
struct Resolver<'a> {
    paths: std::collections::HashSet<&'a str>,
    /// Folded title → first path (files are visited in path order).
    titles: HashMap<String, &'a str>,
    /// Slug → the paths having it.
    slugs: HashMap<String, Vec<&'a str>>,
}

impl<'a> Resolver<'a> {
    fn new(files: &'a [(String, Memory)]) -> Resolver<'a> {
        let mut r = Resolver {
            paths: Default::default(),
            titles: HashMap::new(),
            slugs: HashMap::new(),
        };
        for (path, m) in files {
            r.paths.insert(path);
            r.titles.entry(fold_name(&m.front.title)).or_insert(path);
            let slug = StorePath::parse(path)
                .map(|p| p.slug().to_owned())
                .unwrap_or_default();
            r.slugs.entry(slug).or_default().push(path);
        }
        r
    }

    fn resolve(&self, raw: &str) -> Option<String> {
        let t = raw.trim();
        let t = t.strip_prefix("./").unwrap_or(t).trim_start_matches('/');
        if t.is_empty() {
            return None;
        }
        let path = if t.ends_with(".md") {
            t.to_owned()
        } else {
            format!("{t}.md")
        };
        if self.paths.contains(path.as_str()) {
            return Some(path);
        }
        let title = fold_name(t);
        if !title.is_empty()
            && let Some(p) = self.titles.get(&title)
        {
            return Some((*p).to_owned());
        }
        let stem = t.strip_suffix(".md").unwrap_or(t);
        let stem = stem.rsplit('/').next().unwrap_or(stem);
        for slug in [stem.to_owned(), slugify(stem, 200)] {
            if let Some([only]) = self.slugs.get(&slug).map(Vec::as_slice) {
                return Some((*only).to_owned());
            }
        }
        None
    }
}

/// Link graphs of recent past commits, per store, so paging through a past moment
/// parses its files once. Small: a graph is rebuilt when it falls out.
#[derive(Default)]
pub struct GraphCache {
    entries: Mutex<Vec<(String, ObjectId, Arc<LinkGraph>)>>,
}

const CACHED_GRAPHS: usize = 4;

impl GraphCache {
    fn get(
        &self,
        store: &str,
        engine: &Engine,
        commit: ObjectId,
    ) -> Result<Arc<LinkGraph>, WebError> {
        let lock = || self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, g)) = lock().iter().find(|(s, c, _)| s == store && *c == commit) {
            return Ok(g.clone());
        }
        let graph = Arc::new(LinkGraph::build(engine.store(), commit)?);
        let mut entries = lock();
        entries.retain(|(s, c, _)| !(s == store && *c == commit));
        entries.insert(0, (store.to_owned(), commit, graph.clone()));
        entries.truncate(CACHED_GRAPHS);
        Ok(graph)
    }
}

/// (links out of `path`, links into it) at `commit`: from the index when `commit` is
/// HEAD, else from that commit's files.
pub fn links_at(
    cache: &GraphCache,
    store_name: &str,
    engine: &Engine,
    commit: ObjectId,
    path: &str,
) -> Result<(Vec<LinkRow>, Vec<LinkRow>), WebError> {
    if engine.store().head()? == Some(commit) {
        return Ok(engine.links(path)?);
    }
    let graph = cache.get(store_name, engine, commit)?;
    Ok((graph.links_from(path), graph.links_to(path)))
}
