//! gitloom-server: the network front-ends over the toolkit's op list.
//!
//! - `http`: the multi-tenant HTTP API (accounts and hashed API keys, one store per
//!   namespace, async jobs, `/openapi.json`, `/healthz`), on axum.
//! - `web`: the web view (`gitloom-web`) at `/ui`, for the same accounts and keys.
//! - `mcp`: the MCP server (every toolkit op is a tool with its schema) over stdio,
//!   on the official Rust SDK (`rmcp`).
//! - `accounts`, `jobs`, `usage`: keys and their revocation, accounts and their
//!   tombstones, bounded jobs, and metering per tenant and namespace.
//!
//! Isolation is enforced below the HTTP layer: a namespace directory is derived only
//! from the authenticated account and a validated name (`namespaces.rs`).
//!
//! With [`ServerConfig::storage`] the accounts and namespaces live in object storage
//! (gitloom-remote) and the node keeps only caches: several nodes serve one bucket.
//!
//! Not here: what an op does (`gitloom-toolkit`, `gitloom-engine`), argument parsing
//! (`gitloom` binary).
#![forbid(unsafe_code)]

pub mod accounts;
pub mod http;
pub mod jobs;
pub mod mcp;
pub mod names;
pub mod namespaces;
pub mod ratelimit;
pub mod usage;
pub mod web;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use gitloom_engine::EngineOptions;
use gitloom_remote::Location;

pub use accounts::{AccountError, Accounts, DataFate, NewKey, Tenant, Tombstone};
pub use gitloom_toolkit::Limits;
pub use jobs::JobLimits;
pub use ratelimit::RateLimit;
pub use usage::Usage;

/// Largest request body accepted by default (a memory file is at most a few hundred KiB).
pub const DEFAULT_MAX_BODY: usize = 2 * 1024 * 1024;

/// How to run the HTTP server.
#[derive(Clone)]
pub struct ServerConfig {
    pub data: PathBuf,
    pub engine: EngineOptions,
    pub max_body: usize,
    pub rate: RateLimit,
    /// Also serve MCP over streamable HTTP at `/mcp`.
    pub mcp: bool,
    /// Reader engines per open namespace: how many reads of one namespace run at once.
    pub readers: usize,
    /// Object storage holding the accounts and every namespace (`--storage`); `data`
    /// then holds only this node's caches, and any number of nodes may share it.
    pub storage: Option<Location>,
    /// Jobs per tenant and how long their results are kept.
    pub jobs: JobLimits,
    /// Bounds on what one call may ask for (ingest size).
    pub limits: Limits,
    /// With object storage: how stale a look at the shared accounts may be when a
    /// request is authenticated (zero: every request sees every revocation made
    /// before it arrived).
    pub accounts_recheck: std::time::Duration,
}

impl ServerConfig {
    pub fn new(data: &Path, engine: EngineOptions) -> ServerConfig {
        ServerConfig {
            data: data.to_path_buf(),
            engine,
            max_body: DEFAULT_MAX_BODY,
            rate: RateLimit::default(),
            mcp: false,
            readers: namespaces::DEFAULT_READERS,
            storage: None,
            jobs: JobLimits::default(),
            limits: Limits::default(),
            accounts_recheck: std::time::Duration::ZERO,
        }
    }
}

/// Shared by every request.
#[derive(Clone)]
pub struct AppState {
    pub accounts: Arc<Accounts>,
    pub namespaces: Arc<namespaces::Namespaces>,
    pub jobs: Arc<jobs::Jobs>,
    pub limiter: Arc<ratelimit::Limiter>,
    pub usage: Arc<Usage>,
    pub limits: Limits,
    pub max_body: usize,
    /// MCP over HTTP is mounted at `/mcp` (and documented).
    pub mcp: bool,
    pub openapi: Arc<OnceLock<Arc<serde_json::Value>>>,
}

impl AppState {
    pub fn new(config: &ServerConfig) -> Result<AppState, ServeError> {
        let accounts = match &config.storage {
            Some(location) => Accounts::open_remote(location)?,
            None => Accounts::open(&config.data)?,
        };
        accounts.set_recheck(config.accounts_recheck);
        Ok(AppState {
            accounts: Arc::new(accounts),
            namespaces: Arc::new(namespaces::Namespaces::new(
                &config.data,
                config.engine.clone(),
                config.readers,
                config.storage.clone(),
            )),
            jobs: Arc::new(jobs::Jobs::new(config.jobs)),
            limiter: Arc::new(ratelimit::Limiter::new(config.rate)),
            usage: Arc::new(Usage::open(&config.data, config.storage.as_ref())?),
            limits: config.limits,
            max_body: config.max_body,
            mcp: config.mcp,
            openapi: Arc::new(OnceLock::new()),
        })
    }
}

/// Serves the HTTP API on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: ServerConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let state = AppState::new(&config)?;
    let mut app = http::router(state.clone());
    if config.mcp {
        app = app.merge(mcp::http_router(state.clone()));
    }
    // The web view at /ui, behind the API's key check.
    app = app.merge(gitloom_web::router(web::WebSource::new(state.clone())));
    let flusher = tokio::spawn(flush_usage(state.usage.clone()));
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(ServeError::Io);
    flusher.abort();
    // What was counted since the last flush is written before the process ends (the
    // journal would recover it anyway).
    let usage = state.usage.clone();
    let flushed = tokio::task::spawn_blocking(move || usage.flush())
        .await
        .map_err(|e| ServeError::Io(std::io::Error::other(e)))?;
    if let Err(e) = flushed {
        tracing::warn!(error = %e, "usage not written at shutdown; the journal keeps it");
    }
    served
}

/// Writes usage records every [`usage::FLUSH_EVERY`].
async fn flush_usage(usage: Arc<Usage>) {
    let mut tick = tokio::time::interval(usage::FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let u = usage.clone();
        match tokio::task::spawn_blocking(move || u.flush()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "usage records not written; retrying"),
            Err(e) => tracing::warn!(error = %e, "usage flush task failed"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Accounts(#[from] AccountError),
    #[error(transparent)]
    Usage(#[from] usage::UsageError),
    #[error("server: {0}")]
    Io(std::io::Error),
}
