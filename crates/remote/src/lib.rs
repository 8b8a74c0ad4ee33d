//! gitloom-remote: gitloom namespaces kept in S3-compatible object storage.
//!
//! What it is for: running several stateless gitloom nodes over one bucket. Each
//! namespace is a set of immutable, content-addressed git packs
//! (`<prefix>/namespaces/<ns>/packs/<blake3>.pack`, written create-only) and one small
//! head object (`head.json`: commit, generation, writer, pack list) advanced by a
//! conditional update (`If-Match` on its ETag). A node serves a namespace from a warm
//! local mirror (a bare gitloom store in a cache directory) that it revalidates
//! against the head before each operation; a write runs locally, is pushed as a
//! pack, and wins only if the head has not moved, else it is replayed on the new head.
//! The head is only ever moved after the pack it needs is stored, so it never
//! names a missing pack.
//!
//! [`Storage`] is the seam front-ends use: `Local` (a store directory, the embedded
//! default) or `Remote`; both answer `read` and `write` with the same closures over
//! an [`Engine`].
//!
//! What it is not for: the memory engine itself (`gitloom-engine`), git plumbing
//! beyond packs (`gitloom-store`), garbage collection of packs no head lists (they
//! are harmless and left in place).
#![forbid(unsafe_code)]

mod blob;
mod error;
mod head;
mod location;
mod namespace;
mod pack;

use std::sync::OnceLock;

use gitloom_engine::Engine;

pub use blob::{Blob, BlobRead, BlobVersion};
pub use error::{RemoteError, Result, WriteError};
pub use head::{HEAD_FORMAT, Head, PackRef};
pub use location::{Location, Namespace};
pub use namespace::{
    KEEP_RECENT_PACKS, MAX_ATTEMPTS, MAX_PACKS, MIRROR_DIR, Pushed, RemoteNamespace, Revalidation,
};

/// Where a front-end's memories live.
pub enum Storage {
    /// A store directory on this machine.
    Local(Box<Engine>),
    /// A namespace in object storage, through a local mirror.
    Remote(Box<RemoteNamespace>),
}

impl Storage {
    /// Runs a read against an up-to-date engine (remote: revalidated first).
    pub fn read<T>(&self, read: impl FnOnce(&Engine) -> gitloom_engine::Result<T>) -> Result<T> {
        match self {
            Storage::Local(e) => Ok(read(e)?),
            Storage::Remote(r) => {
                r.revalidate()?;
                Ok(read(r.engine())?)
            }
        }
    }

    /// Runs a write (remote: pushed and acknowledged by the head, replayed on a lost
    /// race, so `write` must be repeatable).
    pub fn write<T>(
        &self,
        mut write: impl FnMut(&Engine) -> gitloom_engine::Result<T>,
    ) -> Result<T> {
        match self {
            Storage::Local(e) => Ok(write(e)?),
            Storage::Remote(r) => Ok(r.write(write)?.outcome),
        }
    }

    /// [`Storage::write`] for a closure with its own error type (which must be able
    /// to carry this crate's errors): an op's error reaches the caller as itself.
    pub fn write_with<T, E: From<RemoteError>>(
        &self,
        mut write: impl FnMut(&Engine) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        match self {
            Storage::Local(e) => write(e),
            Storage::Remote(r) => Ok(r.write_with(write)?.outcome),
        }
    }

    /// [`Storage::read`] with the closure's own error type.
    pub fn read_with<T, E: From<RemoteError>>(
        &self,
        read: impl FnOnce(&Engine) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        match self {
            Storage::Local(e) => read(e),
            Storage::Remote(r) => {
                r.revalidate()?;
                read(r.engine())
            }
        }
    }

    /// The engine as it stands (no revalidation).
    pub fn engine(&self) -> &Engine {
        match self {
            Storage::Local(e) => e,
            Storage::Remote(r) => r.engine(),
        }
    }
}

/// The runtime that drives object-storage requests for the blocking API.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("gitloom-remote")
            .enable_all()
            .build()
            .expect("a tokio runtime can be built")
    })
}

/// Runs a storage future to completion on the crate's runtime. Called from async
/// code on a multi-thread runtime (the HTTP server checking a key), the worker is
/// handed off first (`block_in_place`), since blocking inside a runtime would panic;
/// outside any runtime, or on a blocking thread, that is a plain call. (From a
/// current-thread runtime's async code it panics: use `spawn_blocking` there.)
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| runtime().block_on(f))
}

/// rustls needs one process-wide crypto provider for https endpoints; ring is the
/// one already in the dependency tree. Installing twice is harmless.
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
