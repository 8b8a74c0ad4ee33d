//! The lexical arm: FTS5 BM25 over title, summary, cues, entities, tags and body.
//!
//! Both the all-terms (AND) and the any-term (OR) sets are read (the AND one
//! unscored, and from the query clauses' kept walks when it can be: see the notes in
//! `search`); they are fused inside
//! the arm by weighted reciprocal rank (all-terms counts [`ALL_TERMS_WEIGHT`] times
//! as much as any-term), so a document matching only some terms still ranks,
//! just below those matching all of them — no AND→ANY cliff, no empty result
//! because one term was missing. The exposed `score` is the raw column-weighted BM25
//! of the any-term query, negated so that higher is better; `rank` is the fused rank.

use std::collections::{HashMap, HashSet};

use gitloom_model::Tier;

use crate::query::{QueryTerms, quote};
use crate::{Index, IndexError};

/// Reciprocal-rank constant for the in-arm fusion.
pub const RRF_K: f64 = 60.0;
/// Weight of the all-terms list relative to the any-term list.
pub const ALL_TERMS_WEIGHT: f64 = 2.0;
/// Tokens in a snippet.
const SNIPPET_TOKENS: i64 = 24;

/// BM25 weight per FTS column. Cues (question-shaped retrieval keys) far above body.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bm25Weights {
    pub title: f64,
    pub summary: f64,
    pub cues: f64,
    pub entities: f64,
    pub tags: f64,
    pub body: f64,
}

impl Default for Bm25Weights {
    fn default() -> Self {
        Bm25Weights {
            title: 4.0,
            summary: 2.0,
            cues: 8.0,
            entities: 3.0,
            tags: 2.0,
            body: 1.0,
        }
    }
}

