//! Errors of the ingestion pipeline.

/// Why ingestion (or answering) failed. Each variant names what was wrong.
#[derive(Debug, thiserror::Error)]
pub enum CortexError {
    /// The input is not sessions in a format we read.
    #[error("input: {0}")]
    Input(String),
    /// A model endpoint could not be used (after retries).
    #[error("model endpoint {url}: {message}")]
    Llm { url: String, message: String },
    /// The model answered, but not with what the schema asks for (after retries).
    #[error("model output rejected ({what}): {message}")]
    BadOutput { what: String, message: String },
    /// A memory could not be built (a path or date the model made up, a broken file).
    #[error("{0}")]
    Memory(String),
    #[error(transparent)]
    Engine(#[from] gitloom_engine::EngineError),
}

impl From<gitloom_model::PathError> for CortexError {
    fn from(e: gitloom_model::PathError) -> Self {
        CortexError::Memory(e.to_string())
    }
}
