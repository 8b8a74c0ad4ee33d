//! The workspace's Rust sources hold no control characters. A pattern once carried a
//! literal backspace where `\b` (a word boundary) was meant, inside a raw string: it
//! compiled, matched nothing, and a cue it guarded was never written.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "target") {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_source_file_holds_a_control_character() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/ above this crate")
        .to_path_buf();
    let mut files = Vec::new();
    rust_files(&crates, &mut files);
    assert!(
        files.len() > 50,
        "found only {} sources under {crates:?}",
        files.len()
    );
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable UTF-8 source");
        for (n, line) in text.lines().enumerate() {
            if line.chars().any(|c| c.is_control() && c != '\t') {
                bad.push(format!("{}:{}", f.display(), n + 1));
            }
        }
    }
    assert!(bad.is_empty(), "control characters in: {bad:?}");
}
