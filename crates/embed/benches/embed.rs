//! Embedding throughput of MiniLM on the texts gitloom embeds, against a reference
//! implementation of the same model run on the same texts in the same run.
//!
//! ```text
//! cargo bench -p gitloom-embed --bench embed
//! GITLOOM_BENCH_PYTHON=/tmp/ref/bin/python cargo bench -p gitloom-embed --bench embed
//! ```
//!
//! Two sets of texts: the cues and bodies of `GITLOOM_BENCH_SIZE` (default 1,000)
//! synthetic memories (what `gitloom import` embeds for them), and the user turns of
//! the first `GITLOOM_BENCH_SESSIONS` (default 300) distinct LongMemEval_S dev sessions
//! (`../shared/data/longmemeval/longmemeval_s-dev.json`, English, long; skipped when
//! the file is absent). Each is embedded three times on one thread and three times
//! on every core, at each precision (f32, and the int8 linear layers stored texts
//! run in by default); medians; GFLOP counts the linear layers' work either way. With
//! `GITLOOM_BENCH_PYTHON` naming a Python that has numpy, scipy, safetensors and
//! tokenizers, `scripts/embed_reference.py` embeds the
//! same texts (NumPy over OpenBLAS, all cores) and the table gains its rate, the ratio
//! and the largest difference between the two implementations' vectors. The first
//! line is what quantising the weights costs the first int8 job.
//!
//! Runs only when `--bench` is among the arguments, so `cargo test --benches` is instant.

use std::path::{Path, PathBuf};
use std::time::Instant;

use gitloom_embed::{Embedder, MiniLm, Precision, chunk, max_words_for_tokens, minilm_dir};
use gitloom_model::Memory;

/// FLOPs per token of MiniLM-L6's linear layers: 6 layers × 2 × (4·384² + 2·384·1536).
const FLOP_PER_TOKEN: f64 = 6.0 * 2.0 * (4.0 * 384.0 * 384.0 + 2.0 * 384.0 * 1536.0);

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Cues, and title + summary + body as one text (chunked to the window), per memory.
fn synth_texts(n: usize) -> Vec<String> {
    let max_words = max_words_for_tokens(256);
    let mut out = Vec::new();
    for f in gitloom_synth::corpus(n, 42) {
        let m = Memory::parse(&f.path, f.content.as_bytes()).expect("synthetic memories parse");
        out.extend(m.front.cues.iter().cloned());
        let text = format!(
            "{}\n{}\n{}",
            m.front.title,
            m.front.summary.clone().unwrap_or_default(),
            m.body
        );
        out.extend(chunk(&text, max_words));
    }
    out.sort();
    out.dedup();
    out
}

/// User turns of distinct LongMemEval sessions, chunked to the window.
fn longmemeval_texts(path: &Path, n: usize) -> Option<Vec<String>> {
    let bytes = std::fs::read(path).ok()?;
    let data: serde_json::Value = serde_json::from_slice(&bytes).expect("LongMemEval JSON");
    let max_words = max_words_for_tokens(256);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for q in data.as_array()? {
        for sess in q["haystack_sessions"].as_array()? {
            let text: Vec<&str> = sess
                .as_array()?
                .iter()
                .filter(|t| t["role"] == "user")
                .filter_map(|t| t["content"].as_str())
                .collect();
            let text = text.join("\n");
            if seen.len() < n && seen.insert(text.clone()) {
                out.extend(chunk(&text, max_words));
            }
        }
    }
    Some(out)
}

/// CPU seconds this process has used, all threads (`/proc/self/stat` utime + stime, in
/// clock ticks of 1/100 s): the measure that stays meaningful when other work shares
/// the cores. 0 where `/proc` is not there.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after ')'.
    (tick(11) + tick(12)) / 100.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Reference {
    rate: f64,
    cpu_rate: f64,
    max_diff: f32,
}

