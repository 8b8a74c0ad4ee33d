//! Concurrency: several writer processes on one store while readers retrieve
//! throughout. Each write is a pair of files in one commit (an import), so a reader
//! that ever saw half a sync would see an odd file count.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::common::*;

#[test]
fn concurrent_writers_and_readers_lose_nothing_and_never_see_half_a_sync() {
    let (writers, writes) = if long() { (8, 200) } else { (3, 6) };
    let repo = new_store();
    let dir = repo.path().to_owned();
    let staging = tempfile::tempdir().expect("staging");
    let stop = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..2)
        .map(|r| {
            let dir = dir.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut reads = 0;
                while !stop.load(Ordering::SeqCst) || reads == 0 {
                    let out = run(&dir, &["--json", "stats"], b"");
                    assert!(
                        out.status.success(),
                        "reader {r}: stats failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let stats: Value = serde_json::from_slice(&out.stdout).expect("stats JSON");
                    let files = stats["files"].as_u64().expect("files count");
                    assert_eq!(files % 2, 0, "reader {r} saw half a sync: {stats}");
                    let out = run(
                        &dir,
                        &["--json", "retrieve", "where is note pair 3 written"],
                        b"",
                    );
                    assert!(
                        out.status.success(),
                        "reader {r}: retrieve failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    serde_json::from_slice::<Value>(&out.stdout).expect("retrieve JSON");
                    reads += 1;
                }
                reads
            })
        })
        .collect();

    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let dir = dir.clone();
            let src = staging.path().join(format!("w{w}"));
            std::thread::spawn(move || {
                for i in 0..writes {
                    let batch = src.join(format!("b{i}"));
                    let topic = batch.join(format!("facts/w{w}"));
                    std::fs::create_dir_all(&topic).expect("mkdir");
                    for half in ["a", "b"] {
                        std::fs::write(
                            topic.join(format!("n{i}-{half}.md")),
                            memory(
                                &format!("writer {w} note pair {i} {half}"),
                                &format!("written by {w}"),
                            ),
                        )
                        .expect("stage");
                    }
                    let out = run(&dir, &["import", batch.to_str().expect("utf-8")], b"");
                    assert!(
                        out.status.success(),
                        "writer {w} import {i} failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("writer thread");
    }
    stop.store(true, Ordering::SeqCst);
    let reads: usize = readers
        .into_iter()
        .map(|r| r.join().expect("reader thread"))
        .sum();

    let paths = head_paths(&dir);
    for w in 0..writers {
        for i in 0..writes {
            for half in ["a", "b"] {
                let p = format!("facts/w{w}/n{i}-{half}.md");
                assert!(paths.contains(&p), "lost write {p}");
            }
        }
    }
    let commits: usize = git(&dir, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .expect("n");
    assert_eq!(commits, 1 + writers * writes, "one commit per import");
    assert!(git(&dir, &["status", "--porcelain"]).trim().is_empty());
    assert_sound(&dir);
    eprintln!("concurrency torture: {writers} writers x {writes} pair writes, {reads} reads");
}
