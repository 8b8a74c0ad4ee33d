//! Timing at 10,000 files: `cargo test -p gitloom-index --release --test perf -- --ignored --nocapture`.
mod common;

use std::time::Instant;

use common::*;
use gitloom_index::testutil::memory_text;
use gitloom_index::{LexicalQuery, SyncBatch};

const WORDS: &[&str] = &[
    "camera",
    "lens",
    "work",
    "employer",
    "berlin",
    "flat",
    "rent",
    "cat",
    "vet",
    "gpu",
    "power",
    "visa",
    "japan",
    "trip",
    "diet",
    "fish",
    "curry",
    "bike",
    "commute",
    "insurance",
    "passport",
    "python",
    "units",
    "metric",
    "talk",
    "conference",
    "manager",
    "team",
    "office",
    "bouldering",
];

#[test]
#[ignore]
fn ten_thousand_files() {
    let (_dir, mut idx) = temp_index();
    let mut rng = fastrand::Rng::with_seed(1);
    // Zipf-like vocabulary of 20,000 words, the named WORDS among the rarer ones.
    let mut w = |n: usize| {
        (0..n)
            .map(|_| {
                let r = rng.f64();
                let k = (20_000f64.powf(r) as usize).saturating_sub(1);
                if k % 97 == 5 {
                    WORDS[k % WORDS.len()].to_owned()
                } else {
                    format!("w{k}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut b = SyncBatch {
        commit: "c".into(),
        tree: "t".into(),
        full: true,
        ..SyncBatch::default()
    };
    for i in 0..10_000 {
        let text = format!(
            "{}\n\n## Details\n{} [[facts/t{}/m{}]]\n",
            w(30),
            w(20),
            i % 37,
            (i * 7) % 10_000
        );
        let t = memory_text(&format!("Memory {i} {}", w(4)), &[&w(5), &w(4)], &text);
        b.upserted
            .push(file(&format!("facts/t{}/m{i}.md", i % 37), &t));
    }
    let t0 = Instant::now();
    let st = idx.apply(&b).expect("apply");
    let apply = t0.elapsed();
    eprintln!("apply 10k: {apply:?} {st:?}");
    let queries = [
        "where do i work",
        "camera lens",
        "what is my rent in berlin",
        "japan visa trip",
        "w1 w2",
        "w3 camera w40 w500",
    ];
    for text in queries {
        let q = LexicalQuery {
            text: text.into(),
            limit: 24,
            ..LexicalQuery::default()
        };
        idx.lexical(&q).expect("warm");
        let t0 = Instant::now();
        let n = 50;
        for _ in 0..n {
            idx.lexical(&q).expect("q");
        }
        eprintln!("{text:?}: {:?} per query", t0.elapsed() / n);
    }
    let raw = rusqlite::Connection::open(idx.path()).expect("raw");
    for sql in [
        "SELECT count(*) FROM (SELECT rowid, bm25(fts, 4.0, 2.0, 8.0, 3.0, 2.0, 1.0) AS s FROM fts WHERE fts MATCH '\"w1\" OR \"w2\"' ORDER BY s)",
        "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH '\"w1\" OR \"w2\"')",
        "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH '\"w1\" AND \"w2\"')",
        "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH '\"w1\"' AND rowid IN (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20))",
        "SELECT count(*) FROM (SELECT snippet(fts, 5, '[', ']', '…', 24) FROM fts WHERE fts MATCH '\"w1\" OR \"w2\"' AND rowid IN (1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20))",
    ] {
        let t0 = Instant::now();
        let n: i64 = raw.query_row(sql, [], |r| r.get(0)).expect("raw q");
        eprintln!("{n} rows {:?}: {sql}", t0.elapsed());
    }
    let t0 = Instant::now();
    idx.apply(&upserts(
        "c2",
        vec![simple("facts/t1/new.md", "New", "camera")],
    ))
    .expect("apply");
    eprintln!("incremental apply of 1 file: {:?}", t0.elapsed());
    assert!(apply.as_secs_f64() < 10.0);
}
