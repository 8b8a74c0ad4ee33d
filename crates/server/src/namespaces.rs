//! Namespaces: one store per (account, name), at `DATA/accounts/<account>/ns/<name>`,
//! or with `--storage` in object storage at `<location>/accounts/<account>/namespaces/<name>`
//! served through a mirror cached in `DATA/cache/<account>/<name>` (gitloom-remote).
//!
//! The directory is derived only from the authenticated account and a validated name
//! (`names.rs`), never from raw request text, so a request can address no other place.
//!
//! Each open namespace has several engines on the same store: a writer that every
//! write goes through at once (the engine groups the writes that arrive together
//! into one commit; the store's write lock orders commits) and a small pool of
//! readers that read ops
//! take in turn (each engine serialises its own queries on its index connection, so
//! the pool is what lets reads of one namespace run side by side). They hold
//! separate SQLite connections to the WAL-mode index, so a read never waits for a
//! write's commit or transaction; the one wait left is a read that arrives between a
//! commit and the end of its index sync, which syncs (or waits on the sync lock)
//! before answering so it never sees an index behind HEAD. Different namespaces share
//! nothing but the map below.
//!
//! In object storage the node is stateless: every op first revalidates the mirror
//! against the namespace's head (one conditional request), so a write made through
//! any node is seen by the next request to any other; a write runs on the mirror and
//! returns once the head names it (a lost race replays it on the new head). Reads
//! run on the mirror's one engine (no reader pool: see `Namespace::call`), so a
//! write in flight on this node is visible to this node's reads just before it is
//! acknowledged, and a write that then fails is rolled back on the next revalidation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use gitloom_engine::{Engine, EngineError, EngineOptions};
use gitloom_remote::{
    Location, Namespace as RemoteName, RemoteError, RemoteNamespace, Storage, WriteError,
};
use gitloom_toolkit::{Access, Context, Op, OpError};
use serde_json::Value;

use crate::names;

#[derive(Debug, thiserror::Error)]
pub enum NamespaceError {
    #[error("{0}")]
    InvalidName(String),
    #[error("no namespace {0:?}")]
    NotFound(String),
    #[error("namespace {0:?} already exists")]
    Exists(String),
    #[error("namespace {name:?}: {source}")]
    Engine {
        name: String,
        #[source]
        source: Box<EngineError>,
    },
    #[error("namespace {name:?}: {source}")]
    Storage {
        name: String,
        #[source]
        source: Box<RemoteError>,
    },
    #[error("{0}")]
    Io(String),
}

/// Why an op on a namespace failed: the op itself, or the namespace under it.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error(transparent)]
    Op(#[from] OpError),
    #[error(transparent)]
    Namespace(#[from] NamespaceError),
    #[error(transparent)]
    Storage(#[from] RemoteError),
}

impl CallError {
    /// The stable error code (`OpError::code`, or the namespace's).
    pub fn code(&self) -> &'static str {
        match self {
            CallError::Op(e) => e.code(),
            CallError::Namespace(e) => e.code(),
            CallError::Storage(e) => storage_code(e),
        }
    }
}

fn storage_code(e: &RemoteError) -> &'static str {
    match e {
        RemoteError::Contended { .. } => "contended",
        RemoteError::Storage { .. } => "storage_unavailable",
        RemoteError::NoNamespace { .. } => "namespace_not_found",
        _ => "internal",
    }
}

/// Runs a toolkit op on a single store (`gitloom mcp`, with or without `--storage`):
/// a read after revalidating, a write acknowledged by object storage's head. Blocks.
pub fn call_on(storage: &Storage, op: &Op, params: Value) -> Result<Value, CallError> {
    match op.access {
        Access::Read => storage.read_with(|e| op.call(e, params).map_err(CallError::from)),
        Access::Write => {
            storage.write_with(|e| op.call(e, params.clone()).map_err(CallError::from))
        }
    }
}

/// The context of one call from the server: the operator's limits and, for a job,
/// its cancellation flag.
pub fn context(limits: gitloom_toolkit::Limits, cancel: Option<Arc<AtomicBool>>) -> Context {
    Context {
        cancel,
        limits,
        spent: Default::default(),
    }
}

