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
    let own: HashMap<&str, f64> = fused.iter().map(|f| (f.key.as_str(), f.score)).collect();
    let w = cfg.weights.graph.max(1e-9);
    let mut walk = Walk::default();
    for src in fused.iter().take(cfg.graph_sources) {
        if next {
            for n in said_next(index, &src.key, cfg.conversation_next)? {
                // The graph's share of its source's score, but never above its
                // source: score fusion adds this signal to the neighbour's own score.
                let mine = own.get(n.as_str()).copied().unwrap_or(0.0);
                let lift = (src.score * cfg.conversation_share * w).min((src.score - mine) * 0.999);
                walk.offer(
                    req,
                    src,
                    n,
                    (lift / w).max(0.0),
                    "next→".to_owned(),
                    None,
                    StepKind::Next,
                );
            }
        }
        if !links {
            continue;
        }
        // One hop: a linked neighbour earns half its source's fused score.
        let s = src.score * 0.5;
        for l in index.links_from(&src.key)? {
            if let Some(r) = l.resolved {
                let via = format!("{}→", l.kind.as_str());
                walk.offer(req, src, r, s, via, l.label, StepKind::Link);
            }
        }
        for l in index.links_to(&src.key)? {
            let via = format!("←{}", l.kind.as_str());
            walk.offer(req, src, l.src, s, via, l.label, StepKind::Link);
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
    #[allow(clippy::too_many_arguments)]
    fn offer(
        &mut self,
        req: &RetrieveRequest,
        src: &Fused,
        n: String,
        s: f64,
        via: String,
        label: Option<String>,
        kind: StepKind,
    ) {
        if n == src.key || !in_scope(req, &n) || self.seen.get(&n).is_some_and(|old| *old >= s) {
            return;
        }
        self.seen.insert(n.clone(), s);
        self.steps.insert(
            n,
            GraphStep {
                from: src.key.clone(),
                via,
                label,
                kind,
            },
        );
    }
}

/// The memories citing the `k` messages after the last one `path` cites in each
/// transcript it cites: what was said next in the conversation (the reply to a
/// question, the speaker's next turn).
fn said_next(index: &Index, path: &str, k: usize) -> Result<Vec<String>> {
    let mut last: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let cited = index.cited_by(path)?;
    for (file, m) in cited.iter().filter_map(|s| {
        let (file, m) = s.rsplit_once("#m")?;
        Some((file, m.parse::<usize>().ok()?))
    }) {
        let at = last.entry(file).or_insert(m);
        *at = (*at).max(m);
    }
    let mut out: Vec<String> = Vec::new();
    for (file, m) in last {
        for i in 1..=k {
            for p in index.citing_message(&format!("{file}#m{}", m + i))? {
                if p != path && !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    Ok(out)
}
