//! Every memory of the shared probe corpus parses, and a rewrite is a fixed point.

use std::path::{Path, PathBuf};

use gitloom_model::{Memory, StorePath};

fn probe_memories() -> Option<PathBuf> {
    let shared = std::env::var_os("GITLOOM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let dir = shared.join("data/probe/memories");
    // Under CI missing data fails the test rather than letting it pass unchecked.
    assert!(
        dir.is_dir() || std::env::var_os("CI").is_none(),
        "test data {} is missing (set GITLOOM_SHARED to the folder holding data/)",
        dir.display()
    );
    dir.is_dir().then_some(dir)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[test]
fn every_probe_memory_parses_and_round_trips() {
    let Some(root) = probe_memories() else {
        eprintln!("skipped: shared/data/probe not found beside the checkout");
        return;
    };
    let mut files = Vec::new();
    walk(&root, &mut files);
    assert_eq!(files.len(), 42);
    let mut with_sections = 0;
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .expect("below root")
            .to_string_lossy()
            .into_owned();
        StorePath::parse(&rel).expect("probe paths are store paths");
        let bytes = std::fs::read(&f).expect("readable");
        let m = Memory::parse(&rel, &bytes).unwrap_or_else(|e| panic!("{e}"));
        with_sections += usize::from(!m.sections().is_empty());
        let again =
            Memory::parse(&rel, m.render().as_bytes()).unwrap_or_else(|e| panic!("rendered: {e}"));
        assert_eq!(again.front, m.front, "{rel}");
    }
    let _ = with_sections;
}
