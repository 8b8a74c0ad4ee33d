//! Full-text matches among a given set of rows: one MATCH per expression over the
//! whole table, kept, and filtered here.
//!
//! Why not `MATCH ? AND rowid IN (…)`: FTS5 takes a rowid list as one full-text
//! query per id (one xFilter each). Coverage asked that of 150 candidates for 8
//! terms, ~1,200 queries, ~17 ms of a 10k-memory retrieve; walking each term's
//! postings once is 8. The row ids are hashes of the paths, so the candidates of a
//! query span nearly the whole rowid range: bounding the walk by their range saved
//! next to nothing.
//!
//! The rows each expression matched are kept ([`WalkMemo`]) with the database
//! version they were read at, as document frequencies are (`doc_freq.rs`): one
//! retrieve asks the same terms of the lexical arm (its all-terms set, [`all_of`]),
//! of the fused candidates (coverage), of the judged head and of the shown hits'
//! sections, and queries share terms; a walk of a
//! common term is the costly one (it steps every file holding it out of SQLite).
//! Which rows match an expression depends on the expression and the index alone,
//! so a kept walk is what a fresh one would give while the version holds. Every
//! apply on this connection drops the memo (`PRAGMA data_version` does not move for
//! a connection's own commits); another connection's commit moves the version.

use std::collections::{HashMap, VecDeque};

use crate::{Index, IndexError};

/// Path ids kept at most; past it they start over.
const MEMO_IDS: usize = 1 << 16;

/// Row ids kept at most, over all walks (8 bytes each: 8 MiB). Past it the oldest
/// walks go first; the newest is always kept, so one retrieve's later asks of a
/// term reuse its walk even when that walk alone is over the bound.
const MEMO_ROWS: usize = 1 << 20;

/// A full-text table of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FtsTable {
    /// One row per file (`fts`, rowid = `files.id`).
    Files,
    /// One row per `##` section (`sections_fts`, rowid = `sections.id`).
    Sections,
}

impl FtsTable {
    /// Its place in [`WalkMemo`]'s maps.
    fn slot(self) -> usize {
        match self {
            FtsTable::Files => 0,
            FtsTable::Sections => 1,
        }
    }

    fn sql(self) -> &'static str {
        match self {
            FtsTable::Files => "SELECT rowid FROM fts WHERE fts MATCH ?1",
            FtsTable::Sections => "SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?1",
        }
    }
}

/// The walks kept at one database version.
#[derive(Debug, Default)]
pub(crate) struct WalkMemo {
    /// `PRAGMA data_version` the walks were read at; `None`: nothing kept.
    version: Option<i64>,
    /// Per table ([`FtsTable::slot`]) and expression, every row it matched, sorted.
    walks: [HashMap<String, Vec<i64>>; 2],
    /// Keys of `walks`, oldest first, for eviction.
    order: VecDeque<(FtsTable, String)>,
    /// Rows held in `walks`.
    rows: usize,
    /// The `files` id of each path coverage asked about (`coverage::by_path`): the
    /// same candidates come back query after query, and a path's id is fixed while
    /// the version holds. Paths not indexed are not kept.
    ids: HashMap<String, i64>,
    /// The path and title of each file id the lexical arm ranked: the same files
    /// rank query after query, and a file's row is fixed while the version holds.
    /// Ids not indexed are not kept.
    names: HashMap<i64, (String, String)>,
}

impl WalkMemo {
    /// Drops every walk (this connection is about to write, or has written).
    pub(crate) fn clear(&mut self) {
        *self = WalkMemo::default();
    }

    /// Keeps the walks only if they were read at `version`.
    fn at(&mut self, version: i64) {
        if self.version != Some(version) {
            self.clear();
            self.version = Some(version);
        }
    }

    /// The kept id of `path`.
    pub(crate) fn id(&self, path: &str) -> Option<i64> {
        self.ids.get(path).copied()
    }

    /// The kept path and title of the file with id `id`.
    pub(crate) fn name(&self, id: i64) -> Option<&(String, String)> {
        self.names.get(&id)
    }

    /// Keeps the path and title of the file with id `id`.
    pub(crate) fn keep_name(&mut self, id: i64, path: String, title: String) {
        if self.names.len() >= MEMO_IDS {
            self.names.clear();
        }
        self.names.insert(id, (path, title));
    }

    /// Keeps the id of `path`.
    pub(crate) fn keep_id(&mut self, path: &str, id: i64) {
        if self.ids.len() >= MEMO_IDS {
            self.ids.clear();
        }
        self.ids.insert(path.to_owned(), id);
    }

    fn get(&self, table: FtsTable, expr: &str) -> Option<&[i64]> {
        self.walks[table.slot()].get(expr).map(Vec::as_slice)
    }

