//! Full-text matches among a given set of rows, one MATCH per expression over the
//! rows' rowid range, filtered here.
//!
//! Why not `MATCH ? AND rowid IN (…)`: FTS5 takes a rowid list as one full-text
//! query per id (one xFilter each). Coverage asked that of 150 candidates for 8
//! terms, ~1,200 queries, ~17 ms of a 10k-memory retrieve; over the range it is 8.
//!
//! Inside one read transaction ([`Index::read`]) the rows each expression matched
//! over a range are kept ([`RangeMemo`]): the read path asks the same terms of the
//! fused candidates (coverage) and then of the judged head, whose ids lie in the
//! candidates' range, and the second walk of each term's postings is answered from
//! the first. The snapshot cannot change inside the transaction, so neither can
//! the answer; the memo is dropped when the transaction ends.

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

/// Every row one expression matched over `lo..=hi`, in rowid order.
#[derive(Debug)]
struct Walked {
    table: FtsTable,
    expr: String,
    lo: i64,
    hi: i64,
    rows: Vec<i64>,
}

/// The walks of one read transaction; `None` outside one (nothing is kept then).
#[derive(Debug, Default)]
pub(crate) struct RangeMemo(Option<Vec<Walked>>);

impl RangeMemo {
    /// Starts keeping walks (a read transaction began).
    pub(crate) fn open(&mut self) {
        self.0 = Some(Vec::new());
    }

    /// Drops every walk and keeps no more (the transaction ended).
    pub(crate) fn close(&mut self) {
        self.0 = None;
    }

    /// The rows of a kept walk of `expr` over a range holding `lo..=hi`.
    fn find(&self, table: FtsTable, expr: &str, lo: i64, hi: i64) -> Option<&[i64]> {
        self.0
            .as_ref()?
            .iter()
            .find(|w| w.table == table && w.expr == expr && w.lo <= lo && hi <= w.hi)
            .map(|w| w.rows.as_slice())
    }

    fn keep(&mut self, walked: Walked) {
        if let Some(v) = self.0.as_mut() {
            v.push(walked);
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
    // Sorted, for a binary search per matched row (cheaper than hashing each one).
    let mut wanted: Vec<i64> = ids.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let is_wanted = |id: &i64| wanted.binary_search(id).is_ok();
    let mut out = Vec::with_capacity(exprs.len());
    for e in exprs {
        let memo = idx.range_memo.borrow();
        let got = match memo.find(table, e, lo, hi) {
            Some(rows) => rows.iter().copied().filter(is_wanted).collect(),
            None => {
                drop(memo);
                let rows = walk(idx, table, e, lo, hi, op)?;
                let got = rows.iter().copied().filter(is_wanted).collect();
                idx.range_memo.borrow_mut().keep(Walked {
                    table,
                    expr: e.clone(),
                    lo,
                    hi,
                    rows,
                });
                got
            }
        };
        out.push(got);
    }
    Ok(out)
}

/// Every row `expr` matches over `lo..=hi`, in rowid order.
fn walk(
    idx: &Index,
    table: FtsTable,
    expr: &str,
    lo: i64,
    hi: i64,
    op: &'static str,
) -> Result<Vec<i64>, IndexError> {
    let mut st = idx.conn.prepare_cached(table.sql()).map_err(idx.err(op))?;
    let rows = st
        .query_map(rusqlite::params![expr, lo, hi], |r| r.get::<_, i64>(0))
        .map_err(idx.err(op))?;
    rows.collect::<Result<_, _>>().map_err(idx.err(op))
}
