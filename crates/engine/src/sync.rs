//! Bringing the index up to date with HEAD by diffing trees.
//!
//! The diff starts from the tree the index last saw and never descends into a
//! subtree whose id is unchanged, so the cost follows the size of the change, not
//! of the store. The whole changeset is applied in one transaction.

use std::fs::File;
use std::time::Instant;

use gitloom_index::{IndexedFile, Problem, SyncBatch};
use gitloom_model::{Memory, StorePath};
use gitloom_store::ObjectId;
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{EngineError, Result};

/// What a sync did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    /// The commit the index now reflects (empty for a store with no commits).
    pub commit: String,
    /// True when the whole tree was read (first sync, rebuild, or an unusable old state).
    pub full: bool,
    /// Tree entries the diff examined.
    pub visited_entries: usize,
    /// Files added, changed or removed between the two trees (memories or not).
    pub changed_files: usize,
    pub upserted: usize,
    pub removed: usize,
    /// Files that failed to parse in this sync (path: error); they stay in git and are reported by `stats`.
    pub problems: Vec<String>,
    /// Texts sent to the embedding model (new since the cache last saw them).
    pub embedded: usize,
    /// Texts whose vectors were found in the cache.
    pub cached: usize,
    /// How the persisted vector arena was brought to this commit.
    pub arena: ArenaUpdate,
    pub ms: f64,
}

/// What a sync did to the persisted vector arena (`.gitloom/arena-*.bin`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArenaUpdate {
    /// Nothing to do: no embedder, nothing changed, or embedding failed (the next query
    /// rebuilds it).
    #[default]
    Unchanged,
    /// The previous arena's rows for untouched files were copied and the changed
    /// files' added.
    Merged,
    /// Built from every unit (first sync, full rebuild, or no usable previous arena).
    Built,
}

impl Engine {
    /// Syncs the index to HEAD: incremental when it can be, full otherwise.
    pub fn sync(&self) -> Result<SyncReport> {
        self.sync_inner(false)
    }

    /// Rebuilds the index from git alone.
    pub fn rebuild(&self) -> Result<SyncReport> {
        self.sync_inner(true)
    }

    /// Embeds every unit the vector cache lacks (`gitloom embed`).
    pub fn embed_pending(&self) -> Result<gitloom_embed::EmbedStats> {
        self.ensure_synced()?;
        let Some(sem) = &self.semantic else {
            return Err(EngineError::Usage(
                "no embedding model is configured (run `gitloom model install`)".into(),
            ));
        };
        let index = self.index();
        Ok(sem
            .embed_units(&index, None, self.progress.as_deref())?
            .stats)
    }

    /// Syncs only if HEAD moved since the index was last synced (cheap: one ref read).
    pub(crate) fn ensure_synced(&self) -> Result<()> {
        let Some(head) = self.store.head()? else {
            return Ok(());
        };
        let mut index = self.index();
        match index.state()? {
            Some(s) if s.commit.parse::<ObjectId>().ok() == Some(head) => {
                // The index file is at HEAD, but another engine on it (a server's
                // other reader, another process) may have done that sync: this
                // connection's aliases must still be brought to HEAD's `vocab/`.
                if let Ok(tree) = s.tree.parse::<ObjectId>() {
                    self.refresh_vocab(&mut index, tree)?;
                }
            }
            _ => {
                drop(index);
                self.sync()?;
            }
        }
        Ok(())
    }

    fn sync_inner(&self, full: bool) -> Result<SyncReport> {
        let started = Instant::now();
        // Syncs from several processes serialise here; each re-reads the index state
        // after taking the lock, so a diff is always applied to the state it was computed from.
        let lock_path = self.store.gitloom_dir().join("sync.lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| EngineError::Io {
                what: "cannot open the sync lock",
                path: lock_path.clone(),
                source,
            })?;
        lock.lock().map_err(|source| EngineError::Io {
            what: "cannot take the sync lock",
            path: lock_path.clone(),
            source,
        })?;

