//! The blobs this process wrote lately, by id.
//!
//! An index sync reads back the very files the commit before it wrote: for an
//! ingestion, every memory of the run, each read from the object database by opening
//! and inflating its loose object (a twelfth of an offline ingestion's CPU, profiled).
//! The commit has the bytes at hand, so it leaves them here and [`Store::read_blob`]
//! takes them from here first. A blob is named by the hash of its bytes, so an entry
//! is never stale. An entry leaves when it is read (the sync reads each changed file
//! once; a second read goes to the object database, as before), so a store that
//! writes and syncs holds next to nothing between writes, however many namespaces a
//! server keeps open. Bounded by [`BYTES`] for what is never read back (transcripts);
//! the oldest entries go first.
//!
//! [`Store::read_blob`]: crate::Store::read_blob

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use gix::ObjectId;

/// What the recent blobs may hold in all: a run of a few thousand memories.
const BYTES: usize = 8 << 20;

#[derive(Default)]
pub(crate) struct Written {
    inner: Mutex<Recent>,
}

#[derive(Default)]
struct Recent {
    blobs: HashMap<ObjectId, Vec<u8>>,
    order: VecDeque<ObjectId>,
    bytes: usize,
}

impl Written {
    /// Keeps `bytes` as the content of `id` (a blob just written).
    pub fn keep(&self, id: ObjectId, bytes: &[u8]) {
        if bytes.len() > BYTES / 4 {
            return;
        }
        let mut r = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if r.blobs.contains_key(&id) {
            return;
        }
        r.bytes += bytes.len();
        r.blobs.insert(id, bytes.to_vec());
        r.order.push_back(id);
        while r.bytes > BYTES {
            let Some(old) = r.order.pop_front() else {
                break;
            };
            if let Some(b) = r.blobs.remove(&old) {
                r.bytes -= b.len();
            }
        }
    }

    /// The content of `id`, if it was written lately and not read since; it leaves.
    pub fn take(&self, id: ObjectId) -> Option<Vec<u8>> {
        let mut r = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = r.blobs.remove(&id)?;
        r.bytes -= bytes.len();
        // The id stays in `order` until eviction passes it or this compaction does,
        // so a take costs O(1) amortised and `order` never outgrows `blobs` by much.
        if r.order.len() > 2 * r.blobs.len() + 64 {
            let Recent { blobs, order, .. } = &mut *r;
            order.retain(|o| blobs.contains_key(o));
        }
        Some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    #[test]
    fn keeps_the_latest_within_its_bound() {
        let w = Written::default();
        w.keep(id(1), b"one");
        assert_eq!(w.take(id(1)).as_deref(), Some(&b"one"[..]));
        assert!(w.take(id(1)).is_none(), "a read takes it");
        assert!(w.take(id(2)).is_none());
        w.keep(id(1), b"one");
        let big = vec![7u8; BYTES / 4];
        for n in 2..=6 {
            w.keep(id(n), &big);
        }
        {
            let r = w.inner.lock().expect("lock");
            assert!(r.bytes <= BYTES && r.blobs.len() == r.order.len());
        }
        assert!(w.take(id(1)).is_none(), "the oldest went first");
        assert!(w.take(id(2)).is_none());
        assert!(w.take(id(6)).is_some(), "the newest stays");
        let r = w.inner.lock().expect("lock");
        assert_eq!(r.bytes, 3 * (BYTES / 4), "what was taken no longer counts");
        assert!(r.order.len() <= 2 * r.blobs.len() + 64);
    }

    #[test]
    fn a_store_that_writes_and_reads_back_holds_nothing_between_writes() {
        let w = Written::default();
        for n in 0..=255u8 {
            w.keep(id(n), b"a memory");
            assert!(w.take(id(n)).is_some());
        }
        let r = w.inner.lock().expect("lock");
        assert_eq!((r.bytes, r.blobs.len()), (0, 0));
        assert!(r.order.len() <= 64, "{} ids left behind", r.order.len());
    }
}
