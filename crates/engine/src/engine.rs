//! [`Engine`]: one store, its index, and the operations over them.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use gitloom_index::{Index, IndexStats, OpenStatus, TopicCount, TreeListing};
use gitloom_model::{Memory, StorePath};
use gitloom_store::{ObjectId, Store};
use serde::Serialize;

use crate::error::{EngineError, Result};
use crate::retrieve::RetrieveConfig;

/// The index file inside `.gitloom/`.
pub const INDEX_FILE: &str = "index.db";

/// An open store with its index.
pub struct Engine {
    pub(crate) store: Store,
    pub(crate) index: Mutex<Index>,
    pub(crate) index_path: PathBuf,
    pub(crate) config: RetrieveConfig,
    warnings: Mutex<Vec<String>>,
}

/// A memory file read at a revision.
#[derive(Debug, Clone, Serialize)]
pub struct GetResult {
    pub path: String,
    pub commit: String,
    pub content: String,
    pub title: Option<String>,
}

/// One commit in `log`.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub commit: String,
    pub time: String,
    pub summary: String,
    pub message: String,
}

impl Engine {
    /// Creates a store at `dir` (or adopts the git repository there) and opens it.
    pub fn init(dir: &Path) -> Result<Engine> {
        Store::init(dir)?;
        Engine::open(dir)
    }

    /// Opens the store at `dir` and brings its index up to date with HEAD. An index
    /// that is missing, corrupt or of another schema version is rebuilt from git,
    /// with a warning.
    pub fn open(dir: &Path) -> Result<Engine> {
        let store = Store::open(dir)?;
        let gl = store.gitloom_dir();
        std::fs::create_dir_all(&gl).map_err(|source| EngineError::Io {
            what: "cannot create the index directory",
            path: gl.clone(),
            source,
        })?;
        let index_path = gl.join(INDEX_FILE);
        let (index, status) = Index::open(&index_path)?;
        let engine = Engine {
            store,
            index: Mutex::new(index),
            index_path,
            config: RetrieveConfig::default(),
            warnings: Mutex::new(Vec::new()),
        };
        if let OpenStatus::Reset { reason } = status {
            engine.warn(format!(
                "index {} was unusable ({reason}); rebuilding it from git",
                engine.index_path.display()
            ));
        }
        engine.sync()?;
        Ok(engine)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn root(&self) -> &Path {
        self.store.root()
    }

    pub fn index_path(&self) -> &Path {
        &self.index_path
    }

    pub fn config(&self) -> &RetrieveConfig {
        &self.config
    }

    pub fn set_config(&mut self, config: RetrieveConfig) {
        self.config = config;
    }

    pub(crate) fn warn(&self, msg: String) {
        tracing::warn!("{msg}");
        self.warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(msg);
    }

    /// Warnings collected since the last call (index rebuilt, files that failed to parse, …).
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn index(&self) -> MutexGuard<'_, Index> {
        // A panic while holding the lock cannot leave the index half-written: every
        // change is one SQLite transaction. Keep serving.
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Resolves a revision or date (`--at`) to a commit.
    pub fn resolve(&self, rev: &str) -> Result<ObjectId> {
        Ok(self.store.resolve(rev)?)
    }

    /// Reads one memory at HEAD or at a revision.
    pub fn get(&self, path: &str, at: Option<&str>) -> Result<GetResult> {
        let path = StorePath::parse(path)?;
        let commit = match at {
            Some(rev) => self.store.resolve(rev)?,
            None => self.store.head()?.ok_or_else(|| EngineError::NotFound {
                path: path.to_string(),
                at: None,
            })?,
        };
        let bytes = self
            .store
            .read(commit, &path)?
            .ok_or_else(|| EngineError::NotFound {
                path: path.to_string(),
                at: at.map(str::to_owned),
            })?;
        let title = Memory::parse(path.as_str(), &bytes)
            .ok()
            .map(|m| m.front.title);
        Ok(GetResult {
            path: path.to_string(),
            commit: commit.to_string(),
            content: String::from_utf8_lossy(&bytes).into_owned(),
            title,
        })
    }

    /// History, newest first; with a path, only the commits that changed it.
    pub fn log(&self, path: Option<&str>, limit: Option<usize>) -> Result<Vec<LogEntry>> {
        let path = path.map(StorePath::parse).transpose()?;
        let commits = self.store.log(path.as_ref(), limit)?;
        Ok(commits
            .into_iter()
            .map(|c| LogEntry {
                commit: c.id.to_string(),
                time: c.time.to_string(),
                summary: c.summary,
                message: c.message,
            })
            .collect())
    }

    pub fn tree(&self, topic: Option<&str>) -> Result<TreeListing> {
        self.ensure_synced()?;
        Ok(self.index().tree(topic)?)
    }

    pub fn topics(&self) -> Result<Vec<TopicCount>> {
        self.ensure_synced()?;
        Ok(self.index().topics()?)
    }

    pub fn stats(&self) -> Result<IndexStats> {
        self.ensure_synced()?;
        Ok(self.index().stats()?)
    }
}