impl NamespaceError {
    pub fn code(&self) -> &'static str {
        match self {
            NamespaceError::InvalidName(_) => "invalid_name",
            NamespaceError::NotFound(_) => "namespace_not_found",
            NamespaceError::Exists(_) => "namespace_exists",
            NamespaceError::Storage { source, .. } => storage_code(source),
            NamespaceError::Engine { .. } | NamespaceError::Io(_) => "internal",
        }
    }
}

/// A local store's writer: one engine that every write of the namespace goes
/// through, concurrently, so writes that arrive together share a commit (the
/// engine's group commit). The gate lets a namespace's deletion wait for the writes
/// in flight and keeps new ones out meanwhile.
struct Writer {
    engine: Engine,
    gate: std::sync::RwLock<()>,
}

/// Where a namespace's store is.
enum Backing {
    /// A store directory.
    Local(Box<Writer>),
    /// A namespace in object storage, through its mirror (whose own lock serialises
    /// this node's writes; the head's compare-and-swap orders all nodes').
    Remote(Box<RemoteNamespace>),
}

/// An open namespace.
pub struct Namespace {
    pub name: String,
    backing: Backing,
    /// For engines a long op opens of its own.
    options: EngineOptions,
    readers: Vec<Engine>,
    next: std::sync::atomic::AtomicUsize,
}

impl Namespace {
    /// The reader engine for the next read (round robin; local namespaces only).
    fn reader(&self) -> &Engine {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        &self.readers[i % self.readers.len()]
    }

    /// Runs a toolkit op: a read on a reader engine, a write on the writer (local)
    /// or through object storage (acknowledged by the head). A long op (ingest) on
    /// a local store runs on an engine of its own, not under the writer: it commits
    /// session by session under the store's write lock, so other writes to the
    /// namespace go on meanwhile. Blocks.
    pub fn call(&self, op: &Op, params: Value, context: &Context) -> Result<Value, CallError> {
        match (&self.backing, op.access) {
            (Backing::Local(_), Access::Read) => {
                Ok(op.call_with(self.reader(), params, context)?)
            }
            (Backing::Local(writer), Access::Write) if op.long => {
                let _open = writer.gate.read().unwrap_or_else(|p| p.into_inner());
                let root = writer.engine.store().root().to_path_buf();
                let own = Engine::open_with(&root, self.options.clone()).map_err(|source| {
                    NamespaceError::Engine {
                        name: self.name.clone(),
                        source: Box::new(source),
                    }
                })?;
                Ok(op.call_with(&own, params, context)?)
            }
            (Backing::Local(writer), Access::Write) => {
                let _open = writer.gate.read().unwrap_or_else(|p| p.into_inner());
                let out = op.call_with(&writer.engine, params, context)?;
                if op.name == "gc" {
                    // A repack replaced the packs under the readers' object stores.
                    for reader in &self.readers {
                        reader
                            .store()
                            .reload_objects()
                            .map_err(|e| NamespaceError::Engine {
                                name: self.name.clone(),
                                source: Box::new(e.into()),
                            })?;
                    }
                }
                Ok(out)
            }
            (Backing::Remote(remote), Access::Read) => {
                let now = remote.revalidate().map_err(|e| self.storage_error(e))?;
                if now.commit.is_none() {
                    // Deleted through another node since this one opened it.
                    return Err(NamespaceError::NotFound(self.name.clone()).into());
                }
                // On the mirror's own engine: a second gix handle on a mirror that
                // fetches and repacks under it was seen to miss objects (in
                // `eight_writers_across_three_serve_nodes_lose_nothing`), so remote
                // namespaces have no reader pool; their reads on one node take turns.
                Ok(op.call_with(remote.engine(), params, context)?)
            }
            (Backing::Remote(remote), Access::Write) => {
                // A long op is one push too: the mirror is the unit of publication.
                let pushed = remote
                    .write_existing_with(|engine| op.call_with(engine, params.clone(), context))
                    .map_err(|e| match e {
                        WriteError::Op(e) => CallError::Op(e),
                        WriteError::NoNamespace => {
                            NamespaceError::NotFound(self.name.clone()).into()
                        }
                        WriteError::Storage(e) => self.storage_error(e).into(),
                    })?;
                Ok(pushed.outcome)
            }
        }
    }

