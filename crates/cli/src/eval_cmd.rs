//! `gitloom eval …`: the retrieval benchmarks and the CI quality gate.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use gitloom_engine::{EmbedderChoice, EngineOptions};
use gitloom_eval::{EngineBackend, GateConfig, Granularity, Report, RunOptions};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{Cli, EvalArgs, EvalCommand};
use crate::render::outln;

fn bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} queries ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

fn options<'a>(
    common: &EvalArgs,
    granularity: Option<Granularity>,
    progress: &'a dyn Fn(usize, usize),
) -> RunOptions<'a> {
    RunOptions {
        limit: common.limit,
        granularity,
        per_query: common.per_query.clone(),
        only: (!common.only.is_empty()).then(|| common.only.clone()),
        progress: Some(progress),
        build: gitloom_engine::BUILD.to_owned(),
        ..RunOptions::default()
    }
}

fn print(report: &Report, json: bool) -> Result<()> {
    let value = report.to_json();
    if json {
        return crate::print_json(&value);
    }
    outln!(
        "{} ({} queries: {} answerable, {} unanswerable)",
        report.dataset,
        value["queries"],
        value["answerable"],
        value["unanswerable"]
    )?;
    for k in [
        "p_at_1",
        "recall_at_5",
        "recall_at_10",
        "recall_all_at_5",
        "ndcg_at_10",
        "mrr",
        "corpus_return_ratio",
    ] {
        match value.get(k).and_then(serde_json::Value::as_f64) {
            Some(x) => outln!("  {k:<20} {x:.3}")?,
            None => outln!("  {k:<20} -     (deeper than --limit)")?,
        }
    }
    outln!(
        "  abstention f1        {:.3}",
        value["abstention"]["f1"].as_f64().unwrap_or(f64::NAN)
    )?;
    outln!(
        "  latency p50/p95 ms   {:.2} / {:.2}",
        value["latency_ms"]["p50"].as_f64().unwrap_or(f64::NAN),
        value["latency_ms"]["p95"].as_f64().unwrap_or(f64::NAN)
    )?;
    Ok(())
}

fn granularity(s: &str) -> Result<Granularity> {
    s.parse::<Granularity>()
        .map_err(|e| anyhow::anyhow!("--granularity: {e}"))
}

