mod common;

use common::*;
use gitloom_model::is_committable;
use gitloom_store::{Batch, Store, StoreError};

#[test]
fn init_commit_and_read_back() {
    let (dir, store) = new_store();
    let head = store.head().expect("head").expect("init commit");
    assert_eq!(
        git(dir.path(), &["rev-parse", "HEAD"]).trim(),
        head.to_string()
    );
    assert_eq!(
        git(dir.path(), &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main"
    );
    assert_eq!(
        git(dir.path(), &["log", "--format=%s"]).trim(),
        "init: gitloom store"
    );
    assert_eq!(
        git(dir.path(), &["show", "HEAD:.gitignore"]).trim(),
        ".gitloom/"
    );

    let out = put(&store, "facts/work/orbital.md", "# Orbital\n");
    assert_eq!(out.parent, Some(head));
    assert_eq!(out.paths, vec!["facts/work/orbital.md".to_owned()]);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(store.head().expect("head"), Some(out.commit));
    assert_eq!(store.tree_of(out.commit).expect("tree"), out.tree);
    let read = store
        .read(out.commit, &sp("facts/work/orbital.md"))
        .expect("read");
    assert_eq!(read.as_deref(), Some(&b"# Orbital\n"[..]));
    assert_eq!(
        store
            .read(head, &sp("facts/work/orbital.md"))
            .expect("read"),
        None
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("facts/work/orbital.md")).expect("work tree file"),
        "# Orbital\n"
    );
    assert_eq!(
        git(dir.path(), &["show", "HEAD:facts/work/orbital.md"]),
        "# Orbital\n"
    );
    assert_eq!(
        git(dir.path(), &["log", "-1", "--format=%an <%ae>"]).trim(),
        "gitloom <gitloom@localhost>"
    );

    // Idempotent init, and open sees the same store.
    let again = Store::init(dir.path()).expect("init again");
    assert_eq!(again.head().expect("head"), Some(out.commit));
    let opened = Store::open(dir.path()).expect("open");
    assert_eq!(opened.root(), store.root());
    assert_eq!(opened.gitloom_dir(), dir.path().join(".gitloom"));
}

#[test]
fn open_names_the_dir_when_not_a_repo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = Store::open(dir.path()).expect_err("not a repo");
    assert!(matches!(err, StoreError::NotARepository { .. }));
    assert!(
        err.to_string().contains(&dir.path().display().to_string()),
        "{err}"
    );
}

