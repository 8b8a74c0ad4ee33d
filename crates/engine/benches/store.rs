//! Store-scale benchmarks: import, full rebuild, incremental sync, retrieve.
//!
//! `cargo bench -p gitloom-engine --bench store` (sizes: `GITLOOM_BENCH_SIZES=10000,100000`).
//! With `GITLOOM_BENCH_ARMS=all` the semantic arms run too, over vectors of
//! MiniLM's dimension from a word-hashing embedder in this file: the scan, fusion
//! and decoration cost what they would with the model (they depend on rows and
//! dimension, not on what made the vectors), and the query embedding, which is
//! the model's cost and measured by `cargo bench -p gitloom-embed`, is left out
//! of the retrieve figures.
//! `GITLOOM_BENCH_CONCURRENT_FROM=N` (or `never`) sets the arena size from which the
//! semantic scan runs on the worker thread beside the lexical arm;
//! `GITLOOM_BENCH_AB=never,4096` adds, after the table, passes in which each query is
//! retrieved under both settings in turn (same moments, same load; answers compared).
//! A hand-written harness, not criterion: each case needs a 10,000+ file store built
//! first, and what we want is the median and p95 of a handful of runs, printed as
//! one table that BENCHMARKS.md quotes.

use std::sync::Arc;
use std::time::Instant;

use gitloom_engine::embed::{EmbedError, Embedder};
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions, RetrieveRequest};
use gitloom_model::StorePath;
use gitloom_store::Batch;

/// MiniLM's dimension.
const DIM: usize = 384;

/// Vectors from hashed words (each word adds ±1 in four dimensions): texts sharing
/// words get close vectors, deterministically, at thousands of texts a millisecond.
struct Hashing;

