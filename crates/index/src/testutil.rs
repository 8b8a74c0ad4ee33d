//! Helpers for tests (here and in the engine): build [`IndexedFile`]s from text.

use gitloom_model::{Memory, StorePath};

use crate::{IndexedFile, Problem};

/// Parses `text` as the memory at `path`; the blob id is a hash of the text.
pub fn indexed(path: &str, text: &str) -> Result<IndexedFile, Problem> {
    let problem = |message: String| Problem {
        path: path.to_owned(),
        message,
    };
    let sp = StorePath::parse(path).map_err(|e| problem(e.to_string()))?;
    let memory = Memory::parse(path, text.as_bytes()).map_err(|e| problem(e.to_string()))?;
    Ok(IndexedFile {
        path: sp,
        blob: fake_blob(text),
        memory,
        said: Vec::new(),
    })
}

/// A minimal memory file.
pub fn memory_text(title: &str, cues: &[&str], body: &str) -> String {
    let mut s = format!("---\ntitle: {}\n", yaml_str(title));
    if !cues.is_empty() {
        s.push_str("cues:\n");
        for c in cues {
            s.push_str(&format!("  - {}\n", yaml_str(c)));
        }
    }
    s.push_str("---\n");
    s.push_str(body);
    s
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A deterministic 40-hex pseudo blob id (FNV-1a, not git's SHA-1).
pub fn fake_blob(text: &str) -> String {
    let mut out = String::with_capacity(40);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for round in 0..3u64 {
        for b in text.bytes().chain(round.to_le_bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out.truncate(40);
    out
}
