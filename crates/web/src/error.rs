//! Page errors: a status, a stable code and a message for the reader.
//!
//! A caller's mistake (an unknown memory, a revision that does not resolve, a bad
//! query) is a 4xx whose message names the input and the problem. A failure of ours
//! is a 500 whose page says only that: its details (which may hold server paths) go
//! to the server's log, never to the page.

use axum::http::StatusCode;
use gitloom_engine::EngineError;
use gitloom_store::StoreError;

/// Why a page could not be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebError {
    pub status: StatusCode,
    /// Stable machine-readable code (the API's codes where they overlap).
    pub code: &'static str,
    /// Shown on the page: names the input at fault, never a server path.
    pub message: String,
}

impl WebError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> WebError {
        WebError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> WebError {
        WebError::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(message: impl Into<String>) -> WebError {
        WebError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// A failure of the server: `detail` is logged, the page says only that it failed.
    pub fn internal(detail: impl std::fmt::Display) -> WebError {
        eprintln!("gitloom web: internal error: {detail}");
        WebError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed to read the store; the details are in its log",
        )
    }

    pub fn is_client_error(&self) -> bool {
        self.status.is_client_error()
    }
}

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for WebError {}

impl From<EngineError> for WebError {
    fn from(e: EngineError) -> WebError {
        match &e {
            EngineError::NotFound { .. } => WebError::not_found(e.to_string()),
            EngineError::Path(_) => WebError::bad_request("invalid_path", e.to_string()),
            EngineError::Usage(_) => WebError::bad_request("invalid_request", e.to_string()),
            EngineError::Store(s) => {
                WebError::from_store(s).unwrap_or_else(|| WebError::internal(&e))
            }
            _ => WebError::internal(&e),
        }
    }
}

impl From<StoreError> for WebError {
    fn from(e: StoreError) -> WebError {
        WebError::from_store(&e).unwrap_or_else(|| WebError::internal(&e))
    }
}

impl WebError {
    /// The store errors a caller causes; `None` for the server's own failures.
    fn from_store(e: &StoreError) -> Option<WebError> {
        match e {
            StoreError::BadRevision { .. } => {
                Some(WebError::bad_request("bad_revision", e.to_string()))
            }
            StoreError::NotCommittable { .. } => {
                Some(WebError::bad_request("invalid_path", e.to_string()))
            }
            _ => None,
        }
    }
}