impl Bm25Weights {
    fn sql(&self) -> String {
        let w = |x: f64| if x.is_finite() && x >= 0.0 { x } else { 0.0 };
        format!(
            "bm25(fts, {:?}, {:?}, {:?}, {:?}, {:?}, {:?})",
            w(self.title),
            w(self.summary),
            w(self.cues),
            w(self.entities),
            w(self.tags),
            w(self.body)
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LexicalQuery {
    pub text: String,
    pub limit: usize,
    pub tier: Option<Tier>,
    /// Topic prefix below the tier: `work` matches `work` and `work/x`, not `workshop`.
    /// A leading tier (`facts/work`) is accepted and acts as a tier filter.
    pub topic: Option<String>,
    /// Compute snippet, matched terms and section for the first N hits only (`None`:
    /// all). Ranking a deep candidate list for fusion needs none of them, and they
    /// cost a posting-list scan per term.
    pub decorate: Option<usize>,
}

/// A `##` section of a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SectionRef {
    pub heading: String,
    pub anchor: String,
    /// 1-based, inclusive file lines.
    pub start_line: usize,
    pub end_line: usize,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LexicalHit {
    pub path: String,
    pub title: String,
    /// Raw column-weighted BM25 of the any-term query, positive; higher is better.
    pub score: f64,
    /// 1-based rank after in-arm fusion.
    pub rank: usize,
    /// Whether every query term matched.
    pub all_terms: bool,
    /// IDF-weighted share of the query terms found in the file (0..1); computed for
    /// decorated hits only (0 otherwise).
    pub coverage: f64,
    /// Body excerpt (else summary, else title) with matched terms in `[` `]`.
    pub snippet: String,
    /// Query terms (after stopword removal) found in this file.
    pub matched_terms: Vec<String>,
    /// The `##` section that best matches the query, if the file has sections and one matches.
    pub section: Option<SectionRef>,
}

#[derive(Clone)]
struct Cand {
    id: i64,
    path: String,
    title: String,
    score: f64,
    all_rank: Option<usize>,
}

fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// `(tier, topic)` filters with a leading tier in the topic folded into the tier.
fn filters(q: &LexicalQuery) -> Option<(Option<&'static str>, Option<String>)> {
    let mut tier = q.tier;
    let mut topic = q
        .topic
        .as_deref()
        .map(|t| t.trim().trim_matches('/').to_owned())
        .filter(|t| !t.is_empty());
    if let Some(t) = topic.clone() {
        let (head, rest) = t.split_once('/').unwrap_or((&t, ""));
        if let Some(tt) = Tier::from_dir(head) {
            if tier.is_some_and(|x| x != tt) {
                return None; // contradictory filters: nothing can match
            }
            tier = Some(tt);
            topic = Some(rest.to_owned()).filter(|r| !r.is_empty());
        }
    }
    Some((tier.map(Tier::as_str), topic))
}

/// The lexical arm: BM25 over the any-term query, fused by reciprocal rank with the
/// all-terms ranking, the best `q.limit` kept and the first `q.decorate` decorated.
/// Its stages: [`scored_terms`], [`any_term_rows`], [`all_terms_rows`], [`rank`],
/// [`named`], then `decorate`.
pub(crate) fn search(idx: &Index, q: &LexicalQuery) -> Result<Vec<LexicalHit>, IndexError> {
    let terms = QueryTerms::parse(&q.text);
    let (Some(any), Some(all)) = (
        terms.match_any_with(&idx.vocab),
        terms.match_all_with(&idx.vocab),
    ) else {
        return Ok(Vec::new());
    };
    if q.limit == 0 {
        return Ok(Vec::new());
    }
    let Some((tier, topic)) = filters(q) else {
        return Ok(Vec::new());
    };
    let op = "lexical search";
    let scored = scored_terms(idx, &terms)?;
    let any_rows = any_term_rows(idx, &scored, tier, topic.as_deref(), op)?;
    // Term walks and file names kept across retrieves (`ranged.rs`), at this version.
    let mut memo = crate::ranged::kept(idx, op)?;
    let all_set = all_terms_rows(idx, &mut memo, &terms, &all, op)?;
    let ranked = rank(any_rows, all_set.as_ref(), q.limit);
    if ranked.is_empty() {
        return Ok(Vec::new());
    }
    let cands = named(idx, &mut memo, ranked, op)?;
    drop(memo);
    let decorated = q.decorate.unwrap_or(cands.len()).min(cands.len());
    let (mut matched, mut snippets, mut sections, coverage) =
        decorate(idx, &terms, &any, &cands[..decorated], Decor::Full)?;
    Ok(cands
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let m = matched.remove(&c.id).unwrap_or_default();
            LexicalHit {
                coverage: coverage.get(&c.id).copied().unwrap_or(0.0),
                all_terms: c.all_rank.is_some(),
                matched_terms: m,
                snippet: snippets.remove(&c.id).unwrap_or_default(),
                section: sections.remove(&c.path),
                path: c.path,
                title: c.title,
                score: c.score,
                rank: i + 1,
            }
        })
        .collect())
}

/// The terms the BM25 query scores. Terms in half the files or more score ~0 under
/// BM25 yet cost a position read per file (see doc_freq.rs): they are left out of the
/// scored query when a more informative term remains. They still count in the
/// all-terms set.
fn scored_terms<'t>(idx: &Index, terms: &'t QueryTerms) -> Result<Vec<&'t String>, IndexError> {
    if terms.terms.len() <= 1 {
        return Ok(terms.terms.iter().collect());
    }
    let (dfs, n) = crate::doc_freq::doc_freqs(idx, &terms.terms)?;
    let informative: Vec<&String> = terms
        .terms
        .iter()
        .zip(&dfs)
        .filter(|(t, df)| (**df > 0 && **df * 2 < n) || !idx.vocab.aliases(t).is_empty())
        .map(|(t, _)| t)
        .collect();
    Ok(
        if n < 64 || informative.is_empty() || informative.len() == terms.terms.len() {
            terms.terms.iter().collect()
        } else {
            informative
        },
    )
}

