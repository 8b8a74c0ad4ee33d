//! The bodies of the fuzz targets, shared by the libFuzzer entry points
//! (`fuzz_targets/`) and the stable corpus replay (`src/check.rs`). Each asserts
//! the properties that must hold for *any* input, so a violation is a crash.
#![forbid(unsafe_code)]

use std::cell::RefCell;

use gitloom_index::{Index, LexicalQuery, SyncBatch, match_strings, testutil};
use gitloom_model::{Memory, StorePath, is_committable};

/// Any bytes: parse never panics; what parses renders to a file that parses back
/// to the same frontmatter and body, and renders identically again (fixed point).
pub fn memory_parse(data: &[u8]) {
    let Ok(m) = Memory::parse("facts/fuzz/x.md", data) else {
        return;
    };
    let _ = m.sections();
    let _ = m.wikilinks();
    let out = m.render();
    let again = match Memory::parse("facts/fuzz/x.md", out.as_bytes()) {
        Ok(a) => a,
        Err(e) => panic!("rendered memory does not parse: {e}\n{out}"),
    };
    assert_eq!(
        again.front, m.front,
        "frontmatter changed in a round trip:\n{out}"
    );
    assert_eq!(again.render(), out, "render is not a fixed point");
}

/// Any string: a path that validates is relative, stays inside the store, names a
/// markdown file in one of the areas, is committable, and validates again as itself.
pub fn store_path(data: &[u8]) {
    let Ok(p) = StorePath::from_bytes(data) else {
        return;
    };
    let s = p.as_str();
    assert!(
        !s.starts_with('/') && !s.contains('\\') && !s.contains('\0'),
        "{s:?}"
    );
    assert!(
        s.split('/').all(|c| !c.is_empty() && c != "." && c != ".."),
        "{s:?}"
    );
    assert!(!s.chars().any(char::is_control), "{s:?}");
    assert!(s.ends_with(".md"), "{s:?}");
    assert!(is_committable(s), "{s:?} validates but is not committable");
    assert_eq!(StorePath::parse(s).as_ref(), Ok(&p));
    let _ = (p.area(), p.tier(), p.topic(), p.slug());
}

thread_local! {
    static INDEX: RefCell<Option<Index>> = const { RefCell::new(None) };
}

fn with_index(f: impl FnOnce(&Index)) {
    INDEX.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut idx = Index::open_in_memory().expect("in-memory index");
            let mut batch = SyncBatch {
                commit: "c".into(),
                tree: "t".into(),
                full: true,
                ..SyncBatch::default()
            };
            for (p, title, body) in [
                (
                    "facts/work/orbital.md",
                    "Works at Orbital AI",
                    "ML engineer; reports to Lena.",
                ),
                (
                    "facts/people/lena.md",
                    "Lena Fischer",
                    "Manager at Orbital AI, \"quoted\" NEAR(x).",
                ),
                (
                    "rules/style/tabs.md",
                    "Tabs not spaces",
                    "Always indent with tabs * ^ -x OR y.",
                ),
            ] {
                batch.upserted.push(
                    testutil::indexed(p, &testutil::memory_text(title, &["where do I work"], body))
                        .expect("seed memory"),
                );
            }
            idx.apply(&batch).expect("seed index");
            *slot = Some(idx);
        }
        f(slot.as_ref().expect("set above"));
    });
}

/// Any text as a query: the MATCH strings built from it are valid FTS5 (quoted
/// terms only: no injection), and the lexical arm answers without an error.
pub fn query(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some((all, any)) = match_strings(text) {
        for m in [&all, &any] {
            assert!(!m.is_empty());
        }
    }
    with_index(|idx| {
        let q = LexicalQuery {
            text: text.to_owned(),
            limit: 10,
            tier: None,
            topic: None,
            decorate: None,
        };
        if let Err(e) = idx.lexical(&q) {
            panic!("query {text:?} failed: {e}");
        }
    });
}
