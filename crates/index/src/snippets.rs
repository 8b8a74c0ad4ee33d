//! Snippets of the hits a retrieve shows: FTS5's `snippet()`, made on the main table
//! or on a scratch table that holds only the rows asked for, whichever reads less.
//!
//! `snippet()` works on a row a full-text MATCH found. On the store's table that
//! MATCH walks every posting of every query term: rowids are path hashes, so no
//! rowid range narrows the walk (and a MATCH per row costs a seek per term and
//! segment, more than the walk). The walk grows with the store — at 100k files it
//! was most of a retrieve's decoration — while a retrieve shows ten rows.
//!
//! A snippet depends only on the row's text, the tokenizer and the MATCH's phrases,
//! no statistic of the table (FTS5's `fts5SnippetFunction` scores windows of the
//! row's own phrase instances). So the same MATCH over `temp.snip`, an FTS5 table
//! with the same columns and tokenizer that indexes copies of the rows asked for,
//! gives the same snippets byte for byte, for a cost that grows with the rows and
//! not with the store. `temp.snip` reads its content from a view of the main table
//! (external content), so a row is not stored twice and `delete-all` empties the
//! index at once; both live in `temp`, per connection, like `doc_freq.rs`'s tables.
//!
//! Which is cheaper is read off the store: the walk reads the query terms' postings
//! (their document frequencies, which the lexical arm has already asked for), the
//! copy indexes each row again ([`POSTINGS_PER_ROW`]). A lexical search that shows
//! hundreds of hits in a small store walks; a retrieve's ten hits in a large one are
//! copied.

use std::collections::HashMap;

use rusqlite::{params_from_iter, types::Value};

use crate::query::QueryTerms;
use crate::{Index, IndexError};

/// What copying one row into the scratch table and indexing it costs, in postings
/// of the walk. Measured on this project's 2-core machine (`BENCHMARKS.md`, session
/// 46), synthetic stores of 10k and 100k files, ten rows asked for: the walk costs
/// about 0.09 µs a posting at both sizes, and copying costs 20–30 µs a row more than
/// the walk's fixed part (a body tokenised again, FTS5's work per row).
const POSTINGS_PER_ROW: u64 = 250;

/// For each of `ids` that `any` (the MATCH string of `terms`) matches, its snippet:
/// the body's, else the summary's, else the title's, whichever shows a matched term
/// (`[`…`]`, `…` where cut, `tokens` tokens at most); with none, the summary, or the
/// title when the summary is blank. Ids the MATCH does not find are left out.
pub(crate) fn of(
    idx: &Index,
    terms: &QueryTerms,
    any: &str,
    ids: &[i64],
    tokens: i64,
) -> Result<HashMap<i64, String>, IndexError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let (dfs, _) = crate::doc_freq::doc_freqs(idx, &terms.terms)?;
    let postings: u64 = dfs.iter().sum();
    if postings <= POSTINGS_PER_ROW.saturating_mul(ids.len() as u64) {
        walked(idx, any, ids, tokens)
    } else {
        copied(idx, any, ids, tokens)
    }
}

/// The first column of `body`, `summary`, `title` whose snippet shows a match, else
/// the summary, else the title (a row of the queries below).
fn pick(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String)> {
    let id: i64 = r.get(0)?;
    for col in 1..=3 {
        let s: String = r.get(col)?;
        if s.contains('[') {
            return Ok((id, s));
        }
    }
    let summary: String = r.get(4)?;
    Ok((
        id,
        if summary.trim().is_empty() {
            r.get(5)?
        } else {
            summary
        },
    ))
}

/// The snippets by one MATCH over the main table in the rows' rowid range; `+rowid
/// IN (…)` keeps the list from FTS5 (which would run one full-text query per id,
/// each seeking every segment of every term) and filters the range's rows before
/// their snippets are made.
fn walked(
    idx: &Index,
    any: &str,
    ids: &[i64],
    tokens: i64,
) -> Result<HashMap<i64, String>, IndexError> {
    let (Some(lo), Some(hi)) = (ids.iter().min(), ids.iter().max()) else {
        return Ok(HashMap::new());
    };
    let placeholders = (4..ids.len() + 4)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let sql = format!(
        "SELECT rowid, snippet(fts, 5, '[', ']', '…', {tokens}),
                snippet(fts, 1, '[', ']', '…', {tokens}),
                snippet(fts, 0, '[', ']', '…', {tokens}), summary, title
         FROM fts WHERE fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3 AND +rowid IN ({placeholders})"
    );
    let mut bind = vec![
        Value::Text(any.to_owned()),
        Value::Integer(*lo),
        Value::Integer(*hi),
    ];
    bind.extend(ids.iter().map(|id| Value::Integer(*id)));
    let op = "snippets";
    let mut st = idx.conn.prepare_cached(&sql).map_err(idx.err(op))?;
    let rows = st
        .query_map(params_from_iter(bind), pick)
        .map_err(idx.err(op))?;
    rows.collect::<rusqlite::Result<_>>().map_err(idx.err(op))
}

