//! The work tree: refuse to clobber uncommitted edits, refuse symlinks that leave
//! the store, and refresh changed files atomically after a commit.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gix::ObjectId;

use crate::StoreError;
use crate::commit::Edit;
use crate::error::{GitContext, io as io_err};

/// Fails if any existing component of `path` below `root` is a symbolic link,
/// wherever it leads: a link inside the store can still lead into `.git/` (a write
/// through `facts/ing -> ../.git` would land in `.git/hooks/`), and a store is a
/// user's directory where anything may have been placed by hand.
pub(crate) fn check_symlinks(root: &Path, path: &str) -> Result<(), StoreError> {
    let mut cur = root.to_path_buf();
    let mut walked = String::new();
    for component in path.split('/') {
        cur.push(component);
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(component);
        let meta = match std::fs::symlink_metadata(&cur) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(());
            }
            Err(e) => return Err(io_err("cannot inspect", &cur)(e)),
        };
        if meta.file_type().is_symlink() {
            return Err(StoreError::Symlink {
                path: path.to_owned(),
                link: walked,
            });
        }
    }
    Ok(())
}

/// Returns the offending path if the work tree holds something at (or on the way to)
/// `edit.path` that the user has not committed: a file whose bytes differ from the
/// parent's blob (or, for a path new to the branch, from the content about to be
/// written), a directory or symlink where the file goes, or a file where a directory
/// is needed. A file on the way that this same batch deletes is not in the way
/// (its own check covers it).
pub(crate) fn dirty(
    repo: &gix::Repository,
    root: &Path,
    edit: &Edit<'_>,
    batch: &[Edit<'_>],
) -> Result<Option<String>, StoreError> {
    let parts: Vec<&str> = edit.path.split('/').collect();
    let mut cur = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        cur.push(part);
        let last = i + 1 == parts.len();
        let meta = match std::fs::symlink_metadata(&cur) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(io_err("cannot inspect", &cur)(e)),
        };
        if !last {
            // No component is a symlink (checked before): this is the directory itself.
            let is_dir = meta.is_dir();
            if !is_dir {
                let ancestor = parts[..=i].join("/");
                if batch.iter().any(|e| e.path == ancestor && e.new.is_none()) {
                    return Ok(None);
                }
                return Ok(Some(ancestor));
            }
            continue;
        }
        if !meta.is_file() {
            return Ok(Some(edit.path.to_owned()));
        }
        let bytes = std::fs::read(&cur).map_err(io_err("cannot read", &cur))?;
        let id = blob_id(repo, &bytes)?;
        let clean = match edit.old {
            Some(old) => id == old,
            None => Some(id) == edit.new,
        };
        return Ok((!clean).then(|| edit.path.to_owned()));
    }
    Ok(None)
}

pub(crate) fn blob_id(repo: &gix::Repository, bytes: &[u8]) -> Result<ObjectId, StoreError> {
    gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes)
        .git(|| "cannot hash a file".to_owned())
}

/// Brings the work tree in line with `edit` after its commit landed. A symbolic
/// link placed on the way since the commit was checked is not written through (the
/// commit stands; the refresh is reported as a warning).
pub(crate) fn apply(root: &Path, edit: &Edit<'_>) -> io::Result<()> {
    if let Err(e) = check_symlinks(root, edit.path) {
        return Err(io::Error::other(e.to_string()));
    }
    let full = root.join(edit.path);
    match edit.content {
        Some(bytes) if edit.new.is_some() => write_atomic(&full, bytes),
        _ => remove(root, &full),
    }
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes through a temporary file in the same directory and renames it into place,
/// so a reader never sees half a file.
fn write_atomic(full: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = full
        .parent()
        .ok_or_else(|| io::Error::other("path has no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let name = full
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(
        ".{name}.gitloom-{}-{}.tmp",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, full));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes a deleted file and the directories it leaves empty (never `root`).
fn remove(root: &Path, full: &Path) -> io::Result<()> {
    match std::fs::remove_file(full) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}
