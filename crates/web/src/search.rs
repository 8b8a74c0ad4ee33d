//! The search page's data: `retrieve` with explain at a moment, and the reasons in
//! words — why each hit is evidence (which bar its raw score cleared) and, when
//! the answer abstained, why nothing did.

use gitloom_engine::{Arm, Engine, EvidenceBars, Hit, Retrieval, RetrieveRequest, Support};
use gitloom_model::Tier;

use crate::error::WebError;
use crate::moment::Moment;

/// Most hits a page asks for.
pub const MAX_LIMIT: usize = 50;

/// What the search form asked.
#[derive(Debug, Clone, Default)]
pub struct SearchForm {
    pub query: String,
    pub limit: Option<usize>,
    pub tier: Option<String>,
    pub topic: Option<String>,
}

/// A retrieval with the evidence floor it was judged against.
#[derive(Debug)]
pub struct SearchView {
    pub retrieval: Retrieval,
    pub bars: EvidenceBars,
    /// Why the answer abstained, one reason a line (empty when it did not).
    pub abstained_because: Vec<String>,
}

/// Runs `retrieve` with explain at the moment.
pub fn search(engine: &Engine, moment: &Moment, form: &SearchForm) -> Result<SearchView, WebError> {
    let tier = match form
        .tier
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(t) => Some(
            t.parse::<Tier>()
                .map_err(|e| WebError::bad_request("invalid_params", e))?,
        ),
        None => None,
    };
    let limit = form.limit.unwrap_or(10);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(WebError::bad_request(
            "invalid_params",
            format!("limit must be between 1 and {MAX_LIMIT}, not {limit}"),
        ));
    }
    let req = RetrieveRequest {
        query: form.query.clone(),
        limit,
        tier,
        topic: form.topic.clone().filter(|t| !t.trim().is_empty()),
        explain: true,
        now: None,
    };
    let commit = moment.commit()?.to_string();
    // At HEAD the live index answers; anything else is the per-commit index that
    // `retrieve --at` builds (the same call the API makes).
    let at = (!moment.is_now()).then_some(commit.as_str());
    let retrieval = engine.retrieve_at(&req, at)?;
    let bars = engine.config().evidence;
    let abstained_because = if retrieval.abstained {
        abstain_reasons(&retrieval, &bars)
    } else {
        Vec::new()
    };
    Ok(SearchView {
        retrieval,
        bars,
        abstained_because,
    })
}

/// What an arm's raw score measures, for a reader.
pub fn arm_measure(arm: Arm) -> &'static str {
    match arm {
        Arm::Lexical => "BM25 score",
        Arm::Cues => "cosine to a cue",
        Arm::Bodies => "cosine to a section",
        Arm::Entities => "entity match score",
        Arm::Graph => "link score",
    }
}

/// Why `hit` was returned, one clause per bar it cleared, from its typed evidence
/// (strong in one arm, weak in several, or context), with the raw score the bar was
/// judged on: coverage of the query's terms for the lexical arm, the arm's own raw
/// score for the others.
pub fn why_evidence(hit: &Hit, bars: &EvidenceBars) -> Vec<String> {
    let Some(evidence) = &hit.evidence else {
        return vec!["returned by the lexical arm alone (no evidence floor)".to_owned()];
    };
    let (head, strength, arms): (&str, &str, Vec<Arm>) = match &evidence.support {
        Support::Strong(a) => ("evidence: one strong bar is enough", "strong", vec![*a]),
        Support::Weak(arms) => ("evidence: weak bars in two arms", "weak", arms.clone()),
        Support::Context(a) => (
            "context: one weak bar, shown beside the evidence but not evidence itself",
            "weak",
            vec![*a],
        ),
    };
    let mut out = vec![head.to_owned()];
    for arm in arms {
        let bar = if strength == "strong" {
            bars.strong.get(arm)
        } else {
            bars.weak.get(arm)
        };
        let raw = match arm {
            Arm::Lexical => hit.coverage,
            other => hit.arms.get(&other).map(|s| s.score),
        };
        let measure = match arm {
            Arm::Lexical => "coverage of the query's terms",
            other => arm_measure(other),
        };
        out.push(match (arm, raw) {
            (Arm::Graph, _) => match &hit.graph {
                Some(g) => format!("graph: linked ({}) from {}, itself evidence", g.via, g.from),
                None => "graph: linked from a hit that is evidence".to_owned(),
            },
            (_, Some(score)) => {
                format!("{arm}: {measure} {score:.3} ≥ the {strength} bar {bar:.3}")
            }
            (_, None) => format!("{arm}: cleared the {strength} bar {bar:.3}"),
        });
    }
    if evidence.anchored {
        out.push(
            "anchored: it names the question's entity and holds the rest of the question"
                .to_owned(),
        );
    }
    for p in &hit.priors {
        out.push(format!("prior applied: {p}"));
    }
    out
}

/// Why nothing was returned, from the arms' candidate lists and the bars.
fn abstain_reasons(r: &Retrieval, bars: &EvidenceBars) -> Vec<String> {
    let mut out = vec![match &r.abstention {
        Some(why) => why.to_string(),
        None => "nothing was returned".to_owned(),
    }];
    let arms = r.explain.as_deref().unwrap_or_default();
    for arm in arms {
        let Some((path, score)) = arm.candidates.first() else {
            continue;
        };
        let line = match arm.arm {
            // Lexical bars are on coverage, which the candidate list does not carry.
            Arm::Lexical => format!(
                "lexical: {} candidate(s), best {path} (BM25 {score:.3}); its bars are on the share of the question's terms a memory holds (strong {:.2}, weak {:.2})",
                arm.candidates.len(),
                bars.strong.lexical,
                bars.weak.lexical
            ),
            Arm::Graph => format!(
                "graph: {} candidate(s) linked from the strongest hits, none of which was evidence",
                arm.candidates.len()
            ),
            name => {
                let (strong, weak) = (bars.strong.get(name), bars.weak.get(name));
                let verdict = if *score >= strong {
                    "clears the strong bar as configured, yet a later check refused the hit (the question's entity, the answer type it asks for, or the semantic cut on bodies)"
                } else if *score >= weak {
                    "clears only the weak bar, and no second arm did"
                } else {
                    "is under the weak bar"
                };
                format!(
                    "{name}: best {path}, {} {score:.3} {verdict} (strong {strong:.3}, weak {weak:.3})",
                    arm_measure(name)
                )
            }
        };
        out.push(line);
    }
    out.extend(r.warnings.iter().map(|w| format!("warning: {w}")));
    out
}
