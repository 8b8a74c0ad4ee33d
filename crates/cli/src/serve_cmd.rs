//! `gitloom mcp`, `gitloom serve` and `gitloom admin`: the network front-ends
//! (`gitloom-server`) wired to the command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use gitloom_engine::{EmbedderChoice, EngineOptions};
use gitloom_remote::{Location, Storage};
use gitloom_server::{Accounts, ServerConfig};

use crate::cli::Cli;
use crate::render::outln;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one; the address is printed on stderr).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// The data directory: accounts and every namespace's store; with --storage, only
    /// this node's caches (mirrors and indexes, rebuilt from object storage at will).
    #[arg(long, env = "GITLOOM_DATA")]
    pub data: PathBuf,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = gitloom_server::DEFAULT_MAX_BODY)]
    pub max_body: usize,
    /// Sustained requests per second allowed per API key.
    #[arg(long, default_value_t = 200.0)]
    pub rate: f64,
    /// Requests a key may make in one burst.
    #[arg(long, default_value_t = 400.0)]
    pub burst: f64,
    /// Also serve MCP over streamable HTTP at /mcp (headers: Authorization: Bearer KEY,
    /// X-Gitloom-Namespace: NAME).
    #[arg(long)]
    pub mcp: bool,
    /// Reader engines per open namespace (reads of one namespace that run at once).
    #[arg(long, default_value_t = gitloom_server::namespaces::DEFAULT_READERS)]
    pub readers: usize,
}

#[derive(Debug, Args)]
pub struct AdminArgs {
    /// The server's data directory (not needed with --storage, where the accounts
    /// live in object storage).
    #[arg(long, env = "GITLOOM_DATA")]
    pub data: Option<PathBuf>,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create an account and its first API key (printed once; only its hash is kept).
    CreateAccount { name: String },
    /// Add an API key to an account (printed once).
    CreateKey { name: String },
}

/// The engine options for long-running servers: the default model is loaded once
/// and shared by every store, not once per engine.
fn shared_options(cli: &Cli) -> Result<EngineOptions> {
    let mut options = crate::model_cmd::engine_options(cli)?;
    if let EmbedderChoice::Default = options.embedder {
        options.embedder = match gitloom_engine::embed::default_embedder() {
            Ok(Some(e)) => EmbedderChoice::Given(e),
            Ok(None) => {
                eprintln!(
                    "warning: no embedding model is installed (run `gitloom model install`); serving with the lexical arm only"
                );
                EmbedderChoice::None
            }
            Err(e) => {
                eprintln!(
                    "warning: the embedding model cannot be loaded ({e}); serving with the lexical arm only"
                );
                EmbedderChoice::None
            }
        };
    }
    Ok(options)
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `gitloom mcp`: MCP over stdin/stdout on a store (`--repo`, or with `--storage` a
/// namespace in object storage).
pub fn mcp_on(storage: Storage) -> Result<()> {
    let server = gitloom_server::mcp::McpServer::new(storage);
    runtime()?.block_on(server.serve_stdio())?;
    Ok(())
}

/// `gitloom serve`.
pub fn serve(cli: &Cli, args: &ServeArgs) -> Result<()> {
    std::fs::create_dir_all(&args.data)
        .with_context(|| format!("cannot create {}", args.data.display()))?;
    let mut config = ServerConfig::new(&args.data, shared_options(cli)?);
    if let Some(url) = &cli.storage {
        config.storage = Some(Location::from_url(url).with_context(|| format!("--storage {url}"))?);
    }
    config.max_body = args.max_body;
    config.mcp = args.mcp;
    config.readers = args.readers;
    config.rate = gitloom_server::RateLimit {
        per_second: args.rate,
        burst: args.burst,
    };
    runtime()?.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        let local = listener.local_addr()?;
        eprintln!(
            "gitloom {} listening on http://{local}",
            gitloom_engine::BUILD
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        gitloom_server::serve(listener, config, shutdown).await?;
        anyhow::Ok(())
    })
}

/// `gitloom admin`.
pub fn admin(cli: &Cli, args: &AdminArgs) -> Result<()> {
    let json = cli.json;
    let accounts = match (&cli.storage, &args.data) {
        // The accounts every `serve --storage` node over this location shares.
        (Some(url), _) => Accounts::open_remote(
            &Location::from_url(url).with_context(|| format!("--storage {url}"))?,
        )?,
        (None, Some(data)) => {
            std::fs::create_dir_all(data)
                .with_context(|| format!("cannot create {}", data.display()))?;
            Accounts::open(data)?
        }
        (None, None) => anyhow::bail!(
            "say where the accounts are: --data DIR (the server's data directory) or --storage s3://…"
        ),
    };
    let key = match &args.command {
        AdminCommand::CreateAccount { name } => accounts.create_account(name)?,
        AdminCommand::CreateKey { name } => accounts.create_key(name)?,
    };
    if json {
        crate::print_json(&key)?;
    } else {
        outln!("account: {}", key.account)?;
        outln!(
            "api key: {}  (shown once; only its hash is stored)",
            key.api_key
        )?;
    }
    Ok(())
}
