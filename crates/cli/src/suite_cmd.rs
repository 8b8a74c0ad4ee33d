//! `gitloom eval suite DATA`: every store of the shared data folder in one table,
//! with `--lopo GRID` the leave-one-persona-out figure of every searched knob, and
//! with `--ablate KNOBS` what switching each knob off moves on every store.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gitloom_engine::EngineOptions;
use gitloom_eval::Report;
use gitloom_eval::suite::{self, Ablation, AblationReport, Grid, KnobReport, Row, Store};
use gitloom_eval::{EngineBackend, RunOptions};

use crate::render::outln;

/// What `eval suite` was asked.
pub struct SuiteArgs<'a> {
    pub data: &'a Path,
    pub skip: &'a [String],
    pub lopo: Option<&'a PathBuf>,
    pub ablate: Option<&'a PathBuf>,
    pub json: bool,
}

pub fn run(args: &SuiteArgs<'_>, options: EngineOptions) -> Result<()> {
    let stores: Vec<Store> = suite::discover(args.data)?
        .into_iter()
        .filter(|s| !args.skip.iter().any(|k| k == s.name()))
        .collect();
    let quiet = |_: usize, _: usize| {};
    let opts = RunOptions {
        progress: Some(&quiet),
        build: gitloom_engine::BUILD.to_owned(),
        ..RunOptions::default()
    };
    // Read and checked before the long runs: a bad file fails at once.
    let ablation = args.ablate.map(|f| Ablation::read(f)).transpose()?;
    if let Some(a) = &ablation {
        a.check(&options)?;
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut reports: Vec<(Store, Report)> = Vec::new();
    for s in &stores {
        eprintln!("suite: {} …", s.name());
        let mut backend = EngineBackend::with_options(options.clone());
        let report = suite::run_store(&mut backend, s, &opts)
            .with_context(|| format!("suite: {} failed", s.name()))?;
        rows.push(Row::of(s.name(), &report));
        reports.push((s.clone(), report));
    }
    let knobs: Vec<KnobReport> = match args.lopo {
        Some(file) => {
            let grid = Grid::read(file)?;
            let personas: Vec<Store> = stores.iter().filter(|s| s.is_persona()).cloned().collect();
            suite::leave_one_out(&options, &personas, &grid, &opts, &|what| {
                eprintln!("lopo: {what}");
            })?
        }
        None => Vec::new(),
    };
    let ablated: Vec<AblationReport> = match &ablation {
        Some(a) => suite::ablate(&options, &reports, a, &opts, &|what| {
            eprintln!("ablate: {what}");
        })?,
        None => Vec::new(),
    };
    if args.json {
        return crate::print_json(&serde_json::json!({
            "stores": rows,
            "leave_one_persona_out": knobs,
            "ablation": ablated,
            "build": gitloom_engine::BUILD,
        }));
    }
    print_rows(&rows)?;
    if !knobs.is_empty() {
        print_knobs(&knobs)?;
    }
    if !ablated.is_empty() {
        print_ablation(&ablated)?;
    }
    Ok(())
}

fn print_ablation(knobs: &[AblationReport]) -> Result<()> {
    let Some(first) = knobs.first() else {
        return Ok(());
    };
    outln!()?;
    outln!(
        "Each knob switched off (per store: queries whose first answer turned right / wrong, and the change in the objective, the mean of P@1, R@5, MRR, abstention F1):"
    )?;
    let names: Vec<&str> = first.stores.iter().map(|m| m.store.as_str()).collect();
    outln!("| knob | default → off | {} | all |", names.join(" | "))?;
    outln!("|---|---|{}---|", "---|".repeat(names.len()))?;
    for k in knobs {
        let cells: Vec<String> = k
            .stores
            .iter()
            .map(|m| {
                if m.gained == 0 && m.lost == 0 && m.objective == 0.0 {
                    "·".to_owned()
                } else {
                    format!("+{} / −{} ({:+.3})", m.gained, m.lost, m.objective)
                }
            })
            .collect();
        let (g, l) = k
            .stores
            .iter()
            .fold((0, 0), |(g, l), m| (g + m.gained, l + m.lost));
        outln!(
            "| {} | {} → {} | {} | +{g} / −{l} |",
            k.knob,
            k.default,
            k.off,
            cells.join(" | ")
        )?;
    }
    Ok(())
}

/// A figure to three places, or a dash where the run gives none (a cut-off deeper
/// than its limit).
fn cell(x: f64) -> String {
    if x.is_nan() {
        "-".to_owned()
    } else {
        format!("{x:.3}")
    }
}

fn print_rows(rows: &[Row]) -> Result<()> {
    outln!(
        "| store | queries | P@1 | R@5 | R@10 | R_all@5 | nDCG@10 | MRR | abstention F1 | return | p50 ms |"
    )?;
    outln!("|---|---|---|---|---|---|---|---|---|---|---|")?;
    for r in rows {
        outln!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} % | {:.1} |",
            r.store,
            r.queries,
            cell(r.p_at_1),
            cell(r.recall_at_5),
            cell(r.recall_at_10),
            cell(r.recall_all_at_5),
            cell(r.ndcg_at_10),
            cell(r.mrr),
            cell(r.abstention_f1),
            r.corpus_return_ratio * 100.0,
            r.p50_ms
        )?;
    }
    Ok(())
}

fn print_knobs(knobs: &[KnobReport]) -> Result<()> {
    outln!()?;
    outln!(
        "Leave one persona out (objective: mean of P@1, R@5, MRR, abstention F1; held-out at the value chosen on the other personas / at the default / at its own best):"
    )?;
    outln!("| knob | default | held out | chosen | at chosen | at default | own best |")?;
    outln!("|---|---|---|---|---|---|---|")?;
    for k in knobs {
        for h in &k.held_out {
            outln!(
                "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} |",
                k.knob,
                k.default,
                h.persona,
                h.chosen,
                h.at_chosen,
                h.at_default,
                h.at_own_best
            )?;
        }
    }
    Ok(())
}