/// Every file matching any scored term, with its BM25 score, in `bm25_order`. Without
/// filters the scores come from the postings kept per index version (`bm25.rs`), else
/// from FTS5 over the FTS table joined to the filtered files.
fn any_term_rows(
    idx: &Index,
    scored_terms: &[&String],
    tier: Option<&'static str>,
    topic: Option<&str>,
    op: &'static str,
) -> Result<Vec<(i64, f64)>, IndexError> {
    let scored = scored_terms
        .iter()
        .map(|t| QueryTerms::clause(t, &idx.vocab))
        .collect::<Vec<_>>()
        .join(" OR ");
    // The quoted strings of `scored`, in order: FTS5 numbers its phrases so.
    let phrases: Vec<String> = scored_terms
        .iter()
        .flat_map(|t| {
            std::iter::once(t.to_string())
                .chain(idx.vocab.aliases(t).into_iter().map(str::to_owned))
        })
        .collect();
    let filtered = tier.is_some() || topic.is_some();
    let kept = if filtered {
        None
    } else {
        crate::bm25::scored(idx, &phrases, &idx.weights)?
    };
    let mut rows: Vec<(i64, f64)> = match kept {
        Some(rows) => rows,
        None => {
            let bm25 = idx.weights.sql();
            // Ranked by `bm25_order` below, ties broken on the row id, which is a hash
            // of the path (see `free_id`): the same in every build of the index,
            // whatever order files were inserted in. Without filters the FTS table
            // alone is scanned and ranked; path and title are fetched for the
            // survivors only (a join per match doubles the cost of a query whose
            // terms are in most files).
            let sql = if filtered {
                format!(
                    "SELECT fts.rowid, {bm25} AS s FROM fts JOIN files f ON f.id = fts.rowid
                     WHERE fts MATCH ?1 AND (?2 IS NULL OR f.tier = ?2)
                       AND (?3 IS NULL OR f.topic = ?3 OR f.topic LIKE ?4 ESCAPE '\\')"
                )
            } else {
                format!(
                    "SELECT rowid, {bm25} AS s FROM fts
                     WHERE fts MATCH ?1 AND ?2 IS NULL AND ?3 IS NULL AND ?4 IS NULL"
                )
            };
            let mut st = idx.conn.prepare_cached(&sql).map_err(idx.err(op))?;
            let like = topic.map(|t| format!("{}/%", like_escape(t)));
            // One BM25 pass: the any-term query, every match ranked. A document
            // matching all terms gets the same BM25 under the AND query as under the
            // OR query (same phrases, same statistics), so the all-terms ranking is
            // the any-term ranking restricted to the documents in the (cheap,
            // unscored) all-terms set.
            let rows = st
                .query_map(rusqlite::params![scored, tier, topic, like], |r| {
                    Ok((r.get(0)?, r.get::<_, f64>(1)?))
                })
                .map_err(idx.err(op))?;
            rows.collect::<Result<_, _>>().map_err(idx.err(op))?
        }
    };
    bm25_order(&mut rows);
    Ok(rows)
}

/// The files matching every term (`None` for a one-term query, where that is every
/// match). The all-terms expression is the terms' clauses joined by AND, and FTS5
/// matches `a AND b` on the rows matching both: the intersection of the clauses' kept
/// walks (`ranged.rs`), which coverage asks for the same clauses anyway. Read with
/// the full-text query `all` when a walk is empty (an empty phrase drops out of an AND
/// but matches nothing alone) or was not kept.
fn all_terms_rows(
    idx: &Index,
    memo: &mut crate::ranged::WalkMemo,
    terms: &QueryTerms,
    all: &str,
    op: &'static str,
) -> Result<Option<HashSet<i64>>, IndexError> {
    if terms.terms.len() <= 1 {
        return Ok(None);
    }
    let clauses: Vec<String> = terms
        .terms
        .iter()
        .map(|t| QueryTerms::clause(t, &idx.vocab))
        .collect();
    let kept = if idx.all_terms_by_query.get() {
        None
    } else {
        crate::ranged::all_of(idx, memo, crate::ranged::FtsTable::Files, &clauses, op)?
    };
    Ok(Some(match kept {
        Some(rows) => rows.into_iter().collect(),
        None => {
            let mut st = idx
                .conn
                .prepare_cached("SELECT rowid FROM fts WHERE fts MATCH ?1")
                .map_err(idx.err(op))?;
            let rows = st
                .query_map([all], |r| r.get::<_, i64>(0))
                .map_err(idx.err(op))?;
            rows.collect::<Result<_, _>>().map_err(idx.err(op))?
        }
    }))
}

/// A match ranked: row id, negated BM25 (higher is better), any-term rank, all-terms
/// rank (`None` when it lacks a term).
type Ranked = (i64, f64, usize, Option<usize>);

