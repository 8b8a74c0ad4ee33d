//! Runners: load a dataset, give each conversation / question a fresh store, query, score.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::metrics::{self, Label, Outcome, Report};
use crate::{Backend, Doc, EvalError, RankedHit};

/// What one memory is made of, for the conversation datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    Turn,
    Session,
}

impl Granularity {
    pub fn as_str(self) -> &'static str {
        match self {
            Granularity::Turn => "turn",
            Granularity::Session => "session",
        }
    }
}

impl std::str::FromStr for Granularity {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "turn" => Ok(Granularity::Turn),
            "session" => Ok(Granularity::Session),
            other => Err(format!(
                "unknown granularity {other:?} (expected turn or session)"
            )),
        }
    }
}

impl std::fmt::Display for Granularity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options shared by every runner.
#[derive(Clone)]
pub struct RunOptions<'a> {
    /// `--limit`: hits the user sees; used for corpus_return_ratio and abstention. The backend
    /// is asked for `max(limit, 20)` so that the @k metrics up to 20 exist.
    pub limit: usize,
    /// `None`: the dataset's default (LoCoMo `turn`, LongMemEval `session`); ignored by the probe.
    pub granularity: Option<Granularity>,
    /// Write one JSON line per query here.
    pub per_query: Option<PathBuf>,
    /// Only these conversations (LoCoMo `sample_id`), questions (LongMemEval `question_id`) or
    /// query ids (probe). An id that does not exist is an error.
    pub only: Option<Vec<String>>,
    /// Called after every query with (done, total).
    pub progress: Option<&'a dyn Fn(usize, usize)>,
    /// Copied into the report's `build`.
    pub build: String,
    /// LoCoMo turns: plain (default) or with the turn before quoted.
    pub turn_context: crate::locomo::TurnContext,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions {
            limit: 10,
            granularity: None,
            per_query: None,
            only: None,
            progress: None,
            build: String::new(),
            turn_context: crate::locomo::TurnContext::Plain,
        }
    }
}

/// A progress callback drawing on an indicatif bar (which draws on stderr by default).
pub fn bar_progress(bar: &indicatif::ProgressBar) -> impl Fn(usize, usize) + '_ {
    move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }
}

/// One query of a dataset.
#[derive(Debug, Clone)]
pub struct EvalQuery {
    pub id: String,
    pub query: String,
    pub shape: String,
    pub label: Label,
    /// When the question is asked (seconds since the epoch), where the dataset says:
    /// relative dates in it ("four weeks ago") count back from here.
    pub asked_at: Option<i64>,
}

/// One store's worth: the docs to load and the queries to ask it.
#[derive(Debug, Clone)]
pub struct Group {
    /// Conversation / question id (`probe` for the probe).
    pub id: String,
    pub docs: Vec<Doc>,
    pub queries: Vec<EvalQuery>,
    /// Store path -> dataset id (dia_id, session id, turn id), for the per-query log.
    pub ids: BTreeMap<String, String>,
}

/// A loaded dataset.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub name: String,
    pub granularity: Option<Granularity>,
    pub groups: Vec<Group>,
    /// Counts of data quirks met while loading.
    pub notes: BTreeMap<String, u64>,
}

/// Checks `only` against the ids present; unknown ids are an error.
pub(crate) fn check_only(
    only: Option<&[String]>,
    present: &[&str],
    what: &str,
) -> Result<(), EvalError> {
    if let Some(only) = only {
        let unknown: Vec<&str> = only
            .iter()
            .map(String::as_str)
            .filter(|o| !present.contains(o))
            .collect();
        if !unknown.is_empty() {
            return Err(EvalError::NothingSelected(format!(
                "no {what} with id {}",
                unknown.join(", ")
            )));
        }
    }
    Ok(())
}

pub(crate) fn selected(only: Option<&[String]>, id: &str) -> bool {
    only.is_none_or(|o| o.iter().any(|x| x == id))
}

/// `gitloom eval probe --corpus DIR --queries FILE`.
pub fn run_probe(
    backend: &mut dyn Backend,
    corpus_dir: &Path,
    queries_file: &Path,
    opts: &RunOptions<'_>,
) -> Result<Report, EvalError> {
    let ds = crate::probe::load(corpus_dir, queries_file, opts.only.as_deref())?;
    run_dataset(backend, ds, opts)
}

/// `gitloom eval locomo FILE [--granularity turn|session]`.
pub fn run_locomo(
    backend: &mut dyn Backend,
    file: &Path,
    opts: &RunOptions<'_>,
) -> Result<Report, EvalError> {
    let g = opts.granularity.unwrap_or(Granularity::Turn);
    let ds = crate::locomo::load(file, g, opts.turn_context, opts.only.as_deref())?;
    run_dataset(backend, ds, opts)
}

/// `gitloom eval longmemeval FILE [--granularity session|turn]`.
pub fn run_longmemeval(
    backend: &mut dyn Backend,
    file: &Path,
    opts: &RunOptions<'_>,
) -> Result<Report, EvalError> {
    let g = opts.granularity.unwrap_or(Granularity::Session);
    let ds = crate::longmemeval::load(file, g, opts.only.as_deref())?;
    run_dataset(backend, ds, opts)
}

#[derive(Serialize)]
struct LogHit<'a> {
    path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    arms: &'a BTreeMap<String, crate::ArmRank>,
}

#[derive(Serialize)]
struct LogLine<'a> {
    group: &'a str,
    id: &'a str,
    query: &'a str,
    shape: &'a str,
    label: &'static str,
    gold: &'a [String],
    gold_ids: Vec<&'a str>,
    hits: Vec<LogHit<'a>>,
    abstained: bool,
    corpus_size: usize,
    latency_ms: f64,
    explain: &'a serde_json::Value,
}

