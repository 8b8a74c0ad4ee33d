//! The cross-store protocol: every data set of a shared data folder in one run, and
//! for every default chosen by search its leave-one-persona-out figure.
//!
//! [`discover`] finds the stores: each `probe*` folder holding `queries.jsonl` (one
//! persona each), `locomo/locomo-dev.json`, `longmemeval/longmemeval_s-dev.json`.
//! [`run_store`] runs each with one configuration and reports per store P@1,
//! R@5, MRR, abstention F1, corpus return and p50 latency (LongMemEval also its
//! official `recall_all@5` and NDCG@10).
//!
//! [`leave_one_out`] reads a grid ([`Grid`]: knobs of the read path, each with the
//! values a search tried): for every knob and every persona, the value that scores
//! best on the *other* personas is chosen and scored on the held-out one, beside the
//! shipped default's score there. A default whose held-out figure falls below the
//! figure of the value chosen without that persona was fitted to it.
//!
//! [`ablate`] reads knobs with their inert values ([`Ablation`]) and, one knob at a
//! time, runs every store with it switched off: per store, the change in the
//! objective and the queries whose first answer turned right or wrong. A knob that
//! moves nothing anywhere, or as many queries one way as the other, has not earned
//! its place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gitloom_engine::{EngineOptions, RetrieveConfig};
use serde::{Deserialize, Serialize};

use crate::{EngineBackend, EvalError, Report, RunOptions};

/// One store of the suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    /// A probe persona: its folder (holding `memories/` and `queries.jsonl`).
    Probe {
        name: String,
        dir: PathBuf,
    },
    Locomo {
        file: PathBuf,
    },
    LongMemEval {
        file: PathBuf,
    },
}

impl Store {
    pub fn name(&self) -> &str {
        match self {
            Store::Probe { name, .. } => name,
            Store::Locomo { .. } => "locomo",
            Store::LongMemEval { .. } => "longmemeval",
        }
    }

    pub fn is_persona(&self) -> bool {
        matches!(self, Store::Probe { .. })
    }
}

/// The stores under `data`, personas first (by name), then LoCoMo, then LongMemEval.
pub fn discover(data: &Path) -> Result<Vec<Store>, EvalError> {
    let entries = std::fs::read_dir(data).map_err(|source| EvalError::Read {
        path: data.to_owned(),
        source,
    })?;
    let mut personas: Vec<Store> = Vec::new();
    for e in entries {
        let e = e.map_err(|source| EvalError::Read {
            path: data.to_owned(),
            source,
        })?;
        let name = e.file_name().to_string_lossy().into_owned();
        let dir = e.path();
        if name.starts_with("probe") && dir.join("queries.jsonl").is_file() {
            personas.push(Store::Probe { name, dir });
        }
    }
    personas.sort_by(|a, b| a.name().cmp(b.name()));
    let mut out = personas;
    let locomo = data.join("locomo/locomo-dev.json");
    if locomo.is_file() {
        out.push(Store::Locomo { file: locomo });
    }
    let lme = data.join("longmemeval/longmemeval_s-dev.json");
    if lme.is_file() {
        out.push(Store::LongMemEval { file: lme });
    }
    if out.is_empty() {
        return Err(EvalError::data(
            data,
            "no probe*/queries.jsonl, locomo/locomo-dev.json or longmemeval/longmemeval_s-dev.json here",
        ));
    }
    Ok(out)
}

/// Runs one store with `backend`.
pub fn run_store(
    backend: &mut EngineBackend,
    store: &Store,
    opts: &RunOptions<'_>,
) -> Result<Report, EvalError> {
    match store {
        Store::Probe { dir, .. } => {
            crate::run_probe(backend, dir, &dir.join("queries.jsonl"), opts)
        }
        Store::Locomo { file } => crate::run_locomo(backend, file, opts),
        Store::LongMemEval { file } => crate::run_longmemeval(backend, file, opts),
    }
}

/// The figures the suite prints for one store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub store: String,
    pub queries: u64,
    pub p_at_1: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub recall_all_at_5: f64,
    pub ndcg_at_10: f64,
    pub mrr: f64,
    pub abstention_f1: f64,
    pub corpus_return_ratio: f64,
    pub p50_ms: f64,
}

