//! Maintenance on real stores: `gc` (incident expiry, repack cadence) and `doctor`.

mod common;

use std::path::Path;

use common::git;
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions, GcOptions, Repack, Severity};

fn lexical() -> EngineOptions {
    EngineOptions {
        embedder: EmbedderChoice::None,
        ..EngineOptions::default()
    }
}

fn new_store() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(dir.path(), lexical()).expect("init");
    (dir, engine)
}

fn front(title: &str, extra: &str) -> String {
    format!("---\ntitle: {title}\ncreated: 2026-01-01T00:00:00Z\n{extra}---\nbody of {title}\n")
}

fn at(s: &str) -> Option<jiff::Timestamp> {
    Some(s.parse().expect("valid time"))
}

fn ls(dir: &Path) -> Vec<String> {
    git(dir, &["ls-tree", "-r", "--name-only", "HEAD"])
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn gc_expires_past_incidents_in_one_commit_and_keeps_the_rest() {
    let (dir, engine) = new_store();
    let files = [
        (
            "incidents/ops/past.md",
            front("past outage", "expires_at: 2026-02-01\n"),
        ),
        (
            "incidents/ops/ttl-past.md",
            front("ttl outage", "ttl: 10d\n"),
        ),
        (
            "incidents/ops/future.md",
            front("future", "expires_at: 2027-01-01\n"),
        ),
        (
            "incidents/ops/ttl-future.md",
            front("long ttl", "ttl: 2y\n"),
        ),
        ("incidents/ops/forever.md", front("no expiry", "")),
        (
            "incidents/ops/bad-ttl.md",
            front("bad ttl", "ttl: soonish\n"),
        ),
        // Only incidents expire.
        (
            "facts/a/fact.md",
            front("a fact", "expires_at: 2026-02-01\n"),
        ),
    ];
    for (p, t) in &files {
        engine.write(p, t.as_bytes(), None).expect("write");
    }
    let commits_before = git(dir.path(), &["rev-list", "--count", "HEAD"]);

    let dry = engine
        .gc(&GcOptions {
            now: at("2026-06-01T00:00:00Z"),
            dry_run: true,
            ..GcOptions::default()
        })
        .expect("dry run");
    assert_eq!(dry.expired.len(), 2);
    assert!(dry.commit.is_none() && dry.repack.is_none());
    assert_eq!(
        git(dir.path(), &["rev-list", "--count", "HEAD"]),
        commits_before
    );

    let report = engine
        .gc(&GcOptions {
            now: at("2026-06-01T00:00:00Z"),
            repack: Repack::Never,
            ..GcOptions::default()
        })
        .expect("gc");
    let mut gone: Vec<&str> = report.expired.iter().map(|e| e.path.as_str()).collect();
    gone.sort();
    assert_eq!(gone, ["incidents/ops/past.md", "incidents/ops/ttl-past.md"]);
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    assert!(report.skipped[0].contains("bad-ttl.md") && report.skipped[0].contains("soonish"));
    // Exactly one new commit, a `gc:` one, deleting exactly those two.
    let count: u32 = git(dir.path(), &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .expect("n");
    assert_eq!(count, commits_before.trim().parse::<u32>().expect("n") + 1);
    assert!(git(dir.path(), &["log", "-1", "--format=%s"]).starts_with("gc: expire 2 incident(s)"));
    let changed = git(dir.path(), &["show", "--name-status", "--format=", "HEAD"]);
    assert_eq!(
        changed.trim(),
        "D\tincidents/ops/past.md\nD\tincidents/ops/ttl-past.md"
    );
    let now = ls(dir.path());
    assert!(now.contains(&"incidents/ops/future.md".to_owned()));
    assert!(now.contains(&"incidents/ops/bad-ttl.md".to_owned()));
    assert!(now.contains(&"facts/a/fact.md".to_owned()));
    // The work tree follows, the index follows, history keeps them.
    assert!(!dir.path().join("incidents/ops/past.md").exists());
    assert!(engine.stats().expect("stats").files == 5);
    assert!(engine.get("incidents/ops/past.md", Some("HEAD~1")).is_ok());
    assert!(
        git(dir.path(), &["status", "--porcelain"])
            .trim()
            .is_empty()
    );

    // Nothing more to expire: no empty commit.
    let again = engine
        .gc(&GcOptions {
            now: at("2026-06-01T00:00:00Z"),
            repack: Repack::Never,
            ..GcOptions::default()
        })
        .expect("gc again");
    assert!(again.expired.is_empty() && again.commit.is_none());
}

#[test]
fn gc_refuses_to_delete_an_incident_with_uncommitted_edits() {
    let (dir, engine) = new_store();
    engine
        .write(
            "incidents/x/old.md",
            front("old", "expires_at: 2020-01-01\n").as_bytes(),
            None,
        )
        .expect("write");
    std::fs::write(dir.path().join("incidents/x/old.md"), "my unsaved notes").expect("edit");
    let err = engine
        .gc(&GcOptions {
            repack: Repack::Never,
            ..GcOptions::default()
        })
        .expect_err("dirty");
    assert!(err.to_string().contains("uncommitted"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("incidents/x/old.md")).expect("read"),
        "my unsaved notes"
    );
}

#[test]
fn repack_runs_on_its_cadence_and_packs_loose_objects() {
    let (dir, engine) = new_store();
    let opts = |repack| GcOptions {
        repack,
        repack_every: 3,
        ..GcOptions::default()
    };
    engine
        .write("facts/a/0.md", front("zero", "").as_bytes(), None)
        .expect("write");
    let first = engine.gc(&opts(Repack::Auto)).expect("gc");
    // Never repacked before: due.
    let r = first.repack.expect("first gc repacks");
    assert!(r.before.loose > 0);
    assert_eq!(r.after.loose, 0);
    assert_eq!(r.after.packs, 1);
    for i in 1..3 {
        engine
            .write(
                &format!("facts/a/{i}.md"),
                front(&format!("n{i}"), "").as_bytes(),
                None,
            )
            .expect("write");
    }
    let second = engine.gc(&opts(Repack::Auto)).expect("gc");
    assert_eq!(second.commits_since_repack, 2);
    assert!(!second.repack_due && second.repack.is_none());
    engine
        .write("facts/a/3.md", front("three", "").as_bytes(), None)
        .expect("write");
    let third = engine.gc(&opts(Repack::Auto)).expect("gc");
    assert!(third.repack_due && third.repack.is_some());
    // Reads work from the pack, and the repository is sound.
    assert_eq!(engine.stats().expect("stats").files, 4);
    assert!(engine.get("facts/a/0.md", None).is_ok());
    git(dir.path(), &["fsck", "--strict", "--no-dangling"]);
    let never = engine.gc(&opts(Repack::Never)).expect("gc");
    assert!(never.repack.is_none());
}

#[test]
fn doctor_passes_a_healthy_store_and_warns_on_dangling_links() {
    let (_dir, engine) = new_store();
    engine
        .write(
            "facts/a/one.md",
            "---\ntitle: one\nrelated:\n  - facts/a/missing.md\n---\nSee [[facts/a/two.md]].\n"
                .as_bytes(),
            None,
        )
        .expect("write");
    engine
        .write("facts/a/two.md", front("two", "").as_bytes(), None)
        .expect("write");
    let report = engine.doctor().expect("doctor");
    assert!(report.ok, "{:#?}", report.problems);
    assert_eq!(report.files_indexed, 2);
    assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
    let p = &report.problems[0];
    assert_eq!((p.check, p.severity), ("dangling_link", Severity::Warning));
    assert!(p.message.contains("facts/a/missing.md"));
}

#[test]
fn doctor_finds_an_index_that_differs_from_a_rebuild() {
    let (dir, engine) = new_store();
    engine
        .write("facts/a/one.md", front("one", "").as_bytes(), None)
        .expect("write");
    engine
        .write("facts/a/two.md", front("two", "").as_bytes(), None)
        .expect("write");
    drop(engine);
    // Damage the derived index behind the engine's back: a changed title, a lost
    // FTS row (the kind of drift a buggy incremental sync would leave).
    let db = rusqlite::Connection::open(dir.path().join(".gitloom/index.db")).expect("open db");
    db.execute(
        "UPDATE files SET title = 'wrong' WHERE path = 'facts/a/one.md'",
        [],
    )
    .expect("update");
    db.execute(
        "DELETE FROM fts WHERE rowid = (SELECT id FROM files WHERE path = 'facts/a/two.md')",
        [],
    )
    .expect("delete");
    drop(db);
    let engine = Engine::open_with(dir.path(), lexical()).expect("open");
    let report = engine.doctor().expect("doctor");
    assert!(!report.ok);
    let text: Vec<String> = report.problems.iter().map(|p| p.message.clone()).collect();
    assert!(text.iter().any(|m| m.contains("table files")), "{text:#?}");
    assert!(text.iter().any(|m| m.contains("table fts")), "{text:#?}");
    assert!(report.problems.iter().all(|p| p.fix.contains("rebuild")));
    // The fix it names works.
    engine.rebuild().expect("rebuild");
    let report = engine.doctor().expect("doctor");
    assert!(report.ok, "{:#?}", report.problems);
}

#[test]
fn doctor_reports_unparseable_files_and_a_damaged_object_store() {
    let (dir, engine) = new_store();
    engine
        .write("facts/a/one.md", front("one", "").as_bytes(), None)
        .expect("write");
    // A hand-made commit with a broken memory.
    std::fs::write(
        dir.path().join("facts/a/broken.md"),
        "---\ntitle: [oops\n---\n",
    )
    .expect("w");
    git(dir.path(), &["add", "facts/a/broken.md"]);
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "hand edit",
        ],
    );
    engine.sync().expect("sync");
    let report = engine.doctor().expect("doctor");
    assert!(!report.ok);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.check == "parse" && p.path.as_deref() == Some("facts/a/broken.md")),
        "{:#?}",
        report.problems
    );
    // Remove the blob of one.md from the object store.
    let blob = git(dir.path(), &["rev-parse", "HEAD:facts/a/one.md"]);
    let blob = blob.trim();
    let obj = dir
        .path()
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    std::fs::remove_file(&obj).expect("remove loose object");
    let report = engine.doctor().expect("doctor still reports");
    assert!(!report.ok);
    let fsck = report
        .problems
        .iter()
        .find(|p| p.check == "fsck")
        .expect("fsck finding");
    assert_eq!(fsck.severity, Severity::Error);
    assert!(fsck.message.contains(blob), "{}", fsck.message);
}

