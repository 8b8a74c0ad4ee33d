//! Errors, each naming the file, URL or model concerned and the cause.

use std::path::PathBuf;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file could not be read or written.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A model file did not have the expected SHA-256.
    #[error(
        "{}: checksum mismatch: expected sha256 {expected}, got {actual} (the file is damaged or not the expected model)",
        path.display()
    )]
    Checksum {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    /// An install source or model directory lacks what it should hold, or holds garbage.
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    /// The model could not be loaded or run.
    #[error("model {model}: {message}")]
    Model { model: String, message: String },
    /// An embedding endpoint failed (after retries where they apply).
    #[error("embedding endpoint {url}: {message}")]
    Http { url: String, message: String },
    /// A vector of the wrong length: never stored, never scanned.
    #[error("model {model}: expected vectors of dimension {expected}, got {actual}")]
    Dimension {
        model: String,
        expected: usize,
        actual: usize,
    },
    /// The vector cache database failed.
    #[error("vector cache {}: {op}: {source}", path.display())]
    Sql {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: rusqlite::Error,
    },
}

impl EmbedError {
    pub(crate) fn io(
        path: impl Into<PathBuf>,
        op: &'static str,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| EmbedError::Io { path, op, source }
    }

    pub(crate) fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        EmbedError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    pub(crate) fn model(model: impl Into<String>, message: impl std::fmt::Display) -> Self {
        EmbedError::Model {
            model: model.into(),
            message: message.to_string(),
        }
    }
}
