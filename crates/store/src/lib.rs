//! gitloom-store: the git repository that holds a gitloom store.
//!
//! What it is for: reading memories at any revision (`read`, `walk`, `resolve`),
//! comparing two revisions cheaply (`diff`, which never descends into unchanged
//! subtrees), listing history (`log`) and writing a batch of memory files as **one
//! commit** (`commit`). Commits are built directly in the object database (blobs →
//! trees → commit) by editing only the named paths on top of the parent's tree; the
//! git index is never used to build a tree, so nothing outside the store's areas
//! (the SQLite index in `.gitloom/`, a stray `notes.txt`) can ever enter history.
//! The branch moves by compare-and-swap; a lost race is retried on the new head and
//! never overwrites anyone's commit. Writers serialise on `.gitloom/write.lock`;
//! readers take no lock. A work tree, if there is one, is refreshed after each
//! commit without clobbering a file the user edited but did not commit, and the git
//! index is kept in step so `git status` stays clean.
//!
//! What it is not for: parsing memories (`gitloom-model`), indexing or searching
//! them (`gitloom-index`), deciding what to write (`gitloom-engine`). Paths that
//! come out of git (`walk`, `diff`) are raw strings: callers validate them with
//! [`gitloom_model::StorePath`].
#![forbid(unsafe_code)]

mod commit;
mod diff;
mod error;
mod gitindex;
mod handles;
mod log;
mod mirror;
mod read;
mod recover;
mod worktree;
mod written;

use std::path::{Path, PathBuf};

pub use commit::{Batch, CommitOutcome, GroupOutcome, WriteLock};
pub use diff::{Change, TreeDiff};
pub use error::StoreError;
pub use gix::ObjectId;
pub use log::CommitInfo;
pub use read::TreeEntry;

use error::GitContext;

/// The content of `.gitignore` in a new store.
pub const GITIGNORE_LINE: &str = ".gitloom/";
/// The message of a store's first commit.
pub const INIT_MESSAGE: &str = "init: gitloom store";

/// A gitloom store: one git repository. `Send + Sync`; share it with an `Arc`.
pub struct Store {
    /// Replaced by [`Store::reload_objects`] after another process changed the packs.
    repo: std::sync::RwLock<gix::ThreadSafeRepository>,
    /// Handles of `repo` kept between calls, with their object caches.
    handles: handles::Pool,
    /// The blobs written lately, for the sync that reads them back.
    written: written::Written,
    /// Work tree root, or the git dir for a bare repository.
    root: PathBuf,
    bare: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("root", &self.root)
            .field("bare", &self.bare)
            .finish()
    }
}

impl Store {
    /// Creates a non-bare repository at `dir` (and `dir` itself if missing) on branch
    /// `main`, with a `.gitignore` holding `.gitloom/`, committed as
    /// "init: gitloom store". On an existing repository this opens it, and commits
    /// the `.gitignore` line only if it is missing: calling it twice is harmless.
    pub fn init(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(error::io("cannot create store directory", dir))?;
        let store = if dir.join(".git").exists() {
            Store::open(dir)?
        } else {
            let options = gix::create::Options {
                destination_must_be_empty: Some(false),
                ..Default::default()
            };
            let repo =
                gix::ThreadSafeRepository::init(dir, gix::create::Kind::WithWorktree, options)
                    .map_err(|e| StoreError::Init {
                        dir: dir.to_owned(),
                        cause: error::chain(&e),
                    })?;
            Store::from_repo(repo)
        };
        store.ensure_main_branch()?;
        store.ensure_gitignore()?;
        Ok(store)
    }

