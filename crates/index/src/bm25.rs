//! The lexical arm's BM25 scores from postings kept in memory, equal bit for bit to
//! what FTS5's `bm25()` returns.
//!
//! FTS5 scores a row by reading its size from `fts_docsize` (a B-tree seek per
//! matching row) and the positions of every phrase in it; at 10,000 files that is
//! most of the lexical arm's time (BENCHMARKS.md, session 33), and a long-lived
//! engine (a server, an MCP session) asks the same words query after query. So the
//! numbers BM25 reads are kept, with the database version they were read at, as the
//! term walks are (`ranged.rs`): each token's postings (per row, its count in each
//! column, from an `fts5vocab` view), every row's size and the table's averages
//! record. The score is FTS5's formula (`fts5Bm25Function` in SQLite's
//! `fts5_aux.c`, k1 = 1.2, b = 0.75) evaluated in the same order of operations on
//! the same doubles, so it is the same number, not an approximation of it (tested
//! against FTS5 on random stores, queries, aliases and weights).
//!
//! Used only where that holds and pays: every phrase of the query is one token (a
//! phrase of several needs positions; FTS5 scores it), the column weights are short
//! binary fractions (their SQL text reads back as the same double), and this
//! connection has asked for every phrase before, at this version's ninth query or
//! later ([`WARM_AFTER`]). Reading a version's row sizes costs ~3 ms at 10k files, once,
//! and a query's first kept scoring (its token walks) about what FTS5's own scoring of it
//! costs (`examples/kept_bm25.rs`; BENCHMARKS.md, session 33), which pays only over the
//! queries to come: a one-shot `gitloom retrieve` runs one query and never walks a
//! posting list it would use once, and after a write the first queries at the new
//! version are FTS5's. Anything else returns `None` and the caller asks FTS5.

use std::collections::{HashMap, VecDeque};

use rusqlite::OptionalExtension;

use crate::lexical::Bm25Weights;
use crate::{Index, IndexError};

/// Columns of the `fts` table, in order (the order of [`Bm25Weights`] in `bm25()`).
const COLUMNS: [&str; 6] = ["title", "summary", "cues", "entities", "tags", "body"];

/// Queries a version serves through FTS5 before its numbers are read (see the module
/// docs). The row sizes cost ~3 ms at 10k files against ~0.3–2 ms saved a warm query,
/// so a version that has lasted this long has earned them with room to spare, as in
/// renting skis until their price is spent: a store written to between every few
/// queries (a server under mixed load) never pays for numbers it would throw away.
const WARM_AFTER: u32 = 8;

/// FTS5's BM25 constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Postings kept at most, over all tokens (each row × 6 counts: ~32 bytes). Past it
/// the oldest tokens go first.
const MEMO_POSTINGS: usize = 1 << 20;

/// Phrases and tokens remembered at most (their tokens, how often they were asked).
const MEMO_PHRASES: usize = 1 << 16;

/// When the kept scores are used: see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeptScoring {
    /// When every phrase was asked before and this version served `WARM_AFTER`
    /// queries already.
    #[default]
    Auto,
    /// Never: every score from FTS5.
    Off,
    /// Whenever the query allows it, walking what is missing (tests).
    Eager,
}

/// One row holding a token: how often, per column, and the row's size in tokens
/// (all columns; kept here so scoring needs no lookup per row).
#[derive(Debug, Clone, Copy)]
struct Posting {
    row: i64,
    size: i64,
    counts: [u32; 6],
}

/// The table-wide numbers BM25 reads, at one version.
#[derive(Debug)]
struct Stats {
    rows: i64,
    /// Average row size in tokens (all columns), as FTS5 computes it.
    avgdl: f64,
    /// Each row's size in tokens, all columns.
    sizes: HashMap<i64, i64>,
}

