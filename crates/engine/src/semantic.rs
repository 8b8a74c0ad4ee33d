//! The two semantic arms: cosine of the query against cue vectors and against body
//! (section) vectors, scored in one pass over one contiguous arena.
//!
//! Vectors come from a cache keyed by (model id, hash of the text) that lives apart
//! from the rebuildable index, so a rebuild or schema bump recomputes none of them
//! and identical texts share one vector. The arena is built from the index's
//! embedding units the first time a query needs it after a sync.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use gitloom_embed::{
    Arena, EmbedStats, Embedder, VectorCache, chunk, embed_cached, max_words_for_tokens,
};
use gitloom_index::{EmbedUnit, Index, UnitKind};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};

/// A progress callback: (what, done, total).
pub type Progress = dyn Fn(&str, usize, usize) + Send + Sync;

/// Cut-offs of the semantic arms for one embedding model (plan item R4): a hit is
/// kept if its cosine is at least `floor` and at least
/// `best - margin * (best - median)` of the candidates scanned.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct SemanticCut {
    pub cue_floor: f32,
    pub body_floor: f32,
    pub margin: f32,
}

impl SemanticCut {
    /// No cut: every candidate scanned is kept (an infinite margin puts the adaptive
    /// cut below any floor; the floors are below any cosine). For score fusion,
    /// which ranks by the cosines themselves.
    pub const KEEP_ALL: SemanticCut = SemanticCut {
        cue_floor: -1.0,
        body_floor: -1.0,
        margin: f32::INFINITY,
    };

    /// Defaults per model id; unknown models get a permissive floor (rank, don't cut).
    pub fn for_model(model_id: &str) -> SemanticCut {
        if model_id.starts_with("minilm-l6-v2") {
            SemanticCut {
                cue_floor: 0.30,
                body_floor: 0.25,
                margin: 0.75,
            }
        } else if model_id.starts_with("static-") {
            SemanticCut {
                cue_floor: 0.45,
                body_floor: 0.40,
                margin: 0.6,
            }
        } else {
            SemanticCut {
                cue_floor: 0.0,
                body_floor: 0.0,
                margin: 1.0,
            }
        }
    }
}

/// One arm's best cosine per file, best first, with the unit that produced it.
#[derive(Debug, Clone, Default)]
pub struct SemanticHits {
    pub cues: Vec<(String, f32, String)>,
    pub bodies: Vec<(String, f32, String)>,
    /// Body hits under the cut, best first: not candidates on their own, but they
    /// can corroborate another arm's (see `RetrieveConfig::corroborate`).
    pub bodies_below: Vec<(String, f32, String)>,
    /// The body cosine the cut was made at.
    pub body_cutoff: f32,
}

struct Built {
    commit: String,
    arena: Arena,
    /// Arena key → (path, kind, label).
    units: Vec<(String, UnitKind, String)>,
}

pub(crate) struct Semantic {
    pub(crate) embedder: Arc<dyn Embedder>,
    cache: VectorCache,
    built: Mutex<Option<Arc<Built>>>,
    queries: Mutex<HashMap<String, Vec<f32>>>,
}

/// The texts of units, chunked to the model's window: (unit index, text).
fn chunks(embedder: &dyn Embedder, units: &[EmbedUnit]) -> Vec<(usize, String)> {
    let max_words = max_words_for_tokens(embedder.max_tokens());
    let mut out = Vec::with_capacity(units.len());
    for (i, u) in units.iter().enumerate() {
        if u.text.trim().is_empty() {
            continue;
        }
        match u.kind {
            UnitKind::Cue => out.push((i, u.text.clone())),
            UnitKind::Body => out.extend(chunk(&u.text, max_words).into_iter().map(|c| (i, c))),
        }
    }
    out
}

