//! The engine end to end on real git repositories and real SQLite files.

mod common;

use common::{assert_only_committable, git, memory, shared_data};
use gitloom_engine::{Engine, EngineError, RetrieveRequest};
use gitloom_model::StorePath;

fn new_store() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init(dir.path()).expect("init");
    (dir, engine)
}

fn head(dir: &std::path::Path) -> String {
    git(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

#[test]
fn writes_batches_and_imports_commit_only_store_paths() {
    let (dir, engine) = new_store();
    // Things that must never reach history.
    std::fs::write(dir.path().join("notes.txt"), "private").expect("write");
    engine
        .write(
            "facts/work/orbital.md",
            memory("Works at Orbital AI", "ML engineer.").as_bytes(),
            None,
        )
        .expect("write");
    let batch = (0..3)
        .map(|i| {
            let p = StorePath::parse(&format!("facts/t/{i}.md")).expect("valid");
            (p, Some(memory(&format!("m{i}"), "x").into_bytes()))
        })
        .collect();
    let before = git(dir.path(), &["rev-list", "--count", "HEAD"]);
    engine
        .write_batch(batch, "batch: three".into(), None)
        .expect("batch");
    let after = git(dir.path(), &["rev-list", "--count", "HEAD"]);
    assert_eq!(
        after.trim().parse::<u32>().expect("n"),
        before.trim().parse::<u32>().expect("n") + 1,
        "a batch is one commit"
    );

    let src = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(src.path().join("rules/units")).expect("mkdir");
    std::fs::write(
        src.path().join("rules/units/metric.md"),
        memory("Use metric units", "Always."),
    )
    .expect("write");
    std::fs::write(src.path().join("rules/units/ignored.txt"), "not markdown").expect("write");
    engine.import_dir(src.path()).expect("import");

    assert!(dir.path().join(".gitloom/index.db").exists());
    assert_only_committable(dir.path());
    let names = git(dir.path(), &["log", "--name-only", "--format="]);
    assert!(!names.contains(".gitloom"), "{names}");
    assert!(!names.contains("notes.txt"));
    assert_eq!(engine.stats().expect("stats").files, 5);
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let (dir, engine) = new_store();
    engine
        .write("facts/a.md", memory("A", "a").as_bytes(), None)
        .expect("write");
    let before = head(dir.path());
    let big = format!("---\ntitle: big\n---\n{}", "x".repeat(10 * 1024 * 1024));
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "facts/bad.md",
            b"---\ntitle: [unclosed\n---\nbody\n".to_vec(),
        ),
        ("../outside.md", memory("x", "x").into_bytes()),
        ("/etc/x.md", memory("x", "x").into_bytes()),
        ("facts/../../x.md", memory("x", "x").into_bytes()),
        ("notes/x.md", memory("x", "x").into_bytes()),
        (".gitloom/x.md", memory("x", "x").into_bytes()),
        ("facts/utf8.md", b"---\ntitle: t\n---\n\xff\xfe\n".to_vec()),
        ("facts/big.md", big.into_bytes()),
        ("facts/empty.md", Vec::new()),
        ("facts/notitle.md", b"---\nsummary: s\n---\n".to_vec()),
    ];
    for (path, bytes) in cases {
        let err = engine.write(path, &bytes, None).expect_err(path);
        let msg = err.to_string();
        assert!(!msg.is_empty());
        if !matches!(err, EngineError::Path(_)) {
            assert!(
                msg.contains(path.trim_start_matches("./")),
                "error for {path} names it: {msg}"
            );
        }
        assert_eq!(head(dir.path()), before, "{path} wrote a commit");
    }
    // An import with one bad file writes none of the good ones.
    let src = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(src.path().join("facts")).expect("mkdir");
    std::fs::write(src.path().join("facts/good.md"), memory("good", "g")).expect("write");
    std::fs::write(src.path().join("facts/bad.md"), "---\ntitle: [\n---\n").expect("write");
    let err = engine.import_dir(src.path()).expect_err("bad import");
    assert!(err.to_string().contains("facts/bad.md"), "{err}");
    assert_eq!(head(dir.path()), before);
}