/// Runs any loaded dataset through `backend`.
pub fn run_dataset(
    backend: &mut dyn Backend,
    ds: Dataset,
    opts: &RunOptions<'_>,
) -> Result<Report, EvalError> {
    if opts.limit == 0 {
        return Err(EvalError::InvalidOption(
            "--limit must be at least 1".into(),
        ));
    }
    let total: usize = ds.groups.iter().map(|g| g.queries.len()).sum();
    if total == 0 {
        return Err(EvalError::NothingSelected(format!(
            "{}: no queries to run",
            ds.name
        )));
    }
    let mut log = match &opts.per_query {
        Some(p) => Some((
            p.as_path(),
            std::io::BufWriter::new(std::fs::File::create(p).map_err(|source| {
                EvalError::Write {
                    path: p.clone(),
                    source,
                }
            })?),
        )),
        None => None,
    };
    let mut outcomes = Vec::with_capacity(total);
    let mut done = 0;
    let Dataset {
        name,
        granularity,
        groups,
        notes,
    } = ds;
    for mut group in groups {
        let docs = std::mem::take(&mut group.docs);
        let n_docs = docs.len();
        backend.load(docs).map_err(|e| {
            EvalError::Backend(format!("loading {} ({n_docs} docs): {e}", group.id))
        })?;
        let corpus_size = backend.corpus_size();
        for q in &group.queries {
            let r = backend
                .query(&q.query, opts.limit, q.asked_at)
                .map_err(|e| EvalError::Backend(format!("query {} ({:?}): {e}", q.id, q.query)))?;
            if let Some((path, w)) = log.as_mut() {
                let line = LogLine {
                    group: &group.id,
                    id: &q.id,
                    query: &q.query,
                    shape: &q.shape,
                    label: q.label.kind(),
                    gold: q.label.gold(),
                    gold_ids: q
                        .label
                        .gold()
                        .iter()
                        .filter_map(|p| group.ids.get(p).map(String::as_str))
                        .collect(),
                    hits: r.hits.iter().map(|h| log_hit(h, &group.ids)).collect(),
                    abstained: r.abstained,
                    corpus_size,
                    latency_ms: r.latency_ms,
                    explain: &r.explain,
                };
                let text = serde_json::to_string(&line).map_err(|e| EvalError::Write {
                    path: path.to_owned(),
                    source: std::io::Error::other(e.to_string()),
                })?;
                writeln!(w, "{text}").map_err(|source| EvalError::Write {
                    path: path.to_owned(),
                    source,
                })?;
            }
            outcomes.push(Outcome {
                shape: q.shape.clone(),
                label: q.label.clone(),
                hits: r.hits,
                limit: opts.limit,
                corpus_size,
                latency_ms: r.latency_ms,
                abstained: r.abstained,
            });
            done += 1;
            if let Some(p) = opts.progress {
                p(done, total);
            }
        }
    }
    if let Some((path, mut w)) = log {
        w.flush().map_err(|source| EvalError::Write {
            path: path.to_owned(),
            source,
        })?;
    }
    Ok(metrics::report(
        &name,
        granularity.map(Granularity::as_str),
        opts.limit,
        &outcomes,
        notes,
        &opts.build,
    ))
}

fn log_hit<'a>(h: &'a RankedHit, ids: &'a BTreeMap<String, String>) -> LogHit<'a> {
    LogHit {
        path: &h.path,
        id: ids.get(&h.path).map(String::as_str),
        arms: &h.arms,
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A toy word-overlap backend: exercises the harness, says nothing about quality.
    use std::collections::{BTreeMap, BTreeSet};

    use crate::{ArmRank, Backend, Doc, EvalError, QueryResult, RankedHit};

    #[derive(Default)]
    pub struct Overlap {
        docs: Vec<(String, BTreeSet<String>)>,
        pub loads: usize,
    }

    fn words(s: &str) -> BTreeSet<String> {
        gitloom_model::norms(s)
            .into_iter()
            .filter(|w| w.len() > 3)
            .collect()
    }

    impl Backend for Overlap {
        fn load(&mut self, docs: Vec<Doc>) -> Result<(), EvalError> {
            self.loads += 1;
            self.docs = docs
                .into_iter()
                .map(|d| (d.path, words(&d.content)))
                .collect();
            Ok(())
        }
        fn corpus_size(&self) -> usize {
            self.docs.len()
        }
        fn query(
            &mut self,
            query: &str,
            limit: usize,
            _asked_at: Option<i64>,
        ) -> Result<QueryResult, EvalError> {
            let q = words(query);
            let mut scored: Vec<(usize, &str)> = self
                .docs
                .iter()
                .map(|(p, w)| (w.intersection(&q).count(), p.as_str()))
                .filter(|(s, _)| *s > 0)
                .collect();
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
            let hits: Vec<RankedHit> = scored
                .into_iter()
                .take(limit)
                .enumerate()
                .map(|(i, (s, p))| {
                    let arms = BTreeMap::from([(
                        "lexical".to_owned(),
                        ArmRank {
                            score: s as f64,
                            rank: i + 1,
                        },
                    )]);
                    RankedHit {
                        path: p.to_owned(),
                        arms,
                    }
                })
                .collect();
            Ok(QueryResult {
                abstained: hits.is_empty(),
                hits,
                latency_ms: 0.5,
                explain: serde_json::json!({"toy": true}),
            })
        }
    }
}