impl Semantic {
    pub(crate) fn open(
        embedder: Arc<dyn Embedder>,
        cache_path: &Path,
    ) -> Result<(Semantic, Option<String>)> {
        let (cache, status) =
            VectorCache::open(cache_path).map_err(|e| EngineError::Embed(e.to_string()))?;
        let warning = match status {
            gitloom_embed::CacheStatus::Reset { reason } => Some(format!(
                "vector cache {} was unusable ({reason}); vectors will be recomputed",
                cache_path.display()
            )),
            _ => None,
        };
        Ok((
            Semantic {
                embedder,
                cache,
                built: Mutex::new(None),
                queries: Mutex::new(HashMap::new()),
            },
            warning,
        ))
    }

    pub(crate) fn model_id(&self) -> &str {
        self.embedder.model_id()
    }

    /// Embeds (or finds in the cache) the units of `paths` (all when `None`).
    pub(crate) fn embed_units(
        &self,
        index: &Index,
        paths: Option<&[String]>,
        progress: Option<&Progress>,
    ) -> Result<EmbedStats> {
        let units = index.embed_units(paths)?;
        Ok(self.vectors(&units, progress)?.2)
    }

    /// Vectors of the units' texts (chunked to the model's window), from the cache or
    /// the model: (unit index per text, vector per text, counts).
    fn vectors(
        &self,
        units: &[EmbedUnit],
        progress: Option<&Progress>,
    ) -> Result<(Vec<usize>, Vec<Vec<f32>>, EmbedStats)> {
        let texts = chunks(self.embedder.as_ref(), units);
        let refs: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
        let cb = |done: usize, total: usize| {
            if let Some(p) = progress {
                p("embedding", done, total);
            }
        };
        let (vectors, stats) = embed_cached(self.embedder.as_ref(), &self.cache, &refs, Some(&cb))
            .map_err(|e| EngineError::Embed(e.to_string()))?;
        Ok((texts.into_iter().map(|(u, _)| u).collect(), vectors, stats))
    }

    /// The arena for `commit`, built (and any missing vector embedded) if needed.
    fn arena(
        &self,
        index: &Index,
        commit: &str,
        progress: Option<&Progress>,
    ) -> Result<Arc<Built>> {
        let mut guard = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = guard.as_ref()
            && b.commit == commit
        {
            return Ok(b.clone());
        }
        let units = index.embed_units(None)?;
        let (owners, vectors, _) = self.vectors(&units, progress)?;
        let mut arena = Arena::with_capacity(self.embedder.dim(), vectors.len());
        for (unit, v) in owners.iter().zip(&vectors) {
            let kind = match units[*unit].kind {
                UnitKind::Cue => 0,
                UnitKind::Body => 1,
            };
            let key = u32::try_from(*unit)
                .map_err(|_| EngineError::Usage("too many embedding units".into()))?;
            arena
                .push(key, kind, v)
                .map_err(|e| EngineError::Embed(e.to_string()))?;
        }
        let built = Arc::new(Built {
            commit: commit.to_owned(),
            arena,
            units: units
                .into_iter()
                .map(|u| (u.path, u.kind, u.label))
                .collect(),
        });
        *guard = Some(built.clone());
        Ok(built)
    }

