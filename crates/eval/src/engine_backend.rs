//! The real backend: a fresh gitloom store per load, queried through the normal
//! `retrieve` path.

use std::collections::BTreeMap;

use gitloom_engine::{Engine, EngineOptions, RetrieveRequest};
use gitloom_model::StorePath;

use crate::{ArmRank, Backend, Doc, EvalError, QueryResult, RankedHit};

/// A fresh temporary store per [`Backend::load`], removed when replaced or dropped.
/// Every store shares the options' embedder and vector cache, so a text seen in an
/// earlier conversation or question (or an earlier run) is not embedded again.
#[derive(Default)]
pub struct EngineBackend {
    current: Option<(tempfile::TempDir, Engine)>,
    corpus: usize,
    options: EngineOptions,
    /// Ask for the per-arm candidate lists and keep them in the per-query log.
    pub explain: bool,
}

impl EngineBackend {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_options(options: EngineOptions) -> Self {
        EngineBackend {
            options,
            ..Self::default()
        }
    }
}

impl Backend for EngineBackend {
    fn load(&mut self, docs: Vec<Doc>) -> Result<(), EvalError> {
        self.current = None;
        let dir = tempfile::Builder::new()
            .prefix("gitloom-eval-")
            .tempdir()
            .map_err(|e| EvalError::backend(format!("cannot create a temporary store: {e}")))?;
        let engine =
            Engine::init_with(dir.path(), self.options.clone()).map_err(EvalError::backend)?;
        let mut batch = Vec::with_capacity(docs.len());
        for d in docs {
            let path = StorePath::parse(&d.path)
                .map_err(|e| EvalError::backend(format!("{}: {e}", d.path)))?;
            batch.push((path, Some(d.content.into_bytes())));
        }
        self.corpus = batch.len();
        engine
            .write_batch(batch, "eval: load".into(), None)
            .map_err(EvalError::backend)?;
        for w in engine.take_warnings() {
            eprintln!("warning: {w}");
        }
        self.current = Some((dir, engine));
        Ok(())
    }

    fn corpus_size(&self) -> usize {
        self.corpus
    }

    fn query(
        &mut self,
        query: &str,
        limit: usize,
        asked_at: Option<i64>,
    ) -> Result<QueryResult, EvalError> {
        let (_, engine) = self
            .current
            .as_ref()
            .ok_or_else(|| EvalError::backend("query before load"))?;
        let req = RetrieveRequest {
            explain: self.explain,
            now: asked_at,
            ..RetrieveRequest::new(query).with_limit(limit)
        };
        let r = engine.retrieve(&req).map_err(EvalError::backend)?;
        let hits = r
            .hits
            .iter()
            .map(|h| RankedHit {
                path: h.path.clone(),
                arms: h
                    .arms
                    .iter()
                    .map(|(a, s)| {
                        (
                            a.to_string(),
                            ArmRank {
                                score: s.score,
                                rank: s.rank,
                            },
                        )
                    })
                    .collect::<BTreeMap<_, _>>(),
            })
            .collect();
        let explain = serde_json::json!({
            "shape": r.shape,
            "hits": r.hits.iter().map(|h| serde_json::json!({
                "path": h.path, "score": h.score, "arms": h.arms, "evidence": h.evidence,
                "coverage": h.coverage, "matched": h.matched_terms, "cue": h.matched_cue, "said": h.matched_said,
                "entities": h.entities, "graph": h.graph, "priors": h.priors,
            })).collect::<Vec<_>>(),
            "arms": r.explain,
            "judged": r.judged,
            "warnings": r.warnings,
        });
        Ok(QueryResult {
            hits,
            abstained: r.abstained,
            latency_ms: r.timings_ms.get("total").copied().unwrap_or_default(),
            explain,
        })
    }
}