/// What is kept per connection.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    /// `PRAGMA data_version` of `stats` and `postings`.
    version: Option<i64>,
    /// Queries scored (either way) at this version.
    queries: u32,
    stats: Option<Stats>,
    postings: HashMap<String, Vec<Posting>>,
    order: VecDeque<String>,
    held: usize,
    /// Each phrase's token, `None` when it is not exactly one (kept across versions:
    /// tokenising depends on the tokenizer, not on the data).
    tokens: HashMap<String, Option<String>>,
    /// How often each phrase was asked (across versions).
    asks: HashMap<String, u32>,
    /// Queries scored here rather than by FTS5, ever (tests).
    pub(crate) served: u64,
}

impl Memo {
    /// Drops what depends on the data (this connection is about to write, or has).
    pub(crate) fn clear(&mut self) {
        self.version = None;
        self.queries = 0;
        self.stats = None;
        self.postings.clear();
        self.order.clear();
        self.held = 0;
    }

    fn at(&mut self, version: i64) {
        if self.version != Some(version) {
            self.clear();
            self.version = Some(version);
        }
    }

    fn keep(&mut self, token: &str, postings: Vec<Posting>) {
        self.held += postings.len();
        if self.postings.insert(token.to_owned(), postings).is_none() {
            self.order.push_back(token.to_owned());
        }
        while self.held > MEMO_POSTINGS && self.order.len() > 1 {
            if let Some(old) = self.order.pop_front()
                && let Some(p) = self.postings.remove(&old)
            {
                self.held -= p.len();
            }
        }
    }
}

/// The BM25 score (FTS5's sign: lower is better) of every row matching any of
/// `phrases` (the query's quoted strings, in the order they appear in its MATCH
/// expression), or `None` when FTS5 must compute them (see the module docs).
pub(crate) fn scored(
    idx: &Index,
    phrases: &[String],
    weights: &Bm25Weights,
) -> Result<Option<Vec<(i64, f64)>>, IndexError> {
    let mode = idx.kept_scoring.get();
    if mode == KeptScoring::Off || phrases.is_empty() {
        return Ok(None);
    }
    let Some(w) = exact_weights(weights) else {
        return Ok(None);
    };
    let op = "lexical scores";
    let version = data_version(idx, op)?;
    let mut memo = idx.bm25_memo.borrow_mut();
    memo.at(version);
    memo.queries += 1;
    // Decided before any tokenising: the first queries of a version, and a one-shot
    // process, leave here at the cost of a counter and a map lookup.
    let mut asked_before = true;
    for p in phrases {
        if memo.asks.len() >= MEMO_PHRASES {
            memo.asks.clear();
        }
        let n = memo.asks.entry(p.clone()).or_default();
        *n += 1;
        asked_before &= *n > 1;
    }
    let all_kept = memo.stats.is_some()
        && phrases
            .iter()
            .all(|p| matches!(memo.tokens.get(p), Some(Some(t)) if memo.postings.contains_key(t)));
    let walk = match mode {
        KeptScoring::Eager => true,
        KeptScoring::Auto => all_kept || (asked_before && memo.queries > WARM_AFTER),
        KeptScoring::Off => false,
    };
    if !walk {
        return Ok(None);
    }
    let Some(tokens) = tokens_of(idx, &mut memo, phrases, op)? else {
        return Ok(None);
    };
    if memo.stats.is_none() {
        memo.stats = Some(read_stats(idx, op)?);
    }
    for t in &tokens {
        if !memo.postings.contains_key(t)
            && let Some(stats) = memo.stats.as_ref()
        {
            let p = walk_token(idx, t, stats, op)?;
            memo.keep(t, p);
        }
    }
    // (A kept list can have been dropped by the bound while walking a later one.)
    let mut lists: Vec<&[Posting]> = Vec::with_capacity(tokens.len());
    for t in &tokens {
        match memo.postings.get(t) {
            Some(p) => lists.push(p),
            None => return Ok(None),
        }
    }
    let Some(stats) = memo.stats.as_ref() else {
        return Ok(None);
    };
    let out = score(stats, &lists, &w);
    memo.served += 1;
    Ok(Some(out))
}