impl Row {
    pub fn of(store: &str, report: &Report) -> Row {
        let v = report.to_json();
        let f = |k: &str| {
            v.get(k)
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(f64::NAN)
        };
        Row {
            store: store.to_owned(),
            queries: v["queries"].as_u64().unwrap_or(0),
            p_at_1: f("p_at_1"),
            recall_at_5: f("recall_at_5"),
            recall_at_10: f("recall_at_10"),
            recall_all_at_5: f("recall_all_at_5"),
            ndcg_at_10: f("ndcg_at_10"),
            mrr: f("mrr"),
            abstention_f1: v["abstention"]["f1"].as_f64().unwrap_or(f64::NAN),
            corpus_return_ratio: f("corpus_return_ratio"),
            p50_ms: v["latency_ms"]["p50"].as_f64().unwrap_or(f64::NAN),
        }
    }

    /// The leave-one-out objective: the mean of P@1, R@5, MRR and abstention F1 (a
    /// store with no unanswerable question counts F1 as 1 when nothing abstained
    /// falsely, as the metric defines it).
    pub fn objective(&self) -> f64 {
        let f1 = if self.abstention_f1.is_nan() {
            1.0
        } else {
            self.abstention_f1
        };
        (self.p_at_1 + self.recall_at_5 + self.mrr + f1) / 4.0
    }
}

/// Engine options with `overrides` (a JSON document, as `--config` takes) merged
/// over `base`'s configuration (or the defaults).
pub fn with_overrides(
    base: &EngineOptions,
    overrides: &serde_json::Value,
) -> Result<EngineOptions, EvalError> {
    let config = base
        .config
        .clone()
        .unwrap_or_default()
        .with_overrides(overrides)
        .map_err(|e| EvalError::InvalidOption(format!("config: {e}")))?;
    Ok(EngineOptions {
        config: Some(config),
        ..base.clone()
    })
}

/// Knobs of the read path with the values a search tried, e.g.
/// `{"knobs": {"lexical_share": [0.1, 0.2, 0.3], "priors.superseded": [0.3, 0.5]}}`.
/// A knob is a dotted path into the configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// What the grid is for (free text, shown nowhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    pub knobs: BTreeMap<String, Vec<serde_json::Value>>,
}

impl Grid {
    pub fn read(file: &Path) -> Result<Grid, EvalError> {
        read_json(file)
    }
}

/// A JSON file of the suite (a grid, an ablation), its path named on every error.
fn read_json<T: serde::de::DeserializeOwned>(file: &Path) -> Result<T, EvalError> {
    let text = std::fs::read_to_string(file).map_err(|source| EvalError::Read {
        path: file.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| EvalError::json(file, "", e))
}

/// A knob's default in `config`, or an error naming the file kind (`what`) that
/// named a knob the read path does not have.
fn default_of(
    config: &RetrieveConfig,
    knob: &str,
    what: &str,
) -> Result<serde_json::Value, EvalError> {
    knob_value(config, knob).ok_or_else(|| {
        EvalError::backend(format!(
            "{what}: {knob:?} is not a setting of the read path"
        ))
    })
}

/// `{"a": {"b": value}}` for the knob `a.b`.
pub fn knob_override(knob: &str, value: &serde_json::Value) -> serde_json::Value {
    knob.rsplit('.').fold(value.clone(), |inner, part| {
        let mut m = serde_json::Map::new();
        m.insert(part.to_owned(), inner);
        serde_json::Value::Object(m)
    })
}

/// A knob's value in a configuration, by its dotted path.
pub fn knob_value(config: &RetrieveConfig, knob: &str) -> Option<serde_json::Value> {
    let mut v = serde_json::to_value(config).ok()?;
    for part in knob.split('.') {
        v = v.get(part)?.clone();
    }
    Some(v)
}

/// Knobs of the read path, each with the value that switches it off, e.g.
/// `{"knobs": {"priors.tier": 1.0, "weights.graph": 0.0}}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ablation {
    /// What the file is for (free text, shown nowhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    pub knobs: BTreeMap<String, serde_json::Value>,
}

impl Ablation {
    pub fn read(file: &Path) -> Result<Ablation, EvalError> {
        read_json(file)
    }