#[test]
fn consolidate_merges_hand_made_duplicates_in_one_revertible_commit() {
    let (dir, engine) = new_store();
    let dup = |title: &str, created: &str, body: &str, cue: &str| {
        format!(
            "---\ntitle: {title}\ncues:\n  - {cue}\nentities:\n  - Orbital AI (org)\ncreated: {created}\n---\n{body}\n"
        )
    };
    let files = [
        (
            "facts/work/orbital-1.md",
            dup(
                "Works at Orbital AI as an ML engineer",
                "2026-01-01T00:00:00Z",
                "User works at Orbital AI as an ML engineer on the inference team.",
                "where do I work",
            ),
        ),
        (
            "facts/work/orbital-2.md",
            dup(
                "Works at Orbital AI as ML engineer",
                "2026-02-01T00:00:00Z",
                "User works at Orbital AI as an ML engineer in the inference team.",
                "who is my employer",
            ),
        ),
        (
            "facts/work/orbital-3.md",
            dup(
                "Is an ML engineer at Orbital AI",
                "2026-03-01T00:00:00Z",
                "User is an ML engineer at Orbital AI, inference team.",
                "where do I work",
            ),
        ),
        // Similar words, another topic: never merged across topics.
        (
            "facts/other/orbital.md",
            dup(
                "Works at Orbital AI as an ML engineer",
                "2026-01-05T00:00:00Z",
                "User works at Orbital AI as an ML engineer on the inference team.",
                "where do I work",
            ),
        ),
        // Same topic, different subject.
        ("facts/work/cat.md", front("Has a cat named Mellob", "")),
    ];
    for (p, t) in &files {
        engine.write(p, t.as_bytes(), None).expect("write");
    }
    let before = git(dir.path(), &["rev-parse", "HEAD"]).trim().to_owned();
    let plan = engine
        .consolidate(&gitloom_engine::ConsolidateOptions {
            dry_run: true,
            lexical_threshold: 0.5,
            ..Default::default()
        })
        .expect("plan");
    assert_eq!(plan.measure, "lexical");
    assert_eq!(plan.merges.len(), 1, "{:#?}", plan.merges);
    assert_eq!(plan.merges[0].keep, "facts/work/orbital-1.md");
    assert_eq!(
        plan.merges[0].retire,
        ["facts/work/orbital-2.md", "facts/work/orbital-3.md"]
    );
    assert_eq!(
        git(dir.path(), &["rev-parse", "HEAD"]).trim(),
        before,
        "dry run wrote"
    );

    let done = engine
        .consolidate(&gitloom_engine::ConsolidateOptions {
            lexical_threshold: 0.5,
            ..Default::default()
        })
        .expect("consolidate");
    assert!(done.commit.is_some());
    assert!(git(dir.path(), &["log", "-1", "--format=%s"]).starts_with("consolidate: merge 2"));
    assert_eq!(
        git(
            dir.path(),
            &["rev-list", "--count", &format!("{before}..HEAD")]
        )
        .trim(),
        "1"
    );
    let merged = engine
        .get("facts/work/orbital-1.md", None)
        .expect("kept")
        .content;
    let m = gitloom_model::Memory::parse("x.md", merged.as_bytes()).expect("valid memory");
    assert_eq!(
        m.front.supersedes,
        ["facts/work/orbital-2.md", "facts/work/orbital-3.md"]
    );
    assert!(m.front.cues.contains(&"who is my employer".to_owned()));
    assert!(m.body.contains("## Timeline"), "{merged}");
    assert!(m.body.contains("(was facts/work/orbital-3.md)"), "{merged}");
    assert_eq!(m.front.timeline.len(), 3);
    let paths = ls(dir.path());
    assert!(!paths.contains(&"facts/work/orbital-2.md".to_owned()));
    assert!(paths.contains(&"facts/other/orbital.md".to_owned()));
    assert!(paths.contains(&"facts/work/cat.md".to_owned()));
    // Retired memories stay in history; the store is sound.
    assert!(
        engine
            .get("facts/work/orbital-2.md", Some("HEAD~1"))
            .is_ok()
    );
    assert!(engine.doctor().expect("doctor").ok);
    // Nothing left to merge.
    let again = engine
        .consolidate(&gitloom_engine::ConsolidateOptions {
            lexical_threshold: 0.5,
            ..Default::default()
        })
        .expect("again");
    assert!(again.merges.is_empty() && again.commit.is_none());

    // One `git revert` undoes it.
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "revert",
            "--no-edit",
            "HEAD",
        ],
    );
    engine.sync().expect("sync");
    assert_eq!(
        git(dir.path(), &["diff", &before, "HEAD", "--stat"]).trim(),
        "",
        "the revert restores the tree exactly"
    );
    assert_eq!(engine.stats().expect("stats").files, 5);
}

