//! Op errors: each with a stable machine-readable code (front-ends map it to an HTTP
//! status or an MCP error) and a message naming the field or file at fault.

use gitloom_engine::EngineError;
use gitloom_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("no such operation: {0}")]
    UnknownOp(String),
    #[error("invalid parameters for {op}: {message}")]
    InvalidParams { op: &'static str, message: String },
    /// The call is bigger than the operator allows (a limit of the server).
    #[error("{op}: {message}")]
    TooLarge { op: &'static str, message: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Cortex(gitloom_cortex::CortexError),
    #[error("{0}")]
    Internal(String),
}

impl OpError {
    /// A stable code for the kind of failure (part of the HTTP and MCP contracts).
    pub fn code(&self) -> &'static str {
        match self {
            OpError::UnknownOp(_) => "unknown_op",
            OpError::InvalidParams { .. } => "invalid_params",
            OpError::TooLarge { .. } => "too_large",
            OpError::Internal(_) => "internal",
            OpError::Cortex(c) => match c {
                gitloom_cortex::CortexError::Input(_) => "invalid_params",
                gitloom_cortex::CortexError::Llm { .. } => "model_failed",
                gitloom_cortex::CortexError::BadOutput { .. } => "model_failed",
                gitloom_cortex::CortexError::Memory(_) => "invalid_memory",
                gitloom_cortex::CortexError::Engine(_) => "internal",
            },
            OpError::Engine(e) => match e {
                EngineError::NotFound { .. } => "not_found",
                EngineError::Path(_) => "invalid_path",
                EngineError::Memory(_) | EngineError::Invalid(_) => "invalid_memory",
                EngineError::Usage(_) => "invalid_request",
                EngineError::Embed(_) => "embedding_failed",
                EngineError::Store(s) => match s {
                    StoreError::BadRevision { .. } => "bad_revision",
                    StoreError::NotCommittable { .. }
                    | StoreError::Symlink { .. }
                    | StoreError::BadName(_) => "invalid_path",
                    StoreError::CaseCollision { .. } | StoreError::LookAlike { .. } => {
                        "path_collision"
                    }
                    StoreError::Dirty { .. }
                    | StoreError::Stale { .. }
                    | StoreError::Conflict { .. }
                    | StoreError::Locked { .. } => "conflict",
                    _ => "internal",
                },
                _ => "internal",
            },
        }
    }

    /// True when the caller's input is at fault (as opposed to the server).
    pub fn is_client_error(&self) -> bool {
        !matches!(self.code(), "internal" | "embedding_failed")
    }
}

impl From<gitloom_cortex::CortexError> for OpError {
    fn from(e: gitloom_cortex::CortexError) -> Self {
        match e {
            // An engine failure keeps its own code (not_found, conflict, …).
            gitloom_cortex::CortexError::Engine(e) => OpError::Engine(e),
            other => OpError::Cortex(other),
        }
    }
}
