//! gitloom-cortex: how memories are born. Conversations go in; atomic facts come
//! out as memory files, one commit per session.
//!
//! Pipeline (DESIGN §5): store the transcript under `sessions/` → **extract** facts
//! (each about one subject, with entities, dates, tier, topic; parallel across
//! sessions) → **cue** (question-shaped keys) → **relate** (entities, links) →
//! **reconcile** (serial, in session order, against candidates from the engine's
//! precise retrieval: new / extends / corrects / supersedes / duplicate) → one
//! commit per session, dated with the session, then one index sync.
//!
//! Extraction sits behind [`Extractor`]: [`OfflineExtractor`] (deterministic, no
//! model, no network) and [`ModelExtractor`] (any OpenAI-compatible chat-completions
//! endpoint, via [`llm::ChatClient`]). Reconciliation rules are shared: a merge
//! needs subject agreement, supersession writes `supersedes` and `valid_to`, paths
//! derive from a hash of the subject so re-ingesting changes nothing.
//!
//! Also here: [`answer()`], a small question-answering step over retrieval that cites
//! the memories it used and says so when retrieval abstains.
//!
//! Not here: retrieval itself (`gitloom-engine`), the file format (`gitloom-model`),
//! argument parsing or output (front-ends).
#![forbid(unsafe_code)]

mod answer;
mod change;
pub mod dates;
mod dict;
mod error;
mod extract;
mod ingest;
pub mod llm;
mod model;
mod offline;
mod reconcile;
mod session;
pub mod text;

pub use answer::{ANSWER_PROMPT, Answer, AnswerEvidence, answer};
pub use error::CortexError;
pub use extract::{
    Candidate, Dated, ExtractContext, Extractor, Fact, FactEntity, Judgement, RunText, Verdict,
};
pub use ingest::{
    Flagged, IngestOptions, IngestProgress, IngestReport, IngestStage, SessionReport, StageTimes,
    ingest,
};
pub use model::{EXTRACT_PROMPT, ModelExtractor, RECONCILE_PROMPT};
pub use offline::OfflineExtractor;
pub use session::{Message, Session, parse_sessions};

/// Version of the prompts and offline rules; written into each memory's
/// `extractor` key so a later re-extraction can tell what produced a file.
pub const EXTRACTOR_VERSION: &str = "2";
