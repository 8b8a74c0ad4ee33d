//! `--storage s3://bucket/prefix`: the same commands over a namespace kept in object
//! storage. The local copy is a cache (a bare mirror under
//! `$XDG_CACHE_HOME/gitloom/remote/`); every command revalidates it against the
//! namespace's head first, and a write returns only once the head names it.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use gitloom_remote::{Location, Namespace, RemoteNamespace, Storage};

use crate::cli::{Cli, Command};
use crate::render::{self, outln};
use crate::{flush_warnings, print_json};

/// True for the commands handled here. The others run as usual: `model`, `synth` and
/// `eval` need no store, and `ingest`, `gc`, `doctor`, `consolidate`, `serve` and
/// `admin` open `--storage` themselves (`crate::open_storage`, the server's config).
pub fn applies(command: &Command) -> bool {
    !matches!(
        command,
        Command::Model(_)
            | Command::Synth { .. }
            | Command::Eval(_)
            | Command::Admin(_)
            | Command::Ingest(_)
            | Command::Gc(_)
            | Command::Doctor
            | Command::Consolidate(_)
            | Command::Serve(_)
    )
}

/// Runs a store command through `--storage`.
pub fn run(cli: &Cli, url: &str) -> Result<()> {
    let json = cli.json;
    if matches!(cli.command, Command::Init { .. }) {
        bail!("a namespace in object storage needs no init: its first write creates it");
    }
    let storage = open(cli, url)?;
    match &cli.command {
        Command::Write { path, message } => {
            let mut content = Vec::new();
            std::io::stdin()
                .read_to_end(&mut content)
                .context("cannot read the memory from stdin")?;
            let out = storage.write(|e| e.write(path, &content, message.clone()))?;
            flush_warnings(storage.engine());
            render::write_outcome(&out, json)?;
        }
        Command::Forget { path } => {
            let out = storage.write(|e| e.delete(path))?;
            render::write_outcome(&out, json)?;
        }
        Command::Remember(args) => {
            let req = crate::remember_request(args)?;
            let out = storage.write(|e| e.remember(req.clone()))?;
            flush_warnings(storage.engine());
            render::write_outcome(&out, json)?;
        }
        Command::Import { src } => {
            let out = storage
                .write(|e| e.import_dir(src))
                .with_context(|| format!("import from {} failed", src.display()))?;
            flush_warnings(storage.engine());
            render::write_outcome(&out, json)?;
        }
        Command::Get { path, at } => {
            let got = storage.read(|e| e.get(path, at.as_deref()))?;
            if json {
                print_json(&got)?;
            } else {
                write!(std::io::stdout().lock(), "{}", got.content)?;
            }
        }
        Command::Log { path, limit } => {
            let entries = storage.read(|e| e.log(path.as_deref(), *limit))?;
            if json {
                print_json(&entries)?;
            } else {
                for e in entries {
                    outln!(
                        "{} {} {}",
                        &e.commit[..12.min(e.commit.len())],
                        e.time,
                        e.summary
                    )?;
                }
            }
        }
        Command::Search(q) => {
            let hits = storage.read(|e| e.search(&q.request(false)))?;
            if json {
                print_json(
                    &serde_json::json!({"query": q.query, "hits": hits, "build": gitloom_engine::BUILD}),
                )?;
            } else {
                render::hits(&hits)?;
            }
        }
        Command::Retrieve(q) => {
            let r = storage.read(|e| e.retrieve_at(&q.request(q.explain), q.at.as_deref()))?;
            for w in &r.warnings {
                eprintln!("warning: {w}");
            }
            if json {
                print_json(&r)?;
            } else {
                render::retrieval(&r)?;
            }
        }
        Command::Stats => {
            let stats = storage.read(|e| e.stats())?;
            if json {
                print_json(&stats)?;
            } else {
                render::stats(&stats)?;
            }
        }
        Command::Tree { topic } => {
            let listing = storage.read(|e| e.tree(topic.as_deref()))?;
            if json {
                print_json(&listing)?;
            } else {
                render::tree(&listing)?;
            }
        }
        Command::Topics => {
            let topics = storage.read(|e| e.topics())?;
            if json {
                print_json(&topics)?;
            } else {
                render::topics(&topics)?;
            }
        }
        Command::Entity { name } => {
            let rows = storage.read(|e| e.entity(name))?;
            if json {
                print_json(&serde_json::json!({"name": name, "mentions": rows}))?;
            } else if rows.is_empty() {
                outln!("no memory mentions {name:?}")?;
            } else {
                for r in rows {
                    let role = r.role.map(|x| format!(" ({x})")).unwrap_or_default();
                    outln!("{}  {}{role}", r.path, r.entity)?;
                }
            }
        }
        Command::Rebuild => {
            // Rebuilds this node's index of the namespace (a cache), not the namespace.
            let report = storage.read(|e| e.rebuild())?;
            flush_warnings(storage.engine());
            render::sync(&report, json)?;
        }
        Command::Embed => {
            let stats = storage.read(|e| e.embed_pending())?;
            flush_warnings(storage.engine());
            if json {
                print_json(
                    &serde_json::json!({"embedded": stats.embedded, "cached": stats.cached, "model": storage.engine().embedder_id()}),
                )?;
            } else {
                outln!(
                    "embedded {} text(s), {} found in the cache ({})",
                    stats.embedded,
                    stats.cached,
                    storage.engine().embedder_id().unwrap_or("-")
                )?;
            }
        }
        Command::Init { .. } => unreachable!("refused above"),
        Command::Sync => {
            // Opening revalidated already; report where the mirror stands.
            let Storage::Remote(r) = &storage else {
                unreachable!("--storage always opens a remote namespace")
            };
            let report = r.revalidate()?;
            if json {
                print_json(&report)?;
            } else {
                outln!(
                    "namespace {} at {} (generation {})",
                    r.namespace(),
                    report.commit.as_deref().unwrap_or("(no commits)"),
                    report.generation
                )?;
            }
        }
        Command::Mcp => crate::serve_cmd::mcp_on(storage)?,
        other => unreachable!("`applies` keeps {other:?} on its own path"),
    }
    Ok(())
}

