//! The optional reranking stage (plan item R16): a second opinion over the head of
//! an answer, e.g. a cross-encoder. None is configured by default, and then the
//! answer is exactly what fusion, priors and the floor produced.

/// What a reranker sees of one hit.
#[derive(Debug, Clone)]
pub struct RerankCandidate<'a> {
    pub path: &'a str,
    pub title: &'a str,
    pub snippet: &'a str,
}

/// Scores candidates for a query; higher is better. The reranker only reorders: the
/// evidence floor has already decided what may be returned.
pub trait Reranker: Send + Sync {
    /// Names the model, for `timings_ms` and warnings.
    fn name(&self) -> &str;
    /// One score per candidate, in the candidates' order.
    fn rerank(&self, query: &str, candidates: &[RerankCandidate<'_>]) -> Result<Vec<f64>, String>;
}

/// How many of the best hits a reranker reorders.
pub const RERANK_DEPTH: usize = 20;

/// Stage 7: reorders the head of `hits` by `reranker`; on a failure or a wrong
/// number of scores the fused order is kept and a warning says why.
pub(crate) fn apply(
    reranker: &dyn Reranker,
    query: &str,
    hits: &mut Vec<super::hit::Hit>,
    warnings: &mut Vec<String>,
) {
    if hits.len() < 2 {
        return;
    }
    let n = hits.len().min(RERANK_DEPTH);
    let cands: Vec<RerankCandidate<'_>> = hits[..n]
        .iter()
        .map(|h| RerankCandidate {
            path: &h.path,
            title: &h.title,
            snippet: &h.snippet,
        })
        .collect();
    match reranker.rerank(query, &cands) {
        Ok(scores) if scores.len() == n => {
            let mut order: Vec<usize> = (0..n).collect();
            // Stable: equal scores keep the fused order.
            order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
            let head: Vec<super::hit::Hit> = order.iter().map(|i| hits[*i].clone()).collect();
            hits.splice(..n, head);
        }
        Ok(scores) => warnings.push(format!(
            "reranker {} returned {} scores for {n} hits; ignored",
            reranker.name(),
            scores.len()
        )),
        Err(e) => warnings.push(format!(
            "reranker {} failed: {e}; fused order kept",
            reranker.name()
        )),
    }
}