    fn keep(&mut self, table: FtsTable, expr: &str, rows: Vec<i64>) {
        self.rows += rows.len();
        match self.walks[table.slot()].insert(expr.to_owned(), rows) {
            Some(old) => self.rows -= old.len(),
            None => self.order.push_back((table, expr.to_owned())),
        }
        while self.rows > MEMO_ROWS && self.order.len() > 1 {
            if let Some((t, e)) = self.order.pop_front()
                && let Some(rows) = self.walks[t.slot()].remove(&e)
            {
                self.rows -= rows.len();
            }
        }
    }
}

/// For each MATCH expression of `exprs`, in order, the rows of `ids` that match it
/// (in rowid order, each once). Empty lists when `ids` is empty.
pub(crate) fn matching(
    idx: &Index,
    table: FtsTable,
    exprs: &[String],
    ids: &[i64],
    op: &'static str,
) -> Result<Vec<Vec<i64>>, IndexError> {
    if ids.is_empty() {
        return Ok(vec![Vec::new(); exprs.len()]);
    }
    let mut wanted: Vec<i64> = ids.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut memo = kept(idx, op)?;
    let mut out = Vec::with_capacity(exprs.len());
    for e in exprs {
        walked(idx, &mut memo, table, e, op)?;
        out.push(among(memo.get(table, e).unwrap_or_default(), &wanted));
    }
    Ok(out)
}

/// The rows matching every expression of `exprs` (sorted), from their kept walks:
/// what `e1 AND e2 AND …` matches when each `e` is a whole FTS5 expression. `None`
/// when a walk is empty (an empty phrase, which FTS5 drops from an AND, walks empty
/// too, so an empty walk cannot stand for its clause) or was dropped from the memo by
/// a later one: the caller then asks FTS5.
pub(crate) fn all_of(
    idx: &Index,
    memo: &mut WalkMemo,
    table: FtsTable,
    exprs: &[String],
    op: &'static str,
) -> Result<Option<Vec<i64>>, IndexError> {
    for e in exprs {
        walked(idx, memo, table, e, op)?;
    }
    let mut walks: Vec<&[i64]> = Vec::with_capacity(exprs.len());
    for e in exprs {
        match memo.get(table, e) {
            Some(rows) if !rows.is_empty() => walks.push(rows),
            _ => return Ok(None),
        }
    }
    // The shortest first: each step is a binary search per row still in.
    walks.sort_by_key(|w| w.len());
    let Some((first, rest)) = walks.split_first() else {
        return Ok(None);
    };
    let mut rows = first.to_vec();
    for w in rest {
        rows = among(w, &rows);
    }
    Ok(Some(rows))
}

/// Walks `expr` into `memo` unless a walk of it is kept.
fn walked(
    idx: &Index,
    memo: &mut WalkMemo,
    table: FtsTable,
    expr: &str,
    op: &'static str,
) -> Result<(), IndexError> {
    if memo.get(table, expr).is_none() {
        let rows = walk(idx, table, expr, op)?;
        memo.keep(table, expr, rows);
    }
    Ok(())
}

/// The memo, emptied first unless what it holds was read at the current version.
pub(crate) fn kept<'a>(
    idx: &'a Index,
    op: &'static str,
) -> Result<std::cell::RefMut<'a, WalkMemo>, IndexError> {
    let version = data_version(idx, op)?;
    let mut memo = idx.walk_memo.borrow_mut();
    memo.at(version);
    Ok(memo)
}

/// The ids of `wanted` (sorted, distinct) found in `rows` (sorted): a binary search
/// per wanted id, not a pass over every row a common term matched.
fn among(rows: &[i64], wanted: &[i64]) -> Vec<i64> {
    wanted
        .iter()
        .copied()
        .filter(|id| rows.binary_search(id).is_ok())
        .collect()
}

/// The connection's `PRAGMA data_version`: it moves when another connection commits.
fn data_version(idx: &Index, op: &'static str) -> Result<i64, IndexError> {
    idx.conn
        .prepare_cached("PRAGMA data_version")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(idx.err(op))
}

/// Every row `expr` matches, sorted.
fn walk(
    idx: &Index,
    table: FtsTable,
    expr: &str,
    op: &'static str,
) -> Result<Vec<i64>, IndexError> {
    let mut st = idx.conn.prepare_cached(table.sql()).map_err(idx.err(op))?;
    let rows = st
        .query_map([expr], |r| r.get::<_, i64>(0))
        .map_err(idx.err(op))?;
    let mut rows: Vec<i64> = rows.collect::<Result<_, _>>().map_err(idx.err(op))?;
    // FTS5 returns rowid order already; sorting makes the binary search's premise
    // this function's own (a sorted run costs one pass).
    rows.sort_unstable();
    rows.dedup();
    Ok(rows)
}