/// Opens the namespace `--storage URL --namespace NAME` through its local mirror.
pub fn open(cli: &Cli, url: &str) -> Result<Storage> {
    let location = Location::from_url(url)?;
    let namespace = Namespace::parse(&cli.namespace)?;
    let base = cache_base()?;
    let cache = cache_dir(&base, url, &namespace);
    let mut options = crate::model_cmd::engine_options(cli)?;
    // One vector cache for every namespace on this machine: a cold start of a
    // namespace embeds only texts this machine has never seen.
    options
        .vector_cache
        .get_or_insert_with(|| base.join("gitloom").join("remote").join("vectors.db"));
    let remote = RemoteNamespace::open(&location, namespace, &cache, options)
        .with_context(|| format!("cannot open namespace {} at {url}", cli.namespace))?;
    flush_warnings(remote.engine());
    Ok(Storage::Remote(Box::new(remote)))
}

/// `$XDG_CACHE_HOME`, else `~/.cache`.
fn cache_base() -> Result<PathBuf> {
    match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(home) => Ok(PathBuf::from(home).join(".cache")),
            None => bail!("neither XDG_CACHE_HOME nor HOME is set: no place for the local cache"),
        },
    }
}

/// `<cache base>/gitloom/remote/<hash of the URL>/<namespace>`. Deleting it costs only
/// a cold start.
fn cache_dir(base: &std::path::Path, url: &str, namespace: &Namespace) -> PathBuf {
    let key = blake3::hash(url.trim_end_matches('/').as_bytes()).to_hex();
    base.join("gitloom")
        .join("remote")
        .join(&key.as_str()[..16])
        .join(namespace.as_str())
}
