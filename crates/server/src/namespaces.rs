//! Namespaces: one store per (account, name), at `DATA/accounts/<account>/ns/<name>`.
//!
//! The directory is derived only from the authenticated account and a validated name
//! (`names.rs`), never from raw request text, so a request can address no other place.
//!
//! Each open namespace has several engines on the same store: a writer behind a mutex
//! (so writes to one namespace serialise) and a small pool of readers that read ops
//! take in turn (each engine serialises its own queries on its index connection, so
//! the pool is what lets reads of one namespace run side by side). They hold
//! separate SQLite connections to the WAL-mode index, so a read never waits for a
//! write's commit or transaction; the one wait left is a read that arrives between a
//! commit and the end of its index sync, which syncs (or waits on the sync lock)
//! before answering so it never sees an index behind HEAD. Different namespaces share
//! nothing but the map below.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gitloom_engine::{Engine, EngineError, EngineOptions};

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
    #[error("{0}")]
    Io(String),
}

/// An open namespace.
pub struct Namespace {
    pub name: String,
    pub writer: Mutex<Engine>,
    readers: Vec<Engine>,
    next: std::sync::atomic::AtomicUsize,
}

impl Namespace {
    /// The reader engine for the next read (round robin).
    pub fn reader(&self) -> &Engine {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        &self.readers[i % self.readers.len()]
    }
}

/// Reader engines per open namespace unless configured.
pub const DEFAULT_READERS: usize = 2;

pub struct Namespaces {
    data: PathBuf,
    options: EngineOptions,
    readers: usize,
    open: Mutex<HashMap<(String, String), Arc<Namespace>>>,
    /// Serialises create/open/delete (not ops): opening a store twice at once would
    /// build its index twice.
    admin: Mutex<()>,
}

impl Namespaces {
    /// `readers`: reader engines per open namespace (at least one).
    pub fn new(data: &Path, options: EngineOptions, readers: usize) -> Namespaces {
        Namespaces {
            data: data.to_path_buf(),
            options,
            readers: readers.max(1),
            open: Mutex::new(HashMap::new()),
            admin: Mutex::new(()),
        }
    }

    fn account_dir(&self, account: &str) -> PathBuf {
        self.data.join("accounts").join(account).join("ns")
    }

    /// The one directory of (account, name). `account` comes from authentication
    /// (already a valid name); `name` is checked here.
    pub fn dir(&self, account: &str, name: &str) -> Result<PathBuf, NamespaceError> {
        names::validate("account", account).map_err(NamespaceError::InvalidName)?;
        names::validate("namespace", name).map_err(NamespaceError::InvalidName)?;
        Ok(self.account_dir(account).join(name))
    }

    pub fn create(&self, account: &str, name: &str) -> Result<Arc<Namespace>, NamespaceError> {
        let dir = self.dir(account, name)?;
        let _g = self.admin.lock().unwrap_or_else(|p| p.into_inner());
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
        let ns = self.finish_open(account, name, &dir, writer)?;
        Ok(ns)
    }

    fn finish_open(
        &self,
        account: &str,
        name: &str,
        dir: &Path,
        writer: Engine,
    ) -> Result<Arc<Namespace>, NamespaceError> {
        let mut readers = Vec::with_capacity(self.readers);
        for _ in 0..self.readers {
            readers.push(
                Engine::open_with(dir, self.options.clone()).map_err(|source| {
                    NamespaceError::Engine {
                        name: name.to_owned(),
                        source: Box::new(source),
                    }
                })?,
            );
        }
        let ns = Arc::new(Namespace {
            name: name.to_owned(),
            writer: Mutex::new(writer),
            readers,
            next: std::sync::atomic::AtomicUsize::new(0),
        });
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((account.to_owned(), name.to_owned()), ns.clone());
        Ok(ns)
    }

    /// The open namespace, opening it if it exists on disk.
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
        if !dir.join(".git").is_dir() {
            return Err(NamespaceError::NotFound(name.to_owned()));
        }
        let writer = Engine::open_with(&dir, self.options.clone()).map_err(|source| {
            NamespaceError::Engine {
                name: name.to_owned(),
                source: Box::new(source),
            }
        })?;
        self.finish_open(account, name, &dir, writer)
    }

    /// The account's namespaces, by name.
    pub fn list(&self, account: &str) -> Result<Vec<String>, NamespaceError> {
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

    /// Deletes a namespace and its store. Waits for a write in progress to finish.
    pub fn delete(&self, account: &str, name: &str) -> Result<(), NamespaceError> {
        let dir = self.dir(account, name)?;
        let _g = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let ns = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(account.to_owned(), name.to_owned()));
        // Hold the write lock while the files go: no write is half-way through them.
        let _w = ns
            .as_ref()
            .map(|n| n.writer.lock().unwrap_or_else(|p| p.into_inner()));
        if !dir.join(".git").is_dir() {
            return Err(NamespaceError::NotFound(name.to_owned()));
        }
        std::fs::remove_dir_all(&dir)
            .map_err(|e| NamespaceError::Io(format!("{}: {e}", dir.display())))
    }
}
