//! `gitloom ui`: the web view (`gitloom-web`) of one store, without a key, on
//! loopback only. `gitloom serve` shows the same pages to its accounts, behind
//! their API keys.

use std::net::SocketAddr;

use anyhow::{Context, Result, bail};
use clap::Args;
use gitloom_remote::Storage;

use crate::serve_cmd::runtime;

#[derive(Debug, Args)]
pub struct UiArgs {
    /// Address to listen on: a loopback address (127.0.0.1, ::1), since the view asks
    /// for no key. Port 0 picks a free one; the address is printed on stderr.
    #[arg(long, default_value = "127.0.0.1:8765")]
    pub addr: SocketAddr,
}

/// Serves the web view of `storage` until Ctrl-C.
pub fn run(storage: Storage, args: &UiArgs) -> Result<()> {
    if !args.addr.ip().is_loopback() {
        bail!(
            "gitloom ui shows the store to anyone who can reach it, without a key, so it listens on a loopback address only (not {}); to share a store, use `gitloom serve`, whose web view asks for an API key",
            args.addr
        );
    }
    let app = gitloom_web::router(gitloom_web::LocalSource::new(storage)).route(
        "/",
        axum::routing::get(|| async { axum::response::Redirect::to("/ui/") }),
    );
    runtime()?.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        let local = listener.local_addr()?;
        eprintln!(
            "gitloom {} web view on http://{local}/ui/ (Ctrl-C stops it)",
            gitloom_engine::BUILD
        );
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("web view")?;
        anyhow::Ok(())
    })
}
