//! Full-text matches among a given set of rows, one MATCH per expression over the
//! rows' rowid range, filtered here.
//!
//! Why not `MATCH ? AND rowid IN (…)`: FTS5 takes a rowid list as one full-text
//! query per id (one xFilter each). Coverage asked that of 150 candidates for 8
//! terms, ~1,200 queries, ~17 ms of a 10k-memory retrieve; over the range it is 8.

use std::collections::HashSet;

use crate::{Index, IndexError};

/// A full-text table of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FtsTable {
    /// One row per file (`fts`, rowid = `files.id`).
    Files,
    /// One row per `##` section (`sections_fts`, rowid = `sections.id`).
    Sections,
}

impl FtsTable {
    fn sql(self) -> &'static str {
        match self {
            FtsTable::Files => {
                "SELECT rowid FROM fts WHERE fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3"
            }
            FtsTable::Sections => {
                "SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3"
            }
        }
    }
}

/// For each MATCH expression of `exprs`, in order, the rows of `ids` that match it
/// (in rowid order). Empty lists when `ids` is empty.
pub(crate) fn matching(
    idx: &Index,
    table: FtsTable,
    exprs: &[String],
    ids: &[i64],
    op: &'static str,
) -> Result<Vec<Vec<i64>>, IndexError> {
    let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
        return Ok(vec![Vec::new(); exprs.len()]);
    };
    let wanted: HashSet<i64> = ids.iter().copied().collect();
    let mut st = idx.conn.prepare_cached(table.sql()).map_err(idx.err(op))?;
    let mut out = Vec::with_capacity(exprs.len());
    for e in exprs {
        let rows = st
            .query_map(rusqlite::params![e, lo, hi], |r| r.get::<_, i64>(0))
            .map_err(idx.err(op))?;
        let mut got = Vec::new();
        for id in rows {
            let id = id.map_err(idx.err(op))?;
            if wanted.contains(&id) {
                got.push(id);
            }
        }
        out.push(got);
    }
    Ok(out)
}