#[test]
fn many_writes_are_clean_and_only_touch_their_paths() {
    let (dir, store) = new_store();
    // Things that must never enter history.
    std::fs::create_dir_all(dir.path().join(".gitloom")).expect("mkdir");
    std::fs::write(dir.path().join(".gitloom/index.db"), b"sqlite").expect("write");
    std::fs::write(dir.path().join("notes.txt"), b"scratch").expect("write");

    let mut expected = Vec::new();
    for i in 0..300 {
        let path = match i % 5 {
            0 => format!("facts/t{}/m{i}.md", i % 7),
            1 => format!("rules/r{i}.md"),
            2 => format!("sessions/2026-01-0{}/s{i}.md", 1 + i % 9),
            3 => format!("incidents/a/b/i{}.md", i % 40), // rewrites some
            _ => format!("vocab/v{}.md", i % 11),
        };
        let out = put(&store, &path, &format!("content {i}\n"));
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        expected.push(path);
    }
    let fsck = git_out(dir.path(), &["fsck", "--strict"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );

    let log = git(
        dir.path(),
        &["log", "--reverse", "--name-only", "--format=@%H"],
    );
    let mut commits: Vec<(String, Vec<String>)> = Vec::new();
    for line in log.lines() {
        if let Some(id) = line.strip_prefix('@') {
            commits.push((id.to_owned(), Vec::new()));
        } else if !line.is_empty() {
            commits
                .last_mut()
                .expect("commit line first")
                .1
                .push(line.to_owned());
        }
    }
    assert_eq!(commits.len(), 301);
    assert_eq!(commits[0].1, vec![".gitignore".to_owned()]);
    for ((_, names), want) in commits[1..].iter().zip(&expected) {
        assert_eq!(names, &vec![want.clone()]);
    }
    for (id, _) in commits.iter().step_by(10).chain(commits.last()) {
        for path in git(dir.path(), &["ls-tree", "-r", "--name-only", id]).lines() {
            assert!(is_committable(path), "{path} in {id}");
        }
    }
    let all = git(dir.path(), &["log", "--all", "--name-only", "--format="]);
    assert!(!all.contains("notes.txt") && !all.contains(".gitloom/index.db"));
    assert_eq!(
        git(dir.path(), &["status", "--porcelain"]),
        "?? notes.txt\n"
    );
}

#[test]
fn batches_deletes_and_noops() {
    let (dir, store) = new_store();
    let before = git(dir.path(), &["rev-list", "--count", "HEAD"]);
    let out = store
        .commit(
            &Batch::new("ingest: session 1")
                .put(sp("facts/a/one.md"), "1")
                .put(sp("rules/two.md"), "2")
                .put(sp("skills/deep/er/three.md"), "3"),
        )
        .expect("commit")
        .expect("changed");
    assert_eq!(out.paths.len(), 3);
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "HEAD"])
            .trim()
            .parse::<u32>()
            .expect("n"),
        before.trim().parse::<u32>().expect("n") + 1
    );
    assert_eq!(
        git(dir.path(), &["show", "--name-only", "--format=", "HEAD"]),
        "facts/a/one.md\nrules/two.md\nskills/deep/er/three.md\n"
    );

    // Same content again: nothing to commit.
    let same = Batch::new("again").put(sp("facts/a/one.md"), "1");
    assert_eq!(store.commit(&same).expect("commit"), None);
    assert_eq!(store.commit(&Batch::new("empty")).expect("commit"), None);
    assert_eq!(
        store
            .commit(&Batch::new("del").delete(sp("facts/none.md")))
            .expect("commit"),
        None
    );
    assert_eq!(store.head().expect("head"), Some(out.commit));

    // Delete: file, its empty directories, and the tree entries go.
    let del = store
        .commit(&Batch::new("forget").delete(sp("skills/deep/er/three.md")))
        .expect("commit")
        .expect("changed");
    assert_eq!(del.paths, vec!["skills/deep/er/three.md".to_owned()]);
    assert!(!dir.path().join("skills").exists());
    assert_eq!(
        git(dir.path(), &["ls-tree", "-r", "--name-only", "HEAD"]),
        ".gitignore\nfacts/a/one.md\nrules/two.md\n"
    );
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    let fsck = git_out(dir.path(), &["fsck", "--strict"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );

    // A path named twice in one batch takes its last value.
    let twice = Batch::new("twice")
        .put(sp("facts/x.md"), "a")
        .put(sp("facts/x.md"), "b");
    let t = store.commit(&twice).expect("commit").expect("changed");
    assert_eq!(
        store
            .read(t.commit, &sp("facts/x.md"))
            .expect("read")
            .as_deref(),
        Some(&b"b"[..])
    );
}

#[test]
fn explicit_time_and_message() {
    let (dir, store) = new_store();
    let t: jiff::Timestamp = "2026-03-04T05:06:07Z".parse().expect("ts");
    let out = store
        .commit(
            &Batch::new("remember: x\n\nbody line")
                .put(sp("facts/x.md"), "x")
                .at(t),
        )
        .expect("commit")
        .expect("changed");
    assert_eq!(
        git(dir.path(), &["log", "-1", "--format=%at %ct"]).trim(),
        format!("{0} {0}", t.as_second())
    );
    let log = store.log(None, Some(1)).expect("log");
    assert_eq!(log[0].id, out.commit);
    assert_eq!(log[0].time, t);
    assert_eq!(log[0].summary, "remember: x");
    assert_eq!(log[0].message, "remember: x\n\nbody line");
}

