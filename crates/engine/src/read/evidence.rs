//! The evidence floor: whether a fused candidate is evidence, decided on raw arm
//! scores, never on its fused rank (plan items R3, R6). A hit must clear a strong
//! bar in one arm or weak bars in two; one that clears a single weak bar is
//! context, returned beside evidence but never the reason to answer.

use std::fmt;

use serde::{Serialize, Serializer};

use super::arm::Arm;
use super::config::RetrieveConfig;
use super::fusion::Fused;
use super::hit::{GraphStep, StepKind};

/// Which bars a hit cleared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// One arm's strong bar.
    Strong(Arm),
    /// Weak bars in two or more arms (the graph counts when its source is evidence).
    Weak(Vec<Arm>),
    /// One weak bar: context beside evidence, not evidence.
    Context(Arm),
}

/// Why a hit is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub support: Support,
    /// The query names an entity, and this hit names it and holds the rest of the
    /// question (see `gates.rs`).
    pub anchored: bool,
}

impl Evidence {
    /// Evidence in its own right (strong, or weak in two arms), not context.
    pub fn is_evidence(&self) -> bool {
        !matches!(self.support, Support::Context(_))
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.support {
            Support::Strong(a) => write!(f, "strong:{a}")?,
            Support::Context(a) => write!(f, "context:{a}")?,
            Support::Weak(arms) => {
                f.write_str("weak:")?;
                for (i, a) in arms.iter().enumerate() {
                    if i > 0 {
                        f.write_str("+")?;
                    }
                    f.write_str(a.as_str())?;
                }
            }
        }
        if self.anchored {
            f.write_str("+anchored")?;
        }
        Ok(())
    }
}

/// Serialised as the line `--explain` prints: `strong:cues`, `weak:lexical+bodies`,
/// `context:cues`, with `+anchored` when the entity anchor held.
impl Serialize for Evidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A candidate's raw score in an arm, as the floor reads it: lexical is judged on
/// coverage (the IDF-weighted share of query terms the memory holds), the others
/// on the arm's own score.
fn raw(f: &Fused, arm: Arm, coverage: f64) -> Option<f64> {
    match arm {
        Arm::Lexical => f.arms.contains_key(&Arm::Lexical).then_some(coverage),
        other => f.arms.get(&other).map(|(s, _)| *s),
    }
}

/// The evidence test: a strong bar in one arm, or weak bars in two. A graph hit
/// counts one weak signal when the hit it was reached from is itself evidence.
pub(crate) fn evidence(
    cfg: &RetrieveConfig,
    f: &Fused,
    coverage: f64,
    matched_terms: usize,
    step: Option<&GraphStep>,
    evidence_so_far: &[String],
) -> Option<Support> {
    // All of a query's terms (coverage 1) is as good as several of them.
    let lexical_strong_allowed = matched_terms >= cfg.lexical_min_terms || coverage >= 0.999;
    for arm in Arm::EVIDENCE {
        if arm == Arm::Lexical && !lexical_strong_allowed {
            continue;
        }
        if raw(f, arm, coverage).is_some_and(|s| s >= cfg.evidence.strong.get(arm)) {
            return Some(Support::Strong(arm));
        }
    }
    let mut weak: Vec<Arm> = [Arm::Lexical, Arm::Cues, Arm::Bodies, Arm::Entities]
        .into_iter()
        .filter(|arm| raw(f, *arm, coverage).is_some_and(|s| s >= cfg.evidence.weak.get(*arm)))
        .collect();
    if f.arms.contains_key(&Arm::Graph) && step.is_some_and(|s| evidence_so_far.contains(&s.from)) {
        weak.push(Arm::Graph);
    }
    (weak.len() >= 2).then_some(Support::Weak(weak))
}

