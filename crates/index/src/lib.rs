//! gitloom-index: the derived SQLite index of a store (`.gitloom/index.db`).
//!
//! What it is for: holding, for every memory file of the last synced commit, the
//! rows retrieval needs — file metadata and dates, `##` sections with line spans,
//! cues, an FTS5 table (porter-stemmed, cues weighted far above body), links
//! (wikilinks, `related:`, `supersedes`; dangling ones kept and re-resolved on every
//! sync), entities and mentions, timeline assertions, per-topic subtree counts and
//! the files that failed to parse. A changeset ([`SyncBatch`]) is applied in one
//! transaction, so readers on other connections (WAL) see a whole commit or none of it.
//! The lexical arm ([`Index::lexical`]) lives here: stopword-aware, injection-proof
//! MATCH strings, all-terms and any-term queries fused without a cliff, raw BM25
//! exposed as a positive score.
//!
//! What it is not for: reading git (the engine diffs trees and hands us parsed
//! [`Memory`] values), embeddings (they live apart from this rebuildable cache),
//! fusion across arms, priors or abstention (the engine). Everything here can be
//! thrown away and rebuilt from git; a corrupt or outdated file is replaced by an
//! empty index on [`Index::open`] ([`OpenStatus::Reset`]) rather than reported as an error.
#![forbid(unsafe_code)]

mod bm25;
mod by_path;
mod coverage;
mod doc_freq;
mod entity;
mod error;
mod files;
mod lexical;
mod links;
mod query;
mod ranged;
mod schema;
#[cfg(test)]
mod segments;
mod snapshot;
mod snippets;
mod stats;
mod sync;
#[doc(hidden)]
pub mod testutil;
mod topics;
mod units;
mod vocab;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use bm25::KeptScoring;
pub use coverage::TermMatch;
pub use entity::{EntityHit, EntityMatch};
pub use error::IndexError;
pub use files::{FileRow, PriorAsks, PriorFacts, Stamp};
pub use gitloom_model::{Memory, StorePath, Tier};
pub use lexical::{
    ALL_TERMS_WEIGHT, Bm25Weights, Decor, LexicalHit, LexicalQuery, RRF_K, SectionRef,
    match_strings,
};
pub use links::{LinkKind, LinkRow, MentionRow};
pub use query::{QueryTerms, is_stopword};
pub use schema::SCHEMA_VERSION;
pub use snapshot::{DanglingLink, Snapshot, snapshot_diff};
pub use stats::IndexStats;
pub use sync::{ApplyStats, IndexedFile, Problem, Said, SyncBatch};
pub use topics::{TopicCount, TreeFile, TreeListing};
pub use units::{EmbedUnit, SAID_LABEL, UnitKind};
pub use vocab::{Vocab, VocabGroup};

/// What the last applied batch was built from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IndexedState {
    pub commit: String,
    pub tree: String,
}

/// How [`Index::open`] found the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenStatus {
    /// An index of the current schema was there; it may be synced incrementally.
    Reused,
    /// There was no file; an empty index was created. The caller must rebuild.
    Created,
    /// The file was unusable (not a database, truncated, missing tables, another
    /// schema version) and was replaced by an empty index. The caller must rebuild,
    /// and should say why.
    Reset { reason: String },
}

