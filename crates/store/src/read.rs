//! Reading at a revision: resolve a rev, look up a path, list a tree.

use std::collections::HashMap;
use std::rc::Rc;

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

/// The trees one commit's checks read, each decoded once, with its names folded to
/// lower case once. A session's batch names tens of new files in a few topic folders
/// of hundreds of files; looking each path up, then checking it for case and
/// look-alike collisions, decoded the same folder three times per path and folded
/// every name in it twice per path (allocating each). Objects are immutable by id,
/// so a listing never goes stale.
pub(crate) struct Trees<'r> {
    repo: &'r gix::Repository,
    seen: HashMap<ObjectId, Rc<Listing>>,
}

/// One tree's entries in git order (names decoded lossily, as [`tree_entries`]
/// does), each name folded to lower case, and whether it was UTF-8 as stored.
struct Listing {
    entries: Vec<Entry>,
    folded: Vec<String>,
    utf8: Vec<bool>,
}

impl Listing {
    /// The entry named `name` as the collision checks see names (lossily decoded).
    fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The entry whose stored bytes are `name`'s, as [`blob_at`] matches: a name
    /// that was not UTF-8 is never a `&str`'s bytes.
    fn find_exact(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .zip(&self.utf8)
            .find(|(e, utf8)| **utf8 && e.name == name)
            .map(|(e, _)| e)
    }

    fn subtree(&self, name: &str) -> Option<ObjectId> {
        self.entries
            .iter()
            .find(|e| e.name == name && e.mode.is_tree())
            .map(|e| e.id)
    }
}

impl<'r> Trees<'r> {
    pub(crate) fn new(repo: &'r gix::Repository) -> Trees<'r> {
        Trees {
            repo,
            seen: HashMap::new(),
        }
    }

    fn listing(&mut self, tree: ObjectId) -> Result<Rc<Listing>, StoreError> {
        if let Some(l) = self.seen.get(&tree) {
            return Ok(Rc::clone(l));
        }
        let t = self
            .repo
            .find_tree(tree)
            .git(|| format!("cannot read tree {tree}"))?;
        let decoded = t.decode().git(|| format!("cannot decode tree {tree}"))?;
        let utf8 = decoded
            .entries
            .iter()
            .map(|e| std::str::from_utf8(e.filename).is_ok())
            .collect();
        let entries: Vec<Entry> = decoded
            .entries
            .iter()
            .map(|e| Entry {
                name: String::from_utf8_lossy(e.filename).into_owned(),
                mode: e.mode,
                id: e.oid.to_owned(),
            })
            .collect();
        let folded = entries.iter().map(|e| e.name.to_lowercase()).collect();
        let listing = Rc::new(Listing {
            entries,
            folded,
            utf8,
        });
        self.seen.insert(tree, Rc::clone(&listing));
        Ok(listing)
    }

    /// [`blob_at`], from the listings.
    pub(crate) fn blob_at(
        &mut self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Option<ObjectId>, StoreError> {
        let mut current = tree;
        let mut parts = path.split('/').peekable();
        while let Some(part) = parts.next() {
            let listing = self.listing(current)?;
            let Some(e) = listing.find_exact(part) else {
                return Ok(None);
            };
            let last = parts.peek().is_none();
            match (last, e.mode.is_tree()) {
                (true, false) if !e.mode.is_commit() => return Ok(Some(e.id)),
                (false, true) => current = e.id,
                _ => return Ok(None),
            }
        }
        Ok(None)
    }

    /// The first path in `tree` that differs from `path` only in letter case (at
    /// any component: `facts/Work/x.md` collides with `facts/work/y.md`'s
    /// directory), if any. Two such paths are one file on a case-insensitive file
    /// system (macOS, Windows), where a clone of the store would silently lose one
    /// of them.
    pub(crate) fn case_collision(
        &mut self,
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
            let listing = self.listing(t)?;
            if let Some(other) = listing
                .entries
                .iter()
                .zip(&listing.folded)
                .find(|(e, f)| e.name != part && **f == folded)
                .map(|(e, _)| e)
            {
                return Ok(Some(join(&prefix, &other.name)));
            }
            current = listing.subtree(part);
            prefix = join(&prefix, part);
        }
        Ok(None)
    }

    /// The existing entry that a new `path` could pass for, component by component:
    /// a name whose letters differ but whose confusable skeleton (UTS #39, over the
    /// lowercased name) is the same, such as Cyrillic `раураl` beside Latin
    /// `paypal`. Only names with a character outside ASCII are compared: between
    /// two ASCII names the skeleton would call `rn` and `m`, or `l` and `1`, the
    /// same, which plain file names are not (case is
    /// [`Trees::case_collision`]'s).
    pub(crate) fn look_alike(
        &mut self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Option<String>, StoreError> {
        let skeleton = |folded: &str| -> String { unicode_security::skeleton(folded).collect() };
        let mut current = Some(tree);
        let mut prefix = String::new();
        for part in path.split('/') {
            let Some(t) = current else {
                return Ok(None);
            };
            let listing = self.listing(t)?;
            if listing.find(part).is_none() {
                let folded = part.to_lowercase();
                let mine = skeleton(&folded);
                if let Some(other) = listing
                    .entries
                    .iter()
                    .zip(&listing.folded)
                    .find(|(e, f)| {
                        (!part.is_ascii() || !e.name.is_ascii())
                            && **f != folded
                            && skeleton(f) == mine
                    })
                    .map(|(e, _)| e)
                {
                    return Ok(Some(join(&prefix, &other.name)));
                }
            }
            current = listing.subtree(part);
            prefix = join(&prefix, part);
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::{Trees, blob_at, parse_when};
    use crate::{Batch, Store};
    use gitloom_model::StorePath;

    #[test]
    fn the_listings_answer_as_the_trees_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::init(dir.path()).expect("init");
        let mut batch = Batch::new("x");
        for path in [
            "facts/work/a.md",
            "facts/work/b.md",
            "facts/Home/c.md",
            "rules/d.md",
        ] {
            batch = batch.put(StorePath::parse(path).expect("path"), path);
        }
        let out = store.commit(&batch).expect("commit").expect("changed");
        let repo = store.repo();
        let mut trees = Trees::new(&repo);
        for path in [
            "facts/work/a.md",
            "facts/work/b.md",
            "facts/work",
            "facts/work/z.md",
            "facts/home/c.md",
            "rules/d.md",
            "nowhere/x.md",
        ] {
            assert_eq!(
                trees.blob_at(out.tree, path).expect("listing"),
                blob_at(&repo, out.tree, path).expect("tree"),
                "{path}"
            );
        }
        let hit = trees.case_collision(out.tree, "facts/home/e.md");
        assert_eq!(hit.expect("case").as_deref(), Some("facts/Home"));
        let hit = trees.case_collision(out.tree, "facts/work/A.md");
        assert_eq!(hit.expect("case").as_deref(), Some("facts/work/a.md"));
        assert!(
            trees
                .case_collision(out.tree, "facts/work/e.md")
                .expect("case")
                .is_none()
        );
        // Cyrillic "а" beside Latin "a".
        let hit = trees.look_alike(out.tree, "facts/work/\u{430}.md");
        assert_eq!(hit.expect("look-alike").as_deref(), Some("facts/work/a.md"));
        assert!(
            trees
                .look_alike(out.tree, "facts/work/e.md")
                .expect("look-alike")
                .is_none()
        );
    }

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