/// Engine options shared by every store of a run: the embedder is loaded once, and
/// vectors are cached across runs in the user's cache folder.
fn eval_options(cli: &Cli) -> Result<EngineOptions> {
    let mut options = crate::model_cmd::engine_options(cli)?;
    if let EmbedderChoice::Default = options.embedder {
        options.embedder = match gitloom_engine::embed::default_embedder()? {
            Some(e) => EmbedderChoice::Given(e),
            None => {
                eprintln!(
                    "warning: no embedding model is installed (gitloom model install); evaluating the lexical arm only"
                );
                EmbedderChoice::None
            }
        };
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("gitloom");
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;
    options.vector_cache = Some(cache.join("eval-vectors.db"));
    Ok(options)
}

/// `--via ingest`: the store is built by ingestion and hits are scored by the
/// messages they cite (gitloom_eval::e2e).
fn run_e2e(cmd: &EvalCommand, cli: &Cli, engine: EngineOptions) -> Result<()> {
    let (name, common) = match cmd {
        EvalCommand::Probe { common, .. } => ("probe", common),
        EvalCommand::Locomo { common, .. } => ("locomo", common),
        EvalCommand::Longmemeval { common, .. } => ("longmemeval", common),
        EvalCommand::Gate { .. } | EvalCommand::Suite { .. } => {
            bail!("--via ingest is for probe, locomo and longmemeval")
        }
    };
    let config = crate::ingest_cmd::chat_config(
        common.llm_url.as_deref(),
        &common.llm_model,
        &common.llm_key_env,
        common.llm_timeout,
    )?;
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} conversations ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(format!("{name} via ingest"));
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let only = (!common.only.is_empty()).then(|| common.only.clone());
    let opts = gitloom_eval::e2e::E2eOptions {
        limit: common.limit,
        concurrency: crate::ingest_cmd::concurrency(common.concurrency, config.as_ref()),
        extractor: match config {
            Some(c) => gitloom_eval::e2e::ExtractorChoice::Model(c),
            None => gitloom_eval::e2e::ExtractorChoice::Offline,
        },
        engine,
        only: only.clone(),
        per_query: common.per_query.clone(),
        progress: Some(&progress),
        build: gitloom_engine::BUILD.to_owned(),
    };
    let (dataset, convs) = match cmd {
        EvalCommand::Probe { corpus, .. } => {
            let conv = gitloom_eval::e2e::data::persona(corpus)?;
            (conv.id.clone(), vec![conv])
        }
        EvalCommand::Locomo { file, .. } => (
            "locomo".to_owned(),
            gitloom_eval::e2e::data::locomo(file, only.as_deref())?,
        ),
        EvalCommand::Longmemeval { file, .. } => (
            "longmemeval".to_owned(),
            gitloom_eval::e2e::data::longmemeval(file, only.as_deref())?,
        ),
        EvalCommand::Gate { .. } | EvalCommand::Suite { .. } => {
            bail!("--via ingest is for probe, locomo and longmemeval")
        }
    };
    let report = gitloom_eval::e2e::run(&dataset, convs, &opts)?;
    bar.finish_and_clear();
    let value = report.to_json();
    if let Some(section) = &common.save_baseline {
        gitloom_eval::write_baseline(&common.baseline_file, section, &value)?;
        eprintln!("saved as {section:?} in {}", common.baseline_file.display());
    }
    if cli.json {
        return crate::print_json(&value);
    }
    print_e2e(&report)
}

fn print_e2e(r: &gitloom_eval::e2e::E2eReport) -> Result<()> {
    let a = &r.all;
    outln!(
        "{} via ingest ({}): {} questions ({} answerable, {} unanswerable, {} skipped)",
        r.dataset,
        r.extractor,
        a.questions,
        a.answerable,
        a.unanswerable,
        r.skipped
    )?;
    for (level, h) in [("message", &a.message), ("session", &a.session)] {
        outln!(
            "  {level:<8} hit@1 {:.3}  hit@5 {:.3}  hit@10 {:.3}  mrr {:.3}  ({} scored)",
            h.hit_at_1,
            h.hit_at_5,
            h.hit_at_10,
            h.mrr,
            h.scored
        )?;
    }
    outln!(
        "  false abstentions {}  abstention f1 {:.3}",
        a.false_abstentions,
        a.abstention.f1
    )?;
    if let Some(f) = &r.facts {
        outln!(
            "  facts: recall {:.3} ({}/{})  subject purity {:.3} (by any name {:.3})  catch-all {:.3}  titles {:.3}  ({} memories)",
            f.fact_recall,
            f.counts.recalled,
            f.counts.facts,
            f.subject_purity,
            f.subject_purity_any_name,
            f.catch_all_share,
            f.title_share,
            f.counts.memories
        )?;
    }
    let i = &r.ingest;
    outln!(
        "  ingest: {} sessions, {} turns, {} memories ({} under no topic), {:.0} ms ({:.0} turns/s){}",
        i.counts.sessions,
        i.counts.turns,
        i.counts.memories,
        i.counts.catch_all,
        i.counts.elapsed_ms,
        i.timings_ms.get("turns_per_s").copied().unwrap_or_default(),
        if i.counts.failed_sessions > 0 {
            format!(", {} sessions failed", i.counts.failed_sessions)
        } else {
            String::new()
        }
    )?;
    Ok(())
}