/// One connection to an index database.
pub struct Index {
    conn: rusqlite::Connection,
    /// Where the database lives (`:memory:` for an in-memory index), for error messages.
    path: PathBuf,
    weights: Bm25Weights,
    /// Test hook: make [`Index::apply`] fail after this many upserts.
    fail_after: Option<usize>,
    /// The temporary vocabulary tables of `doc_freq.rs` exist on this connection.
    vocab_ready: std::cell::Cell<bool>,
    /// The scratch table of `snippets.rs` exists on this connection.
    snippets_ready: std::cell::Cell<bool>,
    /// Document frequencies per term and the file count, with the database version
    /// they were read at: ranking, coverage and judging ask for one query's terms,
    /// and queries share terms. Cleared by every apply here; `PRAGMA data_version`
    /// catches commits made by other connections.
    doc_freq_memo: std::cell::RefCell<Option<doc_freq::Memo>>,
    /// The rows each full-text expression matched, with the database version they
    /// were read at (`ranged.rs`): the lexical arm's all-terms set, coverage, judging
    /// and the shown hits' sections ask one query's terms, and queries share terms;
    /// with them the ids of paths coverage asked and the paths and titles of files the
    /// lexical arm ranked. Cleared by every apply here, as the document frequencies are.
    walk_memo: std::cell::RefCell<ranged::WalkMemo>,
    /// The numbers the lexical arm's BM25 reads, kept with the version they were read
    /// at (`bm25.rs`), and when to use them. Cleared by every apply here.
    bm25_memo: std::cell::RefCell<bm25::Memo>,
    kept_scoring: std::cell::Cell<KeptScoring>,
    /// Test hook: the lexical arm reads its all-terms rows with the full-text query
    /// rather than from the kept walks (see [`Index::all_terms_by_query`]).
    all_terms_by_query: std::cell::Cell<bool>,
    /// Term aliases widening lexical queries (`vocab.rs`), set by the engine from the
    /// store's `vocab/` files, with the key (the `vocab/` tree id) they were read at,
    /// and the root tree they were last checked against.
    vocab: Vocab,
    vocab_key: Option<String>,
    vocab_tree: Option<String>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").field("path", &self.path).finish()
    }
}

impl Index {
    /// Opens (or creates) the index at `path`. A file that is not a usable index of
    /// this schema is removed (with its `-wal`/`-shm`) and replaced by an empty one:
    /// see [`OpenStatus`]. Fails only for real I/O errors.
    pub fn open(path: &Path) -> Result<(Index, OpenStatus), IndexError> {
        schema::open(path)
    }

    /// A private in-memory index (tests, one-shot tools).
    pub fn open_in_memory() -> Result<Index, IndexError> {
        schema::open_in_memory()
    }

    /// The database file (or `:memory:`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// BM25 column weights used by [`Index::lexical`].
    pub fn set_bm25_weights(&mut self, w: Bm25Weights) {
        self.weights = w;
    }

    pub fn bm25_weights(&self) -> Bm25Weights {
        self.weights
    }

