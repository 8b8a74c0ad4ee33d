//! Tree diff between two root trees.
//!
//! Hand-written as a merge-walk of the two sorted entry lists instead of using
//! `gix::diff::tree`: gix's tree diff does not report how many entries it examined,
//! and `visited_entries` is how callers (and tests) hold us to the promise that an
//! unchanged subtree (same id on both sides) is never opened. Changing one file among
//! thousands therefore costs only the entries of the trees along its path.

use gix::ObjectId;

use crate::read::{Entry, join, tree_entries};
use crate::{Store, StoreError};

/// One changed blob. `old = None`: added; `new = None`: deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

/// The blobs that differ between two trees, ordered by path (component-wise by name
/// bytes), and how many tree entries were examined to find them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeDiff {
    pub changes: Vec<Change>,
    pub visited_entries: usize,
}

impl Store {
    /// Differences between two root trees; `old = None` means everything in `new`
    /// is added. Only blobs are reported: a file replaced by a directory is a delete
    /// plus adds. Submodule entries are ignored. Subtrees whose id is unchanged are
    /// never descended into.
    pub fn diff(&self, old: Option<ObjectId>, new: ObjectId) -> Result<TreeDiff, StoreError> {
        let repo = self.repo();
        let mut out = TreeDiff::default();
        match old {
            Some(old) => diff_trees(&repo, old, new, "", &mut out)?,
            None => side_tree(&repo, new, "", Side::Added, &mut out)?,
        }
        Ok(out)
    }
}

#[derive(Clone, Copy)]
enum Side {
    Added,
    Deleted,
}

fn sorted(repo: &gix::Repository, tree: ObjectId) -> Result<Vec<Entry>, StoreError> {
    let mut entries = tree_entries(repo, tree)?;
    // git orders a tree named `a` as `a/`; the merge needs plain name order so that a
    // file and a directory of the same name meet.
    entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Ok(entries)
}

fn diff_trees(
    repo: &gix::Repository,
    old: ObjectId,
    new: ObjectId,
    prefix: &str,
    out: &mut TreeDiff,
) -> Result<(), StoreError> {
    if old == new {
        return Ok(());
    }
    let a = sorted(repo, old)?;
    let b = sorted(repo, new)?;
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        out.visited_entries += 1;
        let ord = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.name.as_bytes().cmp(y.name.as_bytes()),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, _) => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                entry(repo, &a[i], prefix, Side::Deleted, out)?;
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                entry(repo, &b[j], prefix, Side::Added, out)?;
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let (x, y) = (&a[i], &b[j]);
                let path = join(prefix, &x.name);
                match (x.mode.is_tree(), y.mode.is_tree()) {
                    (true, true) => diff_trees(repo, x.id, y.id, &path, out)?,
                    (false, false) => {
                        let (xb, yb) = (!x.mode.is_commit(), !y.mode.is_commit());
                        if xb && yb {
                            if x.id != y.id {
                                out.changes.push(Change {
                                    path,
                                    old: Some(x.id),
                                    new: Some(y.id),
                                });
                            }
                        } else {
                            if xb {
                                entry(repo, x, prefix, Side::Deleted, out)?;
                            }
                            if yb {
                                entry(repo, y, prefix, Side::Added, out)?;
                            }
                        }
                    }
                    _ => {
                        entry(repo, x, prefix, Side::Deleted, out)?;
                        entry(repo, y, prefix, Side::Added, out)?;
                    }
                }
                i += 1;
                j += 1;
            }
        }
    }
    Ok(())
}

/// An entry present on one side only: every blob below it is added or deleted.
fn entry(
    repo: &gix::Repository,
    e: &Entry,
    prefix: &str,
    side: Side,
    out: &mut TreeDiff,
) -> Result<(), StoreError> {
    let path = join(prefix, &e.name);
    if e.mode.is_tree() {
        side_tree(repo, e.id, &path, side, out)
    } else if e.mode.is_commit() {
        Ok(())
    } else {
        push(out, path, e.id, side);
        Ok(())
    }
}

fn side_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
    s: Side,
    out: &mut TreeDiff,
) -> Result<(), StoreError> {
    for e in sorted(repo, tree)? {
        out.visited_entries += 1;
        entry(repo, &e, prefix, s, out)?;
    }
    Ok(())
}

fn push(out: &mut TreeDiff, path: String, id: ObjectId, side: Side) {
    out.changes.push(match side {
        Side::Added => Change {
            path,
            old: None,
            new: Some(id),
        },
        Side::Deleted => Change {
            path,
            old: Some(id),
            new: None,
        },
    });
}
