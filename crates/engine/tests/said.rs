//! A memory is found by the words of the message it cites: ingestion cuts a message
//! into atomic memories, and a question worded like the message reaches a fragment
//! that shares none of its words. Uses a deterministic word-hashing embedder so it
//! runs without a model installed; the transcript is committed with `git` as
//! ingestion commits it.

mod common;

use std::sync::Arc;

use common::{WordHashing as Hashing, commit_file};
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions, RetrieveRequest};

const TRANSCRIPT: &str = "# Session s-0424\n\ndate: 2026-04-24\n\n## m0 user\n\nWE'RE ENGAGED!!! callum proposed in lisbon at sunset on the miradouro. i had no clue\n\n## m1 assistant\n\nCongratulations!\n";

fn fragment(title: &str, sources: &[&str]) -> Vec<u8> {
    let mut s = format!("---\ntitle: {title}\ncreated: 2026-04-24T00:00:00Z\n");
    if !sources.is_empty() {
        s.push_str("sources:\n");
        for src in sources {
            s.push_str(&format!("- {src}\n"));
        }
    }
    s.push_str(&format!("---\n{title}.\n"));
    s.into_bytes()
}

#[test]
fn a_fragment_is_found_by_what_its_message_said() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(
        dir.path(),
        EngineOptions {
            embedder: EmbedderChoice::Given(Arc::new(Hashing)),
            ..Default::default()
        },
    )
    .expect("init");
    // Several messages in one citation, as reconciliation writes them.
    let cited = "sessions/2026-04-24/s-0424.md#m1,m0";
    for (path, content) in [
        (
            "facts/family/no-clue.md",
            fragment("User had no clue", &[cited]),
        ),
        // The same words citing nothing, and a fragment citing a message the
        // transcript does not have: neither has anything said to be found by.
        (
            "facts/family/no-clue-uncited.md",
            fragment("User had no clue either", &[]),
        ),
        (
            "facts/family/no-clue-missing.md",
            fragment(
                "User had no clue at all",
                &["sessions/2026-04-24/s-0424.md#m7"],
            ),
        ),
        (
            "facts/home/kettle.md",
            fragment("The kettle is descaled monthly", &[]),
        ),
    ] {
        engine.write(path, &content, None).expect("write");
    }
    let ask = "when did callum propose in lisbon at sunset";
    let before = engine
        .retrieve(&RetrieveRequest::new(ask))
        .expect("retrieve");
    assert!(
        before.hits.iter().all(|h| h.matched_said.is_none()),
        "no transcript yet: {:?}",
        before.hits
    );

    // The transcript lands after the memories citing it (a later commit, by hand):
    // the sync reads it for them as a full rebuild would.
    commit_file(
        dir.path(),
        "sessions/2026-04-24/s-0424.md",
        TRANSCRIPT,
        "transcript",
    );
    engine.sync().expect("sync");

    let r = engine
        .retrieve(&RetrieveRequest::new(ask))
        .expect("retrieve");
    let paths: Vec<&str> = r.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths.first(), Some(&"facts/family/no-clue.md"), "{paths:?}");
    assert_eq!(
        r.hits[0].matched_said.as_deref(),
        Some("sessions/2026-04-24/s-0424.md#m0")
    );
    assert!(
        !paths.contains(&"facts/family/no-clue-uncited.md"),
        "{paths:?}"
    );
    assert!(
        !paths.contains(&"facts/family/no-clue-missing.md"),
        "{paths:?}"
    );

    // Asked in the fragment's own words, its own prose matches and no message is named.
    let r = engine
        .retrieve(&RetrieveRequest::new("user had no clue"))
        .expect("retrieve");
    let own = r
        .hits
        .iter()
        .find(|h| h.path == "facts/family/no-clue.md")
        .expect("found by its own words");
    assert_eq!(own.matched_said, None);

    // The incremental sync left what a rebuild from git makes.
    let incremental = engine
        .retrieve(&RetrieveRequest::new(ask))
        .expect("retrieve");
    engine.rebuild().expect("rebuild");
    let rebuilt = engine
        .retrieve(&RetrieveRequest::new(ask))
        .expect("retrieve");
    let view = |r: &gitloom_engine::Retrieval| -> Vec<(String, Option<String>)> {
        r.hits
            .iter()
            .map(|h| (h.path.clone(), h.matched_said.clone()))
            .collect()
    };
    assert_eq!(view(&incremental), view(&rebuilt));
}

/// Between two people the answer is often in the reply: "we went to the book fair by
/// the harbour" — "what did you buy?" — "two atlases and a cookbook". A question about
/// the fair finds the first memory; the reply, which shares none of its words, comes
/// in beside it as what was said next (`next→`), never above it, and only when the
/// conversation is read (`conversation_next`).
#[test]
fn what_was_said_next_comes_in_beside_the_memory_it_follows() {
    const TALK: &str = "# Session t1\n\ndate: 2026-07-15\n\n## m0 user Ana\n\nWe went to the book fair by the harbour on Saturday.\n\n## m1 user Ben\n\nOh nice, what did you buy?\n\n## m2 user Ana\n\nTwo atlases and a cookbook, stalls packed all afternoon.\n\n## m3 user Ben\n\nSounds great.\n";
    let dir = tempfile::tempdir().expect("tempdir");
    let mut engine = Engine::init_with(
        dir.path(),
        EngineOptions {
            embedder: EmbedderChoice::Given(Arc::new(Hashing)),
            ..Default::default()
        },
    )
    .expect("init");
    commit_file(dir.path(), "sessions/2026-07-15/t1.md", TALK, "transcript");
    let said_at = |m: u32| format!("sessions/2026-07-15/t1.md#m{m}");
    for (path, title, src) in [
        (
            "facts/hobbies/fair.md",
            "Ana went to the book fair by the harbour",
            said_at(0),
        ),
        (
            "facts/hobbies/books.md",
            "Bought two atlases and a cookbook",
            said_at(2),
        ),
        (
            "facts/home/kettle.md",
            "The kettle is descaled every month",
            String::new(),
        ),
    ] {
        let sources: Vec<&str> = if src.is_empty() { vec![] } else { vec![&src] };
        engine
            .write(path, &fragment(title, &sources), None)
            .expect("write");
    }
    let ask = RetrieveRequest {
        explain: true,
        ..RetrieveRequest::new("what did Ana do at the book fair by the harbour")
    };
    let r = engine.retrieve(&ask).expect("retrieve");
    let paths: Vec<&str> = r.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths.first(), Some(&"facts/hobbies/fair.md"), "{paths:?}");
    let books = r
        .hits
        .iter()
        .find(|h| h.path == "facts/hobbies/books.md")
        .unwrap_or_else(|| panic!("the reply comes in: {paths:?}"));
    let step = books.graph.as_ref().expect("reached as a neighbour");
    assert_eq!(
        (step.from.as_str(), step.via.as_str()),
        ("facts/hobbies/fair.md", "next→")
    );

    // Not read, the conversation gives nothing.
    engine.set_config(gitloom_engine::RetrieveConfig {
        conversation_next: 0,
        ..Default::default()
    });
    let r = engine.retrieve(&ask).expect("retrieve");
    assert!(
        r.hits.iter().all(|h| h.path != "facts/hobbies/books.md"),
        "{:?}",
        r.hits
    );
}