        let mut index = self.index();
        let Some(head) = self.store.head()? else {
            return Ok(SyncReport::default());
        };
        let report = self.sync_index_to(&mut index, head, full, true, started)?;
        drop(index);
        for p in &report.problems {
            self.warn(format!("not indexed: {p}"));
        }
        Ok(report)
    }

    /// Brings `index` to the tree of `head` (any commit: HEAD, or an old one for
    /// time travel), optionally embedding what is new.
    pub(crate) fn sync_index_to(
        &self,
        index: &mut gitloom_index::Index,
        head: ObjectId,
        full: bool,
        embed: bool,
        started: Instant,
    ) -> Result<SyncReport> {
        let tree = self.store.tree_of(head)?;
        let state = index.state()?;
        let mut report = SyncReport {
            commit: head.to_string(),
            ..SyncReport::default()
        };
        if !full
            && state
                .as_ref()
                .is_some_and(|s| s.tree.parse::<ObjectId>().ok() == Some(tree))
        {
            self.refresh_vocab(index, tree)?;
            report.ms = started.elapsed().as_secs_f64() * 1e3;
            return Ok(report);
        }
        let old_commit = state.as_ref().map(|s| s.commit.clone());
        let old_tree = if full {
            None
        } else {
            state.and_then(|s| s.tree.parse::<ObjectId>().ok())
        };
        let diff = match old_tree {
            Some(old) => match self.store.diff(Some(old), tree) {
                Ok(d) => d,
                // The old tree may be gone (history rewritten, index copied from elsewhere): start over.
                Err(e) => {
                    self.warn(format!(
                        "cannot diff against the last indexed tree ({e}); rebuilding the index"
                    ));
                    self.store.diff(None, tree)?
                }
            },
            None => self.store.diff(None, tree)?,
        };
        report.full = old_tree.is_none();
        report.visited_entries = diff.visited_entries;
        report.changed_files = diff.changes.len();

        let mut removed = Vec::new();
        let mut to_read = Vec::new();
        let mut changed_transcripts = Vec::new();
        for change in &diff.changes {
            let Ok(path) = StorePath::parse(&change.path) else {
                continue;
            };
            if !path.is_memory() {
                if path.as_str().starts_with("sessions/") {
                    changed_transcripts.push(path);
                }
                continue;
            }
            match change.new {
                Some(blob) => to_read.push((path, blob)),
                None => removed.push(path.to_string()),
            }
        }
        if !report.full {
            self.reread_citing(index, tree, &changed_transcripts, &removed, &mut to_read)?;
        }
        let parsed = self.read_and_parse(&to_read)?;
        let mut transcripts = crate::said::Transcripts::new(&self.store, tree);
        let mut upserted = Vec::with_capacity(parsed.len());
        let mut problems = Vec::new();
        for ((path, blob), result) in to_read.into_iter().zip(parsed) {
            match result {
                Ok(memory) => upserted.push(IndexedFile {
                    path,
                    blob: blob.to_string(),
                    said: transcripts.said(&memory),
                    memory,
                }),
                Err(message) => {
                    report.problems.push(message.clone());
                    removed.push(path.to_string());
                    problems.push(Problem {
                        path: path.to_string(),
                        message,
                    });
                }
            }
        }
        let batch = SyncBatch {
            commit: head.to_string(),
            tree: tree.to_string(),
            full: report.full,
            removed,
            upserted,
            problems,
        };
        let stats = index.apply(&batch)?;
        self.refresh_vocab(index, tree)?;
        // Embed what is new now, so the first query after a write does not pay for it,
        // and bring the persisted arena to this commit. A failure here loses nothing
        // (the commit and the index are done): the next query embeds whatever is still
        // missing and rebuilds the arena.
        if let Some(sem) = self.semantic.as_ref().filter(|_| embed)
            && (report.full || !batch.upserted.is_empty() || !batch.removed.is_empty())
        {
            let upserted: Vec<String> = batch.upserted.iter().map(|f| f.path.to_string()).collect();
            let embedded = if report.full || !upserted.is_empty() {
                let which = (!report.full).then_some(upserted.as_slice());
                match sem.embed_units(index, which, self.progress.as_deref()) {
                    Ok(e) => {
                        report.embedded = e.stats.embedded;
                        report.cached = e.stats.cached;
                        Some(e)
                    }
                    Err(e) => {
                        self.warn(format!("embedding after sync failed: {e}"));
                        None
                    }
                }
            } else {
                None
            };
            let embedded_ok = embedded.is_some() || upserted.is_empty() && !report.full;
            if embedded_ok {
                let mut changed = upserted;
                changed.extend(batch.removed.iter().cloned());
                let changed = (!report.full).then_some(changed.as_slice());
                let old = old_commit.as_deref();
                match sem.after_sync(index, old, &report.commit, changed, embedded) {
                    Ok(how) => report.arena = how,
                    Err(e) => {
                        self.warn(format!("updating the vector arena after sync failed: {e}"))
                    }
                }
            }
        }
        report.upserted = stats.upserted;
        report.removed = stats.removed;
        report.ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(report)
    }

    /// Adds to `to_read` the unchanged memories that cite a changed transcript: the
    /// words indexed for them (`said`) are read from the transcript, so they follow
    /// it as a full rebuild would.
    fn reread_citing(
        &self,
        index: &gitloom_index::Index,
        tree: ObjectId,
        transcripts: &[StorePath],
        removed: &[String],
        to_read: &mut Vec<(StorePath, ObjectId)>,
    ) -> Result<()> {
        let names: Vec<&str> = transcripts.iter().map(|t| t.as_str()).collect();
        let mut seen: std::collections::HashSet<String> = removed.iter().cloned().collect();
        seen.extend(to_read.iter().map(|(p, _)| p.to_string()));
        for path in index.citing(&names)? {
            if seen.contains(&path) {
                continue;
            }
            let (Ok(sp), Some(blob)) = (StorePath::parse(&path), self.store.blob_at(tree, &path)?)
            else {
                continue;
            };
            to_read.push((sp, blob));
        }
        Ok(())
    }

    /// Reads and parses blobs, on all cores for a large batch (a rebuild is mostly
    /// YAML parsing).
    fn read_and_parse(
        &self,
        items: &[(StorePath, ObjectId)],
    ) -> Result<Vec<Result<Memory, String>>> {
        let parse_one = |(path, blob): &(StorePath, ObjectId)| -> Result<Result<Memory, String>> {
            let bytes = self.store.read_blob(*blob)?;
            if let Some(memory) = self.parsed.take(path.as_str(), &bytes) {
                return Ok(Ok(memory));
            }
            Ok(Memory::parse(path.as_str(), &bytes).map_err(|e| e.to_string()))
        };
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        if items.len() < 256 || threads < 2 {
            return items.iter().map(parse_one).collect();
        }
        let chunk = items.len().div_ceil(threads);
        std::thread::scope(|s| {
            let handles: Vec<_> = items
                .chunks(chunk)
                .map(|part| s.spawn(move || part.iter().map(parse_one).collect::<Result<Vec<_>>>()))
                .collect();
            let mut out = Vec::with_capacity(items.len());
            for h in handles {
                out.extend(
                    h.join()
                        .map_err(|_| EngineError::Usage("a parser thread panicked".into()))??,
                );
            }
            Ok(out)
        })
    }
}
