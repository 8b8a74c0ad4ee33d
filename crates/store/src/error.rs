//! The one error type of the crate.

use std::path::PathBuf;

/// What went wrong, naming the path, revision or directory involved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{dir} is not a git repository: {cause}")]
    NotARepository { dir: PathBuf, cause: String },
    #[error("cannot create a store at {dir}: {cause}")]
    Init { dir: PathBuf, cause: String },
    #[error("cannot resolve revision {rev:?}: {cause}")]
    BadRevision { rev: String, cause: String },
    #[error(
        "{path} has uncommitted edits in the work tree; commit or discard them first (nothing was written)"
    )]
    Dirty { path: String },
    #[error(
        "{path}: {link} in the work tree is a symbolic link; gitloom writes through none (it could lead into .git or out of the store), so nothing was written"
    )]
    Symlink { path: String, link: String },
    #[error("{0} (nothing was written)")]
    BadName(gitloom_model::PathError),
    #[error(
        "path {path:?} may not be committed by gitloom (only the tiers, sessions/, vocab/ and .gitignore)"
    )]
    NotCommittable { path: String },
    #[error(
        "{path} differs only in letter case from {existing}, already in the store; on a case-insensitive file system (macOS, Windows) they would be one file (nothing was written)"
    )]
    CaseCollision { path: String, existing: String },
    #[error(
        "{path} looks like {existing}, already in the store (their letters differ but read the same); choose a name that cannot pass for it (nothing was written)"
    )]
    LookAlike { path: String, existing: String },
    #[error("HEAD is detached; gitloom only commits to a branch")]
    DetachedHead,
    #[error(
        "the branch moved under us {retries} times in a row; giving up without overwriting (last: {cause})"
    )]
    Conflict { retries: u32, cause: String },
    #[error(
        "{path} changed after {base}, the commit this write was computed from; re-read and try again"
    )]
    Stale { path: String, base: String },
    #[error("cannot lock {path}: {cause}")]
    Locked { path: PathBuf, cause: String },
    #[error("{context}: {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{context}: {cause}")]
    Git { context: String, cause: String },
}

/// Renders an error with its chain of causes on one line.
pub(crate) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        let s = e.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        next = e.source();
    }
    out
}

/// Attaches context to a gix (or any) error, turning it into [`StoreError::Git`].
pub(crate) trait GitContext<T> {
    fn git(self, context: impl FnOnce() -> String) -> Result<T, StoreError>;
}

impl<T, E: std::error::Error + 'static> GitContext<T> for Result<T, E> {
    fn git(self, context: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::Git {
            context: context(),
            cause: chain(&e),
        })
    }
}

pub(crate) fn io(
    context: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.into();
    move |source| StoreError::Io {
        context,
        path,
        source,
    }
}