/// The best `limit` matches by the two rankings fused (the all-terms rank weighs
/// [`ALL_TERMS_WEIGHT`] times the any-term rank), then score, then row id; best first.
fn rank(any_rows: Vec<(i64, f64)>, all_set: Option<&HashSet<i64>>, limit: usize) -> Vec<Ranked> {
    let mut ranked: Vec<Ranked> = Vec::with_capacity(any_rows.len());
    let mut all_count = 0;
    for (i, (id, s)) in any_rows.into_iter().enumerate() {
        let all_rank = match all_set {
            Some(set) if !set.contains(&id) => None,
            _ => {
                all_count += 1;
                Some(all_count)
            }
        };
        ranked.push((id, -s, i + 1, all_rank));
    }
    let fused = |r: &Ranked| {
        r.3.map_or(0.0, |a| ALL_TERMS_WEIGHT / (RRF_K + a as f64)) + 1.0 / (RRF_K + r.2 as f64)
    };
    let by_fused = |a: &Ranked, b: &Ranked| {
        fused(b)
            .total_cmp(&fused(a))
            .then(b.1.total_cmp(&a.1))
            .then(a.0.cmp(&b.0))
    };
    // Only the first `limit` are kept: they are selected, then sorted. The order is
    // total (row ids are distinct), so this is the full sort's head.
    if ranked.len() > limit {
        ranked.select_nth_unstable_by(limit - 1, by_fused);
        ranked.truncate(limit);
    }
    ranked.sort_unstable_by(by_fused);
    ranked
}

