//! Offline ingestion throughput on LoCoMo conversations (BENCHMARKS.md).
//!
//! `cargo run -p gitloom-cortex --example locomo_ingest -- PATH/locomo-dev.json [RUNS]`
//!
//! Each conversation is ingested into a fresh store (real git + SQLite, no
//! embedder), every session in date order, one commit per session. Both speakers'
//! turns are `user` turns named by their speaker (LoCoMo has no assistant), so every
//! turn is extracted from and attributed. Prints turns/s per run and the median.

use std::time::Instant;

use gitloom_cortex::{IngestOptions, Message, OfflineExtractor, Session, ingest};
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};
use serde_json::Value;

fn sessions_of(conv: &Value) -> Vec<Session> {
    let c = &conv["conversation"];
    let sample = conv["sample_id"].as_str().unwrap_or("conv");
    let mut out = Vec::new();
    for n in 1..100 {
        let Some(turns) = c.get(format!("session_{n}")).and_then(Value::as_array) else {
            continue;
        };
        let when = c
            .get(format!("session_{n}_date_time"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Ok(dt) = jiff::civil::DateTime::strptime("%I:%M %p on %d %B, %Y", when.trim()) else {
            eprintln!("{sample} session {n}: unreadable date {when:?}, skipped");
            continue;
        };
        let messages = turns
            .iter()
            .map(|t| Message {
                role: "user".into(),
                name: t["speaker"].as_str().map(str::to_owned),
                content: t["text"].as_str().unwrap_or_default().to_owned(),
            })
            .collect();
        out.push(Session {
            id: format!("{sample}-s{n}"),
            date: dt.date().to_string(),
            messages,
        });
    }
    out
}

/// CPU seconds this process has used (user + system), from /proc on Linux: on a shared
/// machine wall time mostly measures the neighbours. `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: locomo_ingest PATH/locomo-dev.json [RUNS]")?;
    let runs: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(3);
    let convs: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let all: Vec<Vec<Session>> = convs.iter().map(sessions_of).collect();
    let mut rates = Vec::new();
    for run in 0..runs {
        let (mut turns, mut facts, mut memories, mut secs) = (0usize, 0usize, 0usize, 0f64);
        let cpu0 = cpu_seconds();
        for sessions in &all {
            let tmp = tempfile::tempdir()?;
            let engine = Engine::init_with(
                tmp.path(),
                EngineOptions {
                    embedder: EmbedderChoice::None,
                    ..Default::default()
                },
            )?;
            let t = Instant::now();
            let r = ingest(
                &engine,
                sessions,
                &OfflineExtractor,
                &IngestOptions::default(),
                &|_| {},
            )?;
            secs += t.elapsed().as_secs_f64();
            turns += r.turns;
            facts += r.facts;
            memories += r.new;
        }
        let rate = turns as f64 / secs;
        let cpu = cpu_seconds().zip(cpu0).map_or(f64::NAN, |(b, a)| b - a);
        println!(
            "run {run}: {turns} turns, {facts} facts, {memories} new memories in {secs:.2} s wall = {rate:.0} turns/s; {cpu:.2} s CPU = {:.0} turns/CPU-s",
            turns as f64 / cpu
        );
        rates.push(rate);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "median: {:.0} turns/s over {} conversations",
        rates[rates.len() / 2],
        all.len()
    );
    Ok(())
}
