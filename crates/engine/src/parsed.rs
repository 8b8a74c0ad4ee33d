//! The memories a write parsed to validate them, kept for the sync that indexes them.
//!
//! A write parses every memory it commits (to refuse a broken one), and the index
//! sync after it reads the same files back and parses them again: for an offline
//! ingestion, every memory of the run was parsed twice (the second parse 6 % of its
//! CPU, profiled). [`Memory::parse`] depends on the path and the bytes alone, so an
//! entry is looked up by both and is never stale. An entry leaves when it is taken
//! (a sync reads each changed file once; a second read parses, as before), so a
//! store that writes and syncs holds next to nothing between writes. What is never
//! taken (a file written again before any sync read it) is bounded by [`BYTES`]:
//! past it, everything held is dropped and later reads parse.

use std::collections::HashMap;
use std::sync::Mutex;

use gitloom_model::Memory;

/// What the kept memories' files may hold in all: a run of a few thousand memories.
const BYTES: usize = 8 << 20;

#[derive(Default)]
pub(crate) struct Parsed {
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    /// By the file's bytes: the path it was parsed at, and what it parsed to.
    by_bytes: HashMap<Vec<u8>, (String, Memory)>,
    bytes: usize,
}

impl Parsed {
    /// Keeps `memory` as what `bytes` parse to at `path`.
    pub(crate) fn keep(&self, path: &str, bytes: Vec<u8>, memory: Memory) {
        let mut k = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if k.bytes + bytes.len() > BYTES {
            k.by_bytes.clear();
            k.bytes = 0;
        }
        let len = bytes.len();
        // The same bytes kept again (at this path or another) replace the entry and
        // are counted once.
        if k.by_bytes
            .insert(bytes, (path.to_owned(), memory))
            .is_none()
        {
            k.bytes += len;
        }
    }

    /// What `bytes` parse to at `path`, if a write parsed them lately and no read
    /// took it since; it leaves.
    pub(crate) fn take(&self, path: &str, bytes: &[u8]) -> Option<Memory> {
        let mut k = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if k.by_bytes.get(bytes).is_none_or(|(p, _)| p != path) {
            return None;
        }
        let (_, memory) = k.by_bytes.remove(bytes)?;
        k.bytes -= bytes.len();
        Some(memory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(path: &str, bytes: &[u8]) -> Memory {
        Memory::parse(path, bytes).expect("a valid memory")
    }

    #[test]
    fn a_kept_memory_is_taken_once_and_only_at_its_path() {
        let kept = Parsed::default();
        let bytes = b"---\ntitle: Marit\n---\nMarit lives in Porto.\n".to_vec();
        let path = "facts/people/marit.md";
        kept.keep(path, bytes.clone(), parse(path, &bytes));
        assert!(kept.take("facts/people/other.md", &bytes).is_none());
        assert_eq!(kept.take(path, &bytes), Some(parse(path, &bytes)));
        assert!(kept.take(path, &bytes).is_none(), "a read takes it");
        let k = kept.inner.lock().expect("lock");
        assert_eq!((k.bytes, k.by_bytes.len()), (0, 0));
    }

    #[test]
    fn what_is_never_taken_stays_within_its_bound() {
        let kept = Parsed::default();
        let path = "facts/misc/big.md";
        let body = "x".repeat(BYTES / 10);
        for n in 0..12 {
            let bytes = format!("---\ntitle: t{n}\n---\n{body}\n").into_bytes();
            let memory = parse(path, &bytes);
            kept.keep(path, bytes, memory);
            let k = kept.inner.lock().expect("lock");
            assert!(k.bytes <= BYTES);
            assert_eq!(k.bytes, k.by_bytes.keys().map(Vec::len).sum::<usize>());
        }
        let last = format!("---\ntitle: t11\n---\n{body}\n").into_bytes();
        assert!(kept.take(path, &last).is_some(), "the newest stays");
    }
}
