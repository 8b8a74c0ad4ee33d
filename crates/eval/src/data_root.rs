//! Where the shared benchmark data lives: `$GITLOOM_SHARED`, else the `shared`
//! folder beside the checkout. One definition for the harness's tests and every
//! crate's data-driven tests.
//!
//! A test that needs the data calls [`data_dir`]: when the data is missing it is
//! skipped with a message, except under CI (`CI` set), where a missing data folder
//! fails the test instead of letting it pass without checking anything.

use std::path::{Path, PathBuf};

/// The shared folder (it holds `data/`).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("GITLOOM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// `data/<sub>` of the shared folder if it exists. Missing: `None` with a message on
/// stderr, or a panic under CI.
pub fn data_dir(sub: &str) -> Option<PathBuf> {
    let dir = shared_dir().join("data").join(sub);
    if dir.exists() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "test data {} is missing (set GITLOOM_SHARED to the folder holding data/)",
        dir.display()
    );
    eprintln!(
        "skipped: {} not found (set GITLOOM_SHARED to the folder holding data/)",
        dir.display()
    );
    None
}
