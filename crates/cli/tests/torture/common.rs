//! Helpers: run the binary, check a store with `git` and `gitloom doctor`.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// True when the long form was asked for.
pub fn long() -> bool {
    std::env::var("GITLOOM_TORTURE").is_ok_and(|v| v == "long")
}

pub fn cmd(repo: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gitloom"));
    c.arg("--repo")
        .arg(repo)
        .args(args)
        .env_remove("GITLOOM_REPO")
        .env("GITLOOM_EMBEDDER", "none")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Starts `gitloom args` with `stdin` written and closed.
pub fn spawn(repo: &Path, args: &[&str], stdin: &[u8]) -> Child {
    let mut child = cmd(repo, args).spawn().expect("gitloom starts");
    if let Some(mut input) = child.stdin.take() {
        // The child may refuse early and close its end: not our failure.
        let _ = input.write_all(stdin);
    }
    child
}

pub fn run(repo: &Path, args: &[&str], stdin: &[u8]) -> Output {
    spawn(repo, args, stdin)
        .wait_with_output()
        .expect("gitloom finishes")
}

pub fn ok(repo: &Path, args: &[&str], stdin: &[u8]) -> String {
    let out = run(repo, args, stdin);
    assert!(
        out.status.success(),
        "gitloom {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 stdout")
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("git prints UTF-8")
}

pub fn new_store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    ok(dir.path(), &["init"], b"");
    dir
}

pub fn memory(title: &str, body: &str) -> String {
    format!("---\ntitle: {title}\ncreated: 2026-01-01T00:00:00Z\n---\n{body}\n")
}

/// The store is sound: `git fsck` is clean, and `gitloom doctor` (which opens the
/// store, syncs, and compares the index with a fresh rebuild) finds no error.
pub fn assert_sound(repo: &Path) {
    git(
        repo,
        &["fsck", "--strict", "--no-dangling", "--no-progress"],
    );
    let out = run(repo, &["--json", "doctor"], b"");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        report["ok"],
        Value::Bool(true),
        "doctor: {report:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());
}

/// Paths in HEAD.
pub fn head_paths(repo: &Path) -> Vec<String> {
    git(repo, &["ls-tree", "-r", "--name-only", "HEAD"])
        .lines()
        .map(str::to_owned)
        .collect()
}
