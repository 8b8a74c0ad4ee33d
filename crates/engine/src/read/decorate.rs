//! Stage 6: decoration. A judged candidate becomes a [`Hit`] that explains itself:
//! per-arm raw score and rank, evidence, snippet, section, matched terms and cue,
//! entities, the graph step that reached it, the priors that moved it.

use std::collections::HashMap;

use gitloom_index::Index;

use super::arm::Arm;
use super::arms::Candidates;
use super::hit::{ArmScore, GraphStep, Hit, HitSection};
use super::judge::Judged;
use crate::error::Result;

/// The `##` section of a lexical detail, as a hit shows it.
pub(crate) fn section_of(s: gitloom_index::SectionRef) -> HitSection {
    HitSection {
        heading: s.heading,
        anchor: s.anchor,
        start_line: s.start_line,
        end_line: s.end_line,
    }
}

/// Reads the snippet and best section of each of `judged` (the judge read only
/// their matched terms, which are kept): one full-text query per hit shown, not per
/// candidate.
pub(crate) fn describe(index: &Index, query: &str, judged: &mut [Judged<'_>]) -> Result<()> {
    let keys: Vec<String> = judged.iter().map(|j| j.fused.key.clone()).collect();
    let mut shown = index.lexical_details(query, &keys, gitloom_index::Decor::Shown)?;
    for j in judged.iter_mut() {
        // (A hit the judge read no row for has none here either.)
        if let (Some(s), Some(d)) = (shown.remove(&j.fused.key), j.details.as_mut()) {
            d.snippet = s.snippet;
            d.section = s.section;
        }
    }
    Ok(())
}

/// The hits for `judged`, in its order.
pub(crate) fn hits(
    judged: Vec<Judged<'_>>,
    candidates: &Candidates,
    steps: &HashMap<String, GraphStep>,
    notes: &mut HashMap<String, Vec<String>>,
) -> Vec<Hit> {
    judged
        .into_iter()
        .map(|j| {
            let f = j.fused;
            let d = j.details;
            let coverage = d.as_ref().map_or(0.0, |d| d.coverage);
            let title = d
                .as_ref()
                .map(|d| d.title.clone())
                .or_else(|| candidates.titles.get(&f.key).cloned())
                .unwrap_or_default();
            let (snippet, section, matched_terms) = match d {
                Some(d) => (d.snippet, d.section.map(section_of), d.matched_terms),
                None => (String::new(), None, Vec::new()),
            };
            Hit {
                path: f.key.clone(),
                title,
                score: j.score,
                arms: f
                    .arms
                    .iter()
                    .map(|(a, (s, r))| {
                        (
                            *a,
                            ArmScore {
                                score: *s,
                                rank: *r,
                            },
                        )
                    })
                    .collect(),
                evidence: Some(j.evidence),
                snippet,
                section,
                matched_terms,
                coverage: f.arms.contains_key(&Arm::Lexical).then_some(coverage),
                matched_cue: f
                    .arms
                    .contains_key(&Arm::Cues)
                    .then(|| candidates.matched_cues.get(&f.key).cloned())
                    .flatten(),
                matched_said: f
                    .arms
                    .contains_key(&Arm::Bodies)
                    .then(|| candidates.matched_said.get(&f.key).cloned())
                    .flatten(),
                entities: candidates
                    .entity_names
                    .get(&f.key)
                    .cloned()
                    .unwrap_or_default(),
                graph: steps
                    .get(&f.key)
                    .filter(|_| f.arms.contains_key(&Arm::Graph))
                    .cloned(),
                priors: notes.remove(&f.key).unwrap_or_default(),
            }
        })
        .collect()
}
