//! The semantic arms' scan on the engine's worker thread, beside the lexical arm, gives
//! the same retrievals as the two arms one after the other: every field but the
//! timings, with explain, under both fusions, scoped by tier and topic, and without an
//! embedder. Side by side, the caller takes a share of the scan's pieces once its
//! lexical arm is done (all of them when the worker has not begun; an arena of 1,024
//! rows or more is cut into at least 16 pieces of the int8 pass), so these answers also come from scans split
//! between the two threads in whatever way the timing gave. Uses a deterministic
//! word-hashing embedder so it runs without a model.

mod common;

use std::sync::Arc;

use common::WordHashing;
use gitloom_engine::{
    EmbedderChoice, Engine, EngineOptions, Fusion, RetrieveConfig, RetrieveRequest,
};
use gitloom_model::{StorePath, Tier};
use gitloom_synth::SynthFile;

/// A retrieval as JSON, without the timings (which differ from run to run).
fn answer(engine: &Engine, req: &RetrieveRequest) -> serde_json::Value {
    let r = engine.retrieve(req).expect("retrieve");
    let mut v = serde_json::to_value(&r).expect("a retrieval serialises");
    v.as_object_mut()
        .expect("an object")
        .remove("timings_ms")
        .expect("timings are reported");
    v
}

fn requests() -> Vec<RetrieveRequest> {
    let mut out = Vec::new();
    for (i, q) in gitloom_synth::queries(40, 11).into_iter().enumerate() {
        let mut req = RetrieveRequest::new(q);
        req.explain = i % 2 == 0;
        match i % 5 {
            1 => req.tier = Some(Tier::Facts),
            2 => req.topic = Some("facts/work".into()),
            3 => req.limit = 3,
            _ => {}
        }
        out.push(req);
    }
    out
}

/// Synthetic files as one write batch.
fn batch(files: Vec<SynthFile>) -> Vec<(StorePath, Option<Vec<u8>>)> {
    files
        .into_iter()
        .map(|f| {
            (
                StorePath::parse(&f.path).expect("synth paths are valid"),
                Some(f.content.into_bytes()),
            )
        })
        .collect()
}

fn store(embedder: EmbedderChoice) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = EngineOptions {
        embedder,
        ..Default::default()
    };
    let engine = Engine::init_with(dir.path(), options).expect("init");
    engine
        .write_batch(
            batch(gitloom_synth::corpus(300, 5)),
            "import: 300 synthetic".into(),
            None,
        )
        .expect("import");
    (dir, engine)
}

/// Every request, answered with the scan on the worker thread and on the caller's,
/// several times over in alternation (so the worker is found both idle and busy).
fn assert_same_either_way(engine: &mut Engine, what: &str) {
    let reqs = requests();
    engine.set_concurrent_arms_from(usize::MAX);
    let alone: Vec<serde_json::Value> = reqs.iter().map(|r| answer(engine, r)).collect();
    assert!(
        alone
            .iter()
            .any(|a| a["hits"].as_array().is_some_and(|h| !h.is_empty())),
        "{what}: some request finds something"
    );
    for round in 0..3 {
        for (i, req) in reqs.iter().enumerate() {
            engine.set_concurrent_arms_from(if (i + round) % 2 == 0 { 0 } else { usize::MAX });
            assert_eq!(
                answer(engine, req),
                alone[i],
                "{what}: round {round}, {:?}",
                req.query
            );
        }
        engine.set_concurrent_arms_from(0);
        for (i, req) in reqs.iter().enumerate() {
            assert_eq!(answer(engine, req), alone[i], "{what}: {:?}", req.query);
        }
    }
}

#[test]
fn the_arms_side_by_side_answer_as_one_after_the_other() {
    let (_dir, mut engine) = store(EmbedderChoice::Given(Arc::new(WordHashing)));
    let with_semantic = answer(&engine, &RetrieveRequest::new("where is my passport"));
    assert!(
        with_semantic["warnings"].is_null(),
        "the semantic arms ran: {with_semantic}"
    );
    assert_same_either_way(&mut engine, "score fusion");

    let mut rrf = engine.config().clone();
    rrf.fusion = Fusion::Rrf;
    engine.set_config(rrf);
    assert_same_either_way(&mut engine, "reciprocal rank");

    engine.set_config(RetrieveConfig::default());
    // A change after the first retrieves: the arena is rebuilt on the caller's thread
    // and the scan still agrees.
    let edits = gitloom_synth::edits(&gitloom_synth::corpus(300, 5), 20, 9, 1);
    engine
        .write_batch(batch(edits), "edit: 20".into(), None)
        .expect("edit");
    assert_same_either_way(&mut engine, "after an edit");
}

#[test]
fn without_an_embedder_the_setting_changes_nothing() {
    let (_dir, mut engine) = store(EmbedderChoice::None);
    assert_same_either_way(&mut engine, "lexical only");
}