#[test]
fn consolidate_with_the_embedded_model_merges_paraphrases_only() {
    let Some(model) = common::installed_minilm() else {
        eprintln!("MiniLM not installed (run `gitloom model install`); skipping");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(
        dir.path(),
        EngineOptions {
            embedder: EmbedderChoice::Given(model),
            ..EngineOptions::default()
        },
    )
    .expect("init");
    let mem = |title: &str, cue: &str, body: &str, ent: &str| {
        format!(
            "---\ntitle: {title}\ncues:\n  - {cue}\nentities:\n  - {ent}\ncreated: 2026-01-01T00:00:00Z\n---\n{body}\n"
        )
    };
    engine
        .write(
            "facts/pets/mellob.md",
            mem(
                "Has a cat named Mellob",
                "what is my cat called",
                "The user's cat is called Mellob.",
                "Mellob (pet)",
            )
            .as_bytes(),
            None,
        )
        .expect("write");
    engine
        .write(
            "facts/pets/mellob-2.md",
            mem(
                "Has a cat called Mellob",
                "what is the name of my cat",
                "The user has a cat called Mellob.",
                "Mellob (pet)",
            )
            .as_bytes(),
            None,
        )
        .expect("write");
    // Same topic, same entity, another fact: must stay.
    engine
        .write(
            "facts/pets/vet.md",
            mem(
                "Mellob's vet is in Kreuzberg",
                "where is the vet",
                "Mellob goes to a vet in Kreuzberg for check-ups.",
                "Mellob (pet)",
            )
            .as_bytes(),
            None,
        )
        .expect("write");
    let plan = engine
        .consolidate(&gitloom_engine::ConsolidateOptions {
            dry_run: true,
            ..Default::default()
        })
        .expect("plan");
    assert!(plan.measure.starts_with("vectors"), "{}", plan.measure);
    assert_eq!(plan.merges.len(), 1, "{:#?}", plan.merges);
    // Equal dates: the first path stays ("mellob-2.md" sorts before "mellob.md").
    assert_eq!(plan.merges[0].keep, "facts/pets/mellob-2.md");
    assert_eq!(plan.merges[0].retire.len(), 1);
    assert!(
        !plan.merges[0]
            .retire
            .contains(&"facts/pets/vet.md".to_owned())
    );
    assert!(plan.merges[0].similarity >= 0.92);
}

#[test]
fn doctor_reports_vector_cache_coverage() {
    let Some(model) = common::installed_minilm() else {
        eprintln!("MiniLM not installed (run `gitloom model install`); skipping");
        return;
    };
    let (dir, engine) = new_store();
    engine
        .write(
            "facts/a/one.md",
            front("one", "cues:\n  - what is one\n").as_bytes(),
            None,
        )
        .expect("write");
    drop(engine);
    let with_cache = |cache: &Path| {
        Engine::open_with(
            dir.path(),
            EngineOptions {
                embedder: EmbedderChoice::Given(model.clone()),
                vector_cache: Some(cache.to_owned()),
                ..EngineOptions::default()
            },
        )
        .expect("open")
    };
    let caches = tempfile::tempdir().expect("tempdir");
    // A fresh cache and an index already at HEAD: nothing has been embedded.
    let engine = with_cache(&caches.path().join("empty.db"));
    let report = engine.doctor().expect("doctor");
    assert!(report.ok, "a missing vector is a warning, not an error");
    let p = report
        .problems
        .iter()
        .find(|p| p.check == "vectors")
        .expect("coverage finding");
    assert_eq!(p.severity, Severity::Warning);
    assert!(p.message.contains("lacks 2 of 2"), "{}", p.message);
    assert!(p.fix.contains("gitloom embed"));
    // The fix it names works.
    engine.embed_pending().expect("embed");
    let report = engine.doctor().expect("doctor");
    assert!(
        report.problems.iter().all(|p| p.check != "vectors"),
        "{:#?}",
        report.problems
    );
}
