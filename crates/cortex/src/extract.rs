//! What extraction produces ([`Fact`]) and the trait both extractors implement.

use std::collections::BTreeMap;

use gitloom_engine::{Arm, ArmScore};
use gitloom_model::{Tier, fold_name};
use serde::{Deserialize, Serialize};

use crate::error::CortexError;
use crate::session::Session;

/// A named entity of a fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactEntity {
    pub name: String,
    #[serde(default)]
    pub kind: Option<String>,
}

/// A dated assertion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dated {
    /// `YYYY-MM-DD`
    pub date: String,
    pub text: String,
}

/// One atomic fact about one subject, before reconciliation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// What the fact is about: a named entity ("Northwind Traders") or `User`.
    pub subject: String,
    pub tier: Tier,
    /// `work`, `travel`, …; existing topics are reused.
    pub topic: String,
    pub title: String,
    /// Self-contained prose in the third person, dates absolute.
    pub body: String,
    #[serde(default)]
    pub entities: Vec<FactEntity>,
    #[serde(default)]
    pub cues: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// A slot that holds one value at a time (`employer`): a new value supersedes
    /// the memories holding the old one.
    #[serde(default)]
    pub slot: Option<String>,
    /// The fact says the subject's slot ended ("last day at Northwind").
    #[serde(default)]
    pub ends_slot: bool,
    #[serde(default)]
    pub valid_from: Option<String>,
    #[serde(default)]
    pub valid_to: Option<String>,
    #[serde(default)]
    pub timeline: Vec<Dated>,
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// Indexes of the session's messages the fact came from.
    #[serde(default)]
    pub messages: Vec<usize>,
    /// References the session could not resolve ("him"); repaired in reconciliation
    /// when a candidate names who it is, else kept and reported.
    #[serde(default)]
    pub unresolved: Vec<String>,
    /// What keeps a fact apart from other facts about the same subject (the offline
    /// extractor uses `<session>/m<message>`), so a subject does not grow into one
    /// ever-longer file. Part of the subject key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

fn default_confidence() -> f64 {
    0.7
}

impl Fact {
    /// True when the subject is the user rather than a named entity.
    pub fn about_user(&self) -> bool {
        let s = fold_name(&self.subject);
        s.is_empty() || s == "user"
    }

    /// The key a memory's path and `subject:` derive from: the folded entity name,
    /// or `user/<tier>/<topic>` for facts about the user, then `/<group>` when the
    /// fact has one (the offline extractor keeps each message's facts apart).
    pub fn subject_key(&self) -> String {
        let group = self
            .group
            .as_deref()
            .map(|g| format!("/{g}"))
            .unwrap_or_default();
        if self.about_user() {
            format!("user/{}/{}{group}", self.tier, self.topic)
        } else {
            format!("{}{group}", fold_name(&self.subject))
        }
    }

    /// The folded name of what the fact is about (`user` for the user).
    pub fn subject_name(&self) -> String {
        if self.about_user() {
            "user".to_owned()
        } else {
            fold_name(&self.subject)
        }
    }
}

/// What extraction may consult: the store's topics and entities it already knows.
#[derive(Debug, Clone, Default)]
pub struct ExtractContext {
    pub topics: Vec<String>,
    pub known: Vec<FactEntity>,
    /// All user text of the run (every session), so a name capitalised in one
    /// session is recognised at the start of a sentence in another, although
    /// sessions are extracted in parallel.
    pub run_text: std::sync::Arc<RunText>,
}

/// The user text of a whole run, and what the offline extractor learns from it.
///
/// That learning depends on the text alone and reads all of it, so it is done once
/// per run, by the first session that needs it, and shared: learning it again for
/// every session made extraction quadratic in the run's length.
#[derive(Debug, Default)]
pub struct RunText {
    text: String,
    names: std::sync::OnceLock<crate::offline::RunNames>,
}

impl RunText {
    pub fn new(text: String) -> RunText {
        RunText {
            text,
            names: std::sync::OnceLock::new(),
        }
    }

    pub(crate) fn names(&self) -> &crate::offline::RunNames {
        self.names
            .get_or_init(|| crate::offline::RunNames::scan(&self.text))
    }
}

/// A reconciliation verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    New,
    Extends,
    Corrects,
    Supersedes,
    Duplicate,
}

/// An existing memory a fact may belong to, as shown to a judge.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    pub path: String,
    pub title: String,
    pub subject: Option<String>,
    pub entities: Vec<String>,
    pub tags: Vec<String>,
    /// Per-arm raw scores from retrieval (empty for candidates found by subject).
    pub arms: BTreeMap<Arm, ArmScore>,
    pub snippet: String,
}

/// A judge's decision about one fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub verdict: Verdict,
    /// The candidate path the verdict applies to (not for `new`).
    #[serde(default)]
    pub target: Option<String>,
    /// Who an unresolved reference names, if a candidate says.
    #[serde(default)]
    pub resolved: Option<String>,
}

/// Turns a session into facts, and optionally judges a fact against candidates.
/// `Sync` so sessions can be extracted on several threads.
pub trait Extractor: Sync {
    /// Names the extractor and its version (written into memories as `extractor:`).
    fn id(&self) -> String;

    fn extract(&self, session: &Session, ctx: &ExtractContext) -> Result<Vec<Fact>, CortexError>;

    /// [`Extractor::extract`], calling `received` with how much of a model's reply
    /// has arrived so far (characters), so a slow model shows it is alive. The
    /// default (an extractor with nothing to report) just extracts.
    fn extract_reporting(
        &self,
        session: &Session,
        ctx: &ExtractContext,
        received: &dyn Fn(usize),
    ) -> Result<Vec<Fact>, CortexError> {
        let _ = received;
        self.extract(session, ctx)
    }

    /// True when [`Extractor::judge`] looks at candidates (a model does); the rules
    /// alone need fewer retrievals.
    fn judges(&self) -> bool {
        false
    }

    /// A verdict for `fact` among `candidates`; `Ok(None)` leaves it to the rules.
    /// Whatever is returned, a merge still needs subject agreement.
    fn judge(
        &self,
        _fact: &Fact,
        _candidates: &[Candidate],
    ) -> Result<Option<Judgement>, CortexError> {
        Ok(None)
    }
}