/// The weights as `bm25()` reads them from its SQL text, when that text reads back
/// as the same double for certain: finite, non-negative multiples of 2⁻¹⁰ below
/// 2²⁰ (their shortest decimal form is exact). Others go to FTS5.
fn exact_weights(w: &Bm25Weights) -> Option<[f64; 6]> {
    let clean = |x: f64| if x.is_finite() && x >= 0.0 { x } else { 0.0 };
    let ws = [w.title, w.summary, w.cues, w.entities, w.tags, w.body].map(clean);
    ws.iter()
        .all(|x| *x < 1_048_576.0 && (x * 1024.0).fract() == 0.0)
        .then_some(ws)
}

/// FTS5's `bm25()` for every row in `lists` (one list per phrase, each sorted by
/// row), merged row by row.
fn score(stats: &Stats, lists: &[&[Posting]], w: &[f64; 6]) -> Vec<(i64, f64)> {
    // fts5Bm25GetData: the IDF of each phrase from the rows holding it.
    let idf: Vec<f64> = lists
        .iter()
        .map(|l| {
            let hits = l.len() as i64;
            let idf = ((stats.rows - hits) as f64 + 0.5) / (hits as f64 + 0.5);
            let idf = idf.ln();
            if idf <= 0.0 { 1e-6 } else { idf }
        })
        .collect();
    let mut at = vec![0usize; lists.len()];
    let mut out = Vec::with_capacity(lists.iter().map(|l| l.len()).max().unwrap_or(0));
    while let Some(row) = lists
        .iter()
        .zip(&at)
        .filter_map(|(l, i)| l.get(*i).map(|p| p.row))
        .min()
    {
        // fts5Bm25Function: phrases in order; a phrase the row lacks adds 0.0.
        let mut s = 0.0f64;
        for (k, l) in lists.iter().enumerate() {
            let Some(p) = l.get(at[k]).filter(|p| p.row == row) else {
                continue;
            };
            at[k] += 1;
            let d = p.size as f64;
            let f = frequency(p, w);
            s += idf[k] * ((f * (K1 + 1.0)) / (f + K1 * ((1.0 - B) + ((B * d) / stats.avgdl))));
        }
        // (`-1.0 * score` in FTS5: the same bits.)
        out.push((row, -s));
    }
    out
}

/// A phrase's weighted count in a row: the weight of each instance's column added
/// one instance at a time, in column then offset order, as FTS5 walks them.
fn frequency(p: &Posting, w: &[f64; 6]) -> f64 {
    let mut f = 0.0;
    for (c, n) in p.counts.iter().enumerate() {
        for _ in 0..*n {
            f += w[c];
        }
    }
    f
}

/// Each phrase's one token, or `None` when one of them is not exactly one token.
fn tokens_of(
    idx: &Index,
    memo: &mut Memo,
    phrases: &[String],
    op: &'static str,
) -> Result<Option<Vec<String>>, IndexError> {
    let missing: Vec<&String> = phrases
        .iter()
        .filter(|p| !memo.tokens.contains_key(*p))
        .collect();
    if !missing.is_empty() {
        if memo.tokens.len() + missing.len() > MEMO_PHRASES {
            memo.tokens.clear();
        }
        let texts: Vec<&str> = missing.iter().map(|p| p.as_str()).collect();
        let got = crate::doc_freq::tokenise(idx, &texts).map_err(idx.err(op))?;
        for (p, toks) in missing.into_iter().zip(got) {
            let one = match toks.as_slice() {
                [t] => Some(t.clone()),
                _ => None,
            };
            memo.tokens.insert(p.clone(), one);
        }
    }
    Ok(phrases
        .iter()
        .map(|p| memo.tokens.get(p).cloned().flatten())
        .collect())
}