/// Runs `scripts/embed_reference.py` on the texts; compares its vectors with ours.
fn reference(
    python: &str,
    texts: &[String],
    ours: &[Vec<f32>],
    threads: usize,
) -> Option<Reference> {
    let dir = tempfile::tempdir().ok()?;
    let input = dir.path().join("texts.jsonl");
    let out = dir.path().join("vectors.f32");
    let lines: Vec<String> = texts
        .iter()
        .map(|t| serde_json::json!({ "text": t }).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n")).ok()?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/embed_reference.py");
    let run = std::process::Command::new(python)
        .env("OPENBLAS_NUM_THREADS", threads.to_string())
        .env("OMP_NUM_THREADS", threads.to_string())
        .arg(&script)
        .arg(&input)
        .arg("--raw-out")
        .arg(&out)
        .output()
        .ok()?;
    if !run.status.success() {
        eprintln!("reference failed: {}", String::from_utf8_lossy(&run.stderr));
        return None;
    }
    let line: serde_json::Value = serde_json::from_slice(&run.stdout).ok()?;
    let raw = std::fs::read(&out).ok()?;
    let theirs: Vec<f32> = raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let max_diff = ours
        .iter()
        .flatten()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    Some(Reference {
        rate: line["texts_per_s"].as_f64()?,
        cpu_rate: line["texts_per_cpu_s"].as_f64()?,
        max_diff,
    })
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let dir = minilm_dir();
    if !MiniLm::is_installed(&dir) {
        println!("MiniLM is not installed (gitloom model install): nothing to measure");
        return;
    }
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/longmemeval/longmemeval_s-dev.json");
    let mut sets = vec![(
        format!(
            "synthetic, {} memories",
            env_usize("GITLOOM_BENCH_SIZE", 1000)
        ),
        synth_texts(env_usize("GITLOOM_BENCH_SIZE", 1000)),
    )];
    let sessions = env_usize("GITLOOM_BENCH_SESSIONS", 300);
    match longmemeval_texts(&data, sessions) {
        Some(t) => sets.push((format!("LongMemEval, {sessions} sessions"), t)),
        None => eprintln!("{} not found: LongMemEval texts skipped", data.display()),
    }
    // What quantising the weights costs the first int8 job (once per process): the
    // first one-text job less the second, medians of three fresh loads.
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let m = MiniLm::load(&dir)
            .expect("load")
            .with_precision(Precision::Int8);
        m.preload().expect("load weights");
        for out in [&mut first, &mut second] {
            let t = Instant::now();
            m.embed(&["where do i work"]).expect("embed");
            out.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let (first, second) = (median(first), median(second));
    println!(
        "int8 weights quantised on the first int8 job: {:.1} ms (one-text job: first {first:.1} ms, then {second:.1} ms)\n",
        first - second
    );
    let python = std::env::var("GITLOOM_BENCH_PYTHON").ok();
    println!(
        "| texts | count | tokens | precision | threads | texts/s | texts per CPU-s | GFLOP per CPU-s | NumPy texts/s | NumPy texts per CPU-s | ratio per CPU-s | max abs diff |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, texts) in sets {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for (threads, precision) in [1, cores]
            .into_iter()
            .flat_map(|t| [(t, Precision::F32), (t, Precision::Int8)])
        {
            let m = MiniLm::load(&dir)
                .expect("load")
                .with_threads(threads)
                .with_precision(precision);
            m.preload().expect("load weights");
            let tokens = m.count_tokens(&refs).expect("tokenize");
            let (mut wall, mut cpu) = (Vec::new(), Vec::new());
            let mut ours = Vec::new();
            for _ in 0..3 {
                let (t, c) = (Instant::now(), cpu_seconds());
                ours = m.embed(&refs).expect("embed");
                wall.push(t.elapsed().as_secs_f64());
                cpu.push(cpu_seconds() - c);
            }
            let (secs, cpu) = (median(wall), median(cpu).max(0.01));
            // The NumPy network is f32: compared with the f32 rows only.
            let reference = python
                .as_deref()
                .filter(|_| precision == Precision::F32)
                .and_then(|p| reference(p, &texts, &ours, threads));
            let n = texts.len() as f64;
            let (r_rate, r_cpu, ratio, diff) = match &reference {
                Some(r) => (
                    format!("{:.0}", r.rate),
                    format!("{:.0}", r.cpu_rate),
                    format!("{:.2}×", n / cpu / r.cpu_rate),
                    format!("{:.1e}", r.max_diff),
                ),
                None => Default::default(),
            };
            println!(
                "| {name} | {} | {tokens} | {precision:?} | {threads} | {:.0} | {:.0} | {:.0} | {r_rate} | {r_cpu} | {ratio} | {diff} |",
                texts.len(),
                n / secs,
                n / cpu,
                tokens as f64 * FLOP_PER_TOKEN / cpu / 1e9,
            );
        }
    }
}
