#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gitloom_index::testutil::{indexed, memory_text};
use gitloom_index::{Index, IndexedFile, Problem, SyncBatch};

/// The shared data directory, if present.
pub fn shared() -> Option<PathBuf> {
    let dir = std::env::var_os("GITLOOM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    dir.join("data/probe/memories").is_dir().then_some(dir)
}

fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p).expect("readable probe memory");
            out.push((rel, text));
        }
    }
}

/// The probe memories as (path, text), sorted by path; `None` (with a message) if absent.
pub fn probe() -> Option<Vec<(String, String)>> {
    let Some(dir) = shared() else {
        eprintln!("probe data not found (set GITLOOM_SHARED); skipping");
        return None;
    };
    let root = dir.join("data/probe/memories");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    Some(out)
}

pub fn probe_queries() -> Vec<serde_json::Value> {
    let Some(dir) = shared() else {
        return Vec::new();
    };
    std::fs::read_to_string(dir.join("data/probe/queries.jsonl"))
        .expect("queries.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

pub fn file(path: &str, text: &str) -> IndexedFile {
    indexed(path, text).expect("valid test memory")
}

pub fn simple(path: &str, title: &str, body: &str) -> IndexedFile {
    file(path, &memory_text(title, &[], body))
}

pub fn full_batch(files: &[(String, String)]) -> SyncBatch {
    let mut b = SyncBatch {
        commit: "c1".into(),
        tree: "t1".into(),
        full: true,
        ..SyncBatch::default()
    };
    for (p, t) in files {
        match indexed(p, t) {
            Ok(f) => b.upserted.push(f),
            Err(pr) => b.problems.push(pr),
        }
    }
    b
}

pub fn upserts(commit: &str, files: Vec<IndexedFile>) -> SyncBatch {
    SyncBatch {
        commit: commit.into(),
        tree: format!("tree-{commit}"),
        upserted: files,
        ..SyncBatch::default()
    }
}

pub fn removals(commit: &str, paths: &[&str]) -> SyncBatch {
    SyncBatch {
        commit: commit.into(),
        tree: format!("tree-{commit}"),
        removed: paths.iter().map(|p| p.to_string()).collect(),
        ..SyncBatch::default()
    }
}

pub fn problem(path: &str, message: &str) -> Problem {
    Problem {
        path: path.into(),
        message: message.into(),
    }
}

pub fn temp_index() -> (tempfile::TempDir, Index) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (idx, _) = Index::open(&dir.path().join(".gitloom/index.db")).expect("open");
    (dir, idx)
}
