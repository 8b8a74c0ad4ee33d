//! Reading at a revision: resolve a rev, look up a path, list a tree.

use gitloom_model::StorePath;
use gix::ObjectId;

use crate::error::GitContext;
use crate::{Store, StoreError};

/// A blob below a tree, with its `/`-joined path from the tree's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub path: String,
    pub blob: ObjectId,
}

impl Store {
    /// Resolves any rev-parse spec (`<sha>`, `HEAD~3`, `main`), or a date
    /// (`YYYY-MM-DD`, meaning the end of that day in UTC) or RFC 3339 timestamp,
    /// which names the newest first-parent ancestor of HEAD committed at or before it.
    pub fn resolve(&self, rev: &str) -> Result<ObjectId, StoreError> {
        let bad = |cause: String| StoreError::BadRevision {
            rev: rev.to_owned(),
            cause,
        };
        if let Some(at) = parse_when(rev) {
            return self.commit_at(at)?.ok_or_else(|| {
                bad(format!(
                    "no commit on the first-parent history of HEAD is at or before {at}"
                ))
            });
        }
        let repo = self.repo();
        let id = repo
            .rev_parse_single(rev)
            .map_err(|e| bad(crate::error::chain(&e)))?;
        let commit = id
            .object()
            .map_err(|e| bad(crate::error::chain(&e)))?
            .peel_to_commit()
            .map_err(|e| {
                bad(format!(
                    "does not name a commit: {}",
                    crate::error::chain(&e)
                ))
            })?;
        Ok(commit.id)
    }

    /// The newest commit on HEAD's first-parent chain whose committer time is `<= at`.
    fn commit_at(&self, at: jiff::Timestamp) -> Result<Option<ObjectId>, StoreError> {
        let repo = self.repo();
        let mut next = self.head()?;
        let limit = at.as_second();
        while let Some(id) = next {
            let commit = repo
                .find_commit(id)
                .git(|| format!("cannot read commit {id}"))?;
            let time = commit
                .time()
                .git(|| format!("cannot read the time of commit {id}"))?;
            if time.seconds <= limit {
                return Ok(Some(id));
            }
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        Ok(None)
    }

    /// The root tree of `commit`.
    pub fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, StoreError> {
        let repo = self.repo();
        let c = repo
            .find_commit(commit)
            .git(|| format!("cannot read commit {commit}"))?;
        let tree = c
            .tree_id()
            .git(|| format!("cannot read the tree of commit {commit}"))?;
        Ok(tree.detach())
    }

    /// The content of `path` at `commit`, or `None` if there is no file there.
    pub fn read(&self, commit: ObjectId, path: &StorePath) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_raw(commit, path.as_str())
    }

    pub(crate) fn read_raw(
        &self,
        commit: ObjectId,
        path: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let tree = self.tree_of(commit)?;
        match self.blob_at(tree, path)? {
            Some(blob) => Ok(Some(self.read_blob(blob)?)),
            None => Ok(None),
        }
    }

    /// The blob id at `path` below `tree`, if `path` names a file there.
    pub fn blob_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, StoreError> {
        blob_at(&self.repo(), tree, path)
    }

    /// The id of the directory `name` directly below `tree`, if there is one.
    pub fn subtree(&self, tree: ObjectId, name: &str) -> Result<Option<ObjectId>, StoreError> {
        let repo = self.repo();
        Ok(tree_entries(&repo, tree)?
            .into_iter()
            .find(|e| e.name == name && e.mode.is_tree())
            .map(|e| e.id))
    }

    /// The bytes of a blob.
    pub fn read_blob(&self, blob: ObjectId) -> Result<Vec<u8>, StoreError> {
        if let Some(bytes) = self.written.take(blob) {
            return Ok(bytes);
        }
        let repo = self.repo();
        let mut b = repo
            .find_blob(blob)
            .git(|| format!("cannot read blob {blob}"))?;
        Ok(b.take_data())
    }

    /// Every blob below `tree` (recursively), with `/`-joined paths, in git order
    /// (the order of `git ls-tree -r`). Submodule entries are skipped; symbolic links
    /// are blobs and are listed. Paths are raw: the caller validates them.
    pub fn walk(&self, tree: ObjectId) -> Result<Vec<TreeEntry>, StoreError> {
        let repo = self.repo();
        let mut out = Vec::new();
        walk_into(&repo, tree, "", &mut out)?;
        Ok(out)
    }
}

fn walk_into(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
    out: &mut Vec<TreeEntry>,
) -> Result<(), StoreError> {
    for e in tree_entries(repo, tree)? {
        let path = join(prefix, &e.name);
        if e.mode.is_tree() {
            walk_into(repo, e.id, &path, out)?;
        } else if !e.mode.is_commit() {
            out.push(TreeEntry { path, blob: e.id });
        }
    }
    Ok(())
}

pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

/// One entry of a tree, owned.
pub(crate) struct Entry {
    pub name: String,
    pub mode: gix::objs::tree::EntryMode,
    pub id: ObjectId,
}

