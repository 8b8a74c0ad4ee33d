//! A writer killed after moving the branch but before refreshing the work tree:
//! the next writer finishes the refresh, and never touches what the user edited.

use std::process::Command;

use gitloom_model::StorePath;
use gitloom_store::{Batch, Store};

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn p(s: &str) -> StorePath {
    StorePath::parse(s).expect("valid")
}

#[test]
fn an_interrupted_refresh_is_finished_by_the_next_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let store = Store::init(root).expect("init");
    store
        .commit(
            &Batch::new("one")
                .put(p("facts/a/one.md"), "one\n")
                .put(p("facts/a/mine.md"), "v1\n"),
        )
        .expect("commit");
    let old_tree = git(root, &["rev-parse", "HEAD^{tree}"]).trim().to_owned();
    let old_commit = git(root, &["rev-parse", "HEAD"]).trim().to_owned();
    store
        .commit(
            &Batch::new("two")
                .put(p("facts/a/two.md"), "two\n")
                .put(p("facts/a/mine.md"), "v2\n")
                .delete(p("facts/a/one.md")),
        )
        .expect("commit");
    let new_tree = git(root, &["rev-parse", "HEAD^{tree}"]).trim().to_owned();
    // Put the work tree and git index back where a writer killed right after the
    // ref moved would have left them, with the journal it wrote.
    git(root, &["read-tree", &old_commit]);
    git(root, &["checkout-index", "-f", "-a"]);
    std::fs::remove_file(root.join("facts/a/two.md")).expect("rm");
    std::fs::write(root.join("facts/a/.two.md.gitloom-1-0.tmp"), "half").expect("tmp");
    // The user edits one of the files meanwhile.
    std::fs::write(root.join("facts/a/mine.md"), "my edit\n").expect("edit");
    std::fs::write(
        root.join(".gitloom/refresh.pending"),
        format!("{old_tree} {new_tree}\n"),
    )
    .expect("journal");
    assert!(git(root, &["status", "--porcelain"]).contains("D  facts/a/two.md"));

    store
        .commit(&Batch::new("three").put(p("facts/b/three.md"), "three\n"))
        .expect("the next write");
    assert_eq!(
        std::fs::read_to_string(root.join("facts/a/two.md")).expect("two"),
        "two\n"
    );
    assert!(!root.join("facts/a/one.md").exists());
    assert!(!root.join("facts/a/.two.md.gitloom-1-0.tmp").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("facts/a/mine.md")).expect("mine"),
        "my edit\n",
        "the user's edit is never clobbered"
    );
    // Only the user's edit shows.
    assert_eq!(
        git(root, &["status", "--porcelain"]),
        " M facts/a/mine.md\n"
    );
    assert!(!root.join(".gitloom/refresh.pending").exists());
}

#[test]
fn a_journal_for_a_ref_that_never_moved_is_discarded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let store = Store::init(root).expect("init");
    store
        .commit(&Batch::new("one").put(p("facts/a/one.md"), "one\n"))
        .expect("commit");
    let tree = git(root, &["rev-parse", "HEAD^{tree}"]).trim().to_owned();
    // A writer died after writing its journal but before its ref moved.
    let bogus = "0123456789012345678901234567890123456789";
    std::fs::write(
        root.join(".gitloom/refresh.pending"),
        format!("{tree} {bogus}\n"),
    )
    .expect("j");
    assert!(store.recover_worktree().expect("recover").is_empty());
    assert_eq!(
        std::fs::read_to_string(root.join("facts/a/one.md")).expect("one"),
        "one\n"
    );
    assert!(!root.join(".gitloom/refresh.pending").exists());
    assert_eq!(git(root, &["status", "--porcelain"]), "");
}
