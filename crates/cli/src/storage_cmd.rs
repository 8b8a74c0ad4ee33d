//! `--storage s3://bucket/prefix`: opening a namespace kept in object storage, which
//! every store command then reads and writes through `gitloom_remote::Storage` like a
//! local store (`crate::open_storage`). The local copy is a cache (a bare mirror under
//! `$XDG_CACHE_HOME/gitloom/remote/`); every command revalidates it against the
//! namespace's head first, and a write returns only once the head names it.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use gitloom_remote::{Location, Namespace, RemoteNamespace, Storage};

use crate::cli::Cli;
use crate::render::outln;
use crate::{flush_warnings, print_json};

/// `gitloom --storage … sync`: opening revalidated already; report where the mirror
/// stands.
pub fn sync(storage: &Storage, json: bool) -> Result<()> {
    let Storage::Remote(r) = storage else {
        bail!("sync through --storage needs a namespace in object storage");
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
