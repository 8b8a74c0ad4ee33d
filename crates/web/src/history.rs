//! History from git: the versions of one memory with the diff each commit made, and
//! the files each commit added, changed or deleted (the timeline and commit pages).
//! Always read back from a moment (`Store::log_from`), so a page at `?at=` shows
//! the history as it was then.

use gitloom_model::{Memory, StorePath};
use gitloom_store::{CommitInfo, ObjectId, Store};

use crate::diff::{FileDiff, diff};
use crate::error::WebError;

/// One commit that changed a memory, with what it changed.
#[derive(Debug, Clone)]
pub struct Version {
    pub commit: CommitInfo,
    /// The file after the commit; `None` where the commit deleted it.
    pub content: Option<String>,
    pub diff: FileDiff,
}

/// The commits (newest first, at most `limit`) that changed `path`, reachable from
/// `from`, each with its diff against its first parent.
pub fn versions(
    store: &Store,
    from: ObjectId,
    path: &StorePath,
    limit: usize,
) -> Result<Vec<Version>, WebError> {
    let mut out = Vec::new();
    for commit in store.log_from(from, Some(path), Some(limit))? {
        let content = read_text(store, commit.id, path)?;
        let before = match commit.parent {
            Some(p) => read_text(store, p, path)?,
            None => None,
        };
        let diff = diff(before.as_deref(), content.as_deref());
        out.push(Version {
            commit,
            content,
            diff,
        });
    }
    Ok(out)
}

/// A file at a commit as text (lossy UTF-8: the page shows what is there).
pub fn read_text(
    store: &Store,
    commit: ObjectId,
    path: &StorePath,
) -> Result<Option<String>, WebError> {
    Ok(store
        .read(commit, path)?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// How a commit touched a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Changed,
    Deleted,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Changed => "changed",
            ChangeKind::Deleted => "deleted",
        }
    }

    /// The one-character mark `git log --name-status` uses.
    pub fn mark(self) -> &'static str {
        match self {
            ChangeKind::Added => "+",
            ChangeKind::Changed => "~",
            ChangeKind::Deleted => "−",
        }
    }
}

/// A file a commit touched, with its title where it is a memory that parses.
#[derive(Debug, Clone)]
pub struct Touched {
    pub path: String,
    pub kind: ChangeKind,
    /// The memory's title (after the commit; before it, for a deletion).
    pub title: Option<String>,
    /// Blobs before and after, for a diff on demand.
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

impl Touched {
    /// A memory of one of the tiers (as opposed to a transcript or vocabulary).
    pub fn is_memory(&self) -> bool {
        StorePath::parse(&self.path).is_ok_and(|p| p.is_memory())
    }

    pub fn is_session(&self) -> bool {
        self.path.starts_with("sessions/")
    }
}

/// A commit with the files it touched.
#[derive(Debug, Clone)]
pub struct CommitChanges {
    pub commit: CommitInfo,
    pub files: Vec<Touched>,
}

/// The files `commit` changed against its first parent (everything, for a root).
pub fn changes(store: &Store, commit: CommitInfo) -> Result<CommitChanges, WebError> {
    let tree = store.tree_of(commit.id)?;
    let parent_tree = match commit.parent {
        Some(p) => Some(store.tree_of(p)?),
        None => None,
    };
    let mut files = Vec::new();
    for change in store.diff(parent_tree, tree)?.changes {
        let kind = match (change.old, change.new) {
            (None, _) => ChangeKind::Added,
            (_, None) => ChangeKind::Deleted,
            _ => ChangeKind::Changed,
        };
        let title = match change.new.or(change.old) {
            Some(blob) if !change.path.starts_with("sessions/") => {
                let bytes = store.read_blob(blob)?;
                Memory::parse(&change.path, &bytes)
                    .ok()
                    .map(|m| m.front.title)
            }
            _ => None,
        };
        files.push(Touched {
            path: change.path,
            kind,
            title,
            old: change.old,
            new: change.new,
        });
    }
    Ok(CommitChanges { commit, files })
}

/// A page of the timeline: commits reachable from `from`, newest first, skipping
/// `skip`, at most `limit`; `more` says whether older ones follow.
pub struct TimelinePage {
    pub commits: Vec<CommitChanges>,
    pub more: bool,
}

pub fn timeline(
    store: &Store,
    from: ObjectId,
    skip: usize,
    limit: usize,
) -> Result<TimelinePage, WebError> {
    let mut log = store.log_from(from, None, Some(skip + limit + 1))?;
    let more = log.len() > skip + limit;
    log.truncate(skip + limit);
    let commits = log
        .into_iter()
        .skip(skip)
        .map(|c| changes(store, c))
        .collect::<Result<_, _>>()?;
    Ok(TimelinePage { commits, more })
}

/// One commit by id, as [`changes`] reads it.
pub fn commit(store: &Store, id: ObjectId) -> Result<CommitChanges, WebError> {
    let info = store
        .log_from(id, None, Some(1))?
        .into_iter()
        .next()
        .ok_or_else(|| WebError::not_found(format!("no commit {id}")))?;
    changes(store, info)
}

/// The diff of one touched file.
pub fn file_diff(store: &Store, t: &Touched) -> Result<FileDiff, WebError> {
    let text = |blob: Option<ObjectId>| -> Result<Option<String>, WebError> {
        Ok(match blob {
            Some(b) => Some(String::from_utf8_lossy(&store.read_blob(b)?).into_owned()),
            None => None,
        })
    };
    Ok(diff(text(t.old)?.as_deref(), text(t.new)?.as_deref()))
}
