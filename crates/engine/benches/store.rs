//! Store-scale benchmarks: import, full rebuild, incremental sync, lexical retrieve.
//!
//! `cargo bench -p gitloom-engine --bench store` (sizes: `GITLOOM_BENCH_SIZES=10000,100000`).
//! A hand-written harness, not criterion: each case needs a 10,000+ file store built
//! first, and what we want is the median and p95 of a handful of runs, printed as
//! one table that BENCHMARKS.md quotes.

use std::time::Instant;

use gitloom_engine::{EmbedderChoice, Engine, EngineOptions, RetrieveRequest};
use gitloom_model::StorePath;
use gitloom_store::Batch;

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

fn bench_size(n: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    // The lexical path and the store: embedding 50,000 texts would measure the model,
    // which `cargo bench -p gitloom-embed` does on its own.
    let options = EngineOptions {
        embedder: EmbedderChoice::None,
        ..Default::default()
    };
    let engine = Engine::init_with(dir.path(), options).expect("init");
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
    for round in 0..5u32 {
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
    let mut total = Vec::new();
    let mut lexical = Vec::new();
    for q in &queries {
        let r = engine
            .retrieve(&RetrieveRequest::new(q.as_str()))
            .expect("retrieve");
        total.push(r.timings_ms["total"]);
        lexical.push(r.timings_ms["lexical"]);
    }
    println!(
        "| {n} | {import_s:.1} s | {:.0} ms | {:.1} ms | {:.0} | {:.2} ms | {:.2} ms | {:.2} ms |",
        median(&mut rebuild),
        median(&mut sync_ms),
        median(&mut visited),
        median(&mut total),
        pct(&mut total, 0.95),
        median(&mut lexical)
    );
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
    println!(
        "| memories | import (one commit) | full rebuild p50 | sync of 50 changed p50 | entries visited | retrieve total p50 | retrieve total p95 | lexical arm p50 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for n in sizes {
        bench_size(n);
    }
}