    /// Every knob is a setting of the read path and its value one it can take:
    /// checked before any store runs.
    pub fn check(&self, base: &EngineOptions) -> Result<(), EvalError> {
        let config = base.config.clone().unwrap_or_default();
        for (knob, off) in &self.knobs {
            default_of(&config, knob, "ablate")?;
            config
                .with_overrides(&knob_override(knob, off))
                .map_err(|e| EvalError::InvalidOption(format!("ablate: {knob} = {off}: {e}")))?;
        }
        Ok(())
    }
}

/// One store with one knob switched off, against the default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    pub store: String,
    /// The objective ([`Row::objective`]) with the knob off, less the default's.
    pub objective: f64,
    /// Queries whose first answer was wrong and is right with the knob off.
    pub gained: usize,
    /// Queries whose first answer was right and is wrong with the knob off.
    pub lost: usize,
}

/// Compares two runs over the same queries (`Report::right_at_1`, in the order asked).
pub fn moved(store: &str, default: &Report, off: &Report) -> Moved {
    let pairs = default.right_at_1.iter().zip(&off.right_at_1);
    let count = |from: bool| {
        pairs
            .clone()
            .filter(|(d, o)| **d == Some(from) && **o == Some(!from))
            .count()
    };
    Moved {
        store: store.to_owned(),
        objective: Row::of(store, off).objective() - Row::of(store, default).objective(),
        gained: count(false),
        lost: count(true),
    }
}

/// One knob of an ablation: what switching it off moves on every store.
#[derive(Debug, Clone, Serialize)]
pub struct AblationReport {
    pub knob: String,
    pub default: serde_json::Value,
    pub off: serde_json::Value,
    pub stores: Vec<Moved>,
}

/// Runs every store of `defaults` (each store with its report at `base`'s settings)
/// once per knob of `ablation`, that knob at its inert value and the rest at `base`'s.
pub fn ablate(
    base: &EngineOptions,
    defaults: &[(Store, Report)],
    ablation: &Ablation,
    opts: &RunOptions<'_>,
    progress: &dyn Fn(&str),
) -> Result<Vec<AblationReport>, EvalError> {
    let config = base.config.clone().unwrap_or_default();
    let mut out = Vec::new();
    for (knob, off) in &ablation.knobs {
        let default = default_of(&config, knob, "ablate")?;
        let options = with_overrides(base, &knob_override(knob, off))?;
        let mut stores = Vec::new();
        for (store, at_default) in defaults {
            progress(&format!("{knob} = {off} on {}", store.name()));
            let mut backend = EngineBackend::with_options(options.clone());
            let report = run_store(&mut backend, store, opts)?;
            stores.push(moved(store.name(), at_default, &report));
        }
        out.push(AblationReport {
            knob: knob.clone(),
            default,
            off: off.clone(),
            stores,
        });
    }
    Ok(out)
}

/// One held-out persona of one knob.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub persona: String,
    /// The value that scores best on the other personas.
    pub chosen: serde_json::Value,
    /// The held-out persona's objective at `chosen`.
    pub at_chosen: f64,
    /// Its objective at the shipped default.
    pub at_default: f64,
    /// Its objective at its own best value (what tuning on it would reach).
    pub at_own_best: f64,
}

/// Leave-one-persona-out for one knob.
#[derive(Debug, Clone, Serialize)]
pub struct KnobReport {
    pub knob: String,
    pub default: serde_json::Value,
    /// Objective per value per persona, values in grid order.
    pub grid: Vec<(serde_json::Value, BTreeMap<String, f64>)>,
    pub held_out: Vec<HeldOut>,
}

