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
    /// Jobs one account may have running at once (more are refused with 429).
    #[arg(long, default_value_t = gitloom_server::JobLimits::default().running)]
    pub jobs_running: usize,
    /// Seconds a finished job's result is kept for polling.
    #[arg(long, default_value_t = gitloom_server::JobLimits::default().ttl.as_secs())]
    pub job_ttl: u64,
    /// Finished jobs kept per account (the newest; older ones are forgotten).
    #[arg(long, default_value_t = gitloom_server::JobLimits::default().kept)]
    pub jobs_kept: usize,
    /// Messages one ingest request may carry.
    #[arg(long, default_value_t = gitloom_server::Limits::default().ingest_messages)]
    pub ingest_max_messages: usize,
    /// Bytes one ingested message may hold.
    #[arg(long, default_value_t = gitloom_server::Limits::default().ingest_message_bytes)]
    pub ingest_max_message_bytes: usize,
    /// Messages one account may have in running ingest jobs at once.
    #[arg(long, default_value_t = gitloom_server::JobLimits::default().pending_messages)]
    pub ingest_max_pending: usize,
    /// With --storage: milliseconds a look at the shared accounts may answer later
    /// requests for (0: each request sees every revocation made before it arrived,
    /// at the cost of one conditional read of object storage per request).
    #[arg(long, default_value_t = 0)]
    pub accounts_recheck_ms: u64,
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
    /// List accounts (or one) with their keys' ids and prefixes, never the keys.
    ListKeys { name: Option<String> },
    /// Revoke a key (by its id from list-keys, or the key itself); every server
    /// refuses it from its next request on.
    RevokeKey { name: String, key: String },
    /// Delete an account: its keys stop working at once and its namespaces are
    /// deleted (with --keep, kept where they are under a tombstone). An account made
    /// later with the same name starts empty and never sees them.
    DeleteAccount {
        name: String,
        /// Keep the account's data (for the operator) instead of deleting it.
        #[arg(long)]
        keep: bool,
    },
    /// An account's usage: per namespace, requests by op, writes, ingested messages,
    /// model tokens and storage bytes, summed over every node's records.
    Usage { name: String },
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
    config.jobs = gitloom_server::JobLimits {
        running: args.jobs_running.max(1),
        ttl: std::time::Duration::from_secs(args.job_ttl),
        kept: args.jobs_kept,
        pending_messages: args.ingest_max_pending,
        ..gitloom_server::JobLimits::default()
    };
    config.limits = gitloom_server::Limits {
        ingest_messages: args.ingest_max_messages,
        ingest_message_bytes: args.ingest_max_message_bytes,
    };
    config.accounts_recheck = std::time::Duration::from_millis(args.accounts_recheck_ms);
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
    let storage = cli
        .storage
        .as_ref()
        .map(|url| Location::from_url(url).with_context(|| format!("--storage {url}")))
        .transpose()?;
    let accounts = match (&storage, &args.data) {
        // The accounts every `serve --storage` node over this location shares.
        (Some(location), _) => Accounts::open_remote(location)?,
        (None, Some(data)) => {
            std::fs::create_dir_all(data)
                .with_context(|| format!("cannot create {}", data.display()))?;
            Accounts::open(data)?
        }
        (None, None) => anyhow::bail!(
            "say where the accounts are: --data DIR (the server's data directory) or --storage s3://…"
        ),
    };
    match &args.command {
        AdminCommand::CreateAccount { name } => print_key(cli, &accounts.create_account(name)?),
        AdminCommand::CreateKey { name } => print_key(cli, &accounts.create_key(name)?),
        AdminCommand::ListKeys { name } => {
            let listing = match name {
                Some(n) => vec![accounts.list_keys(n)?],
                None => accounts.list()?,
            };
            if cli.json {
                return crate::print_json(&listing);
            }
            for a in &listing {
                outln!(
                    "{}  (data: accounts/{}, created {})",
                    a.account,
                    a.tenant,
                    a.created
                )?;
                for k in &a.keys {
                    outln!("  {}  {}…  created {}", k.id, k.prefix, k.created)?;
                }
            }
            Ok(())
        }
        AdminCommand::RevokeKey { name, key } => {
            let revoked = accounts.revoke_key(name, key)?;
            if cli.json {
                return crate::print_json(&revoked);
            }
            outln!("revoked {} ({}…) of {name}", revoked.id, revoked.prefix)?;
            Ok(())
        }
        AdminCommand::DeleteAccount { name, keep } => delete_account(
            cli,
            &accounts,
            args.data.as_deref(),
            storage.as_ref(),
            name,
            *keep,
        ),
        AdminCommand::Usage { name } => {
            let tenant = accounts.tenant(name)?;
            let data = args.data.clone().unwrap_or_else(std::env::temp_dir);
            let usage = gitloom_server::Usage::reader(&data, storage.as_ref());
            let namespaces = gitloom_server::namespaces::Namespaces::new(
                &data,
                EngineOptions {
                    embedder: EmbedderChoice::None,
                    ..EngineOptions::default()
                },
                1,
                storage.clone(),
            );
            let report =
                gitloom_server::usage::report(&usage, &namespaces, &tenant.id, &tenant.name, true)?;
            if cli.json {
                return crate::print_json(&report);
            }
            for (ns, u) in &report.namespaces {
                outln!(
                    "{ns}: {} requests, {} writes, {} messages ingested, {} model tokens, {} bytes",
                    u.requests_total,
                    u.counts.writes,
                    u.counts.ingested_messages,
                    u.counts.model_tokens,
                    u.storage_bytes
                )?;
            }
            outln!(
                "total: {} requests ({} outside namespaces), {} writes, {} bytes",
                report.total.requests_total,
                report.account_requests.total_requests(),
                report.total.counts.writes,
                report.total.storage_bytes
            )?;
            Ok(())
        }
    }
}

fn print_key(cli: &Cli, key: &gitloom_server::NewKey) -> Result<()> {
    if cli.json {
        return crate::print_json(key);
    }
    outln!("account: {}", key.account)?;
    outln!("key id:  {}", key.key_id)?;
    outln!(
        "api key: {}  (shown once; only its hash is stored)",
        key.api_key
    )?;
    Ok(())
}

/// `gitloom admin delete-account`: the keys go first (from the next request on no
/// server accepts them), then the data, then the tombstone says it is gone. Run
/// again after an interruption, it finishes the deletion.
fn delete_account(
    cli: &Cli,
    accounts: &Accounts,
    data: Option<&std::path::Path>,
    storage: Option<&Location>,
    name: &str,
    keep: bool,
) -> Result<()> {
    let fate = if keep {
        gitloom_server::DataFate::Kept
    } else {
        gitloom_server::DataFate::Deleting
    };
    let stones = accounts.delete_account(name, fate)?;
    let mut done = Vec::new();
    if !keep {
        for t in &stones {
            gitloom_server::namespaces::purge_tenant(data, storage, &t.tenant)?;
            accounts.mark_deleted(&t.tenant)?;
            done.push(t.tenant.clone());
        }
    }
    let report = serde_json::json!({
        "account": name,
        "keys_revoked": true,
        "data": if keep { "kept" } else { "deleted" },
        "tenants": if keep { stones.iter().map(|t| t.tenant.clone()).collect() } else { done },
    });
    if cli.json {
        return crate::print_json(&report);
    }
    if keep {
        outln!(
            "deleted account {name}; its data is kept (no account can reach it): {}",
            stones
                .iter()
                .map(|t| format!("accounts/{}", t.tenant))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    } else {
        outln!("deleted account {name} and its data")?;
    }
    Ok(())
}
