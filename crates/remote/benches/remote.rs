//! Object-storage benchmarks on loopback: cold start of a 10k-memory namespace,
//! the per-operation cost of revalidation on a warm node, and write throughput on
//! one namespace versus across namespaces.
//!
//! Needs an S3 server: `GITLOOM_TEST_S3=http://127.0.0.1:8333` (+ `GITLOOM_TEST_S3_BUCKET`,
//! default gitloom-test, and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), e.g. SeaweedFS
//! `weed mini`. `cargo bench -p gitloom-remote --bench remote`
//! (size: `GITLOOM_BENCH_SIZE=10000`). Hand-written harness for the same reason as
//! `crates/engine/benches`: expensive setup, medians of a handful of runs.

use std::time::Instant;

use gitloom_engine::{EmbedderChoice, EngineOptions, RetrieveRequest};
use gitloom_model::StorePath;
use gitloom_remote::{Location, Namespace, RemoteNamespace};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn options() -> EngineOptions {
    EngineOptions {
        embedder: EmbedderChoice::None,
        ..Default::default()
    }
}

fn open(location: &Location, ns: &str, cache: &std::path::Path) -> RemoteNamespace {
    RemoteNamespace::open(
        location,
        Namespace::parse(ns).expect("ns"),
        cache,
        options(),
    )
    .expect("open")
}

fn memory(i: usize) -> Vec<u8> {
    format!("---\ntitle: Bench fact {i}\n---\nA benchmark fact numbered {i}.\n").into_bytes()
}

fn main() {
    let Ok(endpoint) = std::env::var("GITLOOM_TEST_S3") else {
        eprintln!("skipped: GITLOOM_TEST_S3 is not set (no S3 server to measure against)");
        return;
    };
    let bucket =
        std::env::var("GITLOOM_TEST_S3_BUCKET").unwrap_or_else(|_| "gitloom-test".to_owned());
    let n: usize = std::env::var("GITLOOM_BENCH_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let run = format!("bench-{:x}", std::process::id());
    let url = format!("s3://{bucket}/{run}");
    if std::env::var_os("AWS_ENDPOINT_URL").is_none()
        || std::env::var_os("AWS_ALLOW_HTTP").is_none()
    {
        eprintln!("set AWS_ENDPOINT_URL={endpoint} and AWS_ALLOW_HTTP=true for a loopback server");
        return;
    }
    let location = Location::from_url(&url).expect("location");
    let dir = tempfile::tempdir().expect("tempdir");

    // Seed: one writer imports n synthetic memories as one push.
    let files = gitloom_synth::corpus(n, 42);
    let batch: Vec<(StorePath, Option<Vec<u8>>)> = files
        .iter()
        .map(|f| {
            (
                StorePath::parse(&f.path).expect("synth paths are valid"),
                Some(f.content.clone().into_bytes()),
            )
        })
        .collect();
    let writer = open(&location, "big", &dir.path().join("writer"));
    let t = Instant::now();
    let pushed = writer
        .write(|e| e.write_batch(batch.clone(), format!("import: {n} synthetic"), None))
        .expect("seed");
    println!(
        "seed: {n} memories in one push: {:.1} s, pack {:.1} MB",
        t.elapsed().as_secs_f64(),
        pushed.pack_bytes as f64 / 1e6
    );

    // Cold start: a node that has never seen the namespace.
    let mut cold = Vec::new();
    let mut fetch = Vec::new();
    let mut sync = Vec::new();
    for i in 0..3 {
        let t = Instant::now();
        let node = open(&location, "big", &dir.path().join(format!("cold{i}")));
        cold.push(t.elapsed().as_secs_f64() * 1e3);
        let o = node.opening();
        let s = o.sync.as_ref().map_or(0.0, |s| s.ms);
        sync.push(s);
        fetch.push(o.ms - s);
    }
    println!(
        "cold start ({n} memories): median {:.0} ms total = {:.0} ms head+pack fetch+install + {:.0} ms index build",
        median(&mut cold),
        median(&mut fetch),
        median(&mut sync)
    );

    // Warm revalidation: the head did not move (one conditional GET, 304).
    let warm = open(&location, "big", &dir.path().join("warm"));
    let req = RetrieveRequest::new("where does the user work").with_limit(10);
    warm.engine().retrieve(&req).expect("warm up");
    let mut reval = Vec::new();
    let mut plain = Vec::new();
    let mut both = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        warm.revalidate().expect("revalidate");
        reval.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        warm.engine().retrieve(&req).expect("retrieve");
        plain.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        warm.revalidate().expect("revalidate");
        warm.engine().retrieve(&req).expect("retrieve");
        both.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "warm revalidation (unchanged head): median {:.2} ms; retrieve {:.2} ms alone, {:.2} ms with revalidation",
        median(&mut reval),
        median(&mut plain),
        median(&mut both)
    );

    // Catching up one write made elsewhere: conditional GET + one small pack + incremental sync.
    let mut catch = Vec::new();
    for i in 0..20 {
        let content = memory(i);
        writer
            .write(|e| e.write(&format!("facts/catch{i}.md"), &content, None))
            .expect("write");
        let t = Instant::now();
        let r = warm.revalidate().expect("revalidate");
        catch.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(r.fetched_packs, 1);
    }
    println!(
        "warm node catching up one remote write: median {:.1} ms",
        median(&mut catch)
    );

    // Write throughput: W writers on one namespace (each its own node) vs W namespaces.
    let writes_each = 10;
    for w in [1usize, 4] {
        for shared in [true, false] {
            let nodes: Vec<RemoteNamespace> = (0..w)
                .map(|k| {
                    let ns = if shared {
                        format!("tp-one-{w}")
                    } else {
                        format!("tp-many-{w}-{k}")
                    };
                    open(
                        &location,
                        &ns,
                        &dir.path().join(format!("tp-{w}-{shared}-{k}")),
                    )
                })
                .collect();
            // Warm-up: each namespace's first push also makes its first commit.
            for (k, node) in nodes.iter().enumerate() {
                let content = memory(900_000 + k);
                node.write(|e| e.write(&format!("facts/warm{k}.md"), &content, None))
                    .expect("warm-up write");
            }
            let t = Instant::now();
            let attempts: u32 = std::thread::scope(|s| {
                let hs: Vec<_> = nodes
                    .iter()
                    .enumerate()
                    .map(|(k, node)| {
                        s.spawn(move || {
                            let mut attempts = 0;
                            for i in 0..writes_each {
                                let content = memory(k * 1000 + i);
                                let p = node
                                    .write(|e| {
                                        e.write(&format!("facts/w{k}-{i}.md"), &content, None)
                                    })
                                    .expect("write");
                                attempts += p.attempts;
                            }
                            attempts
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().expect("thread")).sum()
            });
            let secs = t.elapsed().as_secs_f64();
            let total = w * writes_each;
            println!(
                "writes: {w} writer(s) on {}: {:.1} acknowledged writes/s ({total} writes, {:.2} attempts per write)",
                if shared {
                    "one namespace"
                } else {
                    "separate namespaces"
                },
                total as f64 / secs,
                f64::from(attempts) / total as f64
            );
        }
    }
}
