//! Document frequencies of query terms, to leave uninformative terms out of BM25.
//!
//! FTS5's BM25 clamps the IDF of a term found in half the files or more to almost
//! zero, so such a term adds nothing to any score; yet scoring it means reading the
//! positions of every file that holds it. A query like "what did Caroline paint",
//! where Caroline is in most files, spent nearly all its time there. Leaving those
//! terms out of the scored query changes no score of a file that matches another
//! term; they still count in the all-terms set.
//!
//! The frequencies come from FTS5 itself: the query term is tokenised by inserting it
//! into a temporary FTS5 table with the same tokenizer (so the stem is exactly the
//! one in the index — no second stemmer to drift from SQLite's), then looked up in an
//! `fts5vocab` view of the main table. Both tables live in `temp`, per connection.
//!
//! Each term's frequency is kept ([`Memo`]) with the database version it was read
//! at: one query asks for its terms three times (ranking, coverage, judging), and
//! queries share terms. A term's frequency depends on the term and the index alone
//! (not on the other terms asked with it), so a kept one is what a fresh read would
//! give while the version holds.

use std::collections::HashMap;

use rusqlite::OptionalExtension;

use crate::{Index, IndexError};

/// Terms kept at most; past it the memo starts over (a long-lived server sees an
/// open-ended vocabulary of queries).
const MEMO_TERMS: usize = 4096;

/// Document frequencies and the file count read at one database version.
#[derive(Debug)]
pub(crate) struct Memo {
    /// `PRAGMA data_version` when these were read.
    version: i64,
    /// The number of files in the index.
    files: u64,
    /// Per term (as asked), the number of files holding it.
    dfs: HashMap<String, u64>,
}

/// The tokenizer of the main full-text tables (`schema.rs`), for the scratch tables
/// that must tokenise as they do.
pub(crate) const TOKENIZER: &str = "porter unicode61 remove_diacritics 2";

/// The temporary tables of this module and of `bm25.rs`: a tokenizer table for query
/// words, and `fts5vocab` views of the main table by row and by instance.
pub(crate) fn ensure_tables(idx: &Index) -> rusqlite::Result<()> {
    if idx.vocab_ready.get() {
        return Ok(());
    }
    idx.conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.qtok USING fts5(x, tokenize = '{TOKENIZER}');
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.qtok_v USING fts5vocab(temp, qtok, 'instance');
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_v USING fts5vocab(main, fts, 'row');
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vi USING fts5vocab(main, fts, 'instance');"
    ))?;
    idx.vocab_ready.set(true);
    Ok(())
}

/// For each term, the number of files holding it (the least frequent of its tokens,
/// for a term that tokenises into several), and the number of files in the index.
pub(crate) fn doc_freqs(idx: &Index, terms: &[String]) -> Result<(Vec<u64>, u64), IndexError> {
    let version: i64 = idx
        .conn
        .prepare_cached("PRAGMA data_version")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(idx.err("term frequencies"))?;
    let mut memo = idx.doc_freq_memo.borrow_mut();
    // Another connection committed (or this one applied a batch, which drops the
    // memo), or the memo is full: start over.
    let kept = match memo.take() {
        Some(m) if m.version == version && m.dfs.len() <= MEMO_TERMS => m,
        _ => Memo {
            version,
            files: file_count(idx)?,
            dfs: HashMap::new(),
        },
    };
    let m = memo.insert(kept);
    let missing: Vec<String> = terms
        .iter()
        .filter(|t| !m.dfs.contains_key(*t))
        .cloned()
        .collect();
    if !missing.is_empty() {
        let got = lookup(idx, &missing)?;
        m.dfs.extend(missing.into_iter().zip(got));
    }
    let dfs = terms
        .iter()
        .map(|t| m.dfs.get(t).copied().unwrap_or(0))
        .collect();
    Ok((dfs, m.files))
}

/// The number of files in the index.
fn file_count(idx: &Index) -> Result<u64, IndexError> {
    let n: i64 = idx
        .conn
        .prepare_cached("SELECT count(*) FROM files")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(idx.err("term frequencies"))?;
    Ok(n.max(0) as u64)
}

/// The tokens each of `texts` makes under the index's tokenizer, in order: the
/// stems the index holds (`bm25.rs` looks postings up by them).
pub(crate) fn tokenise(idx: &Index, texts: &[&str]) -> rusqlite::Result<Vec<Vec<String>>> {
    ensure_tables(idx)?;
    let c = &idx.conn;
    c.prepare_cached("DELETE FROM temp.qtok")?.execute([])?;
    {
        let mut ins = c.prepare_cached("INSERT INTO temp.qtok (rowid, x) VALUES (?1, ?2)")?;
        for (i, t) in texts.iter().enumerate() {
            ins.execute(rusqlite::params![i as i64, t])?;
        }
    }
    let mut out = vec![Vec::new(); texts.len()];
    let mut toks =
        c.prepare_cached("SELECT doc, term FROM temp.qtok_v ORDER BY doc, \"offset\"")?;
    let rows = toks.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (i, tok) = row?;
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| out.get_mut(i)) {
            slot.push(tok);
        }
    }
    Ok(out)
}

/// Each term's document frequency, read from the index (no memo).
fn lookup(idx: &Index, terms: &[String]) -> Result<Vec<u64>, IndexError> {
    let op = "term frequencies";
    let texts: Vec<&str> = terms.iter().map(String::as_str).collect();
    let tokens = tokenise(idx, &texts).map_err(idx.err(op))?;
    let mut look = idx
        .conn
        .prepare_cached("SELECT doc FROM temp.fts_v WHERE term = ?1")
        .map_err(idx.err(op))?;
    let mut dfs = Vec::with_capacity(terms.len());
    for toks in tokens {
        // The least frequent of its tokens; a term with none matches nothing.
        let mut df = u64::MAX;
        for tok in &toks {
            let n: i64 = look
                .query_row([tok], |r| r.get(0))
                .optional()
                .map_err(idx.err(op))?
                .unwrap_or(0);
            df = df.min(n.max(0) as u64);
        }
        dfs.push(if toks.is_empty() { 0 } else { df });
    }
    Ok(dfs)
}
