//! Human-readable output. `--json` bypasses all of this.

use anyhow::Result;
use gitloom_engine::{
    Hit, IndexStats, Retrieval, SyncReport, TopicCount, TreeListing, WriteOutcome,
};
use serde_json::Value;

pub fn write_outcome(out: &WriteOutcome, json: bool) -> Result<()> {
    if json {
        return crate::print_json(out);
    }
    match &out.commit {
        Some(c) => println!(
            "{} {} ({} file(s))",
            &c[..12.min(c.len())],
            out.message,
            out.paths.len()
        ),
        None => println!(
            "nothing changed ({} file(s) already as given)",
            out.paths.len()
        ),
    }
    for p in &out.paths {
        println!("  {p}");
    }
    Ok(())
}

pub fn sync(r: &SyncReport, json: bool) -> Result<()> {
    if json {
        return crate::print_json(r);
    }
    println!(
        "{} sync to {}: visited {} entries, {} changed file(s), {} indexed, {} removed, {:.1} ms",
        if r.full { "full" } else { "incremental" },
        &r.commit[..12.min(r.commit.len())],
        r.visited_entries,
        r.changed_files,
        r.upserted,
        r.removed,
        r.ms
    );
    for p in &r.problems {
        println!("  not indexed: {p}");
    }
    Ok(())
}

/// Prints a flat `key: value` view of any serialisable record.
fn fields(v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match v {
                    Value::Object(_) | Value::Array(_) => {
                        println!("{pad}{k}:");
                        fields(v, indent + 2);
                    }
                    _ => println!("{pad}{k}: {}", scalar(v)),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(m) => {
                        let line: Vec<String> = m
                            .iter()
                            .map(|(k, v)| format!("{k}={}", scalar(v)))
                            .collect();
                        println!("{pad}- {}", line.join("  "));
                    }
                    _ => println!("{pad}- {}", scalar(item)),
                }
            }
        }
        _ => println!("{pad}{}", scalar(v)),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

pub fn tree(t: &TreeListing) {
    fields(&serde_json::to_value(t).unwrap_or(Value::Null), 0);
}

pub fn topics(t: &[TopicCount]) {
    fields(&serde_json::to_value(t).unwrap_or(Value::Null), 0);
}

pub fn stats(s: &IndexStats) {
    fields(&serde_json::to_value(s).unwrap_or(Value::Null), 0);
}

pub fn hits(hits: &[Hit]) {
    if hits.is_empty() {
        println!("no hits");
    }
    for (i, h) in hits.iter().enumerate() {
        let arms: Vec<String> = h
            .arms
            .iter()
            .map(|(a, s)| format!("{a} #{} ({:.3})", s.rank, s.score))
            .collect();
        println!("{:>2}. {}  {}", i + 1, h.path, h.title);
        let section = h
            .section
            .as_ref()
            .map(|s| format!("  § {} (lines {}-{})", s.heading, s.start_line, s.end_line))
            .unwrap_or_default();
        println!("    score {:.4}  via {}{section}", h.score, arms.join(", "));
        if !h.snippet.is_empty() {
            println!("    {}", h.snippet.replace('\n', " "));
        }
    }
}

pub fn retrieval(r: &Retrieval) {
    if r.abstained {
        println!(
            "no evidence for {:?}: nothing cleared the evidence floor",
            r.query
        );
    } else {
        hits(&r.hits);
    }
    if let Some(explain) = &r.explain {
        for arm in explain {
            println!("arm {}: {} candidate(s)", arm.arm, arm.candidates.len());
            for (path, score) in arm.candidates.iter().take(20) {
                println!("    {score:>9.4}  {path}");
            }
        }
        let t: Vec<String> = r
            .timings_ms
            .iter()
            .map(|(k, v)| format!("{k} {v:.2} ms"))
            .collect();
        println!("timings: {}", t.join(", "));
    }
}
