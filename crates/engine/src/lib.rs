//! gitloom-engine: a memory store you can open, write, sync and query.
//!
//! The engine ties the layers together: a [`gitloom_store::Store`] (git, the source
//! of truth), a [`gitloom_index::Index`] (SQLite, derived from git and rebuilt at
//! will) and the read path (arms, fusion, evidence floor). Every front-end (CLI,
//! MCP, HTTP) is a thin layer over [`Engine`].
//!
//! Invariants kept here:
//! - The index never holds anything git doesn't: it is synced from a commit's tree,
//!   in one transaction, and a missing, corrupt or outdated index is rebuilt from git
//!   with a warning, never an error.
//! - A write is validated completely before anything is committed; a batch is one
//!   commit; the index is synced once after it.
//!
//! Not here: git plumbing (`gitloom-store`), SQL (`gitloom-index`), file format
//! (`gitloom-model`), argument parsing or output formatting (front-ends).
#![forbid(unsafe_code)]

pub mod asked;
mod consolidate;
mod doctor;
mod engine;
mod error;
pub mod gc;
mod group;
mod links;
mod parsed;
pub mod read;
mod remember;
mod said;
pub mod semantic;
pub mod shape;
mod sync;
mod vocab;
pub mod when;
mod write;

pub use consolidate::{ConsolidateOptions, ConsolidateReport, MergePlan};
pub use doctor::{DoctorProblem, DoctorReport, Severity};
pub use engine::{EmbedderChoice, Engine, EngineOptions, GetResult, LogEntry};
pub use error::{EngineError, Result};
pub use gc::{GcOptions, GcReport, Repack};
pub use gitloom_embed as embed;
pub use gitloom_index::{IndexStats, Problem, TopicCount, TreeListing};
pub use read::arm::{Arm, PerArm};
pub use read::config::{EvidenceBars, NEVER, Priors, RetrieveConfig};
pub use read::evidence::{Evidence, Support};
pub use read::fusion::Fusion;
pub use read::hit::{
    Abstention, ArmCandidates, ArmScore, GraphStep, Hit, HitSection, Judgement, Refusal, Retrieval,
    StepKind, Verdict,
};
pub use read::request::RetrieveRequest;
pub use read::rerank::{RerankCandidate, Reranker};
pub use remember::{MAX_LIST_ITEMS, MAX_TEXT_BYTES, RememberRequest};
pub use shape::Shape;
pub use sync::{ArenaUpdate, SyncReport};
pub use write::{WriteOutcome, check_new_path};

/// The build: crate version and the git commit it was built from (O2).
pub const BUILD: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("GITLOOM_GIT_SHA"));
