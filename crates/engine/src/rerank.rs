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