#[test]
fn dirty_work_tree_is_never_clobbered() {
    let (dir, store) = new_store();
    let first = put(&store, "facts/a.md", "original\n");
    std::fs::write(dir.path().join("facts/a.md"), "user edit\n").expect("edit");
    let err = store
        .commit(
            &Batch::new("overwrite")
                .put(sp("facts/a.md"), "gitloom\n")
                .put(sp("facts/b.md"), "b"),
        )
        .expect_err("dirty");
    assert!(
        matches!(&err, StoreError::Dirty { path } if path == "facts/a.md"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("facts/a.md")).expect("read"),
        "user edit\n"
    );
    assert!(!dir.path().join("facts/b.md").exists());
    assert_eq!(store.head().expect("head"), Some(first.commit));

    // An untracked file where a new memory would go is also the user's.
    std::fs::write(dir.path().join("facts/new.md"), "mine\n").expect("write");
    let err = store
        .commit(&Batch::new("new").put(sp("facts/new.md"), "theirs\n"))
        .expect_err("dirty");
    assert!(matches!(err, StoreError::Dirty { .. }));
    // ...unless it already holds exactly what we write.
    std::fs::write(dir.path().join("facts/new.md"), "theirs\n").expect("write");
    store
        .commit(&Batch::new("new").put(sp("facts/new.md"), "theirs\n"))
        .expect("commit")
        .expect("changed");

    // Other paths are still writable while one is dirty.
    put(&store, "facts/c.md", "c");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("facts/a.md")).expect("read"),
        "user edit\n"
    );

    // Explicit overwrite.
    let mut b = Batch::new("overwrite").put(sp("facts/a.md"), "gitloom\n");
    b.allow_dirty_overwrite = true;
    store.commit(&b).expect("commit").expect("changed");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("facts/a.md")).expect("read"),
        "gitloom\n"
    );
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_store_are_refused() {
    let (dir, store) = new_store();
    let outside = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(outside.path(), dir.path().join("facts")).expect("symlink");
    let err = store
        .commit(&Batch::new("x").put(sp("facts/a.md"), "a"))
        .expect_err("escape");
    assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
    assert!(
        std::fs::read_dir(outside.path())
            .expect("ls")
            .next()
            .is_none()
    );
}

#[test]
fn status_stays_clean() {
    let (dir, store) = new_store();
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    put(&store, "facts/a/b.md", "1");
    put(&store, "facts/a/b.md", "22");
    put(&store, "rules/c.md", "3");
    store
        .commit(&Batch::new("d").delete(sp("facts/a/b.md")))
        .expect("commit");
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    assert_eq!(git(dir.path(), &["diff", "--cached", "--name-only"]), "");
    // The user can keep using git alongside.
    std::fs::write(dir.path().join("rules/c.md"), "user").expect("write");
    git(dir.path(), &["commit", "-qam", "user edit"]);
    put(&store, "rules/d.md", "4");
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    assert_eq!(
        git(dir.path(), &["log", "-2", "--format=%s"]),
        "remember: rules/d.md\nuser edit\n"
    );
}

#[test]
fn bare_repositories_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q", "--bare", "-b", "main", "."]);
    let store = Store::open(dir.path()).expect("open bare");
    assert!(store.is_bare());
    assert_eq!(store.head().expect("head"), None);
    let out = put(&store, "facts/a.md", "a");
    assert_eq!(out.parent, None);
    assert_eq!(git(dir.path(), &["show", "main:facts/a.md"]), "a");
    assert!(git_out(dir.path(), &["fsck", "--strict"]).status.success());
}

#[test]
fn repository_identity_is_used_when_configured() {
    let (dir, store) = new_store();
    git(dir.path(), &["config", "user.name", "Ada"]);
    git(dir.path(), &["config", "user.email", "ada@example.com"]);
    let store = Store::open(store.root()).expect("reopen");
    put(&store, "facts/a.md", "a");
    assert_eq!(
        git(dir.path(), &["log", "-1", "--format=%an <%ae> %cn"]).trim(),
        "Ada <ada@example.com> Ada"
    );
}