impl Embedder for Hashing {
    fn model_id(&self) -> &str {
        "bench-hashing/384"
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; DIM];
                for w in t.split_whitespace() {
                    let h = blake3::hash(w.to_lowercase().as_bytes());
                    for pair in h.as_bytes().chunks_exact(2).take(4) {
                        let sign = if pair[1] & 1 == 0 { 1.0 } else { -1.0 };
                        v[usize::from(pair[0]) * DIM / 256] += sign;
                    }
                }
                v[DIM - 1] += 0.01;
                v
            })
            .collect())
    }
    fn max_tokens(&self) -> usize {
        256
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn to_batch(files: &[gitloom_synth::SynthFile]) -> Vec<(StorePath, Option<Vec<u8>>)> {
    files
        .iter()
        .map(|f| {
            (
                StorePath::parse(&f.path).expect("synth paths are valid"),
                Some(f.content.clone().into_bytes()),
            )
        })
        .collect()
}

fn bench_size(n: usize, all_arms: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    // Embedding 50,000 texts with the model would measure the model, which
    // `cargo bench -p gitloom-embed` does on its own.
    let options = EngineOptions {
        embedder: if all_arms {
            EmbedderChoice::Given(Arc::new(Hashing))
        } else {
            EmbedderChoice::None
        },
        ..Default::default()
    };
    let mut engine = Engine::init_with(dir.path(), options).expect("init");
    // `GITLOOM_BENCH_CONCURRENT_FROM=N` (or `never`): the arena size from which the
    // semantic scan runs beside the lexical arm, instead of the engine's default.
    match std::env::var("GITLOOM_BENCH_CONCURRENT_FROM").as_deref() {
        Ok("never") => engine.set_concurrent_arms_from(usize::MAX),
        Ok(n) => engine.set_concurrent_arms_from(n.parse().expect("a row count or `never`")),
        Err(_) => {}
    }
    let files = gitloom_synth::corpus(n, 42);

    let t = Instant::now();
    engine
        .write_batch(to_batch(&files), format!("import: {n} synthetic"), None)
        .expect("import");
    let import_s = t.elapsed().as_secs_f64();

    let mut rebuild = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        engine.rebuild().expect("rebuild");
        rebuild.push(t.elapsed().as_secs_f64() * 1e3);
    }

    let mut sync_ms = Vec::new();
    let mut visited = Vec::new();
    // `GITLOOM_BENCH_SYNC_ROUNDS=N`: N incremental syncs of 50 edits (default 5); more
    // shows how the full-text index's segments grow over a store's life.
    let rounds: u32 = std::env::var("GITLOOM_BENCH_SYNC_ROUNDS")
        .map(|v| v.parse().expect("a number of rounds"))
        .unwrap_or(5);
    for round in 0..rounds {
        let edits = gitloom_synth::edits(&files, 50, 1000 + u64::from(round), round + 1);
        let batch = Batch {
            changes: to_batch(&edits),
            message: format!("bench: 50 edits, round {round}"),
            time: None,
            allow_dirty_overwrite: false,
            base: None,
        };
        engine.store().commit(&batch).expect("commit");
        let t = Instant::now();
        let report = engine.sync().expect("sync");
        sync_ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(report.changed_files, 50);
        visited.push(report.visited_entries as f64);
    }

    let queries = gitloom_synth::queries(300, 7);
    // One pass to warm the arena and the caches, then the measured one. By default the
    // warm-up asks the measured queries themselves; `GITLOOM_BENCH_WARM_SEED=N` warms
    // with 300 other queries (seed N), so that what is kept per query or per term
    // (document frequencies, term walks) is partly cold in the measured pass.
    let warm = match std::env::var("GITLOOM_BENCH_WARM_SEED") {
        Ok(seed) => gitloom_synth::queries(300, seed.parse().expect("a seed")),
        Err(_) => queries.clone(),
    };
    for q in &warm {
        engine
            .retrieve(&RetrieveRequest::new(q.as_str()))
            .expect("retrieve");
    }
    let mut total = Vec::new();
    let mut stages: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for q in &queries {
        let r = engine
            .retrieve(&RetrieveRequest::new(q.as_str()))
            .expect("retrieve");
        let embed = r.timings_ms.get("embed_query").copied().unwrap_or(0.0);
        total.push(r.timings_ms["total"] - embed);
        for (stage, ms) in &r.timings_ms {
            stages.entry(stage.clone()).or_default().push(*ms);
        }
    }
    println!(
        "| {n} | {} | {import_s:.1} s | {:.0} ms | {:.1} ms | {:.0} | {:.2} ms | {:.2} ms |",
        if all_arms { "all" } else { "no semantic" },
        median(&mut rebuild),
        median(&mut sync_ms),
        median(&mut visited),
        median(&mut total),
        pct(&mut total, 0.95),
    );
    let parts: Vec<String> = stages
        .iter_mut()
        .filter(|(k, _)| k.as_str() != "total")
        .map(|(k, v)| format!("{k} {:.2}", median(v)))
        .collect();
    println!("|  | stage p50s (ms): {} |", parts.join(", "));
    // `GITLOOM_BENCH_AB=never,0`: after the table, every query is retrieved once under
    // each of the two concurrency settings, in alternating order, for
    // `GITLOOM_BENCH_AB_PASSES` passes (default 3): the two settings are measured at
    // the same moments, under the same load, and their answers compared.
    if let Ok(ab) = std::env::var("GITLOOM_BENCH_AB") {
        let settings: Vec<(String, usize)> = ab
            .split(',')
            .map(|v| {
                let rows = if v == "never" {
                    usize::MAX
                } else {
                    v.parse().expect("a row count or `never`")
                };
                (v.to_owned(), rows)
            })
            .collect();
        assert_eq!(settings.len(), 2, "GITLOOM_BENCH_AB takes two settings");
        let passes: usize = std::env::var("GITLOOM_BENCH_AB_PASSES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3);
        let mut totals = [Vec::new(), Vec::new()];
        let mut differing = 0;
        let mut i = 0usize;
        for _ in 0..passes {
            for q in &queries {
                let mut answers = Vec::new();
                for k in [i % 2, (i + 1) % 2] {
                    engine.set_concurrent_arms_from(settings[k].1);
                    let r = engine
                        .retrieve(&RetrieveRequest::new(q.as_str()))
                        .expect("retrieve");
                    let t = &r.timings_ms;
                    let embed = t.get("embed_query").copied().unwrap_or(0.0);
                    totals[k].push(t["total"] - embed);
                    let hits: Vec<String> = r
                        .hits
                        .iter()
                        .map(|h| serde_json::to_string(h).expect("a hit serialises"))
                        .collect();
                    answers.push(hits);
                }
                differing += usize::from(answers[0] != answers[1]);
                i += 1;
            }
        }
        for (k, (name, _)) in settings.iter().enumerate() {
            println!(
                "|  | concurrent from {name}: retrieve p50 {:.2} ms, p95 {:.2} ms ({} retrieves) |",
                median(&mut totals[k]),
                pct(&mut totals[k], 0.95),
                totals[k].len()
            );
        }
        println!("|  | answers differing between the two: {differing} of {i} |");
    }
    // `GITLOOM_BENCH_DUMP=FILE`: every query retrieved once more with `explain`, one
    // JSON line each (timings and build left out), so that two builds' answers can be
    // compared line by line.
    if let Ok(path) = std::env::var("GITLOOM_BENCH_DUMP") {
        dump_answers(&engine, &queries, &path);
    }
    // For a profiler: `GITLOOM_BENCH_PROFILE_PASSES=N` runs N more passes over the
    // queries after the table, announced on stderr with the process id so that
    // `perf record -p` can attach to the warm read path alone.
    let passes: usize = std::env::var("GITLOOM_BENCH_PROFILE_PASSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if passes > 0 {
        eprintln!("profile passes: pid {}", std::process::id());
        std::thread::sleep(std::time::Duration::from_secs(3));
        for _ in 0..passes {
            for q in &queries {
                engine
                    .retrieve(&RetrieveRequest::new(q.as_str()))
                    .expect("retrieve");
            }
        }
        eprintln!("profile passes: done");
    }
}

/// Writes each query's retrieval with `explain` (hits, scores, arms, the judge's
/// record), without `timings_ms` and `build`, one JSON line per query.
fn dump_answers(engine: &Engine, queries: &[String], path: &str) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("dump file"));
    for q in queries {
        let mut req = RetrieveRequest::new(q.as_str());
        req.explain = true;
        let r = engine.retrieve(&req).expect("retrieve");
        let mut v = serde_json::to_value(&r).expect("a retrieval serialises");
        if let Some(o) = v.as_object_mut() {
            o.remove("timings_ms");
            o.remove("build");
        }
        writeln!(out, "{v}").expect("dump line");
    }
}

fn main() {
    // `cargo test --benches` runs bench binaries with `--bench` absent; keep that instant.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let sizes: Vec<usize> = std::env::var("GITLOOM_BENCH_SIZES")
        .unwrap_or_else(|_| "10000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let all_arms = std::env::var("GITLOOM_BENCH_ARMS").is_ok_and(|v| v == "all");
    println!(
        "| memories | arms | import (one commit) | full rebuild p50 | sync of 50 changed p50 | entries visited | retrieve p50 (no query embedding) | retrieve p95 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for n in sizes {
        bench_size(n, all_arms);
    }
}
