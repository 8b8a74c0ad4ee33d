//! What the read path answers: hits that explain themselves.

use std::collections::BTreeMap;

use serde::Serialize;

use super::arm::Arm;
use super::evidence::Evidence;
use crate::shape::Shape;

/// One arm's view of a hit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ArmScore {
    /// The arm's raw score (BM25 made positive; cosine; entity score; graph score).
    pub score: f64,
    /// 1-based rank within the arm.
    pub rank: usize,
}

/// The `##` section a hit points into.
#[derive(Debug, Clone, Serialize)]
pub struct HitSection {
    pub heading: String,
    pub anchor: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// How a graph hit was reached.
#[derive(Debug, Clone, Serialize)]
pub struct GraphStep {
    /// The strong hit it is linked to.
    pub from: String,
    /// `related`, `wiki` or `supersedes`, and its direction; `next` for what was said
    /// next in the conversation.
    pub via: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// What joins it to `from` (`via` says it in words).
    #[serde(skip)]
    pub kind: StepKind,
}

/// What joins a graph hit to the hit it was reached from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StepKind {
    /// A link of either memory (`[[…]]`, `related:`, `supersedes:`).
    #[default]
    Link,
    /// It cites a message said just after the one its source cites.
    Next,
}

/// One retrieved memory, with why it was returned.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub path: String,
    pub title: String,
    /// Fused score (weighted reciprocal rank × priors): orders hits within one answer.
    pub score: f64,
    /// Per arm that found it: raw score and rank.
    pub arms: BTreeMap<Arm, ArmScore>,
    /// Which bars it cleared (`strong:cues`, `weak:lexical+bodies`, …); `None` for
    /// the lexical arm alone ([`Engine::search`](crate::Engine::search)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    pub snippet: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<HitSection>,
    /// Query terms that matched lexically, and their IDF-weighted share.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_terms: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// The cue that matched best, when the cue arm found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_cue: Option<String>,
    /// The cited message (`sessions/…md#m3`) whose words matched better than the
    /// memory's own prose, when the body arm found it that way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_said: Option<String>,
    /// Entities of the query this memory mentions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphStep>,
    /// Priors that changed its score (`superseded`, `confidence`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub priors: Vec<String>,
}

/// Per-arm candidate lists, for `--explain`.
#[derive(Debug, Clone, Serialize)]
pub struct ArmCandidates {
    pub arm: Arm,
    pub candidates: Vec<(String, f64)>,
}

/// The answer to a retrieval.
#[derive(Debug, Clone, Serialize)]
pub struct Retrieval {
    pub query: String,
    pub shape: Shape,
    pub hits: Vec<Hit>,
    /// True when nothing cleared the evidence floor: the honest answer is "nothing".
    pub abstained: bool,
    /// When it abstained, why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abstention: Option<Abstention>,
    pub timings_ms: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Vec<ArmCandidates>>,
    /// With `explain`: every candidate of the fused head as it was judged, kept or
    /// refused, and why (the answer to "why did it abstain").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged: Option<Vec<Judgement>>,
    pub build: &'static str,
}

/// One candidate of the fused head, as the judge saw it.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub path: String,
    /// Fused score after priors (before the gates' demotions).
    pub score: f64,
    pub arms: BTreeMap<Arm, ArmScore>,
    /// The IDF-weighted share of the query's terms it holds.
    pub coverage: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_terms: Vec<String>,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// What the judge decided about a candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Verdict {
    /// Returned, with this evidence.
    Kept { evidence: Evidence },
    /// Not returned.
    Refused { reason: Refusal },
}

/// Why a retrieval returned nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Abstention {
    /// No arm found a candidate: no memory holds a term of the question, comes
    /// close to its meaning, or names an entity in it.
    NoCandidates,
    /// Candidates were found and none cleared the evidence floor (one weak bar at
    /// most: context, which cannot stand alone).
    NoEvidence,
    /// Evidence was found and refused by a gate: `path` is the best of it.
    Refused { path: String, reason: Refusal },
    /// The question asks for a value (`lacks`) that `path`, the memory that best
    /// matches it, does not state.
    ValueNotStored { path: String, lacks: String },
}

impl std::fmt::Display for Abstention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Abstention::NoCandidates => f.write_str(
                "no arm found a candidate: no memory holds a word of it, comes close to its meaning, or names an entity in it",
            ),
            Abstention::NoEvidence => f.write_str(
                "nothing cleared the evidence floor (a hit needs one strong bar, or weak bars in two arms)",
            ),
            Abstention::Refused { path, reason } => {
                write!(f, "the best evidence, {path}, ")?;
                match reason {
                    Refusal::NotNamed => f.write_str("does not name what the question asks about"),
                    Refusal::Unanchored => f.write_str(
                        "does not name the entity asked about, or holds too little of the rest of the question",
                    ),
                    Refusal::Lacks { lacks } | Refusal::ValueNotStored { lacks } => {
                        write!(f, "does not state {lacks}")
                    }
                    Refusal::BelowFloor | Refusal::NoEvidence => {
                        f.write_str("clears no bar on its own")
                    }
                }
            }
            Abstention::ValueNotStored { path, lacks } => write!(
                f,
                "the memory that best matches it, {path}, does not state {lacks}"
            ),
        }
    }
}

/// Why a candidate was not returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Refusal {
    /// It clears no bar, not even a weak one.
    BelowFloor,
    /// The question asks about a name it neither mentions nor contains.
    NotNamed,
    /// It does not name the entity the question asks about, or holds too little of
    /// the rest of the question.
    Unanchored,
    /// It lacks what the question's answer type demands (`lacks` says what).
    Lacks { lacks: String },
    /// It cleared one weak bar, but nothing in the answer is evidence.
    NoEvidence,
    /// The question asks for a value, and a memory that outscores it lacks that
    /// value (`lacks` says what): the value is not stored
    /// ([`RetrieveConfig::value_owner`](super::config::RetrieveConfig::value_owner)).
    ValueNotStored { lacks: String },
}