/// The scratch table, its content view, and the index's tokenizer (as `schema.rs`
/// declares the main table: `doc_freq::TOKENIZER`).
fn ensure_tables(idx: &Index) -> rusqlite::Result<()> {
    if idx.snippets_ready.get() {
        return Ok(());
    }
    idx.conn.execute_batch(&format!(
        "CREATE TEMP VIEW IF NOT EXISTS snip_rows AS
             SELECT rowid AS id, title, summary, cues, entities, tags, body FROM main.fts;
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.snip USING fts5(
             title, summary, cues, entities, tags, body,
             content = 'snip_rows', content_rowid = 'id',
             tokenize = '{}');",
        crate::doc_freq::TOKENIZER
    ))?;
    idx.snippets_ready.set(true);
    Ok(())
}

/// The snippets by the same MATCH over the scratch table, holding `ids` (distinct)
/// alone; emptied again before returning.
fn copied(
    idx: &Index,
    any: &str,
    ids: &[i64],
    tokens: i64,
) -> Result<HashMap<i64, String>, IndexError> {
    let op = "snippets";
    let c = &idx.conn;
    let fill = || -> rusqlite::Result<HashMap<i64, String>> {
        ensure_tables(idx)?;
        {
            let mut ins = c.prepare_cached(
                "INSERT INTO temp.snip (rowid, title, summary, cues, entities, tags, body)
                 SELECT rowid, title, summary, cues, entities, tags, body
                 FROM main.fts WHERE rowid = ?1",
            )?;
            let mut seen = std::collections::HashSet::new();
            for id in ids.iter().filter(|id| seen.insert(**id)) {
                ins.execute([id])?;
            }
        }
        let sql = format!(
            "SELECT rowid, snippet(snip, 5, '[', ']', '…', {tokens}),
                    snippet(snip, 1, '[', ']', '…', {tokens}),
                    snippet(snip, 0, '[', ']', '…', {tokens}), summary, title
             FROM temp.snip WHERE snip MATCH ?1"
        );
        let mut st = c.prepare_cached(&sql)?;
        let rows = st.query_map([any], pick)?;
        rows.collect()
    };
    let out = fill();
    // Emptied whatever happened, so that the next call starts from no rows.
    let emptied = c
        .prepare_cached("INSERT INTO temp.snip (snip) VALUES ('delete-all')")
        .and_then(|mut s| s.execute([]));
    if out.is_err() || emptied.is_err() {
        // A transaction rolled back may have taken the tables with it: the next
        // call creates them again if so.
        idx.snippets_ready.set(false);
    }
    let out = out.map_err(idx.err(op))?;
    emptied.map_err(idx.err(op))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::indexed;
    use crate::{SyncBatch, query::QueryTerms};

    /// The snippets as decoration made them before: one MATCH over the main table,
    /// restricted to `ids` (the oracle these must equal).
    fn on_main_table(idx: &Index, any: &str, ids: &[i64]) -> HashMap<i64, String> {
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let sql = format!(
            "SELECT rowid, snippet(fts, 5, '[', ']', '…', 24), snippet(fts, 1, '[', ']', '…', 24),
                    snippet(fts, 0, '[', ']', '…', 24), summary, title
             FROM fts WHERE fts MATCH ?1 AND rowid IN ({list})"
        );
        let mut st = idx.conn.prepare(&sql).expect("oracle query");
        // The same choice of column as the code under test: what differs is the table.
        st.query_map([any], pick)
            .expect("oracle rows")
            .collect::<rusqlite::Result<_>>()
            .expect("oracle rows")
    }

    /// Every file's id, in path order.
    pub(super) fn all_ids(idx: &Index) -> Vec<i64> {
        let mut st = idx
            .conn
            .prepare("SELECT id FROM files ORDER BY path")
            .expect("ids");
        st.query_map([], |r| r.get(0))
            .expect("ids")
            .collect::<rusqlite::Result<_>>()
            .expect("ids")
    }

    /// A store whose words recur across files, fields and sentences, so that
    /// snippets have windows to choose between: long bodies, summaries, cues,
    /// tags, entities, words with diacritics and stems ("running" / "runs").
    pub(super) fn store() -> Index {
        const WORDS: &[&str] = &[
            "garden",
            "running",
            "runs",
            "café",
            "cafe",
            "budget",
            "river",
            "plan",
            "tomato",
            "invoice",
            "Zoë",
            "zoe",
            "meeting",
            "the",
            "of",
            "kubernetes",
            "cluster",
            "guitar",
            "lesson",
            "paid",
            "salary",
            "dentist",
            "appointment",
            "sunday",
        ];
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: usize| rng.usize(..n);
        let mut batch = SyncBatch {
            commit: "c1".into(),
            tree: "t1".into(),
            full: true,
            ..SyncBatch::default()
        };
        for i in 0..60 {
            let mut sentence = |len: usize| {
                let mut s: Vec<&str> = (0..len).map(|_| WORDS[next(WORDS.len())]).collect();
                s.push(".");
                s.join(" ")
            };
            let title = sentence(4);
            let body: Vec<String> = (0..(1 + i % 9)).map(|_| sentence(12)).collect();
            let summary = if i % 3 == 0 {
                format!(
                    "summary: {}\n",
                    serde_json::to_string(&sentence(6)).unwrap_or_default()
                )
            } else {
                String::new()
            };
            let text = format!(
                "---\ntitle: {}\n{summary}cues:\n  - {}\ntags: [{}]\n---\n{}\n",
                serde_json::to_string(&title).unwrap_or_default(),
                serde_json::to_string(&sentence(5)).unwrap_or_default(),
                WORDS[next(WORDS.len())].to_lowercase(),
                body.join(if i % 2 == 0 { " " } else { "\n\n## Part\n\n" }),
            );
            batch
                .upserted
                .push(indexed(&format!("facts/misc/m{i:03}.md"), &text).expect("valid memory"));
        }
        let mut idx = Index::open_in_memory().expect("index");
        idx.apply(&batch).expect("apply");
        idx
    }

    #[test]
    fn the_scratch_table_gives_the_main_tables_snippets() {
        let idx = store();
        let ids = all_ids(&idx);
        let queries = [
            "garden",
            "where is my garden budget",
            "running the river",
            "cafe zoe",
            "kubernetes cluster invoice",
            "dentist appointment sunday",
            "nothing matches this",
        ];
        let mut compared = 0;
        for (k, q) in queries.iter().enumerate() {
            let Some(any) = QueryTerms::parse(q).match_any() else {
                continue;
            };
            // Several sets of shown rows, as retrieves would ask: every row, a few
            // spread over the table, one.
            for chosen in [
                ids.clone(),
                ids.iter().copied().skip(k).step_by(7).collect(),
                ids.iter().copied().skip(k + 3).take(1).collect(),
            ] {
                let got = copied(&idx, &any, &chosen, 24).expect("snippets");
                let want = on_main_table(&idx, &any, &chosen);
                assert_eq!(walked(&idx, &any, &chosen, 24).expect("walked"), want);
                let terms = QueryTerms::parse(q);
                assert_eq!(of(&idx, &terms, &any, &chosen, 24).expect("of"), want);
                assert_eq!(got, want, "query {q:?}");
                compared += want.len();
            }
        }
        // The oracle found rows, and snippets that show a match.
        assert!(compared > 100, "{compared}");
        let any = QueryTerms::parse("garden").match_any().expect("a term");
        assert!(
            copied(&idx, &any, &ids, 24)
                .expect("snippets")
                .values()
                .any(|s| s.contains("[garden]"))
        );
    }

    #[test]
    fn each_call_sees_only_its_own_rows() {
        let idx = store();
        let ids = all_ids(&idx);
        let any = QueryTerms::parse("garden river budget")
            .match_any()
            .expect("terms");
        let (first, second) = ids.split_at(ids.len() / 2);
        let a = copied(&idx, &any, first, 24).expect("first");
        let b = copied(&idx, &any, second, 24).expect("second");
        assert!(!a.is_empty() && !b.is_empty());
        assert!(a.keys().all(|id| first.contains(id)));
        assert!(
            b.keys().all(|id| second.contains(id)),
            "rows of the first call left over"
        );
        // And inside a caller's read transaction, as a retrieve runs.
        idx.conn.execute_batch("BEGIN").expect("begin");
        let c = copied(&idx, &any, second, 24).expect("in a transaction");
        idx.conn.execute_batch("COMMIT").expect("commit");
        assert_eq!(b, c);
    }

    #[test]
    fn the_scratch_table_tokenises_as_the_main_table() {
        let idx = Index::open_in_memory().expect("index");
        let sql: String = idx
            .conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'fts'",
                [],
                |r| r.get(0),
            )
            .expect("the main table's declaration");
        assert!(
            sql.contains(&format!("tokenize = '{}'", crate::doc_freq::TOKENIZER)),
            "{sql}"
        );
    }
}

#[cfg(test)]
mod rollback {
    use super::*;
    use crate::query::QueryTerms;

    /// A read transaction that rolls back (`Index::read` when its commit fails)
    /// takes the temporary tables made inside it: what reads them afterwards on the
    /// same connection must still work (a server keeps its connection for its whole
    /// life).
    #[test]
    fn scratch_tables_outlive_a_rolled_back_transaction() {
        let idx = super::tests::store();
        let terms = QueryTerms::parse("garden river budget");
        let any = terms.match_any().expect("terms");
        let ids = super::tests::all_ids(&idx);
        idx.conn.execute_batch("BEGIN").expect("begin");
        let before = copied(&idx, &any, &ids, 24).expect("copied");
        crate::doc_freq::doc_freqs(&idx, &terms.terms).expect("document frequencies");
        idx.roll_back();
        assert_eq!(copied(&idx, &any, &ids, 24).expect("copied after"), before);
        // A term not kept yet, so the tokenizer table is read again.
        let more = QueryTerms::parse("tomato invoice");
        crate::doc_freq::doc_freqs(&idx, &more.terms).expect("frequencies after");
    }
}
