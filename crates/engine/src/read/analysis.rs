//! Stage 1: the query, read once. Everything later stages ask of the question's
//! wording — its terms, shape, dates, the tier its form asks for, what answer type
//! it demands, the entities it names — is computed here, with the workspace's one
//! word splitter (`gitloom_model::words`), and never re-derived downstream.

use gitloom_index::{EntityMatch, Index};
use gitloom_model::Tier;
use jiff::Timestamp;

use super::config::RetrieveConfig;
use super::request::RetrieveRequest;
use crate::asked::Demand;
use crate::error::Result;
use crate::shape::{self, Orientation, Shape};
use crate::when::Window;

/// What the read path knows about a question before it looks at any memory.
#[derive(Debug, Clone)]
pub(crate) struct Analysis {
    pub query: String,
    /// Content terms (stopwords removed), as the lexical arm sees them.
    pub terms: Vec<String>,
    pub shape: Shape,
    /// Which time it asks about: whether superseded and ended memories sink or rise.
    pub orientation: Orientation,
    /// It says outright that it asks about the present ("now", "these days").
    pub says_now: bool,
    /// It asks the assistant for advice (`shape::seeks_advice`).
    pub advice: bool,
    /// The moment it is asked, in seconds since the epoch.
    pub now: i64,
    /// The span a relative date in it points at ("four weeks ago").
    pub window: Option<Window>,
    /// It asks for a point in time and names no span of its own.
    pub asks_when: bool,
    /// The words naming X in "before X" / "after X".
    pub reference: Vec<String>,
    /// The tier its form asks for ("how do I" → skills).
    pub tier: Option<Tier>,
    /// What a memory must show to answer it (a price, a relation).
    pub demands: Vec<Demand>,
    /// Entities of the store it names.
    pub entities: Vec<EntityMatch>,
}

impl Analysis {
    pub fn of(req: &RetrieveRequest, index: &Index, cfg: &RetrieveConfig) -> Result<Analysis> {
        let q = req.query.as_str();
        let now = req.now.unwrap_or_else(|| Timestamp::now().as_second());
        let window = Timestamp::from_second(now)
            .ok()
            .and_then(|t| crate::when::relative_window(q, t))
            .filter(|_| cfg.priors.when != 1.0);
        let terms = gitloom_model::content_terms(q);
        Ok(Analysis {
            query: req.query.clone(),
            terms,
            shape: shape::classify(q),
            orientation: shape::orientation(q),
            says_now: shape::says_now(q),
            advice: shape::seeks_advice(q),
            now,
            // A question with a span of its own ("four weeks ago") has the `when` prior.
            asks_when: window.is_none() && shape::asks_when(q),
            window,
            reference: shape::temporal_reference(q),
            tier: shape::tier_hint(q),
            demands: if cfg.answer_type {
                crate::asked::demands(q)
            } else {
                Vec::new()
            },
            entities: index.entities_in(q)?,
        })
    }
}