/// Rows, average size and each row's size, from FTS5's own records: the averages
/// record (`fts_data` row 1: the row count, then each column's total size) and
/// `fts_docsize` (each row's column sizes), all varints.
fn read_stats(idx: &Index, op: &'static str) -> Result<Stats, IndexError> {
    let block: Option<Vec<u8>> = idx
        .conn
        .prepare_cached("SELECT block FROM fts_data WHERE id = 1")
        .and_then(|mut st| st.query_row([], |r| r.get(0)).optional())
        .map_err(idx.err(op))?;
    let averages = block.map(|b| varints(&b)).unwrap_or_default();
    let rows = averages.first().copied().unwrap_or(0) as i64;
    let tokens: i64 = averages.iter().skip(1).map(|n| *n as i64).sum();
    let mut sizes = HashMap::new();
    let mut st = idx
        .conn
        .prepare_cached("SELECT id, sz FROM fts_docsize")
        .map_err(idx.err(op))?;
    let mut it = st.query([]).map_err(idx.err(op))?;
    while let Some(r) = it.next().map_err(idx.err(op))? {
        let id: i64 = r.get(0).map_err(idx.err(op))?;
        let sz: Vec<u8> = r.get(1).map_err(idx.err(op))?;
        sizes.insert(id, varints(&sz).iter().map(|n| *n as i64).sum());
    }
    Ok(Stats {
        rows,
        // fts5Bm25GetData: `(double)nToken / (double)nRow`.
        avgdl: tokens as f64 / rows as f64,
        sizes,
    })
}

/// SQLite's varints (big-endian groups of seven bits, the ninth byte whole), as many
/// as `b` holds.
fn varints(b: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let mut v: u64 = 0;
        for k in 0..9 {
            let Some(&x) = b.get(i) else { break };
            i += 1;
            if k == 8 {
                v = (v << 8) | u64::from(x);
                break;
            }
            v = (v << 7) | u64::from(x & 0x7f);
            if x & 0x80 == 0 {
                break;
            }
        }
        out.push(v);
    }
    out
}

/// Every row holding `token`, with its count per column and its size, sorted by row.
fn walk_token(
    idx: &Index,
    token: &str,
    stats: &Stats,
    op: &'static str,
) -> Result<Vec<Posting>, IndexError> {
    crate::doc_freq::ensure_tables(idx).map_err(idx.err(op))?;
    let mut st = idx
        .conn
        .prepare_cached("SELECT doc, col FROM temp.fts_vi WHERE term = ?1")
        .map_err(idx.err(op))?;
    let mut it = st.query([token]).map_err(idx.err(op))?;
    let mut out: Vec<Posting> = Vec::new();
    while let Some(r) = it.next().map_err(idx.err(op))? {
        let row: i64 = r.get(0).map_err(idx.err(op))?;
        let col: String = r.get(1).map_err(idx.err(op))?;
        let Some(c) = COLUMNS.iter().position(|n| *n == col) else {
            continue;
        };
        match out.last_mut() {
            Some(p) if p.row == row => p.counts[c] += 1,
            _ => {
                let mut counts = [0; 6];
                counts[c] = 1;
                let size = stats.sizes.get(&row).copied().unwrap_or(0);
                out.push(Posting { row, size, counts });
            }
        }
    }
    // The view walks rows in order; merging by row below relies on it, so make it so.
    if !out.is_sorted_by_key(|p| p.row) {
        out.sort_by_key(|p| p.row);
        out.dedup_by(|b, a| {
            if a.row == b.row {
                for c in 0..6 {
                    a.counts[c] += b.counts[c];
                }
                true
            } else {
                false
            }
        });
    }
    Ok(out)
}

fn data_version(idx: &Index, op: &'static str) -> Result<i64, IndexError> {
    idx.conn
        .prepare_cached("PRAGMA data_version")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(idx.err(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        assert_eq!(varints(&[0x05]), vec![5]);
        assert_eq!(varints(&[0x81, 0x00, 0x7f]), vec![128, 127]);
        assert_eq!(varints(&[0x82, 0x80, 0x01]), vec![(2 << 14) | 1]);
        assert_eq!(varints(&[0xff; 9]), vec![u64::MAX]);
    }

    #[test]
    fn weights_are_used_only_when_their_text_is_exact() {
        let mut w = Bm25Weights::default();
        assert!(exact_weights(&w).is_some());
        w.body = 0.5;
        assert!(exact_weights(&w).is_some());
        w.body = 0.3;
        assert!(exact_weights(&w).is_none());
        w.body = f64::NAN; // read as 0, as the SQL does
        assert_eq!(exact_weights(&w).map(|w| w[5]), Some(0.0));
    }
}