    /// Runs a read on the namespace's engine, as read ops run (the web view reads
    /// through this too): a reader engine of a local namespace, or the mirror's
    /// engine after revalidating against object storage. Blocks.
    pub fn read<T>(&self, read: impl FnOnce(&Engine) -> T) -> Result<T, CallError> {
        match &self.backing {
            Backing::Local(_) => Ok(read(self.reader())),
            Backing::Remote(remote) => {
                let now = remote.revalidate().map_err(|e| self.storage_error(e))?;
                if now.commit.is_none() {
                    // Deleted through another node since this one opened it.
                    return Err(NamespaceError::NotFound(self.name.clone()).into());
                }
                // On the mirror's own engine: a second gix handle on a mirror that
                // fetches and repacks under it was seen to miss objects (in
                // `eight_writers_across_three_serve_nodes_lose_nothing`), so remote
                // namespaces have no reader pool; their reads on one node take turns.
                Ok(read(remote.engine()))
            }
        }
    }

    fn storage_error(&self, e: RemoteError) -> NamespaceError {
        NamespaceError::Storage {
            name: self.name.clone(),
            source: Box::new(e),
        }
    }
}

/// Deletes everything a tenant holds: in the data directory `data` (its store
/// directories, usage records and this node's caches of it), and with object storage
/// every object under `accounts/<tenant>/`. For a deleted account only: its keys are
/// gone, so nothing writes there any more (a write still in flight on a server
/// fails, or leaves files no account can reach).
pub fn purge_tenant(
    data: Option<&Path>,
    storage: Option<&Location>,
    tenant: &str,
) -> Result<(), NamespaceError> {
    names::validate_tenant(tenant).map_err(NamespaceError::InvalidName)?;
    if let Some(location) = storage {
        let storage_error = |e: RemoteError| NamespaceError::Storage {
            name: String::new(),
            source: Box::new(e),
        };
        location
            .within(&format!("accounts/{tenant}"))
            .map_err(storage_error)?
            .delete_all()
            .map_err(storage_error)?;
    }
    let Some(data) = data else {
        return Ok(());
    };
    for dir in [
        data.join("accounts").join(tenant),
        data.join("cache").join(tenant),
    ] {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(NamespaceError::Io(format!("{}: {e}", dir.display()))),
        }
    }
    Ok(())
}

/// Bytes of the files below `dir` (symbolic links are not followed; what cannot
/// be read counts nothing).
fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

/// Reader engines per open namespace unless configured.
pub const DEFAULT_READERS: usize = 2;

pub struct Namespaces {
    data: PathBuf,
    options: EngineOptions,
    readers: usize,
    /// Object storage, when the namespaces live there.
    storage: Option<Location>,
    open: Mutex<HashMap<(String, String), Arc<Namespace>>>,
    /// Serialises create/open/delete (not ops): opening a store twice at once would
    /// build its index twice.
    admin: Mutex<()>,
}

impl Namespaces {
    /// `readers`: reader engines per open namespace (at least one). With `storage`,
    /// the namespaces live in object storage and `data` holds only this node's caches.
    pub fn new(
        data: &Path,
        options: EngineOptions,
        readers: usize,
        storage: Option<Location>,
    ) -> Namespaces {
        Namespaces {
            data: data.to_path_buf(),
            options,
            readers: readers.max(1),
            storage,
            open: Mutex::new(HashMap::new()),
            admin: Mutex::new(()),
        }
    }

    fn account_dir(&self, account: &str) -> PathBuf {
        self.data.join("accounts").join(account).join("ns")
    }

    /// The one directory of (account, name): the store, or with object storage the
    /// mirror's cache. `account` comes from authentication (already a valid name);
    /// `name` is checked here.
    pub fn dir(&self, account: &str, name: &str) -> Result<PathBuf, NamespaceError> {
        names::validate_tenant(account).map_err(NamespaceError::InvalidName)?;
        names::validate("namespace", name).map_err(NamespaceError::InvalidName)?;
        Ok(match self.storage {
            None => self.account_dir(account).join(name),
            Some(_) => self.data.join("cache").join(account).join(name),
        })
    }

