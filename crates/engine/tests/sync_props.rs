//! Property: for any sequence of writes through the engine, hand edits committed
//! with the `git` binary, deletes and renames, the incrementally synced index holds
//! exactly what a full rebuild of HEAD holds (every table, compared row by row).

mod common;

use std::path::Path;

use common::git;
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};
use gitloom_model::StorePath;
use proptest::prelude::*;

const PATHS: &[&str] = &[
    "facts/people/lena.md",
    "facts/people/lena-2.md",
    "facts/work/orbital.md",
    "facts/work/deep/acme.md",
    "rules/style/tabs.md",
    "incidents/ops/outage.md",
];

/// Contents chosen to collide: shared titles (link resolution ties), one entity
/// spelt and kinded differently, links by title and path, supersedes, sections,
/// timelines and a broken file.
fn content(variant: usize, salt: u8) -> String {
    let title = [
        "Lena Fischer",
        "Orbital AI",
        "Works at Orbital",
        "Lena Fischer",
    ][variant % 4];
    let entity = [
        "Lena Fischer (person)",
        "lena fischer",
        "Lena Fischer (org)",
        "{name: Orbital AI, kind: org, role: employer}",
    ][(variant / 2) % 4];
    let link = PATHS[(variant + salt as usize) % PATHS.len()];
    match variant % 7 {
        6 => format!("---\ntitle: [broken {salt}\n---\nnot valid\n"),
        v => format!(
            "---\ntitle: {title}\ncues:\n  - who is {title} {salt}\nentities:\n  - {entity}\nrelated:\n  - \"rel: {link}\"\nsupersedes: {link}\ntimeline:\n  - {{date: 2026-0{m}-01, text: event {salt}}}\n---\nBody {salt} mentions [[{other}]] and [[{link}]].\n\n## Part {v}\nSection text {salt}.\n",
            m = 1 + v,
            other = ["Orbital AI", "Lena Fischer", "Nobody"][v % 3],
        ),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize, u8),
    Delete(usize),
    HandEdit(usize, usize, u8),
    HandDelete(usize),
    HandRename(usize, usize),
    Rebuild,
}

fn op() -> impl Strategy<Value = Op> {
    let p = 0..PATHS.len();
    prop_oneof![
        4 => (p.clone(), 0..14usize, any::<u8>()).prop_map(|(a, b, c)| Op::Write(a, b, c)),
        1 => p.clone().prop_map(Op::Delete),
        3 => (p.clone(), 0..14usize, any::<u8>()).prop_map(|(a, b, c)| Op::HandEdit(a, b, c)),
        1 => p.clone().prop_map(Op::HandDelete),
        2 => (p.clone(), p).prop_map(|(a, b)| Op::HandRename(a, b)),
        1 => Just(Op::Rebuild),
    ]
}

fn hand_commit(dir: &Path, msg: &str) {
    git(dir, &["add", "-A", "."]);
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            msg,
        ])
        .output()
        .expect("git");
    // "nothing to commit" is fine (an edit that changed nothing).
    let _ = out;
}

fn apply(dir: &Path, engine: &Engine, op: &Op) {
    match op {
        Op::Write(p, v, s) => {
            // Refusals (invalid frontmatter) are part of the property: they change nothing.
            let _ = engine.write(PATHS[*p], content(*v, *s).as_bytes(), None);
        }
        Op::Delete(p) => {
            let _ = engine.delete(PATHS[*p]);
        }
        Op::HandEdit(p, v, s) => {
            let full = dir.join(PATHS[*p]);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(&full, content(*v, *s)).expect("write");
            hand_commit(dir, "hand edit");
        }
        Op::HandDelete(p) => {
            let _ = std::fs::remove_file(dir.join(PATHS[*p]));
            hand_commit(dir, "hand delete");
        }
        Op::HandRename(a, b) => {
            let (from, to) = (dir.join(PATHS[*a]), dir.join(PATHS[*b]));
            if a != b && from.exists() {
                std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
                std::fs::rename(&from, &to).expect("rename");
                hand_commit(dir, "hand rename");
            }
        }
        Op::Rebuild => {
            engine.rebuild().expect("rebuild");
        }
    }
}

fn index_differences(engine: &Engine) -> Vec<String> {
    let report = engine.doctor().expect("doctor");
    report
        .problems
        .into_iter()
        .filter(|p| p.check == "index")
        .map(|p| p.message)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(12),
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn incremental_sync_equals_a_full_rebuild(ops in proptest::collection::vec(op(), 1..14)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = Engine::init_with(
            dir.path(),
            EngineOptions { embedder: EmbedderChoice::None, ..EngineOptions::default() },
        )
        .expect("init");
        for (i, op) in ops.iter().enumerate() {
            apply(dir.path(), &engine, op);
            engine.sync().expect("sync");
            if i % 4 == 3 || i + 1 == ops.len() {
                let diffs = index_differences(&engine);
                prop_assert!(diffs.is_empty(), "after {:?}: {:#?}", &ops[..=i], diffs);
            }
        }
        // Every valid path in HEAD is indexed or reported as a problem (nothing dropped).
        let stats = engine.stats().expect("stats");
        let in_head: Vec<String> = git(dir.path(), &["ls-tree", "-r", "--name-only", "HEAD"])
            .lines()
            .filter(|p| StorePath::parse(p).is_ok_and(|s| s.is_memory()))
            .map(str::to_owned)
            .collect();
        prop_assert_eq!(stats.files as usize + stats.problems as usize, in_head.len());
    }
}