#[test]
fn incremental_sync_visits_only_the_changed_path() {
    let (dir, engine) = new_store();
    let files: Vec<_> = (0..1000)
        .map(|i| {
            let p = StorePath::parse(&format!(
                "facts/t{}/s{}/f{}.md",
                i / 100,
                (i / 10) % 10,
                i % 10
            ))
            .expect("valid");
            (
                p,
                Some(
                    memory(
                        &format!("memory {i}"),
                        &format!("body of memory number {i}"),
                    )
                    .into_bytes(),
                ),
            )
        })
        .collect();
    engine
        .write_batch(files, "import: 1000".into(), None)
        .expect("batch");
    let out = engine
        .write(
            "facts/t3/s4/f5.md",
            memory("memory 345 changed", "a new body about zeppelins").as_bytes(),
            None,
        )
        .expect("write");
    assert!(!out.sync.full);
    assert_eq!(out.sync.changed_files, 1);
    // root (tiers + .gitignore) + facts/ (10 topics) + t3/ (10) + s4/ (10 files)
    assert!(
        out.sync.visited_entries <= 40,
        "visited {}",
        out.sync.visited_entries
    );
    let r = engine
        .retrieve(&RetrieveRequest::new("zeppelins"))
        .expect("retrieve");
    assert_eq!(r.hits[0].path, "facts/t3/s4/f5.md");
    drop(dir);
}