/// The ranked matches with their paths and titles: those not kept from earlier
/// retrieves are read in one statement (the ids as one JSON array, each an index
/// probe) and kept.
fn named(
    idx: &Index,
    memo: &mut crate::ranged::WalkMemo,
    ranked: Vec<Ranked>,
    op: &'static str,
) -> Result<Vec<Cand>, IndexError> {
    let ids: Vec<i64> = ranked
        .iter()
        .map(|r| r.0)
        .filter(|id| memo.name(*id).is_none())
        .collect();
    if !ids.is_empty() {
        let json = serde_json::to_string(&ids).map_err(|e| IndexError::Invalid {
            path: idx.path.clone(),
            message: format!("{op}: {e}"),
        })?;
        let mut st = idx
            .conn
            .prepare_cached(
                "SELECT f.id, f.path, f.title FROM json_each(?1) AS j
                 CROSS JOIN files AS f ON f.id = j.value",
            )
            .map_err(idx.err(op))?;
        let rows = st
            .query_map([json], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(idx.err(op))?;
        for row in rows {
            let (id, path, title) = row.map_err(idx.err(op))?;
            memo.keep_name(id, path, title);
        }
    }
    let mut cands: Vec<Cand> = Vec::with_capacity(ranked.len());
    for (id, score, _, all_rank) in ranked {
        // A full-text row always has its `files` row (one transaction writes both);
        // were one missing, this fails as the lookup of it alone did.
        let (path, title) = memo
            .name(id)
            .cloned()
            .ok_or(rusqlite::Error::QueryReturnedNoRows)
            .map_err(idx.err(op))?;
        cands.push(Cand {
            id,
            path,
            title,
            score,
            all_rank,
        });
    }
    Ok(cands)
}

/// Sorts `(rowid, bm25)` rows as `ORDER BY bm25, rowid` would: lowest (best) BM25
/// first, ties to the lower row id. Done here rather than in SQL: SQLite's sorter
/// allocated and copied a record per matching row, about a tenth of a warm
/// retrieve at 10k memories (BENCHMARKS.md, session 21). SQLite compares REALs by
/// value (`-0.0 = 0.0`), as `partial_cmp` does; a NaN cannot arrive (SQLite stores
/// it as NULL, which the row read refuses).
///
/// Sorted on integer keys ([`order_key`]): a float comparison with its NaN branch
/// cost about a twentieth of the lexical arm at 10k memories (session 29).
fn bm25_order(rows: &mut [(i64, f64)]) {
    rows.sort_unstable_by_key(|&(id, s)| (order_key(s), id));
}

/// An integer that orders as `partial_cmp` orders finite and infinite REALs: by
/// value, `-0.0` equal to `0.0`.
fn order_key(s: f64) -> u64 {
    // `-0.0 == 0.0`: both take the bits of `0.0`.
    let bits = if s == 0.0 { 0 } else { s.to_bits() };
    // Negatives (sign bit set) order in reverse of their bits, below every positive.
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

type Decorations = (
    HashMap<i64, Vec<String>>,
    HashMap<i64, String>,
    HashMap<String, SectionRef>,
    HashMap<i64, f64>,
);

/// What [`Index::lexical_details`](crate::Index::lexical_details) reads of each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decor {
    /// The query terms it holds and their coverage: what judging needs.
    Terms,
    /// Those, and a snippet and the best section: what a hit shows.
    Full,
    /// The snippet and the best section alone, for hits whose terms and coverage
    /// were read already ([`Decor::Terms`]): those come back empty.
    Shown,
}

/// Matched terms (unless [`Decor::Shown`]), and (unless [`Decor::Terms`]) snippet
/// and best section, for each candidate.
fn decorate(
    idx: &Index,
    terms: &QueryTerms,
    any: &str,
    cands: &[Cand],
    decor: Decor,
) -> Result<Decorations, IndexError> {
    // Which terms each candidate holds, and their IDF-weighted share.
    let (matched, coverage) = if decor == Decor::Shown {
        Default::default()
    } else {
        let ids: Vec<i64> = cands.iter().map(|c| c.id).collect();
        crate::coverage::matches(idx, terms, &ids)?
    };
    if decor == Decor::Terms {
        return Ok((matched, HashMap::new(), HashMap::new(), coverage));
    }

    // Snippets: body, else summary, else title (`snippets.rs`).
    let ids: Vec<i64> = cands.iter().map(|c| c.id).collect();
    let snippets = crate::snippets::of(idx, terms, any, &ids, SNIPPET_TOKENS)?;

    // Best-matching section per file.
    let mut sections: HashMap<String, SectionRef> = HashMap::new();
    {
        // Section rowids of the hits first (indexed by path), so BM25 is computed
        // for those sections only, not for every matching section in the store.
        let mut sids: Vec<i64> = Vec::new();
        {
            let mut st = idx
                .conn
                .prepare_cached("SELECT id FROM sections WHERE path = ?1")
                .map_err(idx.err("sections"))?;
            for c in cands {
                let rows = st
                    .query_map([&c.path], |r| r.get::<_, i64>(0))
                    .map_err(idx.err("sections"))?;
                for id in rows {
                    sids.push(id.map_err(idx.err("sections"))?);
                }
            }
        }
        // Sections are scored by how many distinct query terms they contain (earliest
        // section wins ties). No bm25() here: it would scan every posting of each
        // term across all sections to compute its statistics, on every query.
        let mut hits: HashMap<i64, usize> = HashMap::new();
        let quoted: Vec<String> = terms.terms.iter().map(|t| quote(t)).collect();
        let found = crate::ranged::matching(
            idx,
            crate::ranged::FtsTable::Sections,
            &quoted,
            &sids,
            "sections",
        )?;
        for id in found.into_iter().flatten() {
            *hits.entry(id).or_default() += 1;
        }
        let mut st = idx
            .conn
            .prepare_cached(
                "SELECT path, heading, anchor, start_line, end_line, ord FROM sections WHERE id = ?1",
            )
            .map_err(idx.err("sections"))?;
        let mut best: HashMap<String, ((usize, i64), SectionRef)> = HashMap::new();
        for (sid, n) in hits {
            let (p, sec, ord) = st
                .query_row([sid], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        SectionRef {
                            heading: r.get(1)?,
                            anchor: r.get(2)?,
                            start_line: r.get::<_, i64>(3)?.max(0) as usize,
                            end_line: r.get::<_, i64>(4)?.max(0) as usize,
                        },
                        r.get::<_, i64>(5)?,
                    ))
                })
                .map_err(idx.err("sections"))?;
            let key = (n, -ord);
            match best.get(&p) {
                Some((old, _)) if *old >= key => {}
                _ => {
                    best.insert(p, (key, sec));
                }
            }
        }
        for (p, (_, sec)) in best {
            sections.insert(p, sec);
        }
    }

    Ok((matched, snippets, sections, coverage))
}

