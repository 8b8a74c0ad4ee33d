//! The engine's error type: one variant per layer, each naming what it was doing.

use gitloom_model::{MemoryError, PathError};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] gitloom_store::StoreError),
    #[error(transparent)]
    Index(#[from] gitloom_index::IndexError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error("invalid path: {0}")]
    Path(#[from] PathError),
    /// Several files were refused at once (an import validates everything before writing anything).
    #[error("{} file(s) refused, nothing was written:\n  {}", .0.len(), .0.join("\n  "))]
    Invalid(Vec<String>),
    #[error("{what}: {path}: {source}")]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Usage(String),
    #[error("embedding failed: {0}")]
    Embed(String),
    #[error("no such memory: {path}{}", at.as_ref().map(|a| format!(" at {a}")).unwrap_or_default())]
    NotFound { path: String, at: Option<String> },
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;
