//! `gitloom ingest FILE|-`: conversations into memories, offline or with a model.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use gitloom_cortex::llm::{ChatClient, ChatConfig};
use gitloom_cortex::{IngestOptions, IngestReport, ModelExtractor, OfflineExtractor};

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
    /// Sessions extracted at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Re-extract sessions already ingested with the same transcript.
    #[arg(long)]
    pub reextract: bool,
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
    let options = IngestOptions {
        concurrency: args.concurrency.max(1),
        reextract: args.reextract,
        ..Default::default()
    };
    let bar = indicatif::ProgressBar::new(sessions.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let progress = |p: gitloom_cortex::IngestProgress| {
        if p.stage == "committed" {
            bar.set_message(format!("ingest {}", p.session));
            bar.set_position(p.done as u64);
        }
    };
    let model = match &args.llm_url {
        Some(url) => {
            let mut config = ChatConfig::new(url.clone(), args.llm_model.clone());
            config.api_key_env = Some(args.llm_key_env.clone());
            Some(ModelExtractor::new(ChatClient::new(config)?))
        }
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
