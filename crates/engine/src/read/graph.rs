//! Stage 3b: the graph arm. From the strongest fused hits to their neighbours:
//! their links (`[[…]]`, `related:`, `supersedes`, both directions), when the
//! question's shape calls for it or when the best hit is weak (few arms agree on
//! it); and, for every question, what was said next in the conversation a hit was
//! written from (the memories citing the messages after the one it cites), since
//! between people the answer is often the reply ("what did you buy there?" —
//! "two atlases and a cookbook").

use std::collections::HashMap;

use gitloom_index::Index;

use super::analysis::Analysis;
use super::arm::Arm;
use super::config::RetrieveConfig;
use super::fusion::{ArmList, Fused};
use super::hit::{GraphStep, StepKind};
use super::request::{RetrieveRequest, in_scope};
use crate::error::Result;

/// The graph arm's list and how each neighbour was reached; `None` when the graph
/// is not walked for this question or gives nothing.
pub(crate) fn expand(
    index: &Index,
    fused: &[Fused],
    req: &RetrieveRequest,
    q: &Analysis,
    cfg: &RetrieveConfig,
) -> Result<Option<(ArmList, HashMap<String, GraphStep>)>> {
    let weak_top = fused.first().is_none_or(|f| f.arms.len() < 2);
    let links = q.shape.expands_graph() || weak_top;
    let next = cfg.conversation_next > 0;
    if !(links || next) || fused.is_empty() {
        return Ok(None);
    }
    let w = cfg.weights.graph.max(1e-9);
    let mut walk = Walk::default();
    for src in fused.iter().take(cfg.graph_sources) {
        if next {
            for n in said_next(index, &src.key, cfg.conversation_next)? {
                // The graph's share of its source's score, but never above its
                // source: score fusion adds this signal to the neighbour's own score.
                let mine = fused.iter().find(|f| f.key == n).map_or(0.0, |f| f.score);
                let lift = (src.score * cfg.conversation_share * w).min((src.score - mine) * 0.999);
                let step = GraphStep {
                    from: src.key.clone(),
                    via: "next→".to_owned(),
                    label: None,
                    kind: StepKind::Next,
                };
                walk.offer(req, n, (lift / w).max(0.0), step);
            }
        }
        if !links {
            continue;
        }
        // One hop: a linked neighbour earns half its source's fused score.
        let s = src.score * 0.5;
        let linked = |via: String, label: Option<String>| GraphStep {
            from: src.key.clone(),
            via,
            label,
            kind: StepKind::Link,
        };
        for l in index.links_from(&src.key)? {
            if let Some(r) = l.resolved {
                walk.offer(req, r, s, linked(format!("{}→", l.kind.as_str()), l.label));
            }
        }
        for l in index.links_to(&src.key)? {
            walk.offer(
                req,
                l.src,
                s,
                linked(format!("←{}", l.kind.as_str()), l.label),
            );
        }
    }
    if walk.seen.is_empty() && !links {
        return Ok(None);
    }
    let mut items: Vec<(String, f64)> = walk.seen.into_iter().collect();
    items.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Some((
        ArmList {
            arm: Arm::Graph,
            weight: cfg.weights.graph,
            items,
        },
        walk.steps,
    )))
}

/// The neighbours found so far, each with its best signal and how it was reached.
#[derive(Default)]
struct Walk {
    seen: HashMap<String, f64>,
    steps: HashMap<String, GraphStep>,
}

impl Walk {
    /// Keeps `n` at signal `s` when it beats what `n` had, unless it is its own
    /// source or out of the request's scope.
    fn offer(&mut self, req: &RetrieveRequest, n: String, s: f64, step: GraphStep) {
        if n == step.from || !in_scope(req, &n) || self.seen.get(&n).is_some_and(|old| *old >= s) {
            return;
        }
        self.seen.insert(n.clone(), s);
        self.steps.insert(n, step);
    }
}

/// The memories citing the `k` messages after the last one `path` cites in each
/// transcript it cites: what was said next in the conversation (the reply to a
/// question, the speaker's next turn).
fn said_next(index: &Index, path: &str, k: usize) -> Result<Vec<String>> {
    let cited = index.cited_by(path)?;
    let mut last: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for c in cited.iter().map(|s| gitloom_model::Citation::parse(s)) {
        for m in c.messages {
            let at = last.entry(c.file).or_insert(m);
            *at = (*at).max(m);
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (file, m) in last {
        for i in 1..=k {
            for p in index.citing_message(&gitloom_model::cite::message(file, m + i))? {
                if p != path && !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    Ok(out)
}