    /// The account's place in object storage and the namespace's name there.
    fn remote(
        &self,
        location: &Location,
        account: &str,
        name: &str,
    ) -> Result<(Location, RemoteName), NamespaceError> {
        let storage = |e: RemoteError| NamespaceError::Storage {
            name: name.to_owned(),
            source: Box::new(e),
        };
        let at = location
            .within(&format!("accounts/{account}"))
            .map_err(storage)?;
        let ns = RemoteName::parse(name).map_err(storage)?;
        Ok((at, ns))
    }

    pub fn create(&self, account: &str, name: &str) -> Result<Arc<Namespace>, NamespaceError> {
        let dir = self.dir(account, name)?;
        let _g = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(location) = &self.storage {
            let (at, ns) = self.remote(location, account, name)?;
            let storage = |e: RemoteError| NamespaceError::Storage {
                name: name.to_owned(),
                source: Box::new(e),
            };
            if at.namespace_exists(&ns).map_err(storage)? {
                return Err(NamespaceError::Exists(name.to_owned()));
            }
            let remote = self.open_remote(&at, ns, &dir, name)?;
            if !remote.create().map_err(storage)? {
                return Err(NamespaceError::Exists(name.to_owned()));
            }
            return self.finish_open(account, name, Backing::Remote(Box::new(remote)));
        }
        if dir.exists() {
            return Err(NamespaceError::Exists(name.to_owned()));
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| NamespaceError::Io(format!("{}: {e}", dir.display())))?;
        let writer = Engine::init_with(&dir, self.options.clone()).map_err(|source| {
            // Leave no half-made namespace behind.
            let _ = std::fs::remove_dir_all(&dir);
            NamespaceError::Engine {
                name: name.to_owned(),
                source: Box::new(source),
            }
        })?;
        self.finish_open(
            account,
            name,
            Backing::Local(Box::new(Writer {
                engine: writer,
                gate: Default::default(),
            })),
        )
    }

    fn open_remote(
        &self,
        at: &Location,
        ns: RemoteName,
        dir: &Path,
        name: &str,
    ) -> Result<RemoteNamespace, NamespaceError> {
        RemoteNamespace::open(at, ns, dir, self.options.clone()).map_err(|e| {
            NamespaceError::Storage {
                name: name.to_owned(),
                source: Box::new(e),
            }
        })
    }

    fn finish_open(
        &self,
        account: &str,
        name: &str,
        backing: Backing,
    ) -> Result<Arc<Namespace>, NamespaceError> {
        let store_dir = match &backing {
            Backing::Local(w) => Some(w.engine.store().root().to_path_buf()),
            Backing::Remote(_) => None,
        };
        let mut readers = Vec::with_capacity(self.readers);
        for store_dir in std::iter::repeat_n(store_dir, self.readers).flatten() {
            readers.push(Engine::open_with(&store_dir, self.options.clone()).map_err(
                |source| NamespaceError::Engine {
                    name: name.to_owned(),
                    source: Box::new(source),
                },
            )?);
        }
        let ns = Arc::new(Namespace {
            name: name.to_owned(),
            backing,
            options: self.options.clone(),
            readers,
            next: std::sync::atomic::AtomicUsize::new(0),
        });
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((account.to_owned(), name.to_owned()), ns.clone());
        Ok(ns)
    }

