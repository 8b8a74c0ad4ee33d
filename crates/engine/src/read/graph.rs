//! Stage 3b: the graph arm. From the strongest fused hits to their neighbours
//! (links, `related:`, `supersedes`, both directions), when the question's shape
//! calls for it or when the best hit is weak (few arms agree on it).

use std::collections::HashMap;

use gitloom_index::Index;

use super::analysis::Analysis;
use super::arm::Arm;
use super::config::RetrieveConfig;
use super::fusion::{ArmList, Fused};
use super::hit::GraphStep;
use super::request::{RetrieveRequest, in_scope};
use crate::error::Result;

/// The graph arm's list and how each neighbour was reached; `None` when the graph
/// is not walked for this question.
pub(crate) fn expand(
    index: &Index,
    fused: &[Fused],
    req: &RetrieveRequest,
    q: &Analysis,
    cfg: &RetrieveConfig,
) -> Result<Option<(ArmList, HashMap<String, GraphStep>)>> {
    let weak_top = fused.first().is_none_or(|f| f.arms.len() < 2);
    if !(q.shape.expands_graph() || weak_top) || fused.is_empty() {
        return Ok(None);
    }
    let mut steps: HashMap<String, GraphStep> = HashMap::new();
    let mut seen: HashMap<String, f64> = HashMap::new();
    for src in fused.iter().take(cfg.graph_sources) {
        let mut neighbours: Vec<(String, GraphStep)> = Vec::new();
        for l in index.links_from(&src.key)? {
            if let Some(r) = l.resolved {
                neighbours.push((
                    r,
                    GraphStep {
                        from: src.key.clone(),
                        via: format!("{}→", l.kind.as_str()),
                        label: l.label,
                    },
                ));
            }
        }
        for l in index.links_to(&src.key)? {
            neighbours.push((
                l.src.clone(),
                GraphStep {
                    from: src.key.clone(),
                    via: format!("←{}", l.kind.as_str()),
                    label: l.label,
                },
            ));
        }
        for (n, step) in neighbours {
            if n == src.key || !in_scope(req, &n) {
                continue;
            }
            // One hop: a neighbour earns half its source's fused score.
            let s = src.score * 0.5;
            if seen.get(&n).is_none_or(|old| *old < s) {
                seen.insert(n.clone(), s);
                steps.insert(n, step);
            }
        }
    }
    let mut items: Vec<(String, f64)> = seen.into_iter().collect();
    items.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Some((
        ArmList {
            arm: Arm::Graph,
            weight: cfg.weights.graph,
            items,
        },
        steps,
    )))
}
