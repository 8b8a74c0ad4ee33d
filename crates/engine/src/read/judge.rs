//! Stage 5: judging the head. Each candidate is evidence, context or dropped by the
//! floor (`evidence.rs`) and then by the gates (`gates.rs`); the answer stands on
//! its best evidence, so with no evidence at all nothing is returned.

use std::borrow::Cow;
use std::collections::HashMap;

use gitloom_index::{Index, LexicalHit};

use super::analysis::Analysis;
use super::arm::Arm;
use super::config::RetrieveConfig;
use super::evidence::{Evidence, context, evidence};
use super::fusion::Fused;
use super::gates::Anchor;
use super::hit::GraphStep;
use crate::error::Result;
use crate::shape::Shape;

/// A candidate that passed: its evidence, its score after the gates, and the
/// lexical details the judgement read (reused for decoration).
pub(crate) struct Judged<'a> {
    pub fused: &'a Fused,
    pub score: f64,
    pub evidence: Evidence,
    pub details: Option<LexicalHit>,
}

/// Judges `head` in fused order. `notes` gains the gates' demotions and refusals.
pub(crate) fn judge<'a>(
    index: &Index,
    head: &'a [Fused],
    q: &Analysis,
    cfg: &RetrieveConfig,
    body_cutoff: f64,
    steps: &HashMap<String, GraphStep>,
    notes: &mut HashMap<String, Vec<String>>,
) -> Result<Vec<Judged<'a>>> {
    let keys: Vec<String> = head.iter().map(|f| f.key.clone()).collect();
    let mut details = index.lexical_details(&q.query, &keys)?;
    let anchor = Anchor::new(&q.entities, &q.terms, q.shape);
    let cfg = floor_config(cfg, body_cutoff);
    let mut out: Vec<Judged<'a>> = Vec::new();
    let mut evidence_paths: Vec<String> = Vec::new();
    for f in head {
        let d = details.remove(&f.key);
        let coverage = d.as_ref().map_or(0.0, |d| d.coverage);
        let matched: &[String] = d.as_ref().map_or(&[], |d| d.matched_terms.as_slice());
        let Some(support) = evidence(
            &cfg,
            f,
            coverage,
            matched.len(),
            steps.get(&f.key),
            &evidence_paths,
        )
        .or_else(|| context(&cfg, f, coverage)) else {
            continue;
        };
        let mut why = Evidence {
            support,
            anchored: false,
        };
        // "Who is Bruno": when the question is about a name, a memory that neither
        // mentions an entity of that name nor contains it is no answer, however
        // alike the wording ("who is Arjun" is a close cue).
        if q.shape == Shape::Entity
            && !f.arms.contains_key(&Arm::Entities)
            && coverage < cfg.evidence.weak.lexical
        {
            continue;
        }
        let mut score = f.score;
        if cfg.entity_anchor > 0.0 && !anchor.aliases.is_empty() {
            let named = f.arms.contains_key(&Arm::Entities) || anchor.mentions(matched);
            let cue_says = f
                .arms
                .get(&Arm::Cues)
                .is_some_and(|(c, _)| *c >= cfg.anchor_cue);
            let anchored = named && (anchor.rest_share(matched) >= cfg.entity_anchor || cue_says);
            if anchored {
                why.anchored = true;
            } else if anchor.soft {
                score *= 0.5;
                notes
                    .entry(f.key.clone())
                    .or_default()
                    .push("unanchored".to_owned());
            } else {
                continue;
            }
        }
        if !q.demands.is_empty() {
            // Only for the rare question with a demand: its text is read here.
            let text = index
                .file(&f.key)?
                .map(|r| {
                    let summary = r.summary.unwrap_or_default();
                    format!("{}\n{summary}\n{}\n{}", r.title, r.cues.join("\n"), r.body)
                })
                .unwrap_or_default();
            if let Some(unmet) = q.demands.iter().find(|d| !d.met_by(&text)) {
                notes
                    .entry(f.key.clone())
                    .or_default()
                    .push(format!("lacks {}", unmet.label()));
                continue;
            }
        }
        if why.is_evidence() {
            evidence_paths.push(f.key.clone());
        }
        out.push(Judged {
            fused: f,
            score,
            evidence: why,
            details: d,
        });
    }
    // Soft anchoring may have demoted some hits below others.
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.fused.key.cmp(&b.fused.key))
    });
    // The answer stands on its best evidence: with no hit that clears the floor
    // (a strong bar, or weak bars in two arms) nothing is returned; otherwise the
    // hits that clear one weak bar come along as context.
    if !out.iter().any(|j| j.evidence.is_evidence()) {
        out.clear();
    }
    Ok(out)
}

/// A body cosine under the semantic cut ranks (corroboration) but is no evidence:
/// the bars were calibrated on what clears the cut.
fn floor_config(cfg: &RetrieveConfig, body_cutoff: f64) -> Cow<'_, RetrieveConfig> {
    if body_cutoff > 0.0 {
        let mut c = cfg.clone();
        c.evidence.strong.bodies = c.evidence.strong.bodies.max(body_cutoff);
        c.evidence.weak.bodies = c.evidence.weak.bodies.max(body_cutoff);
        Cow::Owned(c)
    } else {
        Cow::Borrowed(cfg)
    }
}
