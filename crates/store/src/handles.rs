//! Repository handles kept between calls, each with a cache of decoded objects.
//!
//! A store's objects are mostly loose (one zlib stream per file), and a write reads
//! the same few of them several times: the tip commit, the root and topic trees
//! (for the path checks, the tree edit, the work-tree refresh, the index sync's tree
//! diff) and, on every read, the commit HEAD names. gix opens a fresh thread-local
//! handle, with an empty object cache, for every call; under a server's mixed load
//! the loose reads were a sixth of its CPU. A handle taken here comes back to the
//! pool when dropped, so its cache serves the next call. Objects are immutable by
//! id, so a cached object is never stale; refs are not cached (gix reads them from
//! disk on every lookup).
//!
//! Bounded: at most [`IDLE`] handles are kept per store, each caching at most
//! [`CACHE_BYTES`] of decoded objects; a handle made while all are out is dropped
//! after use. [`Pool::reset`] forgets every handle (a new object store after
//! another process changed the packs).

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

/// Handles kept idle per store: a writer and a reader or two at once.
const IDLE: usize = 3;

/// The object cache of one handle: a topic tree of a few hundred memories is tens of
/// kilobytes decoded, a memory a few; this holds a write's working set many times.
const CACHE_BYTES: usize = 1 << 20;

/// The idle handles of one store, and the generation they belong to.
#[derive(Default)]
pub(crate) struct Pool {
    idle: Mutex<(u64, Vec<gix::Repository>)>,
}

impl Pool {
    /// A handle of `shared`: an idle one if there is one, else a new one.
    pub fn take<'a>(&'a self, shared: &gix::ThreadSafeRepository) -> Handle<'a> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let generation = idle.0;
        let repo = idle.1.pop().unwrap_or_else(|| {
            let mut repo = shared.to_thread_local();
            repo.object_cache_size_if_unset(CACHE_BYTES);
            repo
        });
        Handle {
            pool: self,
            generation,
            repo: Some(repo),
        }
    }

    /// Drops every idle handle; handles out now are dropped when they come back.
    pub fn reset(&self) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        idle.0 += 1;
        idle.1.clear();
    }

    fn give_back(&self, generation: u64, repo: gix::Repository) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.0 == generation && idle.1.len() < IDLE {
            idle.1.push(repo);
        }
    }
}

/// A repository handle on loan from a [`Pool`]; used as a `gix::Repository`.
pub(crate) struct Handle<'a> {
    pool: &'a Pool,
    generation: u64,
    repo: Option<gix::Repository>,
}

impl Deref for Handle<'_> {
    type Target = gix::Repository;

    fn deref(&self) -> &gix::Repository {
        // Present from `take` until `drop`.
        self.repo.as_ref().expect("a handle holds its repository")
    }
}

impl DerefMut for Handle<'_> {
    fn deref_mut(&mut self) -> &mut gix::Repository {
        self.repo.as_mut().expect("a handle holds its repository")
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        if let Some(repo) = self.repo.take() {
            self.pool.give_back(self.generation, repo);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_come_back_and_a_reset_forgets_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let shared = gix::ThreadSafeRepository::init(
            dir.path(),
            gix::create::Kind::Bare,
            Default::default(),
        )
        .expect("init");
        let pool = Pool::default();
        let count = |p: &Pool| p.idle.lock().map(|i| i.1.len()).unwrap_or(0);
        {
            let a = pool.take(&shared);
            let b = pool.take(&shared);
            assert!(a.objects.has_object_cache(), "a new handle caches objects");
            drop((a, b));
        }
        assert_eq!(count(&pool), 2, "both came back");
        let held: Vec<Handle<'_>> = (0..IDLE + 2).map(|_| pool.take(&shared)).collect();
        drop(held);
        assert_eq!(count(&pool), IDLE, "no more than IDLE are kept");
        let out = pool.take(&shared);
        pool.reset();
        assert_eq!(count(&pool), 0);
        drop(out);
        assert_eq!(
            count(&pool),
            0,
            "a handle of an older generation is dropped"
        );
    }
}