/// Leave-one-persona-out over `grid`: every value of every knob on every persona
/// (the others at `base`'s settings), then the choice without each persona.
pub fn leave_one_out(
    base: &EngineOptions,
    personas: &[Store],
    grid: &Grid,
    opts: &RunOptions<'_>,
    progress: &dyn Fn(&str),
) -> Result<Vec<KnobReport>, EvalError> {
    let config = base.config.clone().unwrap_or_default();
    let mut out = Vec::new();
    for (knob, values) in &grid.knobs {
        let default = default_of(&config, knob, "grid")?;
        let mut values = values.clone();
        if !values.contains(&default) {
            values.push(default.clone());
        }
        let mut table: Vec<(serde_json::Value, BTreeMap<String, f64>)> = Vec::new();
        for v in &values {
            let options = with_overrides(base, &knob_override(knob, v))?;
            let mut scores = BTreeMap::new();
            for p in personas {
                progress(&format!("{knob} = {v} on {}", p.name()));
                let mut backend = EngineBackend::with_options(options.clone());
                let report = run_store(&mut backend, p, opts)?;
                scores.insert(p.name().to_owned(), Row::of(p.name(), &report).objective());
            }
            table.push((v.clone(), scores));
        }
        let score = |i: usize, p: &str| table[i].1.get(p).copied().unwrap_or(f64::NAN);
        let at_default = values.iter().position(|v| *v == default).unwrap_or(0);
        let mut held_out = Vec::new();
        for h in personas {
            let others: Vec<&str> = personas
                .iter()
                .map(Store::name)
                .filter(|n| *n != h.name())
                .collect();
            let mean_others = |i: usize| -> f64 {
                others.iter().map(|p| score(i, p)).sum::<f64>() / others.len().max(1) as f64
            };
            // Ties go to the earlier value in the grid.
            let chosen = (0..values.len()).fold(0, |best, i| {
                if mean_others(i) > mean_others(best) {
                    i
                } else {
                    best
                }
            });
            let own = (0..values.len()).fold(0, |best, i| {
                if score(i, h.name()) > score(best, h.name()) {
                    i
                } else {
                    best
                }
            });
            held_out.push(HeldOut {
                persona: h.name().to_owned(),
                chosen: values[chosen].clone(),
                at_chosen: score(chosen, h.name()),
                at_default: score(at_default, h.name()),
                at_own_best: score(own, h.name()),
            });
        }
        out.push(KnobReport {
            knob: knob.clone(),
            default,
            grid: table,
            held_out,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knob_is_a_dotted_path() {
        assert_eq!(
            knob_override("priors.superseded", &serde_json::json!(0.3)),
            serde_json::json!({"priors": {"superseded": 0.3}})
        );
        let c = RetrieveConfig::default();
        assert_eq!(
            knob_value(&c, "priors.superseded"),
            Some(serde_json::json!(c.priors.superseded))
        );
        assert_eq!(knob_value(&c, "priors.nothing"), None);
        let o = with_overrides(
            &EngineOptions::default(),
            &knob_override("priors.superseded", &serde_json::json!(0.25)),
        )
        .expect("valid");
        assert_eq!(o.config.expect("set").priors.superseded, 0.25);
        assert!(
            with_overrides(&EngineOptions::default(), &serde_json::json!({"nope": 1})).is_err()
        );
    }

    fn report(right: &[Option<bool>], p_at_1: f64) -> Report {
        let mut r = Report {
            right_at_1: right.to_vec(),
            ..Report::default()
        };
        r.metrics.p_at_1 = p_at_1;
        r.metrics.recall_at_5 = Some(0.0);
        r
    }

    #[test]
    fn a_knob_moves_the_queries_whose_first_answer_changes() {
        let (t, f) = (Some(true), Some(false));
        let default = report(&[t, t, f, f, None, t], 0.5);
        let off = report(&[t, f, t, t, None, f], 0.75);
        let m = moved("s", &default, &off);
        assert_eq!((m.gained, m.lost), (2, 2));
        // The objective is the mean of four figures, one of which moved by 0.25.
        assert!((m.objective - 0.0625).abs() < 1e-12, "{}", m.objective);
        let same = moved("s", &default, &default);
        assert_eq!((same.gained, same.lost, same.objective), (0, 0, 0.0));
    }

    #[test]
    fn the_stores_of_the_shared_folder() {
        let Some(dir) = crate::data_root::data_dir("") else {
            return;
        };
        let stores = discover(&dir).expect("stores");
        let names: Vec<&str> = stores.iter().map(Store::name).collect();
        assert!(
            names.contains(&"probe") && names.contains(&"locomo"),
            "{names:?}"
        );
        assert!(
            stores.iter().take_while(|s| s.is_persona()).count() >= 4,
            "{names:?}"
        );
    }
}