/// A hit that clears one weak bar: not evidence on its own, but returned beside
/// evidence as context. So is what was said next after an evidence hit (the reply
/// to it, the speaker's next words): it was reached from that evidence, not found
/// by the question.
pub(crate) fn context(
    cfg: &RetrieveConfig,
    f: &Fused,
    coverage: f64,
    step: Option<&GraphStep>,
    evidence_so_far: &[String],
) -> Option<Support> {
    [Arm::Lexical, Arm::Cues, Arm::Bodies, Arm::Entities]
        .into_iter()
        .find(|arm| raw(f, *arm, coverage).is_some_and(|s| s >= cfg.evidence.weak.get(*arm)))
        .or_else(|| {
            step.filter(|s| s.kind == StepKind::Next && evidence_so_far.contains(&s.from))
                .filter(|_| f.arms.contains_key(&Arm::Graph))
                .map(|_| Arm::Graph)
        })
        .map(Support::Context)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fused(arms: &[(Arm, f64)]) -> Fused {
        Fused {
            key: "facts/a.md".into(),
            score: 0.1,
            arms: arms
                .iter()
                .enumerate()
                .map(|(i, (a, s))| (*a, (*s, i + 1)))
                .collect(),
            tie: 0.0,
        }
    }

    #[test]
    fn floor_needs_one_strong_or_two_weak() {
        let cfg = RetrieveConfig::default();
        let strong_cue = cfg.evidence.strong.cues;
        let weak_cue = cfg.evidence.weak.cues;
        let weak_body = cfg.evidence.weak.bodies;
        assert!(evidence(&cfg, &fused(&[(Arm::Cues, strong_cue)]), 0.0, 2, None, &[]).is_some());
        let one_weak = fused(&[(Arm::Cues, weak_cue)]);
        assert!(
            evidence(&cfg, &one_weak, 0.0, 2, None, &[]).is_none(),
            "one weak bar is not evidence"
        );
        assert_eq!(
            context(&cfg, &one_weak, 0.0, None, &[]),
            Some(Support::Context(Arm::Cues)),
            "but it is context"
        );
        let both = evidence(
            &cfg,
            &fused(&[(Arm::Cues, weak_cue), (Arm::Bodies, weak_body)]),
            0.0,
            2,
            None,
            &[],
        );
        assert_eq!(both, Some(Support::Weak(vec![Arm::Cues, Arm::Bodies])));
        let strong_lex = cfg.evidence.strong.lexical;
        let lex = fused(&[(Arm::Lexical, 12.0)]);
        assert!(
            evidence(&cfg, &lex, strong_lex, 2, None, &[]).is_some(),
            "enough of the query's terms"
        );
        assert!(
            evidence(&cfg, &lex, strong_lex * 0.9, 2, None, &[]).is_none(),
            "BM25 itself is not the bar"
        );
        assert!(
            evidence(&cfg, &lex, 0.6, 1, None, &[]).is_none(),
            "one shared word of several is not enough on its own"
        );
        assert!(
            evidence(&cfg, &lex, 1.0, 1, None, &[]).is_some(),
            "a one-word query fully matched is"
        );
        assert!(
            evidence(&cfg, &fused(&[(Arm::Entities, 5.0)]), 0.0, 2, None, &[]).is_none(),
            "an entity alone is not enough"
        );
        assert!(
            context(&cfg, &fused(&[(Arm::Bodies, 0.01)]), 0.0, None, &[]).is_none(),
            "below every bar: not returned"
        );
        let step = GraphStep {
            from: "facts/b.md".into(),
            via: "related→".into(),
            label: None,
            kind: StepKind::Link,
        };
        let g = fused(&[(Arm::Graph, 0.01), (Arm::Entities, 1.0)]);
        assert!(evidence(&cfg, &g, 0.0, 2, Some(&step), &["facts/b.md".into()]).is_some());
        assert!(
            evidence(&cfg, &g, 0.0, 2, Some(&step), &[]).is_none(),
            "a neighbour of a non-evidence hit is not evidence"
        );
    }

    #[test]
    fn evidence_reads_as_explain_prints_it() {
        let e = Evidence {
            support: Support::Weak(vec![Arm::Lexical, Arm::Bodies]),
            anchored: true,
        };
        assert_eq!(e.to_string(), "weak:lexical+bodies+anchored");
        assert_eq!(
            serde_json::to_string(&e).expect("serialises"),
            "\"weak:lexical+bodies+anchored\""
        );
        assert!(
            !Evidence {
                support: Support::Context(Arm::Cues),
                anchored: false
            }
            .is_evidence()
        );
    }
}
