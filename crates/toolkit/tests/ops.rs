//! Every op over a real store (git repository + SQLite index), through the op list.

use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};
use gitloom_toolkit::{Access, call, find, ops};
use serde_json::{Value, json};

fn store() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(
        dir.path(),
        EngineOptions {
            embedder: EmbedderChoice::None,
            ..EngineOptions::default()
        },
    )
    .expect("store");
    (dir, engine)
}

fn ok(engine: &Engine, op: &str, params: Value) -> Value {
    call(engine, op, params.clone()).unwrap_or_else(|e| panic!("{op} {params}: {e}"))
}

fn code(engine: &Engine, op: &str, params: Value) -> &'static str {
    match call(engine, op, params) {
        Ok(v) => panic!("{op} should fail, got {v}"),
        Err(e) => e.code(),
    }
}

#[test]
fn every_op_has_an_object_schema_and_a_unique_name() {
    let mut names = std::collections::BTreeSet::new();
    for op in ops() {
        assert!(names.insert(op.name), "duplicate op {}", op.name);
        let s = op.params_schema();
        assert_eq!(s["type"], "object", "{}: {s}", op.name);
        assert!(!op.description.is_empty());
    }
    assert_eq!(find("retrieve").map(|o| o.access), Some(Access::Read));
    assert_eq!(find("write").map(|o| o.access), Some(Access::Write));
    let required = &find("retrieve").expect("op").params_schema()["required"];
    assert_eq!(required, &json!(["query"]));
}

#[test]
fn ops_over_a_real_store() {
    let (_dir, e) = store();
    let w = ok(
        &e,
        "write",
        json!({"path": "facts/work/employer.md", "content": "---\ntitle: Employer\nentities: [Alice (person)]\n---\nAlice works at Initech.\n"}),
    );
    assert_eq!(w["paths"], json!(["facts/work/employer.md"]));
    let r = ok(
        &e,
        "remember",
        json!({"title": "Commute", "topic": "work", "body": "Alice cycles to work. See [[Employer]].", "entity": ["Alice (person)"]}),
    );
    let commute = r["paths"][0].as_str().expect("path").to_owned();
    ok(
        &e,
        "write",
        json!({"path": "facts/work/employer.md", "content": "---\ntitle: Employer\nentities: [Alice (person)]\n---\nAlice works at Globex now.\n", "message": "job change"}),
    );

    let g = ok(&e, "get", json!({"path": "facts/work/employer.md"}));
    assert!(g["content"].as_str().is_some_and(|c| c.contains("Globex")));
    let g = ok(
        &e,
        "get",
        json!({"path": "facts/work/employer.md", "at": "HEAD~2"}),
    );
    assert!(g["content"].as_str().is_some_and(|c| c.contains("Initech")));

    let r = ok(
        &e,
        "retrieve",
        json!({"query": "where does Alice work", "limit": 2}),
    );
    assert_eq!(r["hits"][0]["path"], "facts/work/employer.md", "{r}");
    let s = ok(&e, "search", json!({"query": "Globex"}));
    assert_eq!(s["hits"][0]["path"], "facts/work/employer.md");

    let rel = ok(&e, "related", json!({"path": commute}));
    assert_eq!(
        rel["outgoing"][0]["resolved"], "facts/work/employer.md",
        "{rel}"
    );
    let rel = ok(&e, "related", json!({"path": "facts/work/employer.md"}));
    assert_eq!(rel["incoming"][0]["src"], commute.as_str(), "{rel}");

    let ent = ok(&e, "entity", json!({"name": "Alice"}));
    assert_eq!(ent["mentions"].as_array().map(Vec::len), Some(2), "{ent}");
    assert_eq!(ok(&e, "tree", json!({"topic": "facts/work"}))["total"], 2);
    let topics = ok(&e, "topics", Value::Null);
    assert!(topics.as_array().is_some_and(|t| !t.is_empty()));

    let log = ok(&e, "log", json!({"path": "facts/work/employer.md"}));
    assert_eq!(log.as_array().map(Vec::len), Some(2));
    ok(&e, "forget", json!({"path": "facts/work/employer.md"}));
    let h = ok(&e, "history", json!({"path": "facts/work/employer.md"}));
    let versions = h.as_array().expect("versions");
    assert_eq!(versions.len(), 3);
    assert!(versions[0]["content"].is_null(), "newest is the deletion");
    assert!(
        versions[1]["content"]
            .as_str()
            .is_some_and(|c| c.contains("Globex"))
    );
    assert!(
        versions[2]["content"]
            .as_str()
            .is_some_and(|c| c.contains("Initech"))
    );

    let st = ok(&e, "stats", json!({}));
    assert_eq!(st["files"], 1);
    assert_eq!(ok(&e, "rebuild", json!({}))["upserted"], 1);
    ok(&e, "sync", json!({}));

    // Errors carry stable codes.
    assert_eq!(code(&e, "get", json!({"path": "../x.md"})), "invalid_path");
    assert_eq!(
        code(&e, "get", json!({"path": "facts/none.md"})),
        "not_found"
    );
    assert_eq!(
        code(&e, "retrieve", json!({"query": "x", "limit": 0})),
        "invalid_request"
    );
    assert_eq!(code(&e, "retrieve", json!({"q": "x"})), "invalid_params");
    // A moment to ask as of: a date or an RFC 3339 time, nothing else.
    for now in ["2026-08-01", "2026-08-01T09:30:00+02:00"] {
        ok(
            &e,
            "retrieve",
            json!({"query": "where does Alice work", "now": now}),
        );
    }
    assert_eq!(
        code(&e, "retrieve", json!({"query": "x", "now": "next tuesday"})),
        "invalid_request"
    );
    assert_eq!(
        code(
            &e,
            "write",
            json!({"path": "facts/x.md", "content": "---\ntitle: [\n---\n"})
        ),
        "invalid_memory"
    );
    assert_eq!(
        code(&e, "semantic_search", json!({"query": "x"})),
        "invalid_request"
    );
    assert_eq!(code(&e, "embed_pending", json!({})), "invalid_request");
    assert_eq!(code(&e, "nope", json!({})), "unknown_op");
}