    /// Embeds a query, once per distinct text per process.
    pub(crate) fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        if let Some(v) = self
            .queries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(query)
        {
            return Ok(v.clone());
        }
        let v = self
            .embedder
            .embed(&[query])
            .map_err(|e| EngineError::Embed(e.to_string()))?
            .into_iter()
            .next()
            .ok_or_else(|| EngineError::Embed("the embedder returned no vector".into()))?;
        let mut q = self.queries.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() > 4096 {
            q.clear();
        }
        q.insert(query.to_owned(), v.clone());
        Ok(v)
    }

    /// Scores the query against every cue and body vector in one pass; returns each
    /// arm's best cosine per file after the adaptive cut.
    pub(crate) fn search(
        &self,
        index: &Index,
        commit: &str,
        query_vec: &[f32],
        depth: usize,
        cut: SemanticCut,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<SemanticHits> {
        let built = self.arena(index, commit, None)?;
        if built.arena.is_empty() {
            return Ok(SemanticHits::default());
        }
        // Several rows per file (cues, chunks): over-fetch, then keep each file's best.
        let per_kind = built.arena.scan_per_kind(query_vec, depth * 4);
        let mut out = SemanticHits::default();
        for (kind, hits) in per_kind {
            let floor = if kind == 0 {
                cut.cue_floor
            } else {
                cut.body_floor
            };
            let mut best: BTreeMap<&str, (f32, &str)> = BTreeMap::new();
            for h in &hits {
                let Some((path, _, label)) = built.units.get(h.key as usize) else {
                    continue;
                };
                if !keep(path) {
                    continue;
                }
                let e = best
                    .entry(path.as_str())
                    .or_insert((f32::MIN, label.as_str()));
                if h.cosine > e.0 {
                    *e = (h.cosine, label.as_str());
                }
            }
            let mut list: Vec<(String, f32, String)> = best
                .into_iter()
                .map(|(p, (c, l))| (p.to_owned(), c, l.to_owned()))
                .collect();
            list.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let cutoff = adaptive_cutoff(
                &list.iter().map(|x| x.1).collect::<Vec<_>>(),
                floor,
                cut.margin,
            );
            let below = list.split_off(list.partition_point(|x| x.1 >= cutoff));
            list.truncate(depth);
            if kind == 0 {
                out.cues = list;
            } else {
                out.bodies = list;
                out.bodies_below = below;
                out.body_cutoff = cutoff;
            }
        }
        Ok(out)
    }
}

/// `max(floor, best - margin * (best - median))` over scores sorted best first: cut
/// where the distribution falls off, never below the model's absolute floor.
pub fn adaptive_cutoff(sorted: &[f32], floor: f32, margin: f32) -> f32 {
    let Some(&best) = sorted.first() else {
        return floor;
    };
    let median = sorted[sorted.len() / 2];
    floor.max(best - margin * (best - median))
}

impl Semantic {
    /// Texts the index would embed (cues, body chunks) and how many of them the
    /// vector cache lacks, for `gitloom doctor`. Embeds nothing.
    pub(crate) fn coverage(&self, index: &Index) -> Result<(usize, usize)> {
        let units = index.embed_units(None)?;
        let texts = chunks(self.embedder.as_ref(), &units);
        let hashes: Vec<String> = texts
            .iter()
            .map(|(_, t)| gitloom_embed::text_hash(t))
            .collect();
        let refs: Vec<&str> = hashes.iter().map(String::as_str).collect();
        let have = self
            .cache
            .get_many(self.embedder.model_id(), &refs)
            .map_err(|e| EngineError::Embed(e.to_string()))?;
        let missing = refs.iter().filter(|h| !have.contains_key(**h)).count();
        Ok((refs.len(), missing))
    }
}

impl Semantic {
    /// Vectors of arbitrary texts, through the vector cache (consolidation compares
    /// whole memories this way).
    pub(crate) fn embed_texts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        embed_cached(self.embedder.as_ref(), &self.cache, texts, None)
            .map(|(v, _)| v)
            .map_err(|e| EngineError::Embed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_all_cuts_nothing_even_when_every_score_is_equal() {
        let k = SemanticCut::KEEP_ALL;
        assert_eq!(
            adaptive_cutoff(&[0.9, 0.5, 0.1], k.body_floor, k.margin),
            -1.0
        );
        assert_eq!(
            adaptive_cutoff(&[0.4, 0.4, 0.4], k.cue_floor, k.margin),
            -1.0
        );
        assert_eq!(adaptive_cutoff(&[-0.2], k.cue_floor, k.margin), -1.0);
    }

    #[test]
    fn cutoff_follows_the_distribution_and_respects_the_floor() {
        assert_eq!(adaptive_cutoff(&[], 0.3, 0.5), 0.3);
        let c = adaptive_cutoff(&[0.9, 0.5, 0.4, 0.3, 0.2], 0.1, 0.5);
        assert!((c - 0.65).abs() < 1e-6, "{c}");
        // A corpus with nothing relevant: everything under the floor is cut.
        assert_eq!(adaptive_cutoff(&[0.2, 0.19, 0.18], 0.3, 0.5), 0.3);
    }
}
