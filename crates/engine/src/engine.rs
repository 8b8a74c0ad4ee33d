//! [`Engine`]: one store, its index, and the operations over them.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use std::sync::Arc;

use gitloom_embed::Embedder;
use gitloom_index::{Index, IndexStats, OpenStatus, TopicCount, TreeListing};
use gitloom_model::{Memory, StorePath};
use gitloom_store::{ObjectId, Store};
use serde::Serialize;

use crate::error::{EngineError, Result};
use crate::read::config::RetrieveConfig;
use crate::semantic::{Progress, Semantic};

/// Retrieval settings of one store (overrides over the defaults), inside `.gitloom/`.
pub const CONFIG_FILE: &str = "config.json";

/// The vector cache inside `.gitloom/` (kept apart from the rebuildable index).
pub const VECTOR_FILE: &str = "vectors.db";

/// Which embedder an engine uses.
#[derive(Clone, Default)]
pub enum EmbedderChoice {
    /// The installed local model if there is one, else lexical-only with a warning.
    #[default]
    Default,
    /// No semantic arms.
    None,
    /// This one (an OpenAI-compatible endpoint, a static table, a test embedder).
    Given(Arc<dyn Embedder>),
}

/// How to open an engine.
#[derive(Clone, Default)]
pub struct EngineOptions {
    pub embedder: EmbedderChoice,
    /// Where vectors are cached; default `.gitloom/vectors.db`. Several stores may
    /// share one (the eval harness does, so identical texts are embedded once).
    pub vector_cache: Option<PathBuf>,
    /// The read path's knobs; `None`: `.gitloom/config.json` if the store has one,
    /// else the defaults.
    pub config: Option<RetrieveConfig>,
    /// An optional second-stage reranker over the head of each answer.
    pub reranker: Option<Arc<dyn crate::read::rerank::Reranker>>,
}

/// The index file inside `.gitloom/`.
pub const INDEX_FILE: &str = "index.db";

