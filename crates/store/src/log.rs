//! History, newest first.

use gitloom_model::StorePath;
use gix::ObjectId;

use crate::error::GitContext;
use crate::{Store, StoreError, read};

/// One commit in [`Store::log`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: ObjectId,
    /// Committer time.
    pub time: jiff::Timestamp,
    /// The full message, without its final newline.
    pub message: String,
    /// The first line of the message.
    pub summary: String,
    /// The first parent (`None` for a root commit): what a commit's changes are
    /// measured against.
    pub parent: Option<ObjectId>,
}

impl Store {
    /// Commits reachable from HEAD, newest (by committer time) first. With `path`,
    /// only commits whose blob at `path` differs from their first parent's (so adds,
    /// edits and deletes of that path). `limit = None` returns all.
    pub fn log(
        &self,
        path: Option<&StorePath>,
        limit: Option<usize>,
    ) -> Result<Vec<CommitInfo>, StoreError> {
        match self.head()? {
            Some(head) => self.log_from(head, path, limit),
            None => Ok(Vec::new()),
        }
    }

    /// [`Store::log`] from `start` instead of HEAD: the history as it was at that
    /// commit (time travel), newest first.
    pub fn log_from(
        &self,
        start: ObjectId,
        path: Option<&StorePath>,
        limit: Option<usize>,
    ) -> Result<Vec<CommitInfo>, StoreError> {
        let head = start;
        let limit = limit.unwrap_or(usize::MAX);
        let repo = self.repo();
        let walk = repo
            .rev_walk([head])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
            ))
            .all()
            .git(|| format!("cannot walk history from {head}"))?;
        let mut out = Vec::new();
        for info in walk {
            if out.len() >= limit {
                break;
            }
            let info = info.git(|| format!("cannot walk history from {head}"))?;
            let id = info.id;
            let commit = repo
                .find_commit(id)
                .git(|| format!("cannot read commit {id}"))?;
            let parent = commit.parent_ids().next().map(|p| p.detach());
            if let Some(path) = path {
                let tree = commit
                    .tree_id()
                    .git(|| format!("cannot read the tree of {id}"))?
                    .detach();
                let now = read::blob_at(&repo, tree, path.as_str())?;
                let before = match parent {
                    Some(p) => {
                        let ptree = self.tree_of(p)?;
                        read::blob_at(&repo, ptree, path.as_str())?
                    }
                    None => None,
                };
                if now == before {
                    continue;
                }
            }
            let time = commit
                .time()
                .git(|| format!("cannot read the time of {id}"))?;
            let raw = commit.message_raw_sloppy();
            let message = String::from_utf8_lossy(raw);
            let message = message.strip_suffix('\n').unwrap_or(&message).to_owned();
            let summary = message.lines().next().unwrap_or_default().to_owned();
            out.push(CommitInfo {
                id,
                time: jiff::Timestamp::from_second(time.seconds)
                    .unwrap_or(jiff::Timestamp::UNIX_EPOCH),
                message,
                summary,
                parent,
            });
        }
        Ok(out)
    }
}
