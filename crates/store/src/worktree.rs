//! The work tree: refuse to clobber uncommitted edits, refuse symlinks that leave
//! the store, and refresh changed files atomically after a commit.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gix::ObjectId;

use crate::StoreError;
use crate::commit::Edit;
use crate::error::{GitContext, io as io_err};

/// The directories of the work tree seen to be real directories (not symbolic
/// links) during one pass over a commit's paths. A batch of an ingested session puts
/// tens of files in a handful of topic folders; checking every folder on the way
/// for every path, in the check before the commit, in the dirty check and again in
/// the refresh, was most of an ingestion's `statx` calls (about 8,000 for one LoCoMo
/// conversation of 680 turns). A pass checks each folder once. The refresh after the commit
/// starts a pass of its own, so a link placed on the way since the check before
/// the commit is still seen before anything is written below it.
#[derive(Debug)]
pub(crate) struct Dirs<'r> {
    root: &'r Path,
    /// Relative paths (`facts`, `facts/work`) seen as real directories in this pass,
    /// or made by it.
    real: HashSet<String>,
}

/// What is at one path of the work tree, not following a symbolic link there.
enum Found {
    Missing,
    Dir,
    Link,
    Other(std::fs::Metadata),
}

impl<'r> Dirs<'r> {
    pub(crate) fn new(root: &'r Path) -> Dirs<'r> {
        Dirs {
            root,
            real: HashSet::new(),
        }
    }

    fn inspect(&self, rel: &str) -> Result<Found, StoreError> {
        let full = self.root.join(rel);
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.file_type().is_symlink() => Ok(Found::Link),
            Ok(m) if m.is_dir() => Ok(Found::Dir),
            Ok(m) => Ok(Found::Other(m)),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(Found::Missing)
            }
            Err(e) => Err(io_err("cannot inspect", &full)(e)),
        }
    }

    /// Fails if any existing component of `path` below the root is a symbolic link,
    /// wherever it leads: a link inside the store can still lead into `.git/` (a
    /// write through `facts/ing -> ../.git` would land in `.git/hooks/`), and a store
    /// is a user's directory where anything may have been placed by hand. The file
    /// itself is looked at every time; a folder once per pass.
    pub(crate) fn check_symlinks(&mut self, path: &str) -> Result<(), StoreError> {
        let refuse = |link: &str| StoreError::Symlink {
            path: path.to_owned(),
            link: link.to_owned(),
        };
        for (end, _) in path.match_indices('/') {
            let dir = &path[..end];
            if self.real.contains(dir) {
                continue;
            }
            match self.inspect(dir)? {
                Found::Dir => {
                    self.real.insert(dir.to_owned());
                }
                Found::Link => return Err(refuse(dir)),
                // Nothing below a missing folder or a file exists.
                Found::Missing | Found::Other(_) => return Ok(()),
            }
        }
        match self.inspect(path)? {
            Found::Link => Err(refuse(path)),
            _ => Ok(()),
        }
    }

    /// Creates the folders of `path` that are missing (after
    /// [`Dirs::check_symlinks`] passed), once per folder and pass.
    fn make_parents(&mut self, path: &str) -> io::Result<()> {
        let Some((dir, _)) = path.rsplit_once('/') else {
            return Ok(());
        };
        if self.real.contains(dir) {
            return Ok(());
        }
        std::fs::create_dir_all(self.root.join(dir))?;
        for (end, _) in path.match_indices('/') {
            self.real.insert(path[..end].to_owned());
        }
        Ok(())
    }
}

/// Returns the offending path if the work tree holds something at (or on the way to)
/// `edit.path` that the user has not committed: a file whose bytes differ from the
/// parent's blob (or, for a path new to the branch, from the content about to be
/// written), a directory or symlink where the file goes, or a file where a directory
/// is needed. A file on the way that this same batch deletes is not in the way
/// (its own check covers it).
pub(crate) fn dirty(
    repo: &gix::Repository,
    dirs: &mut Dirs<'_>,
    edit: &Edit<'_>,
    batch: &[Edit<'_>],
) -> Result<Option<String>, StoreError> {
    for (end, _) in edit.path.match_indices('/') {
        let ancestor = &edit.path[..end];
        if dirs.real.contains(ancestor) {
            continue;
        }
        match dirs.inspect(ancestor)? {
            Found::Missing => return Ok(None),
            Found::Dir => {
                dirs.real.insert(ancestor.to_owned());
            }
            // A file (or a link) where a folder is needed.
            Found::Link | Found::Other(_) => {
                if batch.iter().any(|e| e.path == ancestor && e.new.is_none()) {
                    return Ok(None);
                }
                return Ok(Some(ancestor.to_owned()));
            }
        }
    }
    let meta = match dirs.inspect(edit.path)? {
        Found::Missing => return Ok(None),
        Found::Other(m) => m,
        Found::Dir | Found::Link => return Ok(Some(edit.path.to_owned())),
    };
    if !meta.is_file() {
        return Ok(Some(edit.path.to_owned()));
    }
    let full = dirs.root.join(edit.path);
    let bytes = std::fs::read(&full).map_err(io_err("cannot read", &full))?;
    let id = blob_id(repo, &bytes)?;
    let clean = match edit.old {
        Some(old) => id == old,
        None => Some(id) == edit.new,
    };
    Ok((!clean).then(|| edit.path.to_owned()))
}

pub(crate) fn blob_id(repo: &gix::Repository, bytes: &[u8]) -> Result<ObjectId, StoreError> {
    gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes)
        .git(|| "cannot hash a file".to_owned())
}

