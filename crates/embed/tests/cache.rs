//! The durable vector cache and `embed_cached`.

mod common;

use std::cell::RefCell;

use common::{Counting, vector_of};
use gitloom_embed::{CacheStatus, EmbedError, Embedder, VectorCache, embed_cached, text_hash};

#[test]
fn text_hash_is_blake3_hex_of_exact_text() {
    assert_eq!(text_hash("abc"), blake3::hash(b"abc").to_hex().to_string());
    assert_ne!(text_hash("abc"), text_hash("abc "));
    assert_eq!(text_hash("x").len(), 64);
}

#[test]
fn put_get_round_trip_and_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(".gitloom/vectors.db");
    let v1 = vec![0.25f32, -1.5, 3.0e-7, f32::MAX];
    let v2 = vec![1.0f32, 0.0, 0.0, 0.0];
    {
        let (c, status) = VectorCache::open(&path).expect("open");
        assert_eq!(status, CacheStatus::Created);
        c.put_many("m@1/4", &[("h1", &v1), ("h2", &v2)])
            .expect("put");
        c.put_many("other@1/4", &[("h1", &v2)]).expect("put");
        let got = c.get_many("m@1/4", &["h1", "h2", "h3"]).expect("get");
        assert_eq!(got.len(), 2);
        assert_eq!(got["h1"], v1, "bit-exact round trip");
        assert_eq!(got["h2"], v2);
    }
    let (c, status) = VectorCache::open(&path).expect("reopen");
    assert_eq!(status, CacheStatus::Reused);
    let got = c.get_many("m@1/4", &["h1"]).expect("get");
    assert_eq!(got["h1"], v1);
    assert_eq!(
        c.get_many("other@1/4", &["h1"]).expect("get")["h1"],
        v2,
        "keyed by model too"
    );
    assert_eq!(c.count("m@1/4").expect("count"), 2);
}

#[test]
fn a_garbage_file_is_replaced_with_a_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("vectors.db");
    std::fs::write(
        &path,
        b"this is not a database, just some bytes that go on and on ".repeat(200),
    )
    .expect("write");
    let (c, status) = VectorCache::open(&path).expect("open replaces");
    match status {
        CacheStatus::Reset { reason } => assert!(!reason.is_empty()),
        s => panic!("expected Reset, got {s:?}"),
    }
    c.put_many("m", &[("h", &[1.0, 2.0])]).expect("usable");
    drop(c);
    assert_eq!(
        VectorCache::open(&path).expect("reopen").1,
        CacheStatus::Reused
    );

    // Another application's database is not ours to keep either.
    let other = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&other).expect("sqlite");
    conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .expect("sql");
    drop(conn);
    assert!(matches!(
        VectorCache::open(&other).expect("open").1,
        CacheStatus::Reset { .. }
    ));
}

#[test]
fn embed_cached_second_pass_makes_no_embedder_calls() {
    let cache = VectorCache::open_in_memory().expect("cache");
    let e = Counting::new(8);
    let texts = ["alpha", "beta", "alpha", "gamma", "beta"];
    let seen = RefCell::new(Vec::new());
    let progress = |done: usize, total: usize| seen.borrow_mut().push((done, total));
    let (v, stats) = embed_cached(&e, &cache, &texts, Some(&progress)).expect("embed");
    assert_eq!(v.len(), 5);
    for (t, v) in texts.iter().zip(&v) {
        assert_eq!(*v, vector_of(t, 8));
    }
    assert_eq!(stats.embedded, 3, "duplicates embedded once");
    assert_eq!(stats.cached, 0);
    assert_eq!(e.calls(), 1);
    assert_eq!(e.texts(), 3);
    assert_eq!(seen.borrow().last(), Some(&(3, 3)));

    let (v2, stats) = embed_cached(&e, &cache, &texts, None).expect("embed again");
    assert_eq!(v2, v);
    assert_eq!(stats.embedded, 0);
    assert_eq!(stats.cached, 5);
    assert_eq!(e.calls(), 1, "second pass: zero embedder calls");

    // One new text: only it is embedded.
    let (_, stats) = embed_cached(&e, &cache, &["alpha", "delta"], None).expect("embed");
    assert_eq!((stats.embedded, stats.cached), (1, 1));
    assert_eq!(e.texts(), 4);
}

#[test]
fn embed_cached_batches_big_jobs_and_reports_progress() {
    let cache = VectorCache::open_in_memory().expect("cache");
    let e = Counting::new(4);
    let owned: Vec<String> = (0..600).map(|i| format!("text {i}")).collect();
    let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
    let seen = RefCell::new(Vec::new());
    let progress = |done: usize, total: usize| seen.borrow_mut().push((done, total));
    let (v, stats) = embed_cached(&e, &cache, &texts, Some(&progress)).expect("embed");
    assert_eq!(v.len(), 600);
    assert_eq!(stats.embedded, 600);
    assert_eq!(e.calls(), 3);
    assert_eq!(*seen.borrow(), vec![(256, 600), (512, 600), (600, 600)]);
}

struct WrongDim;
impl Embedder for WrongDim {
    fn model_id(&self) -> &str {
        "wrong@test/8"
    }
    fn dim(&self) -> usize {
        8
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0; 7]).collect())
    }
    fn max_tokens(&self) -> usize {
        512
    }
}

#[test]
fn a_wrong_dimension_is_an_error_and_never_stored() {
    let cache = VectorCache::open_in_memory().expect("cache");
    let err = embed_cached(&WrongDim, &cache, &["x"], None).expect_err("must fail");
    assert!(
        matches!(
            err,
            EmbedError::Dimension {
                expected: 8,
                actual: 7,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(cache.count("wrong@test/8").expect("count"), 0);
}