/// Snippet, matched terms and best section for files found by other arms: the
/// same decoration a lexical hit gets, keyed by path. Files the query does not
/// match lexically get their summary or title as snippet and no terms.
pub(crate) fn details(
    idx: &Index,
    text: &str,
    paths: &[String],
    decor: Decor,
) -> Result<HashMap<String, LexicalHit>, IndexError> {
    let cands: Vec<(Cand, Option<String>)> = crate::by_path::rows(
        idx,
        paths,
        "f.id, f.title, f.summary, f.path",
        "details",
        |r| {
            Ok((
                Cand {
                    id: r.get(0)?,
                    path: r.get(3)?,
                    title: r.get(1)?,
                    score: 0.0,
                    all_rank: None,
                },
                r.get(2)?,
            ))
        },
    )?;
    let terms = QueryTerms::parse(text);
    let (mut matched, mut snippets, mut sections, coverage) = match terms.match_any_with(&idx.vocab)
    {
        Some(any) => {
            let only: Vec<Cand> = cands.iter().map(|(c, _)| c.clone()).collect();
            decorate(idx, &terms, &any, &only, decor)?
        }
        None => Default::default(),
    };
    Ok(cands
        .into_iter()
        .map(|(c, summary)| {
            let m = matched.remove(&c.id).unwrap_or_default();
            let snippet = snippets
                .remove(&c.id)
                .filter(|s| s.contains('['))
                .or(summary.filter(|s| !s.trim().is_empty()))
                .unwrap_or_else(|| c.title.clone());
            let hit = LexicalHit {
                coverage: coverage.get(&c.id).copied().unwrap_or(0.0),
                all_terms: !terms.terms.is_empty() && m.len() == terms.terms.len(),
                matched_terms: m,
                snippet,
                section: sections.remove(&c.path),
                path: c.path.clone(),
                title: c.title,
                score: 0.0,
                rank: 0,
            };
            (c.path, hit)
        })
        .collect())
}

/// The MATCH strings [`Index::lexical`] would run for `text`: (all-terms, any-term).
/// `None` when every word is a stopword.
pub fn match_strings(text: &str) -> Option<(String, String)> {
    let t = QueryTerms::parse(text);
    Some((t.match_all()?, t.match_any()?))
}

#[cfg(test)]
mod tests {
    use super::bm25_order;

    #[test]
    fn bm25_order_is_sqlites_order_by_score_then_rowid() {
        let mut rows = vec![
            (9, -1.5),
            (3, -0.25),
            (7, -1.5),
            (2, 0.0),
            (1, -0.0),
            (5, -3.0),
        ];
        bm25_order(&mut rows);
        // Lowest score first; equal scores (-0.0 equals 0.0, as in SQLite) by row id.
        assert_eq!(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            [5, 7, 9, 3, 1, 2]
        );
    }

    /// The integer keys sort as the float comparison they replaced, on scores with
    /// many ties, both zeros, infinities and subnormals.
    #[test]
    fn bm25_order_keys_sort_as_the_float_comparison() {
        let pool = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            -3.25,
            f64::MIN_POSITIVE / 4.0,
            -f64::MIN_POSITIVE / 4.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1e-300,
            7.0e12,
            -7.0e12,
        ];
        let mut rng = fastrand::Rng::with_seed(29);
        for n in [0, 1, 2, 17, 400] {
            let rows: Vec<(i64, f64)> = (0..n)
                .map(|_| {
                    let s = if rng.bool() {
                        pool[rng.usize(..pool.len())]
                    } else {
                        -rng.f64() * 20.0
                    };
                    (rng.i64(-50..50), s)
                })
                .collect();
            let mut expected = rows.clone();
            expected.sort_by(|a, b| {
                a.1.partial_cmp(&b.1)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.0.cmp(&b.0))
            });
            let mut got = rows;
            bm25_order(&mut got);
            // Bitwise: -0.0 and 0.0 rows with the same id may swap, and compare equal.
            let ids = |v: &[(i64, f64)]| v.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>();
            assert_eq!(ids(&got), ids(&expected), "n = {n}");
        }
    }
}
