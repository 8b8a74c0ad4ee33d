//! Errors, each naming the database and the operation.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index {}: {op}: {source}", path.display())]
    Sql {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("index {}: {op}: {source}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("index {}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}
