//! `gitloom`: the command-line front-end. Thin: parse arguments, call the engine,
//! print data on stdout (`--json` for machines) and progress and warnings on stderr.
#![forbid(unsafe_code)]

mod cli;
mod eval_cmd;
mod ingest_cmd;
mod maint_cmd;
mod model_cmd;
mod op_check;
mod render;
mod serve_cmd;
mod storage_cmd;
mod suite_cmd;
mod ui_cmd;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Parser;
use gitloom_engine::{Engine, RememberRequest, RetrieveRequest};

use crate::cli::{Cli, Command};
use crate::render::outln;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // `gitloom log | head`: the reader left; that is not our failure.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {}", said_once(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by ": ", each said once: an error whose message
/// already ends with its cause's ("cannot read x: No such file or directory") does
/// not repeat it.
fn said_once(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

fn repo_dir(cli: &Cli) -> PathBuf {
    cli.repo.clone().unwrap_or_else(|| PathBuf::from("."))
}

/// A progress bar on stderr for long work (rebuilds, embedding), drawn only when
/// the work is big enough to be worth watching.
fn progress_bar() -> Box<gitloom_engine::semantic::Progress> {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    Box::new(move |what: &str, done: usize, total: usize| {
        if total < 64 {
            return;
        }
        bar.set_message(what.to_owned());
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if done >= total {
            bar.finish_and_clear();
        }
    })
}

fn open(cli: &Cli) -> Result<Engine> {
    let dir = repo_dir(cli);
    let options = model_cmd::engine_options(cli)?;
    let engine = Engine::open_with_progress(&dir, options, Some(progress_bar()))
        .with_context(|| format!("cannot open the store at {}", dir.display()))?;
    flush_warnings(&engine);
    Ok(engine)
}

/// The store a maintenance or ingest command works on: `--storage` (a namespace in
/// object storage, through its mirror) or the local store at `--repo`.
fn open_storage(cli: &Cli) -> Result<gitloom_remote::Storage> {
    match &cli.storage {
        Some(url) => storage_cmd::open(cli, url),
        None => Ok(gitloom_remote::Storage::Local(Box::new(open(cli)?))),
    }
}

fn flush_warnings(engine: &Engine) {
    for w in engine.take_warnings() {
        eprintln!("warning: {w}");
    }
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    let json = cli.json;
    match &cli.command {
        Command::Init { .. } if cli.storage.is_some() => {
            bail!("a namespace in object storage needs no init: its first write creates it");
        }
        Command::Init { dir } => {
            let dir = dir.clone().unwrap_or_else(|| repo_dir(&cli));
            let options = model_cmd::engine_options(&cli)?;
            let engine = Engine::init_with(&dir, options)
                .with_context(|| format!("cannot create a store at {}", dir.display()))?;
            flush_warnings(&engine);
            if json {
                print_json(
                    &serde_json::json!({"store": engine.root(), "build": gitloom_engine::BUILD}),
                )?;
            } else {
                outln!("gitloom store ready at {}", engine.root().display())?;
            }
        }
        Command::Write { path, message } => {
            let mut content = Vec::new();
            std::io::stdin()
                .read_to_end(&mut content)
                .context("cannot read the memory from stdin")?;
            let storage = open_storage(&cli)?;
            let out = storage.write(|e| e.write(path, &content, message.clone()))?;
            flush_warnings(storage.engine());
            render::write_outcome(&out, json)?;
        }
        Command::Forget { path } => {
            let out = open_storage(&cli)?.write(|e| e.delete(path))?;
            render::write_outcome(&out, json)?;
        }
        Command::Remember(args) => {
            let req = remember_request(args)?;
            let storage = open_storage(&cli)?;
            let out = storage.write(|e| e.remember(req.clone()))?;
            flush_warnings(storage.engine());
            render::write_outcome(&out, json)?;
        }
        Command::Import { src } => {
            let storage = open_storage(&cli)?;
            let out = storage
                .write(|e| e.import_dir(src))
                .with_context(|| format!("import from {} failed", src.display()))?;
            flush_warnings(storage.engine());
            render::write_outcome(&out, json)?;
        }
        Command::Get { path, at } => {
            let got = open_storage(&cli)?.read(|e| e.get(path, at.as_deref()))?;
            if json {
                print_json(&got)?;
            } else {
                write!(std::io::stdout().lock(), "{}", got.content)?;
            }
        }
        Command::Log { path, limit } => {
            let entries = open_storage(&cli)?.read(|e| e.log(path.as_deref(), *limit))?;
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
        Command::Tree { topic } => {
            let listing = open_storage(&cli)?.read(|e| e.tree(topic.as_deref()))?;
            if json {
                print_json(&listing)?;
            } else {
                render::tree(&listing)?;
            }
        }
        Command::Topics => {
            let topics = open_storage(&cli)?.read(|e| e.topics())?;
            if json {
                print_json(&topics)?;
            } else {
                render::topics(&topics)?;
            }
        }
        Command::Sync if cli.storage.is_some() => {
            storage_cmd::sync(&open_storage(&cli)?, json)?;
        }
        Command::Sync => {
            let engine = open(&cli)?;
            // Opening already synced to HEAD: report that work, not a no-op second pass.
            let report = match engine.take_opening_sync() {
                Some(r) => r,
                None => engine.sync()?,
            };
            flush_warnings(&engine);
            render::sync(&report, json)?;
        }
        Command::Rebuild => {
            // Through --storage this rebuilds this machine's index (a cache), not the namespace.
            let storage = open_storage(&cli)?;
            let report = storage.read(|e| e.rebuild())?;
            flush_warnings(storage.engine());
            render::sync(&report, json)?;
        }
        Command::Stats => {
            let stats = open_storage(&cli)?.read(|e| e.stats())?;
            if json {
                print_json(&stats)?;
            } else {
                render::stats(&stats)?;
            }
        }
        Command::Entity { name } => {
            let rows = open_storage(&cli)?.read(|e| e.entity(name))?;
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
        Command::Search(q) => {
            if q.at.is_some() || q.now.is_some() {
                anyhow::bail!(
                    "search reads the store as it is now: --at and --now are `gitloom retrieve`'s"
                );
            }
            let req = q.request(false)?;
            let hits = open_storage(&cli)?.read(|e| e.search(&req))?;
            if json {
                print_json(
                    &serde_json::json!({"query": q.query, "hits": hits, "build": gitloom_engine::BUILD}),
                )?;
            } else {
                render::hits(&hits)?;
            }
        }
        Command::Retrieve(q) => {
            let req = q.request(q.explain)?;
            let r = open_storage(&cli)?.read(|e| e.retrieve_at(&req, q.at.as_deref()))?;
            for w in &r.warnings {
                eprintln!("warning: {w}");
            }
            if json {
                print_json(&r)?;
            } else {
                render::retrieval(&r)?;
            }
        }
        Command::Synth { out, count, seed } => {
            let files = gitloom_synth::corpus(*count, *seed);
            for f in &files {
                let path = out.join(&f.path);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                std::fs::write(&path, &f.content)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            if json {
                print_json(&serde_json::json!({"written": files.len(), "out": out}))?;
            } else {
                outln!("wrote {} memory files below {}", files.len(), out.display())?;
            }
        }
        Command::Embed => {
            let storage = open_storage(&cli)?;
            let stats = storage.read(|e| e.embed_pending())?;
            let engine = storage.engine();
            flush_warnings(engine);
            if json {
                print_json(
                    &serde_json::json!({"embedded": stats.embedded, "cached": stats.cached, "model": engine.embedder_id()}),
                )?;
            } else {
                outln!(
                    "embedded {} text(s), {} found in the cache ({})",
                    stats.embedded,
                    stats.cached,
                    engine.embedder_id().unwrap_or("-")
                )?;
            }
        }
        Command::Model(cmd) => model_cmd::run(cmd, json)?,
        Command::Gc(args) => maint_cmd::gc(&cli, args)?,
        Command::Doctor => maint_cmd::doctor(&cli)?,
        Command::Consolidate(args) => maint_cmd::consolidate(&cli, args)?,
        Command::Eval(cmd) => eval_cmd::run(cmd, &cli)?,
        Command::Ingest(args) => ingest_cmd::run(args, &cli)?,
        Command::Mcp => serve_cmd::mcp_on(open_storage(&cli)?)?,
        Command::Serve(args) => serve_cmd::serve(&cli, args)?,
        Command::Admin(args) => serve_cmd::admin(&cli, args)?,
        Command::Ui(args) => ui_cmd::run(open_storage(&cli)?, args)?,
    }
    Ok(())
}

/// The fields of `gitloom remember` as an engine request.
fn remember_request(args: &cli::RememberArgs) -> Result<RememberRequest> {
    let body = match (&args.body, &args.body_file) {
        (Some(b), None) => b.clone(),
        (None, Some(f)) => read_body(f)?,
        (None, None) => String::new(),
        (Some(_), Some(_)) => bail!("give the body with --body or --body-file, not both"),
    };
    Ok(RememberRequest {
        title: args.title.clone(),
        tier: args.tier,
        topic: args.topic.clone(),
        summary: args.summary.clone(),
        body,
        cues: args.cue.clone(),
        entities: args.entity.clone(),
        tags: args.tag.clone(),
        related: args.related.clone(),
        supersedes: args.supersedes.clone(),
        confidence: args.confidence,
        valid_from: args.valid_from.clone(),
        source: args.source.clone(),
    })
}

fn read_body(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read the body from stdin")?;
        return Ok(s);
    }
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

impl cli::QueryArgs {
    fn request(&self, explain: bool) -> Result<RetrieveRequest> {
        let now = match &self.now {
            Some(s) => Some(
                gitloom_model::When::parse(s)
                    .map_err(|e| anyhow::anyhow!("--now: {e}"))?
                    .unix_seconds(),
            ),
            None => None,
        };
        Ok(RetrieveRequest {
            query: self.query.clone(),
            limit: self.limit,
            tier: self.tier,
            topic: self.topic.clone(),
            explain,
            now,
        })
    }
}
