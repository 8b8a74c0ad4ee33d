//! The links a past page shows are read from that commit's files with the index's
//! resolution rule; at HEAD they must be exactly what the index (the `related` op)
//! says, on the test store and on the probe corpus.

mod common;

use std::path::{Path, PathBuf};

use gitloom_engine::Engine;
use gitloom_model::StorePath;
use gitloom_web::links::LinkGraph;

fn probe_memories() -> Option<PathBuf> {
    let shared = std::env::var_os("GITLOOM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let dir = shared.join("data/probe/memories");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the probe corpus is missing ({}); CI must have ../shared/data beside the checkout",
        dir.display()
    );
    eprintln!(
        "skipped: the probe corpus is not at {} (set GITLOOM_SHARED)",
        dir.display()
    );
    None
}

fn assert_graph_matches_index(engine: &Engine) {
    let store = engine.store();
    let head = store.head().expect("head").expect("a commit");
    let graph = LinkGraph::build(store, head).expect("graph");
    let mut checked = 0;
    for entry in store
        .walk(store.tree_of(head).expect("tree"))
        .expect("walk")
    {
        let Ok(path) = StorePath::parse(&entry.path) else {
            continue;
        };
        if !path.is_memory() {
            continue;
        }
        let (out, into) = engine.links(path.as_str()).expect("index links");
        assert_eq!(graph.links_from(path.as_str()), out, "links out of {path}");
        assert_eq!(graph.links_to(path.as_str()), into, "links into {path}");
        checked += out.len() + into.len();
    }
    assert!(checked > 0, "the store has links to compare");
}

#[test]
fn past_link_graph_equals_the_index_at_head_on_the_test_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, _) = common::build_store(dir.path());
    assert_graph_matches_index(&engine);
}

#[test]
fn past_link_graph_equals_the_index_at_head_on_the_probe_corpus() {
    let Some(memories) = probe_memories() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = common::engine(dir.path());
    engine
        .import_dir(&memories)
        .expect("import the probe memories");
    assert_graph_matches_index(&engine);
}
