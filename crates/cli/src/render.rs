//! Human-readable output. `--json` bypasses all of this.

use anyhow::Result;
use gitloom_engine::{
    Hit, IndexStats, Retrieval, SyncReport, TopicCount, TreeListing, WriteOutcome,
};
use serde_json::Value;

/// `println!` that reports a closed stdout (`gitloom … | head`) as an error for
/// `main` to end quietly on, instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}
pub(crate) use outln;

fn short(commit: &str) -> &str {
    &commit[..12.min(commit.len())]
}

pub fn write_outcome(out: &WriteOutcome, json: bool) -> Result<()> {
    if json {
        return crate::print_json(out);
    }
    match &out.commit {
        Some(c) => outln!("{} {} ({} file(s))", short(c), out.message, out.paths.len())?,
        None => outln!(
            "nothing changed ({} file(s) already as given)",
            out.paths.len()
        )?,
    }
    for p in &out.paths {
        outln!("  {p}")?;
    }
    Ok(())
}

pub fn sync(r: &SyncReport, json: bool) -> Result<()> {
    if json {
        return crate::print_json(r);
    }
    outln!(
        "{} sync to {}: visited {} entries, {} changed file(s), {} indexed, {} removed, {:.1} ms",
        if r.full { "full" } else { "incremental" },
        short(&r.commit),
        r.visited_entries,
        r.changed_files,
        r.upserted,
        r.removed,
        r.ms
    )?;
    for p in &r.problems {
        outln!("  not indexed: {p}")?;
    }
    Ok(())
}

/// Prints a flat `key: value` view of any serialisable record.
fn fields(v: &Value, indent: usize) -> Result<()> {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if matches!(v, Value::Object(_) | Value::Array(_)) {
                    outln!("{pad}{k}:")?;
                    fields(v, indent + 2)?;
                } else {
                    outln!("{pad}{k}: {}", scalar(v))?;
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                if let Value::Object(m) = item {
                    let line: Vec<String> = m
                        .iter()
                        .map(|(k, v)| format!("{k}={}", scalar(v)))
                        .collect();
                    outln!("{pad}- {}", line.join("  "))?;
                } else {
                    outln!("{pad}- {}", scalar(item))?;
                }
            }
        }
        _ => outln!("{pad}{}", scalar(v))?,
    }
    Ok(())
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

pub fn tree(t: &TreeListing) -> Result<()> {
    fields(&serde_json::to_value(t)?, 0)
}

pub fn topics(t: &[TopicCount]) -> Result<()> {
    fields(&serde_json::to_value(t)?, 0)
}

pub fn stats(s: &IndexStats) -> Result<()> {
    fields(&serde_json::to_value(s)?, 0)
}

pub fn hits(hits: &[Hit]) -> Result<()> {
    if hits.is_empty() {
        outln!("no hits")?;
    }
    for (i, h) in hits.iter().enumerate() {
        let arms: Vec<String> = h
            .arms
            .iter()
            .map(|(a, s)| format!("{a} #{} ({:.3})", s.rank, s.score))
            .collect();
        outln!("{:>2}. {}  {}", i + 1, h.path, h.title)?;
        let section = h
            .section
            .as_ref()
            .map(|s| format!("  § {} (lines {}-{})", s.heading, s.start_line, s.end_line))
            .unwrap_or_default();
        let said = h
            .matched_said
            .as_ref()
            .map(|m| format!("  (bodies: what {m} said)"))
            .unwrap_or_default();
        outln!(
            "    score {:.4}  via {}{section}{said}",
            h.score,
            arms.join(", ")
        )?;
        if !h.snippet.is_empty() {
            outln!("    {}", h.snippet.replace('\n', " "))?;
        }
    }
    Ok(())
}

pub fn retrieval(r: &Retrieval) -> Result<()> {
    if r.abstained {
        match &r.abstention {
            Some(why) => outln!("no evidence for {:?}: {why}", r.query)?,
            None => outln!("no evidence for {:?}", r.query)?,
        }
    } else {
        hits(&r.hits)?;
    }
    if let Some(explain) = &r.explain {
        for arm in explain {
            outln!("arm {}: {} candidate(s)", arm.arm, arm.candidates.len())?;
            for (path, score) in arm.candidates.iter().take(20) {
                outln!("    {score:>9.4}  {path}")?;
            }
        }
        let t: Vec<String> = r
            .timings_ms
            .iter()
            .map(|(k, v)| format!("{k} {v:.2} ms"))
            .collect();
        outln!("timings: {}", t.join(", "))?;
    }
    Ok(())
}