/// A symbolic link inside the work tree is refused too, wherever it leads: a link
/// to `.git` would otherwise let a write land in `.git/hooks/`.
#[cfg(unix)]
#[test]
fn symlinks_inside_the_store_are_refused_on_every_write() {
    let (dir, store) = new_store();
    put(&store, "facts/keep/a.md", "a");
    std::os::unix::fs::symlink("../.git", dir.path().join("facts/ing")).expect("symlink");
    let err = store
        .commit(&Batch::new("x").put(sp("facts/ing/hooks/pre-commit.md"), "evil"))
        .expect_err("refused");
    assert!(
        matches!(err, StoreError::Symlink { ref link, .. } if link == "facts/ing"),
        "{err}"
    );
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert!(!dir.path().join(".git/hooks/pre-commit.md").exists());
    // A link to a directory of the store itself, and a file link, are refused alike.
    std::os::unix::fs::symlink("keep", dir.path().join("facts/alias")).expect("symlink");
    for path in ["facts/alias/b.md", "facts/alias/a.md"] {
        let err = store
            .commit(&Batch::new("x").put(sp(path), "b"))
            .expect_err("refused");
        assert!(matches!(err, StoreError::Symlink { .. }), "{path}: {err}");
    }
    std::os::unix::fs::symlink("a.md", dir.path().join("facts/keep/link.md")).expect("symlink");
    let err = store
        .commit(&Batch::new("x").put(sp("facts/keep/link.md"), "c"))
        .expect_err("refused");
    assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
    // Deleting through one is refused as well; the file it leads to is untouched.
    let err = store
        .commit(&Batch::new("x").delete(sp("facts/alias/a.md")))
        .expect_err("refused");
    assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("facts/keep/a.md")).expect("a"),
        "a"
    );
}

/// A folder is checked once per pass, but every path of a batch still is: a link
/// among many files of one folder refuses the batch, and nothing lands through it.
#[cfg(unix)]
#[test]
fn a_link_among_many_paths_of_one_batch_is_refused() {
    let (dir, store) = new_store();
    put(&store, "facts/work/a.md", "a");
    let outside = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(outside.path(), dir.path().join("facts/work/out")).expect("symlink");
    let mut batch = Batch::new("many");
    for i in 0..20 {
        batch = batch.put(sp(&format!("facts/work/m{i}.md")), "m");
    }
    batch = batch.put(sp("facts/work/out/evil.md"), "evil");
    let err = store.commit(&batch).expect_err("refused");
    assert!(
        matches!(err, StoreError::Symlink { ref link, .. } if link == "facts/work/out"),
        "{err}"
    );
    assert!(outside.path().read_dir().expect("ls").next().is_none());
    assert!(!dir.path().join("facts/work/m0.md").exists());
    // Without the link's path the same files go in, each in place.
    let mut batch = Batch::new("many");
    for i in 0..20 {
        batch = batch.put(sp(&format!("facts/work/m{i}.md")), format!("m{i}"));
    }
    store.commit(&batch).expect("commit").expect("changed");
    for i in 0..20 {
        let got = std::fs::read_to_string(dir.path().join(format!("facts/work/m{i}.md")));
        assert_eq!(got.expect("read"), format!("m{i}"));
    }
    assert!(outside.path().read_dir().expect("ls").next().is_none());
}

