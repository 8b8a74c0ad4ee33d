//! A run stopped through `IngestOptions::cancel` records nothing it did not finish:
//! the next run ingests the sessions it never reached.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gitloom_cortex::{IngestOptions, OfflineExtractor, ingest, parse_sessions};
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};

const SESSIONS: &str = r#"[
  {"id": "s1", "date": "2026-03-01", "messages": [
    {"role": "user", "content": "My sister Ana lives in Lisbon."},
    {"role": "assistant", "content": "Noted."}]},
  {"id": "s2", "date": "2026-03-02", "messages": [
    {"role": "user", "content": "I work at Brightwave as a data engineer."},
    {"role": "assistant", "content": "Got it."}]}
]"#;

#[test]
fn a_cancelled_run_commits_nothing_and_the_next_run_ingests_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(
        dir.path(),
        EngineOptions {
            embedder: EmbedderChoice::None,
            ..Default::default()
        },
    )
    .expect("store");
    let sessions = parse_sessions(SESSIONS).expect("sessions parse");

    let cancel = Arc::new(AtomicBool::new(true));
    let options = IngestOptions {
        cancel: Some(Arc::clone(&cancel)),
        ..Default::default()
    };
    let report = ingest(&engine, &sessions, &OfflineExtractor, &options, &|_| {}).expect("run");
    assert!(report.cancelled, "{report:#?}");
    assert_eq!(report.commits, 0, "{report:#?}");
    assert!(report.sessions.is_empty(), "{report:#?}");

    let again = ingest(
        &engine,
        &sessions,
        &OfflineExtractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("second run");
    assert!(!again.cancelled);
    assert_eq!(again.commits, 2, "{again:#?}");
    assert!(again.sessions.iter().all(|s| !s.skipped), "{again:#?}");
}