#[test]
fn vocab_aliases_widen_lexical_queries_both_ways() {
    let (_dir, e) = store();
    ok(
        &e,
        "write",
        json!({"path": "facts/infra/cluster.md", "content": "---\ntitle: Cluster\n---\nProduction runs on Kubernetes in three regions.\n"}),
    );
    ok(
        &e,
        "write",
        json!({"path": "facts/infra/k8s-upgrade.md", "content": "---\ntitle: Upgrade\n---\nThe k8s upgrade is planned for March.\n"}),
    );
    // Before any vocabulary: the literal term only.
    let s = ok(&e, "search", json!({"query": "k8s"}));
    assert_eq!(s["hits"].as_array().map(Vec::len), Some(1), "{s}");
    assert!(
        ok(&e, "vocab", json!({}))["groups"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );

    ok(
        &e,
        "write",
        json!({"path": "vocab/infra.md", "content": "# Infrastructure terms\n\n- k8s, kubernetes, kube\n- pg, postgres\n"}),
    );
    let v = ok(&e, "vocab", json!({"term": "Kubernetes"}));
    assert_eq!(
        v["groups"][0]["terms"],
        json!(["k8s", "kubernetes", "kube"]),
        "{v}"
    );
    assert_eq!(v["groups"][0]["file"], "vocab/infra.md");

    for q in ["k8s", "kubernetes"] {
        let s = ok(&e, "search", json!({"query": q}));
        let paths: Vec<&str> = s["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .filter_map(|h| h["path"].as_str())
            .collect();
        assert!(
            paths.contains(&"facts/infra/cluster.md")
                && paths.contains(&"facts/infra/k8s-upgrade.md"),
            "{q}: {paths:?}"
        );
    }
    // The read path uses it too, and counts the alias as the query term matched.
    let r = ok(
        &e,
        "retrieve",
        json!({"query": "which regions does k8s production run in"}),
    );
    assert_eq!(r["hits"][0]["path"], "facts/infra/cluster.md", "{r}");
    assert_eq!(r["abstained"], false);

    // Editing the vocabulary takes effect at the next query; removing it undoes it.
    ok(&e, "forget", json!({"path": "vocab/infra.md"}));
    let s = ok(&e, "search", json!({"query": "k8s"}));
    assert_eq!(s["hits"].as_array().map(Vec::len), Some(1), "{s}");
}
