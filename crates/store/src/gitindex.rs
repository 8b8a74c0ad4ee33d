//! Keeps git's index (`.git/index`) in step with the commits we make, so that
//! `git status` is clean after gitloom writes. The index is never used to *build*
//! a commit; it is only updated afterwards for the paths we changed.

use std::collections::HashSet;
use std::path::Path;

use gix::ObjectId;
use gix::index::entry::{Flags, Mode, Stat};

use crate::commit::Edit;
use crate::error::chain;
use crate::worktree::blob_id;

/// Replaces the index entries of the changed paths (with fresh stat data of the files
/// we wrote) and writes the index through `lock`, which the caller has held since
/// before the commit. Without an index file, one is created from `tree`.
pub(crate) fn update(
    repo: &gix::Repository,
    mut lock: gix::lock::File,
    root: &Path,
    edits: &[Edit<'_>],
    written: &[&str],
    tree: ObjectId,
) -> Result<(), String> {
    let index_path = repo.index_path();
    let mut file = if index_path.exists() {
        gix::index::File::at(&index_path, repo.object_hash(), false, Default::default())
            .map_err(|e| chain(&e))?
    } else {
        let mut file = repo.index_from_tree(&tree).map_err(|e| chain(&e))?;
        restat_all(repo, root, &mut file);
        file
    };

    let changed: HashSet<&str> = edits.iter().map(|e| e.path).collect();
    let written: HashSet<&str> = written.iter().copied().collect();
    file.remove_entries(|_, path, _| std::str::from_utf8(path).is_ok_and(|p| changed.contains(p)));
    for e in edits {
        if let Some(id) = e.new {
            let stat = if written.contains(e.path) {
                stat_of(&root.join(e.path)).unwrap_or_default()
            } else {
                // Unknown stat makes git compare contents, which tells the truth.
                Stat::default()
            };
            file.dangerously_push_entry(stat, id, Flags::empty(), Mode::FILE, e.path.into());
        }
    }
    file.sort_entries();
    // The tree cache would now be stale; git rebuilds it when needed.
    file.remove_tree();

    let options = gix::index::write::Options {
        extensions: gix::index::write::Extensions::Given {
            tree_cache: false,
            end_of_index_entry: false,
        },
        skip_hash: false,
    };
    // gix writes an entry at a time; unbuffered, that is several write(2) calls per
    // entry, which made this a quarter of a busy server's CPU (perf, mixed load).
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut lock);
    file.write_to(&mut out, options).map_err(|e| chain(&e))?;
    out.into_inner().map_err(|e| e.error().to_string())?;
    lock.commit().map_err(|e| e.error.to_string())?;
    Ok(())
}

fn stat_of(path: &Path) -> Option<Stat> {
    let meta = gix::index::fs::Metadata::from_path_no_follow(path).ok()?;
    Stat::from_fs(&meta).ok()
}

/// For an index made from a tree: record stat data of every work-tree file whose
/// content matches its entry, so git does not have to rehash them.
fn restat_all(repo: &gix::Repository, root: &Path, file: &mut gix::index::File) {
    let hash_matches = |path: &Path, id: &ObjectId| {
        std::fs::read(path)
            .ok()
            .and_then(|b| blob_id(repo, &b).ok())
            .is_some_and(|have| have == *id)
    };
    for (entry, path) in file.entries_mut_with_paths() {
        let Ok(rel) = std::str::from_utf8(path) else {
            continue;
        };
        let full = root.join(rel);
        if hash_matches(&full, &entry.id)
            && let Some(stat) = stat_of(&full)
        {
            entry.stat = stat;
        }
    }
}