#[test]
fn names_that_break_a_clone_or_pass_for_another_are_refused_before_anything_is_written() {
    let (_dir, store) = new_store();
    put(&store, "facts/pay/paypal.md", "real");
    put(&store, "facts/pay/cocoa.md", "real");
    let head = store.head().expect("head");
    for path in [
        "facts/.git/config.md".to_owned(),
        format!("facts/x/{}.md", "n".repeat(300)),
        "facts/evil\u{202e}dm.txt.md".to_owned(),
        "facts/p\u{430}ypal.md".to_owned(),
    ] {
        let err = store
            .commit(&Batch::new("x").put(sp(&path), "x"))
            .expect_err("refused");
        assert!(matches!(err, StoreError::BadName(_)), "{path}: {err}");
    }
    // All-Cyrillic and so one script, but it reads as the Latin name beside it.
    let err = store
        .commit(&Batch::new("x").put(sp("facts/pay/\u{441}\u{43e}\u{441}\u{43e}\u{430}.md"), "x"))
        .expect_err("refused");
    assert!(
        matches!(err, StoreError::LookAlike { ref existing, .. } if existing == "facts/pay/cocoa.md"),
        "{err}"
    );
    let err = store
        .commit(&Batch::new("x").put(sp("facts/pay/PayPal.md"), "x"))
        .expect_err("refused");
    assert!(matches!(err, StoreError::CaseCollision { .. }), "{err}");
    assert_eq!(store.head().expect("head"), head, "nothing was committed");
    // ASCII names that a skeleton would confuse are plain, different names.
    put(&store, "facts/pay/modern.md", "1");
    put(&store, "facts/pay/modem.md", "2");
}

/// A group commit: several batches, one commit; each judged alone, so a refused
/// batch leaves the others committed and keeps its own error.
#[test]
fn a_group_of_batches_is_one_commit_and_refusals_stay_with_their_batch() {
    let (dir, store) = new_store();
    let first = put(&store, "facts/a.md", "a1");
    put(&store, "facts/b.md", "b1");
    std::fs::write(dir.path().join("facts/dirty.md"), "user edit").expect("write");
    let batches = vec![
        Batch::new("one").put(sp("facts/x.md"), "x"),
        // Computed from `first`; b.md changed since, a.md did not.
        Batch {
            base: Some(first.commit),
            ..Batch::new("two").put(sp("facts/b.md"), "b2")
        },
        Batch {
            base: Some(first.commit),
            ..Batch::new("three").put(sp("facts/a.md"), "a2")
        },
        Batch::new("four").put(sp("facts/dirty.md"), "mine"),
        Batch::new("five").put(sp("facts/X.md"), "case"),
        Batch::new("six").put(sp("facts/a.md"), "again"),
        Batch::new("seven").delete(sp("facts/none.md")),
    ];
    let before = store.head().expect("head");
    let out = store
        .commit_group(&batches, "group: 7 writes", None)
        .expect("group");
    let commit = out.commit.expect("a commit");
    assert_eq!(commit.parent, before);
    assert_eq!(commit.paths, ["facts/a.md", "facts/x.md"]);
    let r = &out.results;
    assert_eq!(r[0].as_ref().expect("one"), &["facts/x.md".to_owned()]);
    assert!(matches!(r[1], Err(StoreError::Stale { .. })), "{:?}", r[1]);
    assert_eq!(r[2].as_ref().expect("three"), &["facts/a.md".to_owned()]);
    assert!(matches!(r[3], Err(StoreError::Dirty { .. })), "{:?}", r[3]);
    assert!(
        matches!(r[4], Err(StoreError::CaseCollision { .. })),
        "{:?}",
        r[4]
    );
    assert!(
        matches!(r[5], Err(StoreError::Conflict { .. })),
        "{:?}",
        r[5]
    );
    assert_eq!(r[6].as_ref().expect("seven"), &Vec::<String>::new());
    assert_eq!(
        git(dir.path(), &["log", "-1", "--format=%s"]).trim(),
        "group: 7 writes"
    );
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "HEAD"]).trim(),
        "4"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("facts/a.md")).expect("a"),
        "a2"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("facts/dirty.md")).expect("d"),
        "user edit"
    );
    assert_eq!(
        git(dir.path(), &["status", "--porcelain"]).trim(),
        "?? facts/dirty.md"
    );
}