/// An open store with its index.
pub struct Engine {
    pub(crate) store: Store,
    pub(crate) index: Mutex<Index>,
    pub(crate) index_path: PathBuf,
    pub(crate) config: RetrieveConfig,
    pub(crate) semantic: Option<Semantic>,
    pub(crate) reranker: Option<Arc<dyn crate::read::rerank::Reranker>>,
    pub(crate) progress: Option<Arc<Progress>>,
    warnings: Mutex<Vec<String>>,
    /// What the sync done while opening did (`gitloom sync` reports it).
    opening_sync: Mutex<Option<crate::sync::SyncReport>>,
    /// Writes waiting to share a commit (`group.rs`).
    pub(crate) commits: crate::group::CommitQueue,
    /// The memories writes parsed, for the sync that indexes them (`parsed.rs`).
    pub(crate) parsed: crate::parsed::Parsed,
    /// The arena size (rows) from which the semantic arms' scan runs on a second thread
    /// while the lexical arm reads the index ([`Engine::set_concurrent_arms_from`]).
    pub(crate) concurrent_from: usize,
    /// The read path's second thread, started by the first retrieve that uses it.
    pub(crate) worker: crate::read::worker::Worker,
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
        Engine::init_with(dir, EngineOptions::default())
    }

    pub fn init_with(dir: &Path, options: EngineOptions) -> Result<Engine> {
        Store::init(dir)?;
        Engine::open_with(dir, options)
    }

    /// Opens the store at `dir` and brings its index up to date with HEAD. An index
    /// that is missing, corrupt or of another schema version is rebuilt from git,
    /// with a warning.
    pub fn open(dir: &Path) -> Result<Engine> {
        Engine::open_with(dir, EngineOptions::default())
    }

    /// [`Engine::open`] with a chosen embedder and vector cache.
    pub fn open_with(dir: &Path, options: EngineOptions) -> Result<Engine> {
        Engine::open_with_progress(dir, options, None)
    }

    /// [`Engine::open_with`], reporting long work (rebuilds, embedding) to `progress`.
    pub fn open_with_progress(
        dir: &Path,
        options: EngineOptions,
        progress: Option<Box<Progress>>,
    ) -> Result<Engine> {
        let progress: Option<Arc<Progress>> = progress.map(Arc::from);
        let store = Store::open(dir)?;
        let gl = store.gitloom_dir();
        std::fs::create_dir_all(&gl).map_err(|source| EngineError::Io {
            what: "cannot create the index directory",
            path: gl.clone(),
            source,
        })?;
        let index_path = gl.join(INDEX_FILE);
        let (index, status) = Index::open(&index_path)?;
        let mut early_warnings = Vec::new();
        let config = match options.config {
            Some(c) => c,
            None => {
                let p = gl.join(CONFIG_FILE);
                match std::fs::read_to_string(&p) {
                    Ok(text) => RetrieveConfig::from_json_overrides(&text)
                        .map_err(|e| EngineError::Usage(format!("{}: {e}", p.display())))?,
                    Err(_) => RetrieveConfig::default(),
                }
            }
        };
        let embedder = match options.embedder {
            EmbedderChoice::None => None,
            EmbedderChoice::Given(e) => Some(e),
            EmbedderChoice::Default => match gitloom_embed::default_embedder() {
                Ok(Some(e)) => Some(e),
                Ok(None) => {
                    early_warnings.push(
                        "no embedding model is installed (run `gitloom model install`); retrieving with the lexical arm only"
                            .to_owned(),
                    );
                    None
                }
                Err(e) => {
                    early_warnings.push(format!("the embedding model cannot be loaded ({e}); retrieving with the lexical arm only"));
                    None
                }
            },
        };
        let semantic = match embedder {
            Some(e) => {
                let path = options.vector_cache.unwrap_or_else(|| gl.join(VECTOR_FILE));
                let (s, warning) = Semantic::open(e, &path, &index_path, &gl)?;
                early_warnings.extend(warning);
                Some(s.with_progress(progress.clone()))
            }
            None => None,
        };
        let engine = Engine {
            store,
            index: Mutex::new(index),
            index_path,
            config,
            semantic,
            reranker: options.reranker,
            progress,
            warnings: Mutex::new(early_warnings),
            opening_sync: Mutex::new(None),
            commits: Default::default(),
            parsed: Default::default(),
            concurrent_from: crate::read::CONCURRENT_ARMS_FROM,
            worker: Default::default(),
        };
        if let OpenStatus::Reset { reason } = status {
            engine.warn(format!(
                "index {} was unusable ({reason}); rebuilding it from git",
                engine.index_path.display()
            ));
        }
        let report = engine.sync()?;
        *engine
            .opening_sync
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(report);
        Ok(engine)
    }

    /// The embedding model in use, if any.
    pub fn embedder_id(&self) -> Option<&str> {
        self.semantic.as_ref().map(|s| s.model_id())
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

    /// From how many arena rows the semantic arms' scan runs on a thread of its own,
    /// beside the lexical arm (default [`crate::read::CONCURRENT_ARMS_FROM`]; 0: always,
    /// `usize::MAX`: never). Speed only: either way the arms compute the same lists
    /// from the same inputs, so retrievals are identical (a test holds them to it).
    pub fn set_concurrent_arms_from(&mut self, rows: usize) {
        self.concurrent_from = rows;
    }

    pub(crate) fn warn(&self, msg: String) {
        tracing::warn!("{msg}");
        self.warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(msg);
    }

    /// The sync [`Engine::open`] ran to bring the index up to HEAD (taken once).
    pub fn take_opening_sync(&self) -> Option<crate::sync::SyncReport> {
        self.opening_sync
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
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
        if let Some(t) = topic
            .map(|t| t.trim().trim_matches('/'))
            .filter(|t| !t.is_empty())
        {
            // The caller's topic is checked here, so a mistake in it is named as one.
            let (tier, rest) = t.split_once('/').unwrap_or((t, ""));
            tier.parse::<gitloom_model::Tier>()
                .map_err(|m| EngineError::Usage(format!("topic {t:?}: {m}")))?;
            if rest.split('/').any(|p| matches!(p, "" | "." | "..")) && !rest.is_empty() {
                return Err(EngineError::Usage(format!(
                    "topic {t:?} has an empty, `.` or `..` component"
                )));
            }
        }
        self.ensure_synced()?;
        Ok(self.index().tree(topic)?)
    }

    pub fn topics(&self) -> Result<Vec<TopicCount>> {
        self.ensure_synced()?;
        Ok(self.index().topics()?)
    }

    /// Everything about an entity: every memory mentioning the entities the name
    /// matches (full name, or first name of a person), with the role given there.
    pub fn entity(&self, name: &str) -> Result<Vec<gitloom_index::MentionRow>> {
        self.ensure_synced()?;
        let mut out = self.index().read(|index| {
            let mut out = Vec::new();
            for m in index.entities_in(name)? {
                out.extend(index.mentions_of(&m.name)?);
            }
            Ok::<_, gitloom_index::IndexError>(out)
        })?;
        out.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.entity.cmp(&b.entity)));
        out.dedup();
        Ok(out)
    }

    pub fn stats(&self) -> Result<IndexStats> {
        self.ensure_synced()?;
        Ok(self.index().stats()?)
    }
}