/// Brings the work tree in line with `edit` after its commit landed. A symbolic
/// link placed on the way since the commit was checked is not written through (the
/// commit stands; the refresh is reported as a warning): `dirs` is the refresh's own
/// pass, not the check's.
pub(crate) fn apply(dirs: &mut Dirs<'_>, edit: &Edit<'_>) -> io::Result<()> {
    if let Err(e) = dirs.check_symlinks(edit.path) {
        return Err(io::Error::other(e.to_string()));
    }
    let full = dirs.root.join(edit.path);
    match edit.content {
        Some(bytes) if edit.new.is_some() => {
            dirs.make_parents(edit.path)?;
            write_atomic(&full, bytes)
        }
        _ => {
            let removed = remove(dirs.root, &full);
            // Removing a file may remove its emptied folders: forget them all.
            dirs.real.clear();
            removed
        }
    }
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes through a temporary file in the same directory (which exists) and renames
/// it into place, so a reader never sees half a file. The temporary is created new
/// (`O_EXCL`), so a link someone placed at its name is refused, not followed; the
/// rename replaces whatever is at the final name without following it.
fn write_atomic(full: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = full
        .parent()
        .ok_or_else(|| io::Error::other("path has no parent directory"))?;
    let name = full
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(
        ".{name}.gitloom-{}-{}.tmp",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // If this fails nothing of ours is at `tmp`: leave whatever is there alone.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let result = file.write_all(bytes).and_then(|()| {
        drop(file);
        std::fs::rename(&tmp, full)
    });
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn edit<'a>(path: &'a str, content: &'a [u8]) -> Edit<'a> {
        Edit {
            path,
            old: None,
            new: Some(ObjectId::null(gix::hash::Kind::Sha1)),
            content: Some(content),
        }
    }

    #[test]
    fn a_link_placed_after_one_pass_is_seen_by_the_next() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let outside = tempfile::tempdir().expect("outside");
        std::fs::create_dir_all(root.join("facts/work")).expect("mkdir");
        let mut check = Dirs::new(root);
        check
            .check_symlinks("facts/work/a.md")
            .expect("real folders");
        // The folder becomes a link after the check before the commit: the refresh's
        // own pass sees it and writes nothing through it.
        std::fs::remove_dir(root.join("facts/work")).expect("rmdir");
        symlink(outside.path(), root.join("facts/work")).expect("symlink");
        let mut refresh = Dirs::new(root);
        assert!(apply(&mut refresh, &edit("facts/work/a.md", b"a")).is_err());
        assert!(
            std::fs::read_dir(outside.path())
                .expect("ls")
                .next()
                .is_none()
        );
    }

    #[test]
    fn every_path_of_a_pass_is_checked_below_folders_seen_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("facts/work/deep")).expect("mkdir");
        std::fs::write(root.join("facts/work/keep.md"), "k").expect("write");
        symlink("keep.md", root.join("facts/work/link.md")).expect("symlink");
        symlink("deep", root.join("facts/work/alias")).expect("symlink");
        let mut dirs = Dirs::new(root);
        dirs.check_symlinks("facts/work/a.md").expect("plain file");
        let err = dirs.check_symlinks("facts/work/link.md").expect_err("link");
        assert!(
            matches!(err, StoreError::Symlink { ref link, .. } if link == "facts/work/link.md")
        );
        let err = dirs
            .check_symlinks("facts/work/alias/b.md")
            .expect_err("link");
        assert!(matches!(err, StoreError::Symlink { ref link, .. } if link == "facts/work/alias"));
        dirs.check_symlinks("facts/new/c.md")
            .expect("a missing folder");
    }

    #[test]
    fn a_link_at_the_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let target = root.join("target.txt");
        std::fs::write(&target, "untouched").expect("write");
        std::fs::create_dir_all(root.join("facts")).expect("mkdir");
        // Links at the next temporary names this process will use.
        let next = TMP_COUNTER.load(Ordering::Relaxed);
        for n in next..next + 64 {
            let tmp = format!(".a.md.gitloom-{}-{n}.tmp", std::process::id());
            symlink(&target, root.join("facts").join(tmp)).expect("symlink");
        }
        let mut dirs = Dirs::new(root);
        let _ = apply(&mut dirs, &edit("facts/a.md", b"written"));
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "untouched");
    }

    #[test]
    fn folders_are_made_once_and_files_land() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let mut dirs = Dirs::new(root);
        for path in ["facts/a/x.md", "facts/a/y.md", "facts/b/z.md"] {
            apply(&mut dirs, &edit(path, path.as_bytes())).expect("apply");
        }
        for path in ["facts/a/x.md", "facts/a/y.md", "facts/b/z.md"] {
            assert_eq!(
                std::fs::read_to_string(root.join(path)).expect("read"),
                path
            );
        }
        // A deletion forgets the folders (it may have removed them).
        let del = Edit {
            path: "facts/b/z.md",
            old: None,
            new: None,
            content: None,
        };
        apply(&mut dirs, &del).expect("delete");
        assert!(!root.join("facts/b").exists());
        apply(&mut dirs, &edit("facts/b/w.md", b"w")).expect("apply");
        assert!(root.join("facts/b/w.md").is_file());
    }
}
