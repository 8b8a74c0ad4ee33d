mod common;

use std::collections::BTreeMap;

use common::*;
use gitloom_store::{Batch, ObjectId, Store};

/// `git diff-tree -r --name-status --no-renames OLD NEW` as path → status letter.
fn git_diff(dir: &std::path::Path, old: ObjectId, new: ObjectId) -> BTreeMap<String, char> {
    git(
        dir,
        &[
            "diff-tree",
            "-r",
            "--name-status",
            "--no-renames",
            &old.to_string(),
            &new.to_string(),
        ],
    )
    .lines()
    .map(|l| {
        let (status, path) = l.split_once('\t').expect("status<TAB>path");
        (path.to_owned(), status.chars().next().expect("letter"))
    })
    .collect()
}

fn ours(store: &Store, old: Option<ObjectId>, new: ObjectId) -> BTreeMap<String, char> {
    let d = store.diff(old, new).expect("diff");
    let map: BTreeMap<String, char> = d
        .changes
        .iter()
        .map(|c| {
            let s = match (c.old, c.new) {
                (None, Some(_)) => 'A',
                (Some(_), None) => 'D',
                _ => 'M',
            };
            (c.path.clone(), s)
        })
        .collect();
    assert_eq!(map.len(), d.changes.len(), "a path reported twice");
    map
}

#[test]
fn diff_matches_git_diff_tree() {
    let (dir, store) = new_store();
    let mut trees = vec![
        store
            .tree_of(store.head().expect("head").expect("born"))
            .expect("tree"),
    ];
    let steps: Vec<Batch> = vec![
        Batch::new("1")
            .put(sp("facts/a/x.md"), "1")
            .put(sp("facts/a/y.md"), "1")
            .put(sp("facts/b.md"), "1")
            .put(sp("rules/r.md"), "1")
            .put(sp("facts/a-b/z.md"), "1")
            .put(sp("facts/a.b.md"), "1"),
        Batch::new("2")
            .put(sp("facts/a/x.md"), "2")
            .delete(sp("facts/b.md"))
            .put(sp("skills/s/t/u.md"), "2"),
        Batch::new("3")
            .delete(sp("facts/a/x.md"))
            .delete(sp("facts/a/y.md"))
            .put(sp("facts/a.md"), "3"),
        Batch::new("4")
            .delete(sp("skills/s/t/u.md"))
            .put(sp("sessions/2026-01-01/s.md"), "4"),
        // A file replaced by a directory of the same name: delete + add.
        Batch::new("5")
            .delete(sp("facts/a.md"))
            .put(sp("facts/a.md/inner.md"), "5"),
    ];
    for b in &steps {
        let out = store.commit(b).expect("commit").expect("changed");
        trees.push(out.tree);
    }
    for i in 0..trees.len() {
        for j in 0..trees.len() {
            assert_eq!(
                ours(&store, Some(trees[i]), trees[j]),
                git_diff(dir.path(), trees[i], trees[j]),
                "diff {i} -> {j}"
            );
        }
    }
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    assert!(dir.path().join("facts/a.md/inner.md").is_file());
    // old = None: everything is added.
    let last = *trees.last().expect("trees");
    let all = ours(&store, None, last);
    let walked: Vec<String> = store
        .walk(last)
        .expect("walk")
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(all.keys().cloned().collect::<Vec<_>>().len(), walked.len());
    assert!(all.values().all(|s| *s == 'A'));
    // walk is in git order.
    assert_eq!(
        walked.join("\n") + "\n",
        git(
            dir.path(),
            &["ls-tree", "-r", "--name-only", &last.to_string()]
        )
    );
}

#[test]
fn diff_visits_only_the_changed_path() {
    let (dir, store) = new_store();
    let mut batch = Batch::new("bulk");
    for t in 0..10 {
        for s in 0..10 {
            for f in 0..10 {
                batch = batch.put(
                    sp(&format!("facts/t{t}/s{s}/f{f}.md")),
                    format!("{t}{s}{f}"),
                );
            }
        }
    }
    let first = store.commit(&batch).expect("commit").expect("changed");
    assert_eq!(store.walk(first.tree).expect("walk").len(), 1001);
    let second = put(&store, "facts/t3/s4/f5.md", "changed");
    let d = store.diff(Some(first.tree), second.tree).expect("diff");
    assert_eq!(d.changes.len(), 1);
    assert_eq!(d.changes[0].path, "facts/t3/s4/f5.md");
    assert!(d.visited_entries <= 40, "visited {}", d.visited_entries);
    assert_eq!(git_diff(dir.path(), first.tree, second.tree).len(), 1);
    // Identical trees cost nothing.
    assert_eq!(
        store
            .diff(Some(second.tree), second.tree)
            .expect("diff")
            .visited_entries,
        0
    );
}