    /// Opens an existing repository: a work tree root or a bare repository.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let repo =
            gix::ThreadSafeRepository::open(dir).map_err(|e| StoreError::NotARepository {
                dir: dir.to_owned(),
                cause: error::chain(&e),
            })?;
        Ok(Store::from_repo(repo))
    }

    fn from_repo(repo: gix::ThreadSafeRepository) -> Store {
        let (root, bare) = match repo.work_dir() {
            Some(w) => (w.to_owned(), false),
            None => (repo.git_dir().to_owned(), true),
        };
        Store {
            repo: std::sync::RwLock::new(repo),
            handles: handles::Pool::default(),
            written: written::Written::default(),
            root,
            bare,
        }
    }

    /// Re-opens the repository so objects in packs written by another process since
    /// (`git index-pack`, `git repack`) are found. gix's object store follows new
    /// packs by refreshing on a miss, but it gives each pack index it ever saw a
    /// slot, sized when the repository is opened; a long-lived process whose packs
    /// come and go (a server's mirror fetching, `gc` repacking) runs out of slots and
    /// then misses objects that are on disk. Re-opening starts a fresh slot table.
    /// Call it after changing packs from outside; cheap (config and refs are read).
    pub fn reload_objects(&self) -> Result<(), StoreError> {
        let dir = self.root.clone();
        let fresh =
            gix::ThreadSafeRepository::open(&dir).map_err(|e| StoreError::NotARepository {
                dir,
                cause: error::chain(&e),
            })?;
        *self.repo.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        self.handles.reset();
        Ok(())
    }

    /// A handle on the repository, with a cache of the objects it read before
    /// (`handles.rs`).
    pub(crate) fn repo(&self) -> handles::Handle<'_> {
        let shared = self.repo.read().unwrap_or_else(|p| p.into_inner());
        self.handles.take(&shared)
    }

    /// The work tree root (or the git dir if the repository is bare).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True for a repository without a work tree.
    pub fn is_bare(&self) -> bool {
        self.bare
    }

    /// `<root>/.gitloom`, where the derived index, the write lock and caches live.
    /// Created on demand (by writers); it is git-ignored and never committed.
    pub fn gitloom_dir(&self) -> PathBuf {
        self.root.join(".gitloom")
    }

    /// The commit the branch HEAD points to; `None` on an unborn branch.
    pub fn head(&self) -> Result<Option<ObjectId>, StoreError> {
        let repo = self.repo();
        let head = repo.head().git(|| "cannot read HEAD".to_owned())?;
        if head.is_unborn() {
            return Ok(None);
        }
        // The ref names the tip commit itself: taking its id from the ref saves
        // reading (inflating) the commit object on every call, as peeling does.
        if let Some(id) = head.id() {
            return Ok(Some(id.detach()));
        }
        let id = head
            .into_peeled_id()
            .git(|| "cannot peel HEAD to a commit".to_owned())?;
        Ok(Some(id.detach()))
    }

    /// On an unborn HEAD that names another branch (`init.defaultBranch`), point it at `main`.
    fn ensure_main_branch(&self) -> Result<(), StoreError> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let repo = self.repo();
        let head = repo.head().git(|| "cannot read HEAD".to_owned())?;
        if !head.is_unborn() {
            return Ok(());
        }
        let name = repo.head_name().git(|| "cannot read HEAD".to_owned())?;
        if name
            .as_ref()
            .is_some_and(|n| n.as_bstr() == "refs/heads/main")
        {
            return Ok(());
        }
        let main: gix::refs::FullName = "refs/heads/main".try_into().expect("valid ref name");
        let head_name: gix::refs::FullName = "HEAD".try_into().expect("valid ref name");
        repo.edit_reference(RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "gitloom: use branch main".into(),
                },
                expected: PreviousValue::Any,
                new: gix::refs::Target::Symbolic(main),
            },
            name: head_name,
            deref: false,
        })
        .git(|| "cannot point HEAD at refs/heads/main".to_owned())?;
        Ok(())
    }

    /// Makes sure the tip's `.gitignore` ignores `.gitloom/`, committing it if needed.
    fn ensure_gitignore(&self) -> Result<(), StoreError> {
        let head = self.head()?;
        let existing = match head {
            Some(c) => self.read_raw(c, ".gitignore")?,
            None if !self.bare => match std::fs::read(self.root.join(".gitignore")) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(error::io("cannot read", self.root.join(".gitignore"))(e)),
            },
            None => None,
        };
        let has_line = existing.as_deref().is_some_and(|b| {
            String::from_utf8_lossy(b).lines().any(|l| {
                matches!(
                    l.trim(),
                    ".gitloom/" | ".gitloom" | "/.gitloom/" | "/.gitloom"
                )
            })
        });
        if has_line && head.is_some() {
            return Ok(());
        }
        let mut content = existing.unwrap_or_default();
        if !has_line {
            if !content.is_empty() && !content.ends_with(b"\n") {
                content.push(b'\n');
            }
            content.extend_from_slice(GITIGNORE_LINE.as_bytes());
            content.push(b'\n');
        }
        let message = if head.is_none() {
            INIT_MESSAGE
        } else {
            "init: ignore .gitloom/"
        };
        // On an unborn branch the work-tree file (if any) is the base we extend, so
        // overwriting it loses nothing.
        self.commit_raw(
            vec![(".gitignore".to_owned(), Some(content))],
            message,
            None,
            head.is_none(),
            None,
            None,
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn store_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<super::Store>();
    }
}
