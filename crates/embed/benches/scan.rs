//! Benchmarks: quantised arena scan vs exact f32 scan vs the naive decode-per-row scan
//! (a fresh `Vec<f32>` decoded from a little-endian blob for every row, as the old
//! engine did), embeddings per second of MiniLM and the static table, model load time.
//!
//! `GITLOOM_BENCH_VECTORS=~/.cache/gitloom/eval-vectors.db` adds the engine's call
//! against the exact f32 ranking on real MiniLM vectors (the eval harness's vector
//! cache: stored texts as rows, queries' vectors as queries): how much of the exact
//! best 200 the int8 best 200 holds.
//!
//! Runs only when `--bench` is among the arguments (`cargo bench -p gitloom-embed`), so
//! `cargo test --benches` is instant. Prints a markdown table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gitloom_embed::{Arena, Embedder, MiniLm, ScanJob, StaticTable, minilm_dir};

const DIM: usize = 384;

fn random_unit(rng: &mut fastrand::Rng) -> Vec<f32> {
    let mut v: Vec<f32> = (0..DIM)
        .map(|_| {
            let (u1, u2) = (rng.f32().max(1e-12), rng.f32());
            (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn p50(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// The exact f32 ranking: every row's cosine from its f32 vector (held contiguously),
/// the best `top_k` rows, best first.
fn exact_f32_scan(rows: &[f32], query: &[f32], top_k: usize) -> Vec<usize> {
    let mut scores: Vec<(f32, usize)> = rows
        .chunks_exact(query.len())
        .enumerate()
        .map(|(i, r)| (gitloom_embed::cosine(query, r), i))
        .collect();
    let k = top_k.min(scores.len());
    if k > 0 && k < scores.len() {
        scores.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    }
    scores.truncate(k);
    scores.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scores.into_iter().map(|x| x.1).collect()
}

/// The pre-R15 scan: decode each row's blob into a new vector, score, sort.
fn naive_blob_scan(blobs: &[Vec<u8>], query: &[f32], top_k: usize) -> Vec<(usize, f32)> {
    let mut scores: Vec<(usize, f32)> = Vec::with_capacity(blobs.len());
    for (i, b) in blobs.iter().enumerate() {
        let v: Vec<f32> = b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        scores.push((i, gitloom_embed::cosine(query, &v)));
    }
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores.truncate(top_k);
    scores
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut rows: Vec<[String; 3]> = Vec::new();
    let mut rng = fastrand::Rng::with_seed(1);
    for n in [10_000usize, 100_000] {
        let mut arena = Arena::with_capacity(DIM, n);
        let mut blobs = Vec::with_capacity(n);
        let mut floats = Vec::with_capacity(n * DIM);
        for i in 0..n {
            let v = random_unit(&mut rng);
            blobs.push(v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
            floats.extend_from_slice(&v);
            arena.push(i as u32, (i % 2) as u8, &v).expect("push");
        }
        let queries: Vec<Vec<f32>> = (0..31).map(|_| random_unit(&mut rng)).collect();
        let time = |f: &dyn Fn(&[f32])| {
            f(&queries[0]);
            p50(queries
                .iter()
                .map(|q| {
                    let t = Instant::now();
                    f(q);
                    t.elapsed()
                })
                .collect())
        };
        let quant = time(&|q| {
            std::hint::black_box(arena.scan(q, 10));
        });
        let per_kind = time(&|q| {
            std::hint::black_box(arena.scan_per_kind(q, 10));
        });
        // The engine's call (depth 50: top 200 per kind), alone and as a `ScanJob`
        // shared with a second thread kept running, as the engine's worker is. This
        // thread never waits for the helper to begin: `finish` waits only for pieces
        // the helper has claimed.
        let per_kind_200 = time(&|q| {
            std::hint::black_box(arena.scan_per_kind(q, 200));
        });
        let job_200 = time(&|q| {
            std::hint::black_box(arena.scan_job(q, 200).finish().expect("no panic"));
        });
        let shared_200 = std::thread::scope(|s| {
            let (jobs, for_helper) = std::sync::mpsc::channel::<Arc<ScanJob>>();
            s.spawn(move || {
                for job in for_helper {
                    job.help();
                }
            });
            let p = time(&|q| {
                let job = Arc::new(arena.scan_job(q, 200));
                jobs.send(job.clone()).expect("the helper runs");
                std::hint::black_box(job.finish().expect("no panic"));
            });
            drop(jobs);
            p
        });
        let exact = time(&|q| {
            std::hint::black_box(exact_f32_scan(&floats, q, 10));
        });
        let naive = time(&|q| {
            std::hint::black_box(naive_blob_scan(&blobs, q, 10));
        });
        let k = n / 1000;
        rows.push([
            format!("scan {k}k × {DIM}: int8 (top 10), p50"),
            ms(quant),
            String::new(),
        ]);
        rows.push([
            format!("scan {k}k × {DIM}: int8, per kind (2 kinds), p50"),
            ms(per_kind),
            String::new(),
        ]);
        rows.push([
            format!("scan {k}k × {DIM}: per kind, top 200 (the engine's call), p50"),
            ms(per_kind_200),
            String::new(),
        ]);
        rows.push([
            format!("scan {k}k × {DIM}: the same as a `ScanJob` done by one thread, p50"),
            ms(job_200),
            format!(
                "{:.2}× `scan_per_kind`",
                job_200.as_secs_f64() / per_kind_200.as_secs_f64()
            ),
        ]);
        rows.push([
            format!("scan {k}k × {DIM}: the same as a `ScanJob` shared by two threads, p50"),
            ms(shared_200),
            format!(
                "{:.2}× `scan_per_kind`",
                shared_200.as_secs_f64() / per_kind_200.as_secs_f64()
            ),
        ]);
        rows.push([
            format!("scan {k}k × {DIM}: exact f32 contiguous, p50"),
            ms(exact),
            format!(
                "{:.1}× the int8 scan",
                exact.as_secs_f64() / quant.as_secs_f64()
            ),
        ]);
        rows.push([
            format!("scan {k}k × {DIM}: naive blob decode per row, p50"),
            ms(naive),
            format!(
                "{:.1}× the int8 scan",
                naive.as_secs_f64() / quant.as_secs_f64()
            ),
        ]);
    }

    if let Ok(path) = std::env::var("GITLOOM_BENCH_VECTORS") {
        rows.extend(int8_on_real_vectors(&path));
    }

    let sentences: Vec<String> = (0..320)
        .map(|i| {
            format!(
                "Note {i}: the user mentioned that their sister moved to Kyoto in spring and now works as a nurse"
            )
        })
        .collect();
    let refs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let dir = minilm_dir();
    if MiniLm::is_installed(&dir) {
        let m = MiniLm::load(&dir).expect("load");
        let load = m.preload().expect("preload");
        rows.push([
            "MiniLM load (map the weights, read the tokenizer)".into(),
            ms(load),
            String::new(),
        ]);
        let t = Instant::now();
        for s in &refs[..64] {
            std::hint::black_box(m.embed(&[s]).expect("embed"));
        }
        let single = 64.0 / t.elapsed().as_secs_f64();
        rows.push([
            "MiniLM, one text per call (~20 tokens)".into(),
            format!("{single:.0} emb/s"),
            String::new(),
        ]);
        let t = Instant::now();
        for b in refs.chunks(32) {
            std::hint::black_box(m.embed(b).expect("embed"));
        }
        let batched = refs.len() as f64 / t.elapsed().as_secs_f64();
        rows.push([
            "MiniLM, batches of 32".into(),
            format!("{batched:.0} emb/s"),
            String::new(),
        ]);
    } else {
        rows.push(["MiniLM".into(), "not installed".into(), String::new()]);
    }
    match StaticTable::load(&StaticTable::default_dir()) {
        Ok(st) => {
            let v = st
                .embed(&[
                    "who pays my salary",
                    "Works at Orbital AI as an ML engineer",
                    "My cat is called Mellob",
                ])
                .expect("embed");
            let sim = |a: usize, b: usize| gitloom_embed::cosine(&v[a], &v[b]);
            rows.push([
                "static table: cos(salary, work) / cos(salary, cat)".into(),
                format!("{:.3} / {:.3}", sim(0, 1), sim(0, 2)),
                "MiniLM: 0.215 / 0.082".into(),
            ]);
            let short: Vec<String> = (0..200_000)
                .map(|i| format!("sister lives in kyoto {}", i % 977))
                .collect();
            let short: Vec<&str> = short.iter().map(String::as_str).collect();
            let t = Instant::now();
            for b in short.chunks(1000) {
                std::hint::black_box(st.embed(b).expect("embed"));
            }
            let rate = short.len() as f64 / t.elapsed().as_secs_f64();
            rows.push([
                "static table, batches of 1000 short texts".into(),
                format!("{rate:.0} texts/s"),
                String::new(),
            ]);
            let t = Instant::now();
            for s in &short[..20_000] {
                std::hint::black_box(st.embed(&[s]).expect("embed"));
            }
            let rate = 20_000.0 / t.elapsed().as_secs_f64();
            rows.push([
                "static table, one short text per call".into(),
                format!("{rate:.0} texts/s"),
                String::new(),
            ]);
        }
        Err(e) => rows.push([
            "static table".into(),
            format!("not distilled ({e})"),
            String::new(),
        ]),
    }

    println!("| measure | value | ratio |");
    println!("|---|---|---|");
    for [a, b, c] in rows {
        println!("| {a} | {b} | {c} |");
    }
}

/// Vectors of one model from a vector cache file, at most `limit`, in hash order.
fn cached_vectors(db: &rusqlite::Connection, model: &str, limit: usize) -> Vec<Vec<f32>> {
    let mut st = db
        .prepare("SELECT vec FROM vectors WHERE model = ?1 ORDER BY hash LIMIT ?2")
        .expect("a vector cache");
    st.query_map(rusqlite::params![model, limit as i64], |r| {
        r.get::<_, Vec<u8>>(0)
    })
    .expect("query")
    .map(|b| {
        b.expect("row")
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
    .collect()
}

/// The engine's per-kind call (top 200) against the exact f32 ranking, over arenas of
/// real MiniLM rows (one kind): how often the int8 best 200 are the exact best 200 (as
/// a set), and how much of the exact best 200 they hold.
fn int8_on_real_vectors(path: &str) -> Vec<[String; 3]> {
    let db =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the vector cache");
    let model = "minilm-l6-v2@gt-0.1.0/384";
    let stored = cached_vectors(&db, &format!("{model}/int8"), 200_000);
    let queries = cached_vectors(&db, model, 300);
    let mut out = Vec::new();
    for n in [40_000usize, stored.len()] {
        let mut a = Arena::with_capacity(DIM, n);
        let mut floats = Vec::with_capacity(n * DIM);
        for (i, v) in stored.iter().take(n).enumerate() {
            a.push(i as u32, 0, v).expect("push");
            floats.extend_from_slice(v);
        }
        let (mut same, mut held, mut t_scan, mut t_exact) = (0, 0, Vec::new(), Vec::new());
        for q in &queries {
            let t = Instant::now();
            let got = a.scan_per_kind(q, 200);
            t_scan.push(t.elapsed());
            let t = Instant::now();
            let mut want = exact_f32_scan(&floats, q, 200);
            t_exact.push(t.elapsed());
            let mut got: Vec<usize> = got
                .get(&0)
                .map(|h| h.iter().map(|h| h.row).collect())
                .unwrap_or_default();
            got.sort_unstable();
            want.sort_unstable();
            same += usize::from(got == want);
            held += want.iter().filter(|r| got.binary_search(r).is_ok()).count();
        }
        out.push([
            format!("real MiniLM rows, {n}: top 200, int8 pass / exact f32, p50"),
            format!("{} / {}", ms(p50(t_scan)), ms(p50(t_exact))),
            format!(
                "the same 200 rows {same}/{}; {:.2} % of the exact best 200 held",
                queries.len(),
                100.0 * held as f64 / (200 * queries.len()).max(1) as f64
            ),
        ]);
    }
    out
}
