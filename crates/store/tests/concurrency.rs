mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use gitloom_store::{Batch, Store};

fn assert_all_present(dir: &Path, store: &Store, paths: &[String]) {
    let head = store.head().expect("head").expect("born");
    for p in paths {
        let content = store.read(head, &sp(p)).expect("read");
        assert_eq!(content.as_deref(), Some(p.as_bytes()), "{p} lost at HEAD");
    }
    let fsck = git_out(dir, &["fsck", "--strict"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn two_threads_share_one_store() {
    let (dir, store) = new_store();
    let store = Arc::new(store);
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                (0..50)
                    .map(|i| {
                        let p = format!("facts/t{t}/f{i}.md");
                        put(&store, &p, &p);
                        p
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let paths: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("thread"))
        .collect();
    assert_all_present(dir.path(), &store, &paths);
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "HEAD"]).trim(),
        "101"
    );
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn separate_handles_model_separate_processes() {
    let (dir, _store) = new_store();
    let root = dir.path().to_owned();
    let handles: Vec<_> = (0..3)
        .map(|t| {
            let root = root.clone();
            std::thread::spawn(move || {
                let store = Store::open(&root).expect("own handle");
                (0..20)
                    .map(|i| {
                        let p = format!("rules/p{t}/r{i}.md");
                        put(&store, &p, &p);
                        p
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let paths: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("thread"))
        .collect();
    let store = Store::open(&root).expect("open");
    assert_all_present(dir.path(), &store, &paths);
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "HEAD"]).trim(),
        "61"
    );
}

/// Makes a commit with git plumbing on top of `parent` adding `path`, without
/// touching the work tree or the shared index.
fn git_commit_on(dir: &Path, parent: &str, path: &str, tag: &str) -> String {
    let index = dir.join(format!(".git/alt-index-{tag}"));
    let index = index.to_str().expect("utf-8");
    let blob = {
        let mut c = git_cmd(dir);
        c.args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = c.spawn().expect("spawn");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(path.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    };
    let run = |args: &[&str]| {
        let out = git_cmd(dir)
            .env("GIT_INDEX_FILE", index)
            .args(args)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    };
    run(&["read-tree", parent]);
    run(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("100644,{blob},{path}"),
    ]);
    let tree = run(&["write-tree"]);
    run(&[
        "commit-tree",
        &tree,
        "-p",
        parent,
        "-m",
        &format!("git: {path}"),
    ])
}

#[test]
fn a_git_commit_between_our_read_and_our_ref_update_is_kept() {
    let (dir, store) = new_store();
    put(&store, "facts/base.md", "facts/base.md");
    let parent = git(dir.path(), &["rev-parse", "HEAD"]).trim().to_owned();
    let theirs = git_commit_on(dir.path(), &parent, "facts/git.md", "x");

    // Hold the branch lock the way git does while it updates the ref, so our writer
    // reads the old head, builds its commit and loses the compare-and-swap.
    let lock = dir.path().join(".git/refs/heads/main.lock");
    std::fs::write(&lock, format!("{theirs}\n")).expect("lock");
    let root = dir.path().to_owned();
    let writer = std::thread::spawn(move || {
        let store = Store::open(&root).expect("open");
        store
            .commit(&Batch::new("remember: ours").put(sp("facts/ours.md"), "facts/ours.md"))
            .expect("commit")
            .expect("changed")
    });
    std::thread::sleep(Duration::from_millis(150));
    // git finishes its update: lock file renamed into place.
    std::fs::rename(&lock, dir.path().join(".git/refs/heads/main")).expect("rename");
    let out = writer.join().expect("thread");

    assert!(out.retries >= 1, "expected a lost CAS, got {out:?}");
    assert_eq!(out.parent.map(|p| p.to_string()), Some(theirs.clone()));
    let ancestors = git(dir.path(), &["rev-list", "HEAD"]);
    assert!(ancestors.lines().any(|l| l == theirs));
    assert_all_present(
        dir.path(),
        &store,
        &[
            "facts/base.md".into(),
            "facts/git.md".into(),
            "facts/ours.md".into(),
        ],
    );
}

#[test]
fn concurrent_git_plumbing_commits_never_lose_writes() {
    let (dir, store) = new_store();
    let root = dir.path().to_owned();
    let git_side = std::thread::spawn(move || {
        let mut done = Vec::new();
        for i in 0..15 {
            let path = format!("skills/git/g{i}.md");
            // Retry our own CAS like any well-behaved writer.
            loop {
                let parent = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
                let commit = git_commit_on(&root, &parent, &path, "loop");
                let out = git_out(&root, &["update-ref", "refs/heads/main", &commit, &parent]);
                if out.status.success() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(3));
            }
            done.push(path);
        }
        done
    });
    let mut ours = Vec::new();
    let mut retries = 0;
    for i in 0..30 {
        let p = format!("facts/ours/o{i}.md");
        let out = store
            .commit(&Batch::new("remember").put(sp(&p), p.clone()))
            .expect("commit")
            .expect("changed");
        retries += out.retries;
        ours.push(p);
    }
    let theirs = git_side.join().expect("git thread");
    ours.extend(theirs);
    assert_all_present(dir.path(), &store, &ours);
    eprintln!("lost CAS races retried: {retries}");
}

#[test]
fn concurrent_porcelain_git_commit_loop() {
    let (dir, store) = new_store();
    let root = dir.path().to_owned();
    let git_side = std::thread::spawn(move || {
        let mut done = Vec::new();
        std::fs::create_dir_all(root.join("vocab")).expect("mkdir");
        for i in 0..10 {
            let path = format!("vocab/g{i}.md");
            std::fs::write(root.join(&path), &path).expect("write");
            // `git` dies at once on a held index.lock; retry like a user would.
            for _ in 0..200 {
                let add = git_out(&root, &["add", &path]);
                if add.status.success()
                    && git_out(&root, &["commit", "-qm", &path, "--", &path])
                        .status
                        .success()
                {
                    done.push(path.clone());
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        done
    });
    let mut ours = Vec::new();
    for i in 0..20 {
        let p = format!("facts/ours/o{i}.md");
        put(&store, &p, &p);
        ours.push(p);
    }
    let theirs = git_side.join().expect("git thread");
    assert_eq!(theirs.len(), 10, "git commits kept failing");
    ours.extend(theirs);
    assert_all_present(dir.path(), &store, &ours);
}