    /// The open namespace, opening it if it exists.
    pub fn get(&self, account: &str, name: &str) -> Result<Arc<Namespace>, NamespaceError> {
        let dir = self.dir(account, name)?;
        let key = (account.to_owned(), name.to_owned());
        if let Some(ns) = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(ns.clone());
        }
        let _g = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ns) = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(ns.clone());
        }
        if let Some(location) = &self.storage {
            let (at, ns) = self.remote(location, account, name)?;
            // Checked before anything is cached: asking for a namespace that does
            // not exist leaves nothing behind on this node.
            let exists = at
                .namespace_exists(&ns)
                .map_err(|e| NamespaceError::Storage {
                    name: name.to_owned(),
                    source: Box::new(e),
                })?;
            if !exists {
                return Err(NamespaceError::NotFound(name.to_owned()));
            }
            let remote = self.open_remote(&at, ns, &dir, name)?;
            return self.finish_open(account, name, Backing::Remote(Box::new(remote)));
        }
        if !dir.join(".git").is_dir() {
            return Err(NamespaceError::NotFound(name.to_owned()));
        }
        let writer = Engine::open_with(&dir, self.options.clone()).map_err(|source| {
            NamespaceError::Engine {
                name: name.to_owned(),
                source: Box::new(source),
            }
        })?;
        self.finish_open(
            account,
            name,
            Backing::Local(Box::new(Writer {
                engine: writer,
                gate: Default::default(),
            })),
        )
    }

    /// The account's namespaces, by name.
    pub fn list(&self, account: &str) -> Result<Vec<String>, NamespaceError> {
        if let Some(location) = &self.storage {
            names::validate_tenant(account).map_err(NamespaceError::InvalidName)?;
            let storage = |e: RemoteError| NamespaceError::Storage {
                name: String::new(),
                source: Box::new(e),
            };
            let at = location
                .within(&format!("accounts/{account}"))
                .map_err(storage)?;
            let found = at.list_namespaces().map_err(storage)?;
            return Ok(found
                .iter()
                .map(|n| n.as_str().to_owned())
                .filter(|n| names::validate("namespace", n).is_ok())
                .collect());
        }
        let dir = self.account_dir(account);
        let mut out = Vec::new();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(NamespaceError::Io(format!("{}: {e}", dir.display()))),
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if names::validate("namespace", &name).is_ok() && e.path().join(".git").is_dir() {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The bytes a namespace occupies: its store directory (git history, work tree
    /// and index) or, in object storage, its objects.
    pub fn storage_bytes(&self, account: &str, name: &str) -> Result<u64, NamespaceError> {
        let dir = self.dir(account, name)?;
        if let Some(location) = &self.storage {
            let (at, _) = self.remote(location, account, name)?;
            let ns =
                at.within(&format!("namespaces/{name}"))
                    .map_err(|e| NamespaceError::Storage {
                        name: name.to_owned(),
                        source: Box::new(e),
                    })?;
            return ns
                .size()
                .map(|(bytes, _)| bytes)
                .map_err(|e| NamespaceError::Storage {
                    name: name.to_owned(),
                    source: Box::new(e),
                });
        }
        Ok(dir_size(&dir))
    }

    /// Forgets every open namespace of a tenant (its account was deleted or lost its
    /// last key): their engines close once the requests still running finish.
    pub fn evict(&self, tenant: &str) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(t, _), _| t != tenant);
    }

    /// Deletes everything a tenant holds (see [`purge_tenant`]) and forgets what is
    /// open of it here.
    pub fn purge(&self, tenant: &str) -> Result<(), NamespaceError> {
        let _g = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        self.evict(tenant);
        purge_tenant(Some(&self.data), self.storage.as_ref(), tenant)
    }

    /// Deletes a namespace and its store. Waits for a write in progress on this node
    /// to finish (other nodes see it gone on their next request).
    pub fn delete(&self, account: &str, name: &str) -> Result<(), NamespaceError> {
        let dir = self.dir(account, name)?;
        let _g = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let ns = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(account.to_owned(), name.to_owned()));
        if let Some(location) = &self.storage {
            let (at, remote_name) = self.remote(location, account, name)?;
            let deleted =
                at.delete_namespace(&remote_name)
                    .map_err(|e| NamespaceError::Storage {
                        name: name.to_owned(),
                        source: Box::new(e),
                    })?;
            drop(ns);
            // The mirror is only a cache; a failure to remove it costs disk, not data.
            if let Err(e) = std::fs::remove_dir_all(&dir)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(path = %dir.display(), error = %e, "cannot remove a deleted namespace's cache");
            }
            return if deleted {
                Ok(())
            } else {
                Err(NamespaceError::NotFound(name.to_owned()))
            };
        }
        // Hold the write lock while the files go: no write is half-way through them.
        let _w = ns.as_ref().and_then(|n| match &n.backing {
            Backing::Local(w) => Some(w.gate.write().unwrap_or_else(|p| p.into_inner())),
            Backing::Remote(_) => None,
        });
        if !dir.join(".git").is_dir() {
            return Err(NamespaceError::NotFound(name.to_owned()));
        }
        std::fs::remove_dir_all(&dir)
            .map_err(|e| NamespaceError::Io(format!("{}: {e}", dir.display())))
    }
}
