//! The [`Embedder`] trait and the process-wide default.

use std::sync::Arc;

use crate::{EmbedError, MiniLm, minilm_dir};

/// Turns texts into unit-length vectors.
///
/// Implementations are cheap to construct and shareable across threads; heavy state
/// (weights) is loaded lazily, once, on the first [`Embedder::embed`] call.
pub trait Embedder: Send + Sync {
    /// Names model + revision + dimension, e.g. `"minilm-l6-v2@gt-0.1.0/384"`: the
    /// vector cache key. Two embedders with the same id must produce the same vectors.
    fn model_id(&self) -> &str;
    /// Length of every vector returned.
    fn dim(&self) -> usize;
    /// One vector per text, L2-normalised, same order. Batches internally.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// The vector of one query, to be compared with vectors from [`Embedder::embed`]:
    /// the same model, free to run at another precision suited to one short text
    /// (MiniLM runs it in f32, without quantising its weights). Not cached.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed(&[text])?
            .pop()
            .ok_or_else(|| EmbedError::model(self.model_id(), "no vector for the query"))
    }
    /// Max tokens per text the model sees (for chunking, see [`crate::chunk`]);
    /// static tables have no window and answer a large number.
    fn max_tokens(&self) -> usize;
}

/// The embedder to use when none is configured: MiniLM if it is installed under
/// [`crate::model_dir`], else `None` (the caller degrades to lexical-only retrieval and
/// says so once). Costs a few `stat` calls: the weights load on the first `embed`.
pub fn default_embedder() -> Result<Option<Arc<dyn Embedder>>, EmbedError> {
    let dir = minilm_dir();
    if !MiniLm::is_installed(&dir) {
        return Ok(None);
    }
    Ok(Some(Arc::new(MiniLm::load(&dir)?)))
}

/// L2-normalises `v` in place; a zero vector stays zero.
#[inline(always)]
pub(crate) fn normalise(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        for x in v {
            *x /= n;
        }
    }
}