/// The entries of one tree in git order. Names are decoded lossily: git allows any
/// bytes, but a store only ever holds UTF-8 paths (non-UTF-8 ones are refused later).
pub(crate) fn tree_entries(
    repo: &gix::Repository,
    tree: ObjectId,
) -> Result<Vec<Entry>, StoreError> {
    let t = repo
        .find_tree(tree)
        .git(|| format!("cannot read tree {tree}"))?;
    let decoded = t.decode().git(|| format!("cannot decode tree {tree}"))?;
    Ok(decoded
        .entries
        .iter()
        .map(|e| Entry {
            name: String::from_utf8_lossy(e.filename).into_owned(),
            mode: e.mode,
            id: e.oid.to_owned(),
        })
        .collect())
}

pub(crate) fn blob_at(
    repo: &gix::Repository,
    tree: ObjectId,
    path: &str,
) -> Result<Option<ObjectId>, StoreError> {
    let mut current = tree;
    let mut parts = path.split('/').peekable();
    while let Some(part) = parts.next() {
        let t = repo
            .find_tree(current)
            .git(|| format!("cannot read tree {current}"))?;
        let decoded = t.decode().git(|| format!("cannot decode tree {current}"))?;
        let Some(e) = decoded
            .entries
            .iter()
            .find(|e| e.filename == part.as_bytes())
        else {
            return Ok(None);
        };
        let last = parts.peek().is_none();
        match (last, e.mode.is_tree()) {
            (true, false) if !e.mode.is_commit() => return Ok(Some(e.oid.to_owned())),
            (false, true) => current = e.oid.to_owned(),
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// A bare date (end of that day, UTC) or an RFC 3339 timestamp.
fn parse_when(rev: &str) -> Option<jiff::Timestamp> {
    let rev = rev.trim();
    if rev.len() == 10 && rev.as_bytes()[4] == b'-' && rev.as_bytes()[7] == b'-' {
        let date: jiff::civil::Date = rev.parse().ok()?;
        let end = date.at(23, 59, 59, 999_999_999);
        return end
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp());
    }
    if rev.len() >= 20 && rev.as_bytes().get(4) == Some(&b'-') {
        return rev.parse::<jiff::Timestamp>().ok();
    }
    None
}

/// The first path in `tree` that differs from `path` only in letter case (at any
/// component: `facts/Work/x.md` collides with `facts/work/y.md`'s directory), if any.
/// Two such paths are one file on a case-insensitive file system (macOS, Windows),
/// where a clone of the store would silently lose one of them.
pub(crate) fn case_collision(
    repo: &gix::Repository,
    tree: ObjectId,
    path: &str,
) -> Result<Option<String>, StoreError> {
    let mut current = Some(tree);
    let mut prefix = String::new();
    for part in path.split('/') {
        let Some(t) = current else {
            return Ok(None);
        };
        let folded = part.to_lowercase();
        let entries = tree_entries(repo, t)?;
        if let Some(other) = entries
            .iter()
            .find(|e| e.name != part && e.name.to_lowercase() == folded)
        {
            return Ok(Some(join(&prefix, &other.name)));
        }
        current = entries
            .iter()
            .find(|e| e.name == part && e.mode.is_tree())
            .map(|e| e.id);
        prefix = join(&prefix, part);
    }
    Ok(None)
}

/// The existing entry that a new `path` could pass for, component by component: a
/// name whose letters differ but whose confusable skeleton (UTS #39, over the
/// lowercased name) is the same, such as Cyrillic `раураl` beside Latin `paypal`.
/// Only names with a character outside ASCII are compared: between two ASCII names
/// the skeleton would call `rn` and `m`, or `l` and `1`, the same, which plain
/// file names are not (case is [`case_collision`]'s).
pub(crate) fn look_alike(
    repo: &gix::Repository,
    tree: ObjectId,
    path: &str,
) -> Result<Option<String>, StoreError> {
    let skeleton = |s: &str| -> String { unicode_security::skeleton(&s.to_lowercase()).collect() };
    let mut current = Some(tree);
    let mut prefix = String::new();
    for part in path.split('/') {
        let Some(t) = current else {
            return Ok(None);
        };
        let entries = tree_entries(repo, t)?;
        if entries.iter().all(|e| e.name != part) {
            let mine = skeleton(part);
            if let Some(other) = entries.iter().find(|e| {
                (!part.is_ascii() || !e.name.is_ascii())
                    && e.name.to_lowercase() != part.to_lowercase()
                    && skeleton(&e.name) == mine
            }) {
                return Ok(Some(join(&prefix, &other.name)));
            }
        }
        current = entries
            .iter()
            .find(|e| e.name == part && e.mode.is_tree())
            .map(|e| e.id);
        prefix = join(&prefix, part);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::parse_when;

    #[test]
    fn dates() {
        assert_eq!(
            parse_when("2026-01-02").map(|t| t.as_second()),
            Some(1_767_398_399)
        );
        assert!(parse_when("2026-01-02T10:00:00Z").is_some());
        assert!(parse_when("HEAD~1").is_none());
        assert!(parse_when("deadbeefde").is_none());
    }
}
