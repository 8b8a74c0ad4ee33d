//! The crate's one error type.

/// What went wrong, naming the object, namespace or command involved.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Engine(#[from] gitloom_engine::EngineError),
    #[error(transparent)]
    Store(#[from] gitloom_store::StoreError),
    /// `cause` is the whole chain of the `object_store` error on one line, each
    /// distinct message once (its layers repeat each other).
    #[error("object storage: {context}: {cause}")]
    Storage { context: String, cause: String },
    #[error("bad storage location {url:?}: {reason}")]
    BadLocation { url: String, reason: String },
    #[error("bad namespace name {name:?}: {reason}")]
    BadNamespace { name: String, reason: String },
    #[error("the head object {path} is unreadable: {reason}")]
    BadHead { path: String, reason: String },
    #[error("pack {name} is corrupt: {reason}")]
    BadPack { name: String, reason: String },
    #[error("`{command}` failed: {reason}")]
    Git { command: String, reason: String },
    #[error("{what}: {path}: {source}")]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the head of namespace {namespace} moved under us {attempts} times in a row; gave up without overwriting anyone"
    )]
    Contended { namespace: String, attempts: u32 },
    #[error("no namespace {namespace} (it has no head: never created, or deleted)")]
    NoNamespace { namespace: String },
}

/// Why [`crate::RemoteNamespace::write_existing_with`] failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError<E> {
    /// The write itself failed; nothing was published.
    #[error("{0}")]
    Op(E),
    /// The namespace has no head (it was never created, or was deleted elsewhere).
    #[error("the namespace does not exist")]
    NoNamespace,
    #[error(transparent)]
    Storage(RemoteError),
}

pub type Result<T, E = RemoteError> = std::result::Result<T, E>;

pub(crate) fn storage(
    context: impl Into<String>,
) -> impl FnOnce(object_store::Error) -> RemoteError {
    let context = context.into();
    move |source| RemoteError::Storage {
        context,
        cause: chain(&source),
    }
}

/// An error and its sources on one line, skipping a source whose text is already there.
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        let s = e.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        next = e.source();
    }
    out
}

pub(crate) fn io(
    what: &'static str,
    path: impl Into<std::path::PathBuf>,
) -> impl FnOnce(std::io::Error) -> RemoteError {
    let path = path.into();
    move |source| RemoteError::Io { what, path, source }
}
