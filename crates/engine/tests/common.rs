//! Helpers shared by the engine's integration tests: real stores in temp dirs,
//! checked with the `git` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Writes `text` at `rel` in the work tree and commits it with the `git` binary,
/// as a hand edit would (gitloom does not see it until a sync).
pub fn commit_file(dir: &Path, rel: &str, text: &str, message: &str) {
    let at = dir.join(rel);
    std::fs::create_dir_all(at.parent().expect("a file has a parent")).expect("mkdir");
    std::fs::write(&at, text).expect("write");
    git(dir, &["add", rel]);
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

pub fn memory(title: &str, body: &str) -> String {
    format!("---\ntitle: {title}\ncreated: 2026-01-01T00:00:00Z\n---\n{body}\n")
}

/// Every path in every commit is one gitloom may commit (G1).
pub fn assert_only_committable(dir: &Path) {
    for commit in git(dir, &["rev-list", "--all"]).lines() {
        for path in git(dir, &["ls-tree", "-r", "--name-only", commit]).lines() {
            assert!(
                gitloom_model::is_committable(path),
                "commit {commit} holds {path}"
            );
        }
    }
}

pub fn shared_data() -> Option<PathBuf> {
    let shared = std::env::var_os("GITLOOM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let data = shared.join("data");
    // Under CI missing data fails the test rather than letting it pass unchecked.
    assert!(
        data.is_dir() || std::env::var_os("CI").is_none(),
        "test data {} is missing (set GITLOOM_SHARED to the folder holding data/)",
        data.display()
    );
    data.is_dir().then_some(data)
}

/// The installed MiniLM, or `None` where it is not installed (the test then says it
/// skipped); under CI, which installs the model first, a missing model fails the
/// test rather than letting it pass unchecked.
#[allow(dead_code)] // Not every test binary that shares this module asks for the model.
pub fn installed_minilm() -> Option<std::sync::Arc<dyn gitloom_engine::embed::Embedder>> {
    let model = gitloom_engine::embed::default_embedder().expect("the installed model loads");
    assert!(
        model.is_some() || std::env::var_os("CI").is_none(),
        "MiniLM is not installed under {} and CI is set (run `gitloom model install`)",
        gitloom_engine::embed::minilm_dir().display()
    );
    model
}

/// A deterministic embedder for tests that need vectors without a model: each word
/// hashed to one of 64 dimensions, so texts sharing words get close vectors and
/// identical texts identical ones.
pub struct WordHashing;

impl gitloom_engine::embed::Embedder for WordHashing {
    fn model_id(&self) -> &str {
        "test-hashing/64"
    }
    fn dim(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, gitloom_engine::embed::EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                for w in t
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let h = blake3::hash(w.to_lowercase().as_bytes());
                    v[h.as_bytes()[0] as usize % 64] += 1.0;
                }
                v[63] += 0.01;
                v
            })
            .collect())
    }
    fn max_tokens(&self) -> usize {
        256
    }
}
