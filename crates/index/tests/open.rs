mod common;

use common::*;
use gitloom_index::{Index, LexicalQuery, OpenStatus};

fn q(text: &str) -> LexicalQuery {
    LexicalQuery {
        text: text.into(),
        limit: 20,
        ..LexicalQuery::default()
    }
}

fn sample() -> Vec<(String, String)> {
    probe().unwrap_or_else(|| {
        (0..30)
            .map(|i| {
                (
                    format!("facts/t{}/m{i}.md", i % 4),
                    gitloom_index::testutil::memory_text(
                        &format!("Memory {i}"),
                        &["where do I work"],
                        &format!("work camera lens number {i}"),
                    ),
                )
            })
            .collect()
    })
}

#[test]
fn create_then_reuse() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("sub/index.db");
    let (mut idx, st) = Index::open(&db).expect("open");
    assert_eq!(st, OpenStatus::Created);
    idx.apply(&full_batch(&sample())).expect("apply");
    drop(idx);
    let (idx, st) = Index::open(&db).expect("open");
    assert_eq!(st, OpenStatus::Reused);
    assert!(idx.stats().expect("s").files > 0);
    assert_eq!(idx.state().expect("s").expect("some").commit, "c1");
}

fn assert_reset(db: &std::path::Path, what: &str) {
    let (idx, st) = Index::open(db).expect("corrupt file must not be an error");
    match st {
        OpenStatus::Reset { reason } => eprintln!("{what}: reset: {reason}"),
        other => panic!("{what}: expected Reset, got {other:?}"),
    }
    assert_eq!(idx.stats().expect("s").files, 0);
    assert_eq!(idx.state().expect("s"), None);
}

#[test]
fn garbage_file_resets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    std::fs::write(
        &db,
        b"this is not a database at all, just some bytes\n".repeat(100),
    )
    .expect("write");
    std::fs::write(dir.path().join("index.db-wal"), b"junk").expect("write");
    assert_reset(&db, "garbage");
    // And it is usable and reusable afterwards.
    drop(Index::open(&db).expect("open"));
    let (_, st) = Index::open(&db).expect("open");
    assert_eq!(st, OpenStatus::Reused);
}

#[test]
fn truncated_file_resets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    let (mut idx, _) = Index::open(&db).expect("open");
    idx.apply(&full_batch(&sample())).expect("apply");
    drop(idx); // checkpoints the WAL into the main file
    let len = std::fs::metadata(&db).expect("meta").len();
    assert!(len > 8192);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .expect("open for truncation");
    f.set_len(len / 2).expect("truncate");
    drop(f);
    assert_reset(&db, "truncated");
}

#[test]
fn schema_version_mismatch_resets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    let (mut idx, _) = Index::open(&db).expect("open");
    idx.apply(&full_batch(&sample())).expect("apply");
    drop(idx);
    {
        let c = rusqlite::Connection::open(&db).expect("raw open");
        c.execute(
            "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
            [],
        )
        .expect("update");
    }
    assert_reset(&db, "schema version");
}

#[test]
fn missing_table_resets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    drop(Index::open(&db).expect("open"));
    {
        let c = rusqlite::Connection::open(&db).expect("raw open");
        c.execute_batch("DROP TABLE topics").expect("drop");
    }
    assert_reset(&db, "missing table");
}

#[test]
fn rebuild_after_reset_gives_identical_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    let files = sample();
    let (mut idx, _) = Index::open(&db).expect("open");
    idx.apply(&full_batch(&files)).expect("apply");
    let queries = [
        "where do i work",
        "what camera do i have",
        "lens",
        "who is my manager",
    ];
    let before: Vec<_> = queries
        .iter()
        .map(|t| idx.lexical(&q(t)).expect("q"))
        .collect();
    let topics = idx.topics().expect("t");
    drop(idx);
    std::fs::write(&db, b"garbage").expect("clobber");
    let (mut idx, st) = Index::open(&db).expect("open");
    assert!(matches!(st, OpenStatus::Reset { .. }));
    idx.apply(&full_batch(&files)).expect("apply");
    let after: Vec<_> = queries
        .iter()
        .map(|t| idx.lexical(&q(t)).expect("q"))
        .collect();
    assert_eq!(before, after);
    assert_eq!(topics, idx.topics().expect("t"));
    // The same through an in-memory index.
    let mut mem = Index::open_in_memory().expect("mem");
    mem.apply(&full_batch(&files)).expect("apply");
    let mem_hits: Vec<_> = queries
        .iter()
        .map(|t| mem.lexical(&q(t)).expect("q"))
        .collect();
    assert_eq!(before, mem_hits);
}
