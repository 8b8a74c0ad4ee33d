//! Finishing a work-tree refresh that a killed writer left half done.
//!
//! A commit moves the branch ref first and then refreshes the work tree and git's
//! index. A writer killed in between leaves HEAD right but the work tree and git
//! index at the old tree, so `git status` would show the new memories as staged
//! deletions — and a `git commit` by the user would delete them. Before moving the
//! ref a writer records `<old tree> <new tree>` in `.gitloom/refresh.pending`; it
//! removes the record once the refresh is done. The next writer (under the write
//! lock) finds the record and, if HEAD's tree is still the new tree, brings every
//! changed path the user has not touched up to date, then the git index, then
//! removes the record. Temporary files the dead writer left are swept too.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::commit::Edit;
use crate::{Store, StoreError, gitindex, worktree};

const JOURNAL: &str = "refresh.pending";

pub(crate) struct Journal {
    path: PathBuf,
}

impl Journal {
    fn path(store: &Store) -> PathBuf {
        store.gitloom_dir().join(JOURNAL)
    }

    /// Records a refresh about to be owed. Best effort: without the record a crash
    /// leaves the work tree stale, as before, but loses nothing in git.
    pub(crate) fn write(store: &Store, old: ObjectId, new: ObjectId) -> Journal {
        let path = Journal::path(store);
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, format!("{old} {new}\n")).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
        Journal { path }
    }

    /// The ref did not move: nothing is owed.
    pub(crate) fn done(self) {
        let _ = std::fs::remove_file(&self.path);
    }

    pub(crate) fn clear(store: &Store) {
        let _ = std::fs::remove_file(Journal::path(store));
    }

    fn read(store: &Store) -> Option<(ObjectId, ObjectId)> {
        let text = std::fs::read_to_string(Journal::path(store)).ok()?;
        let mut parts = text.split_whitespace();
        let old = parts.next()?.parse().ok()?;
        let new = parts.next()?.parse().ok()?;
        Some((old, new))
    }
}

/// Finishes a refresh a dead writer owed (see the module docs). Call with the
/// write lock held. Returns the paths brought up to date.
pub(crate) fn refresh_pending(
    store: &Store,
    repo: &gix::Repository,
    root: &Path,
) -> Result<Vec<String>, StoreError> {
    let Some((old, new)) = Journal::read(store) else {
        return Ok(Vec::new());
    };
    let head_tree = match store.head()? {
        Some(h) => Some(store.tree_of(h)?),
        None => None,
    };
    if head_tree != Some(new) {
        // The ref never moved (the writer died before), or history moved on without
        // gitloom: there is nothing this record can safely finish.
        Journal::clear(store);
        return Ok(Vec::new());
    }
    let diff = store.diff(Some(old), new)?;
    let mut contents = Vec::with_capacity(diff.changes.len());
    for c in &diff.changes {
        contents.push(match c.new {
            Some(id) => Some(store.read_blob(id)?),
            None => None,
        });
    }
    let edits: Vec<Edit<'_>> = diff
        .changes
        .iter()
        .zip(&contents)
        .map(|(c, bytes)| Edit {
            path: &c.path,
            old: c.old,
            new: c.new,
            content: bytes.as_deref(),
        })
        .collect();
    let (lock, _owner) = store.acquire_index_lock(repo)?;
    let mut written = Vec::new();
    // One pass for the dirty checks, one for the writes (see `worktree::Dirs`).
    let mut checked = worktree::Dirs::new(root);
    let mut refreshed = worktree::Dirs::new(root);
    for e in &edits {
        sweep_temporaries(root, e.path);
        // Already up to date (the dead writer got this far) or never touched by
        // the user: refresh. Anything else is the user's edit: leave it.
        let current = std::fs::read(root.join(e.path)).ok();
        let up_to_date = current.as_deref() == e.content;
        if up_to_date || worktree::dirty(repo, &mut checked, e, &edits)?.is_none() {
            if !up_to_date && worktree::apply(&mut refreshed, e).is_err() {
                continue;
            }
            written.push(e.path);
        }
    }
    gitindex::update(repo, lock, root, &edits, &written, new).map_err(|cause| StoreError::Git {
        context: "cannot refresh the git index after an interrupted commit".into(),
        cause,
    })?;
    Journal::clear(store);
    Ok(written.into_iter().map(str::to_owned).collect())
}

/// Removes `.<name>.gitloom-<pid>-<n>.tmp` files next to `path` (left by a writer
/// killed mid-write; the live writer's own are never present under the write lock).
fn sweep_temporaries(root: &Path, path: &str) {
    let full = root.join(path);
    let (Some(dir), Some(name)) = (full.parent(), full.file_name()) else {
        return;
    };
    let prefix = format!(".{}.gitloom-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let n = entry.file_name();
        let n = n.to_string_lossy();
        if n.starts_with(&prefix) && n.ends_with(".tmp") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl Store {
    /// Finishes a work-tree refresh a killed writer left owed (normally done by the
    /// next write; `gitloom gc` calls this too). Returns the paths refreshed.
    pub fn recover_worktree(&self) -> Result<Vec<String>, StoreError> {
        if self.bare {
            return Ok(Vec::new());
        }
        let _lock = self.write_lock()?;
        refresh_pending(self, &self.repo(), &self.root)
    }

    /// [`Store::recover_worktree`] under a write lock the caller holds.
    pub fn recover_worktree_locked(
        &self,
        _lock: &crate::WriteLock,
    ) -> Result<Vec<String>, StoreError> {
        if self.bare {
            return Ok(Vec::new());
        }
        refresh_pending(self, &self.repo(), &self.root)
    }
}
