//! Which of a query's terms a file holds, and their IDF-weighted share (coverage).
//!
//! Unlike BM25, coverage is comparable across queries and stores (0..1), so the read
//! path can fuse and judge on it. Asked of any file, lexical hit or not: other arms
//! find files that need not contain a single term.

use std::collections::HashMap;

use crate::query::QueryTerms;
use crate::{Index, IndexError};

/// Per file id: the query terms it holds (query order) and its coverage.
pub(crate) type Matches = (HashMap<i64, Vec<String>>, HashMap<i64, f64>);

/// The terms of `terms` each of `ids` holds, and each one's coverage.
pub(crate) fn matches(idx: &Index, terms: &QueryTerms, ids: &[i64]) -> Result<Matches, IndexError> {
    let op = "term matches";
    let mut matched: HashMap<i64, Vec<String>> = HashMap::new();
    let mut coverage = HashMap::new();
    if ids.is_empty() || terms.terms.is_empty() {
        return Ok((matched, coverage));
    }
    let clauses: Vec<String> = terms
        .terms
        .iter()
        .map(|t| QueryTerms::clause(t, &idx.vocab))
        .collect();
    let found = crate::ranged::matching(idx, crate::ranged::FtsTable::Files, &clauses, ids, op)?;
    for (t, rows) in terms.terms.iter().zip(found) {
        for id in rows {
            matched.entry(id).or_default().push(t.clone());
        }
    }
    let (dfs, n) = crate::doc_freq::doc_freqs(idx, &terms.terms)?;
    let idf = idf_weights(&dfs, n);
    // Summed in query order: a HashMap's order would change the last bits between runs.
    let total: f64 = idf.iter().sum();
    for id in ids {
        let got: f64 = matched.get(id).map_or(0.0, |m| {
            terms
                .terms
                .iter()
                .zip(&idf)
                .filter(|(t, _)| m.contains(t))
                .map(|(_, w)| w)
                .sum()
        });
        coverage.insert(*id, if total > 0.0 { got / total } else { 0.0 });
    }
    Ok((matched, coverage))
}

/// BM25's IDF of each term, from its document frequency among `n` files.
fn idf_weights(dfs: &[u64], n: u64) -> Vec<f64> {
    let n = n as f64;
    dfs.iter()
        .map(|df| (1.0 + (n - *df as f64 + 0.5) / (*df as f64 + 0.5)).ln())
        .collect()
}

/// What [`Index::term_matches`](crate::Index::term_matches) reports of one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TermMatch {
    /// The query terms the file holds, in query order.
    pub matched: Vec<String>,
    /// Their IDF-weighted share of all the query's terms (0..1).
    pub coverage: f64,
}

/// [`matches`] for files named by path; a path not indexed is left out.
pub(crate) fn by_path(
    idx: &Index,
    text: &str,
    paths: &[&str],
) -> Result<HashMap<String, TermMatch>, IndexError> {
    let terms = QueryTerms::parse(text);
    let ids = ids_of(idx, paths)?;
    let only: Vec<i64> = ids.iter().map(|(id, _)| *id).collect();
    let (mut matched, coverage) = matches(idx, &terms, &only)?;
    Ok(ids
        .into_iter()
        .map(|(id, path)| {
            (
                path,
                TermMatch {
                    matched: matched.remove(&id).unwrap_or_default(),
                    coverage: coverage.get(&id).copied().unwrap_or(0.0),
                },
            )
        })
        .collect())
}

/// `(id, path)` of each of `paths` that is indexed: the ids kept at this version
/// (`ranged::WalkMemo`), the others read in one statement and kept under the version
/// read before it, as a walk is. (Their order does not matter to [`by_path`], which
/// answers by path.)
fn ids_of(idx: &Index, paths: &[&str]) -> Result<Vec<(i64, String)>, IndexError> {
    let op = "term matches";
    let mut memo = crate::ranged::kept(idx, op)?;
    let mut out = Vec::with_capacity(paths.len());
    let mut missing = Vec::new();
    for &p in paths {
        match memo.id(p) {
            Some(id) => out.push((id, p.to_owned())),
            None => missing.push(p),
        }
    }
    let read: Vec<(i64, String)> = crate::by_path::rows(idx, &missing, "f.id, f.path", op, |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    for (id, p) in &read {
        memo.keep_id(p, *id);
    }
    out.extend(read);
    Ok(out)
}
