//! Crash safety: writers killed with SIGKILL at random points. Afterwards every
//! acknowledged write is in HEAD with its content, `git fsck` is clean, and the index
//! after open equals a fresh rebuild. The work tree and git index are also checked:
//! a kill must not leave a lock that blocks the next writer.

use std::time::{Duration, Instant};

use crate::common::*;

#[test]
fn writers_killed_at_random_points_lose_no_acknowledged_write() {
    let kills = if long() { 400 } else { 12 };
    let repo = new_store();
    let dir = repo.path();
    let staging = tempfile::tempdir().expect("staging");
    let mut rng = fastrand::Rng::with_seed(
        std::env::var("GITLOOM_TORTURE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(7),
    );
    // Roughly how long one write takes here, so kills land across its whole span.
    let t0 = Instant::now();
    ok(
        dir,
        &["write", "facts/base/first.md"],
        memory("first", "x").as_bytes(),
    );
    let span = t0.elapsed().as_micros().max(1000) as u64;

    let mut acknowledged: Vec<(String, String)> =
        vec![("facts/base/first.md".into(), memory("first", "x"))];
    let mut killed = 0;
    let mut i = 0;
    while killed < kills {
        i += 1;
        let path = format!("facts/t{}/n{i}.md", i % 7);
        let content = memory(
            &format!("note {i}"),
            &format!("body {i} [[facts/t0/n{}.md]]", i / 2),
        );
        // Now and then a sync, rebuild, gc or a two-file import (a batch, as ingestion
        // writes) is the victim instead of a single write.
        let batch_dir = staging.path().join(format!("b{i}"));
        let pair = [
            format!("facts/pairs/p{i}-a.md"),
            format!("facts/pairs/p{i}-b.md"),
        ];
        let batch_arg = batch_dir.to_string_lossy().into_owned();
        let args: Vec<&str> = match rng.u32(..12) {
            0 => vec!["rebuild"],
            1 => vec!["sync"],
            2 => vec!["gc", "--no-repack"],
            3 | 4 => {
                for p in &pair {
                    let f = batch_dir.join(p);
                    std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
                    std::fs::write(&f, memory(p, "pair")).expect("stage");
                }
                vec!["import", &batch_arg]
            }
            _ => vec!["write", &path],
        };
        let mut child = spawn(dir, &args, content.as_bytes());
        let deadline = Instant::now() + Duration::from_micros(rng.u64(..span * 2));
        let mut finished = None;
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait().expect("try_wait") {
                finished = Some(status);
                break;
            }
            std::thread::yield_now();
        }
        match finished {
            Some(status) => {
                let out = child.wait_with_output().expect("output");
                assert!(
                    status.success(),
                    "{args:?} failed after earlier kills: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                match args[0] {
                    "write" => acknowledged.push((path, content)),
                    "import" => {
                        for p in pair {
                            let text = memory(&p, "pair");
                            acknowledged.push((p, text));
                        }
                    }
                    _ => {}
                }
            }
            None => {
                child.kill().expect("SIGKILL");
                child.wait().expect("reaped");
                killed += 1;
            }
        }
    }
    // One more write must go through (no stale lock blocks it).
    let t = Instant::now();
    ok(
        dir,
        &["write", "facts/base/after.md"],
        memory("after", "y").as_bytes(),
    );
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "the write after the kills waited {:?}",
        t.elapsed()
    );
    acknowledged.push(("facts/base/after.md".into(), memory("after", "y")));

    for (path, content) in &acknowledged {
        let got = git(dir, &["show", &format!("HEAD:{path}")]);
        assert_eq!(&got, content, "{path}");
    }
    // The write after the kills finished any work-tree refresh a kill interrupted:
    // the work tree and git's index agree with HEAD, and no temporary file is left.
    assert_eq!(
        git(dir, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    assert_sound(dir);
    eprintln!(
        "crash torture: {killed} kills survived, {} acknowledged writes, {i} attempts",
        acknowledged.len()
    );
}