pub fn run(cmd: &EvalCommand, cli: &Cli) -> Result<()> {
    let via_ingest = match cmd {
        EvalCommand::Probe { common, .. }
        | EvalCommand::Locomo { common, .. }
        | EvalCommand::Longmemeval { common, .. } => common.via == crate::cli::Via::Ingest,
        EvalCommand::Gate { .. } | EvalCommand::Suite { .. } => false,
    };
    if via_ingest {
        return run_e2e(cmd, cli, eval_options(cli)?);
    }
    let json = cli.json;
    let bar = bar();
    let progress = gitloom_eval::run::bar_progress(&bar);
    let engine_options = eval_options(cli)?;
    let mut backend = EngineBackend::with_options(engine_options.clone());
    // Every dataset command: the same setup, a runner, the same finish.
    let mut finish = |name: &str,
                      common: &EvalArgs,
                      run: &mut dyn FnMut(
        &mut EngineBackend,
        &RunOptions,
    ) -> Result<Report, gitloom_eval::EvalError>,
                      g: Option<Granularity>|
     -> Result<()> {
        bar.set_prefix(name.to_owned());
        backend.explain = common.per_query.is_some();
        let report = run(&mut backend, &options(common, g, &progress))?;
        bar.finish_and_clear();
        save(common, &report)?;
        print(&report, json)
    };
    match cmd {
        EvalCommand::Probe {
            corpus,
            queries,
            common,
        } => {
            let queries = queries
                .clone()
                .unwrap_or_else(|| corpus.join("queries.jsonl"));
            finish(
                "probe",
                common,
                &mut |b, o| gitloom_eval::run_probe(b, corpus, &queries, o),
                None,
            )
        }
        EvalCommand::Locomo {
            file,
            granularity: g,
            turn_context,
            common,
        } => {
            let context = match turn_context.as_str() {
                "plain" => gitloom_eval::locomo::TurnContext::Plain,
                "quoted" => gitloom_eval::locomo::TurnContext::Quoted,
                other => bail!("--turn-context: {other:?} is not one of plain, quoted"),
            };
            finish(
                "locomo",
                common,
                &mut |b, o| {
                    let mut o = o.clone();
                    o.turn_context = context;
                    gitloom_eval::run_locomo(b, file, &o)
                },
                Some(granularity(g)?),
            )
        }
        EvalCommand::Longmemeval {
            file,
            granularity: g,
            common,
        } => finish(
            "longmemeval",
            common,
            &mut |b, o| gitloom_eval::run_longmemeval(b, file, o),
            Some(granularity(g)?),
        ),
        EvalCommand::Gate {
            baseline,
            data,
            update,
            sections,
        } => gate(baseline, data, *update, sections, json, engine_options),
        EvalCommand::Suite {
            data,
            skip,
            lopo,
            ablate,
        } => crate::suite_cmd::run(
            &crate::suite_cmd::SuiteArgs {
                data,
                skip,
                lopo: lopo.as_ref(),
                ablate: ablate.as_ref(),
                json,
            },
            engine_options,
        ),
    }
}

fn save(common: &EvalArgs, report: &Report) -> Result<()> {
    if let Some(section) = &common.save_baseline {
        gitloom_eval::write_baseline(&common.baseline_file, section, &report.to_json())?;
        eprintln!("saved as {section:?} in {}", common.baseline_file.display());
    }
    Ok(())
}

