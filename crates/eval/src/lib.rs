//! gitloom-eval: a retrieval-only evaluation harness for gitloom.
//!
//! It turns public memory benchmarks into gitloom memory files, hands them to a
//! retrieval [`Backend`], asks the benchmark's questions and scores the ranked
//! paths that come back against the benchmark's gold: precision, recall, nDCG,
//! MRR, abstention, how much of the corpus a query returns, latency, and which
//! retrieval arms found the correct hit ([`metrics`]).
//!
//! Datasets ([`probe`], [`locomo`], [`longmemeval`]) are read from files the
//! caller names; nothing is copied into the repository. The runners in [`run`]
//! load one fresh store per conversation or question, query it and build a
//! [`Report`], whose JSON the CLI prints and [`gate`] compares with a baseline.
//!
//! What it is not: there is no language model anywhere (no answer generation, no
//! LLM judge), and it knows nothing about the engine. The engine is wired in
//! through the [`Backend`] trait, so the harness can be tested with a toy
//! backend and the engine can be swapped without touching the scoring.
//!
//! Definitions of every metric, including the 0/0 cases, are in [`metrics`].
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod data_root;
pub mod e2e;
pub mod engine_backend;
pub mod gate;
pub mod locomo;
pub mod longmemeval;
pub mod memfile;
pub mod metrics;
pub mod probe;
pub mod run;
pub mod suite;

pub use engine_backend::EngineBackend;

pub use gate::{
    GateConfig, Regression, check_baseline, compare, format_regressions, write_baseline,
};
pub use metrics::{ARMS, Label, Metrics, Outcome, Report};
pub use run::{Granularity, RunOptions, run_locomo, run_longmemeval, run_probe};

/// One document to index: a whole memory file (markdown with YAML frontmatter) at a store path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    /// Store path, `/`-separated, relative to the store root (e.g. `facts/conv-26/s01/d1-3.md`).
    pub path: String,
    /// The whole file: frontmatter and body.
    pub content: String,
}

/// What one retrieval arm said about a hit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ArmRank {
    /// The arm's own score (scale is the arm's business).
    pub score: f64,
    /// 1-based rank of the hit in the arm's own ranking.
    pub rank: usize,
}

/// One returned memory, best first in [`QueryResult::hits`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedHit {
    pub path: String,
    /// Arm name (`lexical`, `cues`, `bodies`, `entities`, `graph`, ...) -> its score and rank.
    /// An arm that did not retrieve the hit is absent.
    pub arms: BTreeMap<String, ArmRank>,
}

/// The answer to one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// Best first.
    pub hits: Vec<RankedHit>,
    /// The backend decided that nothing answers the query. Treated as "returned no hits".
    pub abstained: bool,
    /// Retrieval time only; the store is already built.
    pub latency_ms: f64,
    /// Opaque; copied to the per-query log.
    pub explain: serde_json::Value,
}

/// The seam between harness and engine.
pub trait Backend {
    /// Start a fresh, empty store and index these docs (one batch). Called once per conversation / question.
    fn load(&mut self, docs: Vec<Doc>) -> Result<(), EvalError>;
    /// Number of memories in the current store.
    fn corpus_size(&self) -> usize;
    /// Ranked hits for `query`, at most `limit`, asked at `asked_at` (seconds since the
    /// epoch; `None` = now).
    fn query(
        &mut self,
        query: &str,
        limit: usize,
        asked_at: Option<i64>,
    ) -> Result<QueryResult, EvalError>;
}

/// Everything that can go wrong in the harness. Data errors name the file and the problem.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: truncated JSON (file ends at line {line}, column {column}{context})", path.display())]
    TruncatedJson {
        path: PathBuf,
        line: usize,
        column: usize,
        context: String,
    },
    #[error("{}: invalid JSON at line {line}, column {column}{context}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        context: String,
        message: String,
    },
    /// Valid JSON with the wrong shape: a missing field, a wrong type, a bad value.
    #[error("{}: {problem}", path.display())]
    Data { path: PathBuf, problem: String },
    #[error("invalid option: {0}")]
    InvalidOption(String),
    #[error("nothing selected: {0}")]
    NothingSelected(String),
    #[error("backend: {0}")]
    Backend(String),
    #[error("baseline {}: {problem}", path.display())]
    Baseline { path: PathBuf, problem: String },
}

impl EvalError {
    /// A data problem in `path`.
    pub fn data(path: &Path, problem: impl Into<String>) -> EvalError {
        EvalError::Data {
            path: path.to_owned(),
            problem: problem.into(),
        }
    }

    /// A backend failure, for `Backend` implementations.
    pub fn backend(e: impl std::fmt::Display) -> EvalError {
        EvalError::Backend(e.to_string())
    }

    /// Turns a serde_json error about `path` into a message naming the file and the problem.
    /// `context` says where in the file (e.g. `conv-26 qa[3]`), empty if unknown.
    pub fn json(path: &Path, context: &str, e: serde_json::Error) -> EvalError {
        let ctx = if context.is_empty() {
            String::new()
        } else {
            format!(", in {context}")
        };
        use serde_json::error::Category;
        match e.classify() {
            Category::Eof => EvalError::TruncatedJson {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
                context: ctx,
            },
            Category::Syntax => EvalError::Syntax {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
                context: ctx,
                message: e.to_string(),
            },
            Category::Io => EvalError::Read {
                path: path.to_owned(),
                source: std::io::Error::other(e.to_string()),
            },
            Category::Data => {
                // serde's message already says "missing field `x`" / "invalid type: ..., expected ...".
                let problem = if context.is_empty() {
                    e.to_string()
                } else {
                    format!("{context}: {e}")
                };
                EvalError::Data {
                    path: path.to_owned(),
                    problem,
                }
            }
        }
    }
}

pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, EvalError> {
    std::fs::read(path).map_err(|source| EvalError::Read {
        path: path.to_owned(),
        source,
    })
}
