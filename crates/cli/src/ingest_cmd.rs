//! `gitloom ingest FILE|-`: conversations into memories, offline or with a model.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use gitloom_cortex::llm::{ChatClient, ChatConfig};
use gitloom_cortex::{IngestOptions, IngestReport, IngestStage, ModelExtractor, OfflineExtractor};

use crate::cli::Cli;
use crate::render::outln;

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Sessions as JSON (a list of {id, date, messages} or one {"messages": [...]}); `-` reads stdin.
    pub file: PathBuf,
    /// An OpenAI-compatible endpoint for extraction; without it the offline extractor runs.
    #[arg(long, env = "GITLOOM_LLM_URL")]
    pub llm_url: Option<String>,
    /// Model name sent to --llm-url.
    #[arg(long, env = "GITLOOM_LLM_MODEL", default_value = "gpt-4o-mini")]
    pub llm_model: String,
    /// Environment variable holding the endpoint's API key.
    #[arg(long, default_value = "OPENAI_API_KEY")]
    pub llm_key_env: String,
    /// Seconds one model request may take (connection to last byte). The default
    /// suits a small model on a CPU; a timed-out request is retried once.
    #[arg(long, env = "GITLOOM_LLM_TIMEOUT", default_value_t = gitloom_cortex::llm::DEFAULT_TIMEOUT_SECS)]
    pub llm_timeout: u64,
    /// Sessions extracted at once: default 1 for a model server on this machine
    /// (a CPU-served model is no faster with more), 4 otherwise.
    #[arg(long, env = "GITLOOM_LLM_CONCURRENCY")]
    pub concurrency: Option<usize>,
    /// Re-extract sessions already ingested with the same transcript.
    #[arg(long)]
    pub reextract: bool,
}

/// The model endpoint the --llm-* flags name, if any.
pub fn chat_config(
    url: Option<&str>,
    model: &str,
    key_env: &str,
    timeout_secs: u64,
) -> Result<Option<ChatConfig>> {
    let Some(url) = url else {
        return Ok(None);
    };
    if timeout_secs == 0 {
        bail!("--llm-timeout must be at least 1 second");
    }
    let mut config = ChatConfig::new(url.to_owned(), model.to_owned());
    config.api_key_env = Some(key_env.to_owned());
    config.timeout = std::time::Duration::from_secs(timeout_secs);
    Ok(Some(config))
}

/// Sessions extracted at once: as asked, else one for a model on this machine (a
/// CPU-served model is no faster with more, and queued requests run into their
/// timeouts), else the default.
pub fn concurrency(asked: Option<usize>, config: Option<&ChatConfig>) -> usize {
    asked
        .unwrap_or(match config {
            Some(c) if c.is_local() => 1,
            _ => IngestOptions::default().concurrency,
        })
        .max(1)
}

pub fn run(args: &IngestArgs, cli: &Cli) -> Result<()> {
    let text = if args.file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read stdin")?;
        s
    } else {
        std::fs::read_to_string(&args.file)
            .with_context(|| format!("cannot read {}", args.file.display()))?
    };
    let sessions = gitloom_cortex::parse_sessions(&text)
        .with_context(|| format!("{}", args.file.display()))?;
    let storage = crate::open_storage(cli)?;
    let config = chat_config(
        args.llm_url.as_deref(),
        &args.llm_model,
        &args.llm_key_env,
        args.llm_timeout,
    )?;
    let concurrency = concurrency(args.concurrency, config.as_ref());
    let options = IngestOptions {
        concurrency,
        reextract: args.reextract,
        ..Default::default()
    };
    let bar = indicatif::ProgressBar::new(sessions.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    // A model may take minutes per session: say which sessions it is working on and
    // how much of its reply has come in, so a slow model does not look like a dead one.
    let started = std::time::Instant::now();
    let with_model = config.is_some();
    let progress = |p: gitloom_cortex::IngestProgress| match p.stage {
        IngestStage::Extracting if with_model => {
            let got = if p.received > 0 {
                format!(", {} characters received", p.received)
            } else {
                String::new()
            };
            bar.set_message(format!(
                "extracting {} ({} of {} done{got}, {:.0} s)",
                p.session,
                p.done,
                p.total,
                started.elapsed().as_secs_f64()
            ));
            bar.tick();
        }
        IngestStage::Committed | IngestStage::Failed => {
            bar.set_message(format!("ingest {}", p.session));
            bar.set_position(p.done as u64);
        }
        _ => {}
    };
    let model = match config {
        Some(config) => Some(ModelExtractor::new(ChatClient::new(config)?)),
        None => None,
    };
    // Through object storage a lost race replays the whole ingest on the new head;
    // re-ingesting what is already there changes nothing, so that is safe.
    let report = storage.write_with(|engine| -> Result<_> {
        Ok(match &model {
            Some(extractor) => {
                gitloom_cortex::ingest(engine, &sessions, extractor, &options, &progress)?
            }
            None => {
                gitloom_cortex::ingest(engine, &sessions, &OfflineExtractor, &options, &progress)?
            }
        })
    })?;
    bar.finish_and_clear();
    crate::flush_warnings(storage.engine());
    if cli.json {
        crate::print_json(&report)?;
    } else {
        print_human(&report)?;
    }
    if report.failed > 0 {
        bail!(
            "extraction failed for {} session(s) (see above); they were not recorded, so running the same command again extracts them",
            report.failed
        );
    }
    if report.errors > 0 {
        bail!(
            "{} fact(s) or session(s) could not be ingested (see above); nothing invalid was written",
            report.errors
        );
    }
    Ok(())
}

fn print_human(r: &IngestReport) -> Result<()> {
    for s in &r.sessions {
        let commit = s
            .commit
            .as_deref()
            .map_or("no change", |c| &c[..c.len().min(10)]);
        if s.skipped {
            outln!("{} {}  already ingested", s.date, s.id)?;
            continue;
        }
        if s.failed {
            outln!(
                "{} {}  not ingested: extraction failed (nothing written; the next run extracts it again)",
                s.date,
                s.id
            )?;
            for e in &s.errors {
                eprintln!("  error: {e}");
            }
            continue;
        }
        outln!(
            "{} {}  {commit}  facts {}  new {}  extended {}  corrected {}  superseded {}  duplicate {}",
            s.date,
            s.id,
            s.facts,
            s.new,
            s.extended,
            s.corrected,
            s.superseded,
            s.duplicate
        )?;
        for e in &s.errors {
            eprintln!("  error: {e}");
        }
    }
    for f in &r.flagged {
        match &f.resolved {
            Some(who) => outln!(
                "flagged {:?} in {} ({}): resolved to {who}",
                f.reference,
                f.session,
                f.path
            )?,
            None => outln!(
                "flagged {:?} in {} ({}): unresolved",
                f.reference,
                f.session,
                f.path
            )?,
        }
    }
    outln!(
        "{} sessions, {} turns, {} facts: {} new, {} extended, {} corrected, {} superseded, {} duplicate; {} commits ({}, {:.0} ms)",
        r.sessions.len(),
        r.turns,
        r.facts,
        r.new,
        r.extended,
        r.corrected,
        r.superseded,
        r.duplicate,
        r.commits,
        r.extractor,
        r.elapsed_ms
    )?;
    Ok(())
}