#[test]
fn a_garbage_or_missing_index_is_rebuilt_with_the_same_results() {
    let (dir, engine) = new_store();
    for i in 0..30 {
        engine
            .write(
                &format!("facts/topic{}/m{i}.md", i % 3),
                memory(
                    &format!("Memory about topic {i}"),
                    &format!("alpha beta {i} gamma"),
                )
                .as_bytes(),
                None,
            )
            .expect("write");
    }
    let query = RetrieveRequest::new("alpha gamma topic");
    let want: Vec<String> = engine
        .retrieve(&query)
        .expect("retrieve")
        .hits
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert!(!want.is_empty());
    let index = engine.index_path().to_owned();
    drop(engine);

    std::fs::write(
        &index,
        b"this is not a sqlite database at all, just garbage bytes....",
    )
    .expect("overwrite");
    let _ = std::fs::remove_file(index.with_extension("db-wal"));
    let engine = Engine::open(dir.path()).expect("open rebuilds");
    assert!(
        engine
            .take_warnings()
            .iter()
            .any(|w| w.contains("rebuilding")),
        "a warning says why"
    );
    let got: Vec<String> = engine
        .retrieve(&query)
        .expect("retrieve")
        .hits
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(got, want);
    drop(engine);

    std::fs::remove_dir_all(dir.path().join(".gitloom")).expect("delete index dir");
    let engine = Engine::open(dir.path()).expect("open rebuilds");
    let got: Vec<String> = engine
        .retrieve(&query)
        .expect("retrieve")
        .hits
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn threads_racing_from_one_base_lose_no_write() {
    let (dir, engine) = new_store();
    drop(engine);
    std::thread::scope(|s| {
        for t in 0..4 {
            let root = dir.path().to_owned();
            s.spawn(move || {
                // Each thread opens its own engine, as separate processes would.
                let engine = Engine::open(&root).expect("open");
                for i in 0..15 {
                    engine
                        .write(
                            &format!("facts/w{t}/m{i}.md"),
                            memory(&format!("writer {t} memory {i}"), "x").as_bytes(),
                            None,
                        )
                        .expect("acknowledged write");
                }
            });
        }
    });
    let tree = git(dir.path(), &["ls-tree", "-r", "--name-only", "HEAD"]);
    for t in 0..4 {
        for i in 0..15 {
            assert!(
                tree.contains(&format!("facts/w{t}/m{i}.md")),
                "lost facts/w{t}/m{i}.md"
            );
        }
    }
    git(dir.path(), &["fsck", "--strict"]);
    let engine = Engine::open(dir.path()).expect("open");
    assert_eq!(engine.stats().expect("stats").files, 60);
}

#[test]
fn hundreds_of_writes_keep_git_fsck_clean_and_log_exact() {
    let (dir, engine) = new_store();
    for i in 0..200 {
        engine
            .write(
                &format!("facts/n{}/m{i}.md", i % 7),
                memory(&format!("note {i}"), "b").as_bytes(),
                None,
            )
            .expect("write");
    }
    git(dir.path(), &["fsck", "--strict"]);
    let log = git(dir.path(), &["log", "--name-only", "--format=format:@@"]);
    let per_commit: Vec<Vec<&str>> = log
        .split("@@")
        .filter(|c| !c.trim().is_empty())
        .map(|c| c.lines().filter(|l| !l.is_empty()).collect())
        .collect();
    // Newest first; the last is the init commit with .gitignore.
    for (k, paths) in per_commit.iter().take(200).enumerate() {
        let i = 199 - k;
        assert_eq!(paths, &vec![format!("facts/n{}/m{i}.md", i % 7).as_str()]);
    }
    assert_eq!(
        git(dir.path(), &["status", "--porcelain"]).trim(),
        "",
        "work tree and git index stay clean"
    );
    assert_only_committable(dir.path());
}

#[test]
fn get_at_a_revision_and_log_of_a_path() {
    let (_dir, engine) = new_store();
    let first = engine
        .write(
            "facts/work/job.md",
            memory("Works at Acme", "Acme.").as_bytes(),
            None,
        )
        .expect("write");
    engine
        .write(
            "facts/work/job.md",
            memory("Works at Orbital AI", "Orbital.").as_bytes(),
            None,
        )
        .expect("write");
    let then = engine
        .get("facts/work/job.md", first.commit.as_deref())
        .expect("get at");
    assert!(then.content.contains("Acme"));
    let now = engine.get("facts/work/job.md", None).expect("get");
    assert!(now.content.contains("Orbital"));
    assert_eq!(
        engine
            .log(Some("facts/work/job.md"), None)
            .expect("log")
            .len(),
        2
    );
    assert!(matches!(
        engine.get("facts/none.md", None),
        Err(EngineError::NotFound { .. })
    ));
}

#[test]
fn remember_picks_a_stable_path_and_updates_in_place() {
    let (_dir, engine) = new_store();
    let req = gitloom_engine::RememberRequest {
        title: "Works at Orbital AI".into(),
        topic: Some("Work".into()),
        cues: vec!["where do I work".into()],
        entities: vec!["Orbital AI (org)".into()],
        body: "ML engineer.".into(),
        ..Default::default()
    };
    let a = engine.remember(req.clone()).expect("remember");
    assert_eq!(a.paths, vec!["facts/work/works-at-orbital-ai.md"]);
    let b = engine
        .remember(gitloom_engine::RememberRequest {
            cues: vec!["who is my employer".into()],
            body: String::new(),
            ..req
        })
        .expect("again");
    assert_eq!(a.paths, b.paths);
    let got = engine
        .get("facts/work/works-at-orbital-ai.md", None)
        .expect("get");
    assert!(
        got.content.contains("who is my employer") && got.content.contains("where do I work"),
        "{}",
        got.content
    );
    assert!(got.content.contains("ML engineer."));
}

#[test]
fn probe_queries_never_match_through_stopwords_nor_return_most_of_the_corpus() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: shared/data not found");
        return;
    };
    let (_dir, engine) = new_store();
    engine
        .import_dir(&data.join("probe/memories"))
        .expect("import probe");
    let corpus = engine.stats().expect("stats").files;
    assert_eq!(corpus, 42);
    let queries = std::fs::read_to_string(data.join("probe/queries.jsonl")).expect("queries");
    for line in queries.lines().filter(|l| !l.trim().is_empty()) {
        let q: serde_json::Value = serde_json::from_str(line).expect("jsonl");
        let text = q["query"].as_str().expect("query");
        let hits = engine
            .search(&RetrieveRequest {
                limit: 1000,
                ..RetrieveRequest::new(text)
            })
            .expect("search");
        assert!(
            hits.len() as u64 * 10 <= corpus * 6,
            "{text:?} returned {} of {corpus}",
            hits.len()
        );
    }
    let r = engine
        .retrieve(&RetrieveRequest::new("where do i work"))
        .expect("retrieve");
    for h in &r.hits {
        for t in &h.matched_terms {
            assert!(
                !["i", "do", "where"].contains(&t.as_str()),
                "{} matched through {t}",
                h.path
            );
        }
    }
    assert!(
        r.hits[0].path.starts_with("facts/work/"),
        "{:?}",
        r.hits.iter().map(|h| &h.path).collect::<Vec<_>>()
    );
    let none = engine
        .retrieve(&RetrieveRequest::new("who is bruno"))
        .expect("retrieve");
    assert!(none.abstained && none.hits.is_empty());
}