    /// The term aliases [`Index::lexical`] widens queries with, and the key of the
    /// source they were read from (so the caller re-reads only when it changed).
    pub fn set_vocab(&mut self, key: String, vocab: Vocab) {
        self.vocab = vocab;
        self.vocab_key = Some(key);
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    pub fn vocab_key(&self) -> Option<&str> {
        self.vocab_key.as_deref()
    }

    /// The root tree whose `vocab/` the aliases were last checked against. Kept per
    /// connection, apart from the synced state (which every connection to the file
    /// shares): a sync done by another connection leaves this one's aliases behind.
    pub fn vocab_tree(&self) -> Option<&str> {
        self.vocab_tree.as_deref()
    }

    pub fn set_vocab_tree(&mut self, tree: String) {
        self.vocab_tree = Some(tree);
    }

    /// Test hook: the next [`Index::apply`] calls fail after `n` upserts (inside the
    /// transaction), so tests can check that a failed batch changes nothing.
    #[doc(hidden)]
    pub fn fail_apply_after(&mut self, n: Option<usize>) {
        self.fail_after = n;
    }

    /// Test hook: with `true`, the lexical arm reads which rows hold every query term
    /// with an all-terms full-text query, as before the kept walks served it, so that
    /// tests can compare the two.
    #[doc(hidden)]
    pub fn all_terms_by_query(&self, on: bool) {
        self.all_terms_by_query.set(on);
    }

    /// When the lexical arm scores from postings kept in memory rather than asking
    /// FTS5 (the same scores either way; see `bm25.rs`). Tests and benchmarks.
    #[doc(hidden)]
    pub fn set_kept_scoring(&self, mode: KeptScoring) {
        self.kept_scoring.set(mode);
    }

    /// How many lexical queries this connection scored from kept postings (tests).
    #[doc(hidden)]
    pub fn kept_scored(&self) -> u64 {
        self.bm25_memo.borrow().served
    }

    /// The commit and tree last synced, if any.
    pub fn state(&self) -> Result<Option<IndexedState>, IndexError> {
        schema::state(self)
    }

    /// Applies one changeset in one transaction.
    pub fn apply(&mut self, batch: &SyncBatch) -> Result<ApplyStats, IndexError> {
        self.doc_freq_memo.borrow_mut().take();
        self.walk_memo.borrow_mut().clear();
        self.bm25_memo.borrow_mut().clear();
        let applied = sync::apply(self, batch);
        // This connection's own commit does not move `PRAGMA data_version`: a walk
        // read while applying (none is today) must not outlive it.
        self.walk_memo.borrow_mut().clear();
        self.bm25_memo.borrow_mut().clear();
        applied
    }

    /// The lexical (BM25) arm.
    pub fn lexical(&self, q: &LexicalQuery) -> Result<Vec<LexicalHit>, IndexError> {
        lexical::search(self, q)
    }

    /// Matched terms and coverage, and with [`Decor::Full`] the snippet and best `##`
    /// section, for files another arm found, keyed by path (score and rank are 0:
    /// these are not lexical hits). A snippet costs one full-text query per file,
    /// so the read path judges on [`Decor::Terms`] and reads [`Decor::Shown`] (the
    /// snippet and section alone) for what it shows.
    pub fn lexical_details(
        &self,
        text: &str,
        paths: &[String],
        decor: Decor,
    ) -> Result<HashMap<String, LexicalHit>, IndexError> {
        lexical::details(self, text, paths, decor)
    }

    /// The query's terms each of `paths` holds and their IDF-weighted share
    /// (coverage), for files any arm found.
    pub fn term_matches(
        &self,
        text: &str,
        paths: &[&str],
    ) -> Result<HashMap<String, TermMatch>, IndexError> {
        coverage::by_path(self, text, paths)
    }

    /// Runs `f`'s reads on one snapshot, in one read transaction: SQLite then takes
    /// its locks once instead of once per statement, a large part of the cost of many
    /// small lookups (ingestion looks up every n-gram of a session). Inside a
    /// transaction already, `f` simply runs in it.
    pub fn read<T, E: From<IndexError>>(
        &self,
        f: impl FnOnce(&Index) -> Result<T, E>,
    ) -> Result<T, E> {
        if !self.conn.is_autocommit() {
            return f(self);
        }
        let op = "read transaction";
        self.conn
            .execute_batch("BEGIN")
            .map_err(self.err(op))
            .map_err(E::from)?;
        let out = f(self);
        // Ending a transaction that only read cannot lose anything; its error is
        // reported only when the reads themselves succeeded.
        let end = self.conn.execute_batch("COMMIT");
        if end.is_err() {
            self.roll_back();
        }
        let out = out?;
        end.map_err(self.err(op)).map_err(E::from)?;
        Ok(out)
    }

    /// Ends the open transaction without keeping it (when SQLite has not already
    /// ended it). Temporary tables made inside it go with it, so the flags that say
    /// they exist are cleared: the next read makes them again.
    fn roll_back(&self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.vocab_ready.set(false);
        self.snippets_ready.set(false);
    }

    /// Known entities named in a query (n-grams; persons also by first name).
    pub fn entities_in(&self, query: &str) -> Result<Vec<EntityMatch>, IndexError> {
        entity::entities_in(self, query)
    }

    /// The entity arm: files mentioning the (uncommon) entities a query names, best
    /// first. `matches` comes from [`Index::entities_in`], so one lookup serves both
    /// the arm and the caller's other uses of the query's entities.
    pub fn entity_hits(&self, matches: &[EntityMatch]) -> Result<Vec<EntityHit>, IndexError> {
        entity::entity_hits(self, matches)
    }

    /// Texts to embed (cues; sections or whole bodies) of all files or of `paths`.
    pub fn embed_units(&self, paths: Option<&[String]>) -> Result<Vec<EmbedUnit>, IndexError> {
        units::units(self, paths)
    }

    /// Which of `paths` mention any of `entities` (ids from [`Index::entities_in`],
    /// common ones included): for the read path's `named` prior.
    pub fn which_mention(
        &self,
        entities: &[i64],
        paths: &[&str],
    ) -> Result<std::collections::HashSet<String>, IndexError> {
        entity::which_mention(self, entities, paths)
    }

    /// The files that introduce `entities` (or entities whose names begin with one of
    /// the one-word `given` names): those of their mentions said first. For the read
    /// path's `introduces` prior; see `entity::introductions`.
    pub fn introductions(
        &self,
        entities: &[i64],
        given: &[&str],
    ) -> Result<Vec<String>, IndexError> {
        entity::introductions(self, entities, given)
    }

    /// The entities (ids) each of `paths` mentions; paths mentioning none are left out.
    pub fn entities_of(&self, paths: &[&str]) -> Result<HashMap<String, Vec<i64>>, IndexError> {
        entity::entities_of(self, paths)
    }

    /// Supersession, validity and confidence of one file, for the read path's priors;
    /// `asks` says which of the facts that cost a lookup of their own to read.
    pub fn prior_facts(
        &self,
        path: &str,
        asks: PriorAsks,
    ) -> Result<Option<PriorFacts>, IndexError> {
        files::prior_facts(self, path, asks)
    }

    /// Whether a file is dated inside `[start, end)` (seconds since the epoch), by its
    /// own dates or a timeline assertion; the read path's `when` prior.
    pub fn dated_within(&self, path: &str, start: i64, end: i64) -> Result<bool, IndexError> {
        files::dated_within(self, path, start, end)
    }

    /// One file's metadata, or `None` if it is not indexed.
    pub fn file(&self, path: &str) -> Result<Option<FileRow>, IndexError> {
        files::file(self, path)
    }

    /// The indexed memories citing a message of one of the transcripts at `transcripts`.
    pub fn citing(&self, transcripts: &[&str]) -> Result<Vec<String>, IndexError> {
        files::citing(self, transcripts)
    }

    /// All indexed paths, sorted.
    pub fn paths(&self) -> Result<Vec<String>, IndexError> {
        files::paths(self)
    }

    /// A level of the topic tree: `None` lists the tiers; `Some("facts")` or
    /// `Some("facts/work")` lists direct child topics (with subtree counts) and the
    /// files directly in that topic.
    pub fn tree(&self, topic: Option<&str>) -> Result<TreeListing, IndexError> {
        topics::tree(self, topic)
    }

    /// Every topic (tiers included, as `facts`), with direct and subtree counts.
    pub fn topics(&self) -> Result<Vec<TopicCount>, IndexError> {
        topics::all(self)
    }

    pub fn stats(&self) -> Result<IndexStats, IndexError> {
        stats::stats(self)
    }

    /// Files that failed to parse, by path.
    pub fn problems(&self) -> Result<Vec<Problem>, IndexError> {
        stats::problems(self)
    }

    /// Links whose source is `path`, in file order (dangling ones included).
    pub fn links_from(&self, path: &str) -> Result<Vec<LinkRow>, IndexError> {
        links::links_from(self, path)
    }

    /// The messages `path` cites (`sessions/…md#m3`), in source order.
    pub fn cited_by(&self, path: &str) -> Result<Vec<String>, IndexError> {
        links::cited_by(self, path)
    }

    /// The memories citing the message `source` (`sessions/…md#m3`), by path.
    pub fn citing_message(&self, source: &str) -> Result<Vec<String>, IndexError> {
        links::citing(self, source)
    }

    /// Resolved links pointing at `path`.
    pub fn links_to(&self, path: &str) -> Result<Vec<LinkRow>, IndexError> {
        links::links_to(self, path)
    }

    /// Memories mentioning the entity named `name` (folded with
    /// [`gitloom_model::fold_name`] before lookup).
    pub fn mentions_of(&self, name: &str) -> Result<Vec<MentionRow>, IndexError> {
        links::mentions_of(self, name)
    }

    /// The whole content in a canonical form (insertion-order ids replaced by the
    /// keys they stand for): two indexes of one tree have equal snapshots however
    /// they were built. See [`snapshot_diff`].
    pub fn snapshot(&self) -> Result<Snapshot, IndexError> {
        snapshot::snapshot(self)
    }

    /// Links (wikilinks, `related:`, `supersedes`) that resolve to no indexed memory.
    pub fn dangling_links(&self) -> Result<Vec<DanglingLink>, IndexError> {
        snapshot::dangling_links(self)
    }

    /// SQLite's integrity check and the FTS5 integrity checks; empty when all pass.
    pub fn integrity(&self) -> Result<Vec<String>, IndexError> {
        snapshot::integrity(self)
    }

    fn err(&self, op: &'static str) -> impl FnOnce(rusqlite::Error) -> IndexError + '_ {
        move |source| IndexError::Sql {
            path: self.path.clone(),
            op,
            source,
        }
    }
}