/// The probe personas end to end (`e2e_probe-sre`, …): each store built by the
/// offline extractor from the persona's conversations, hits scored by the messages
/// they cite, facts scored on its facts.jsonl.
fn gate_e2e(
    data: &Path,
    engine: &EngineOptions,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<(String, serde_json::Value)>> {
    let mut out = Vec::new();
    let dirs = gitloom_eval::e2e::persona_dirs(data)?;
    if dirs.is_empty() {
        bail!(
            "gate: no probe persona (probe-*/ with sessions.json and facts.jsonl) in {}",
            data.display()
        );
    }
    for dir in dirs {
        let conv = gitloom_eval::e2e::data::persona(&dir)?;
        if !wanted(&format!("e2e_{}", conv.id)) {
            continue;
        }
        let opts = gitloom_eval::e2e::E2eOptions {
            limit: 10,
            concurrency: 1,
            extractor: gitloom_eval::e2e::ExtractorChoice::Offline,
            engine: engine.clone(),
            only: None,
            per_query: None,
            progress: None,
            build: gitloom_engine::BUILD.to_owned(),
        };
        let name = format!("e2e_{}", conv.id);
        let report = gitloom_eval::e2e::run(&conv.id.clone(), vec![conv], &opts)
            .with_context(|| format!("gate: {name} run failed"))?;
        out.push((name, report.to_json()));
    }
    Ok(out)
}

/// The fast gate CI runs: every probe persona and LoCoMo conv-26 (read path) and the
/// probe personas end to end, compared with the baseline.
fn gate(
    baseline: &Path,
    data: &Path,
    update: bool,
    only: &[String],
    json: bool,
    options: EngineOptions,
) -> Result<()> {
    let wanted = |name: &str| only.is_empty() || only.iter().any(|s| s == name);
    let no_progress = |_: usize, _: usize| {};
    let opts = |only: Option<Vec<String>>| RunOptions {
        only,
        progress: Some(&no_progress),
        build: gitloom_engine::BUILD.to_owned(),
        ..RunOptions::default()
    };
    let mut backend = EngineBackend::with_options(options.clone());
    // Every probe persona of the data folder, then LoCoMo conv-26.
    let mut sections: Vec<(String, serde_json::Value)> = Vec::new();
    for store in gitloom_eval::suite::discover(data)?
        .into_iter()
        .filter(|s| s.is_persona() && wanted(s.name()))
    {
        let report = gitloom_eval::suite::run_store(&mut backend, &store, &opts(None))
            .with_context(|| format!("gate: {} run failed", store.name()))?;
        sections.push((store.name().to_owned(), report.to_json()));
    }
    if wanted("locomo_conv26") {
        let locomo = gitloom_eval::run_locomo(
            &mut backend,
            &data.join("locomo/locomo-dev.json"),
            &opts(Some(vec!["conv-26".into()])),
        )
        .context("gate: LoCoMo conv-26 run failed")?;
        sections.push(("locomo_conv26".to_owned(), locomo.to_json()));
    }
    sections.extend(gate_e2e(data, &options, &wanted)?);
    if sections.is_empty() {
        bail!("gate: no section named {}", only.join(", "));
    }
    if update {
        for (name, report) in &sections {
            gitloom_eval::write_baseline(baseline, name, report)?;
        }
        let names: Vec<&str> = sections.iter().map(|(n, _)| n.as_str()).collect();
        eprintln!(
            "baseline {} updated ({})",
            baseline.display(),
            names.join(", ")
        );
        return Ok(());
    }
    let mut cfg = GateConfig::default();
    // End to end: ingestion's counts and timings are for reading, not gating; fewer
    // false abstentions and a smaller catch-all share are better.
    cfg.ignore
        .extend(["ingest", "counts", "examples"].map(str::to_owned));
    cfg.lower_is_better
        .extend(["false_abstentions", "catch_all_share"].map(str::to_owned));
    let mut failed = Vec::new();
    let mut summary = serde_json::Map::new();
    for (name, report) in &sections {
        let regressions = gitloom_eval::check_baseline(baseline, name, report, &cfg)?;
        summary.insert(
            name.clone(),
            serde_json::json!({"regressions": regressions.len()}),
        );
        if regressions.is_empty() {
            eprintln!("gate {name}: ok");
        } else {
            eprintln!(
                "gate {name}: {} regression(s) against {}:\n{}",
                regressions.len(),
                baseline.display(),
                gitloom_eval::format_regressions(&regressions)
            );
            failed.push(name.as_str());
        }
    }
    if json {
        crate::print_json(&summary)?;
    }
    if !failed.is_empty() {
        bail!("retrieval quality regressed in {}", failed.join(", "));
    }
    Ok(())
}