#[test]
fn a_read_modify_write_on_a_stale_base_is_refused_not_applied() {
    let (dir, engine) = new_store();
    let path = StorePath::parse("facts/people/arjun.md").expect("valid");
    let first = memory("Arjun", "Lives in Kyoto.");
    engine
        .write_batch(
            vec![(path.clone(), Some(first.into_bytes()))],
            "a".into(),
            None,
        )
        .expect("write");
    let base = engine.store().head().expect("head");
    // Another writer extends the memory after we read it...
    let theirs = memory("Arjun", "Lives in Kyoto. Works at Sony.");
    engine
        .write_batch(
            vec![(path.clone(), Some(theirs.clone().into_bytes()))],
            "b".into(),
            None,
        )
        .expect("write");
    let before = head(dir.path());
    // ...so our version, computed from `base`, must not overwrite theirs.
    let ours = memory("Arjun", "Lives in Kyoto. Has a cat.");
    let err = engine
        .write_batch_on(
            base,
            vec![(path.clone(), Some(ours.clone().into_bytes()))],
            "c".into(),
            None,
        )
        .expect_err("stale");
    assert!(
        matches!(
            err,
            EngineError::Store(gitloom_store::StoreError::Stale { ref path, .. }) if path == "facts/people/arjun.md"
        ),
        "{err}"
    );
    assert_eq!(head(dir.path()), before, "nothing was committed");
    assert!(
        engine
            .get("facts/people/arjun.md", None)
            .expect("get")
            .content
            .contains("Works at Sony")
    );
    // A path nobody else touched commits on the moved head.
    let other = StorePath::parse("facts/people/lena.md").expect("valid");
    engine
        .write_batch_on(
            base,
            vec![(other, Some(memory("Lena", "Colleague.").into_bytes()))],
            "d".into(),
            None,
        )
        .expect("an untouched path is not stale");
    // Recomputed on the current head, ours goes in.
    let now = engine.store().head().expect("head");
    engine
        .write_batch_on(now, vec![(path, Some(ours.into_bytes()))], "e".into(), None)
        .expect("fresh base");
}

#[test]
fn a_second_engine_on_the_store_sees_the_aliases_the_first_one_wrote() {
    // A server keeps several engines on one namespace (a writer, readers), each with
    // its own index connection. The writer's sync brings the shared index file to
    // HEAD, so the reader's sync has nothing to do; its aliases must follow anyway.
    let (dir, writer) = new_store();
    writer
        .write(
            "facts/infra/cluster.md",
            memory("Cluster", "Production runs on Kubernetes in three regions.").as_bytes(),
            None,
        )
        .expect("write");
    let reader = Engine::open(dir.path()).expect("open");
    assert!(reader.vocab().expect("vocab").groups().is_empty());
    let lexical = |e: &Engine| {
        e.search(&RetrieveRequest::new("k8s"))
            .expect("search")
            .into_iter()
            .map(|h| h.path)
            .collect::<Vec<_>>()
    };
    assert!(lexical(&reader).is_empty());

    writer
        .write(
            "vocab/infra.md",
            b"# Infrastructure terms\n\n- k8s, kubernetes, kube\n",
            None,
        )
        .expect("write vocab");
    let groups = reader.vocab().expect("vocab");
    let terms: Vec<&[String]> = groups.groups().iter().map(|g| g.terms.as_slice()).collect();
    assert_eq!(terms, [["k8s", "kubernetes", "kube"]]);
    assert_eq!(lexical(&reader), ["facts/infra/cluster.md"]);

    writer.delete("vocab/infra.md").expect("delete vocab");
    assert!(reader.vocab().expect("vocab").groups().is_empty());
    assert!(lexical(&reader).is_empty());
}
