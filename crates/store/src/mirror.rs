//! What a store needs to mirror a repository kept elsewhere (object storage): a
//! bare repository to fill, a test for an object's presence, and moving the branch
//! to a commit someone else made. Additive to the local store; the local write path
//! does not use it.

use std::path::{Path, PathBuf};

use gix::refs::transaction::{Change as RefChange, LogChange, PreviousValue, RefEdit, RefLog};

use crate::error::{self, GitContext};
use crate::{ObjectId, Store, StoreError};

/// The branch a store commits to.
const MAIN: &str = "refs/heads/main";

impl Store {
    /// Creates (or opens) a bare repository at `dir` whose HEAD names `main`, with no
    /// commit: its history comes from elsewhere. Opening an existing non-bare
    /// repository here is refused, so a user's checkout is never taken for a cache.
    pub fn init_bare(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(error::io("cannot create store directory", dir))?;
        let store = if dir.join("HEAD").exists() || dir.join(".git").exists() {
            Store::open(dir)?
        } else {
            let options = gix::create::Options {
                destination_must_be_empty: Some(false),
                ..Default::default()
            };
            let repo = gix::ThreadSafeRepository::init(dir, gix::create::Kind::Bare, options)
                .map_err(|e| StoreError::Init {
                    dir: dir.to_owned(),
                    cause: error::chain(&e),
                })?;
            Store::from_repo(repo)
        };
        if !store.bare {
            return Err(StoreError::Init {
                dir: dir.to_owned(),
                cause: "a repository with a work tree is already there; a mirror must be bare"
                    .to_owned(),
            });
        }
        store.ensure_main_branch()?;
        Ok(store)
    }

    /// The repository's git directory (`.git`, or the root of a bare repository).
    pub fn git_dir(&self) -> PathBuf {
        self.repo().git_dir().to_owned()
    }

    /// True if the object database holds `id` (loose or in any pack, including packs
    /// added by another process since the store was opened).
    pub fn has_object(&self, id: ObjectId) -> bool {
        self.repo().has_object(id)
    }

    /// Points `main` at `to` (or makes it unborn with `None`), whatever it pointed at:
    /// the caller has decided that `to` is the truth (a mirror following its remote).
    /// The commit must already be in the object database.
    pub fn set_branch(&self, to: Option<ObjectId>) -> Result<(), StoreError> {
        let repo = self.repo();
        let name: gix::refs::FullName = MAIN.try_into().expect("valid ref name");
        let current = repo
            .try_find_reference(name.as_ref())
            .git(|| format!("cannot read {MAIN}"))?;
        let change = match to {
            Some(id) => {
                if !repo.has_object(id) {
                    return Err(StoreError::BadRevision {
                        rev: id.to_string(),
                        cause: "the commit is not in the object database".to_owned(),
                    });
                }
                RefChange::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: "gitloom: follow the remote head".into(),
                    },
                    expected: PreviousValue::Any,
                    new: gix::refs::Target::Object(id),
                }
            }
            None if current.is_none() => return Ok(()),
            None => RefChange::Delete {
                expected: PreviousValue::Any,
                log: RefLog::AndReference,
            },
        };
        repo.edit_reference(RefEdit {
            change,
            name,
            deref: false,
        })
        .git(|| format!("cannot move {MAIN}"))?;
        Ok(())
    }

    /// Commits the `.gitignore` line of a new store if the branch lacks it (the first
    /// commit of a store made through a mirror looks like one made by [`Store::init`]).
    pub fn ensure_initial_commit(&self) -> Result<(), StoreError> {
        self.ensure_gitignore()
    }
}
