#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use gitloom_model::StorePath;
use gitloom_store::{Batch, Store};

pub const GIT: &str = "/usr/local/bin/git";

pub fn git_cmd(dir: &Path) -> Command {
    let mut c = Command::new(if Path::new(GIT).exists() { GIT } else { "git" });
    c.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "user")
        .env("GIT_AUTHOR_EMAIL", "user@example.com")
        .env("GIT_COMMITTER_NAME", "user")
        .env("GIT_COMMITTER_EMAIL", "user@example.com");
    c
}

pub fn git_out(dir: &Path, args: &[&str]) -> Output {
    git_cmd(dir).args(args).output().expect("git runs")
}

/// Runs git and returns stdout; panics with stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_out(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

pub fn sp(s: &str) -> StorePath {
    StorePath::parse(s).expect("valid store path")
}

pub fn new_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::init(dir.path()).expect("init");
    (dir, store)
}

pub fn put(store: &Store, path: &str, content: &str) -> gitloom_store::CommitOutcome {
    store
        .commit(&Batch::new(format!("remember: {path}")).put(sp(path), content))
        .expect("commit")
        .expect("something changed")
}
