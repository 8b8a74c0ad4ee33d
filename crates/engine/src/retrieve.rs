//! The read path: arms → fusion → evidence floor → hits that explain themselves.
//!
//! No model is called here. Today the lexical arm is the only one; the semantic,
//! entity and graph arms plug into the same fusion as peers.

use std::collections::BTreeMap;
use std::time::Instant;

use gitloom_index::LexicalQuery;
use gitloom_model::Tier;
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::fusion::{ArmList, fuse};

/// Knobs of the read path. Defaults are the calibrated operating point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RetrieveConfig {
    /// Reciprocal-rank constant.
    pub rrf_k: f64,
    /// Candidates each arm contributes to fusion.
    pub depth: usize,
    /// Fusion weight per arm.
    pub weights: BTreeMap<String, f64>,
    /// Evidence floor per arm, on the arm's raw score: a hit that clears its arm's
    /// floor in no arm is not evidence and is dropped.
    pub floors: BTreeMap<String, f64>,
}

impl Default for RetrieveConfig {
    fn default() -> Self {
        RetrieveConfig {
            rrf_k: 60.0,
            depth: 50,
            weights: BTreeMap::from([("lexical".to_owned(), 1.0)]),
            floors: BTreeMap::from([("lexical".to_owned(), 0.0)]),
        }
    }
}

/// A retrieval request.
#[derive(Debug, Clone, Deserialize)]
pub struct RetrieveRequest {
    pub query: String,
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(default)]
    pub tier: Option<Tier>,
    #[serde(default)]
    pub topic: Option<String>,
    #[serde(default)]
    pub explain: bool,
}

fn default_limit() -> usize {
    10
}

impl RetrieveRequest {
    pub fn new(query: impl Into<String>) -> Self {
        RetrieveRequest {
            query: query.into(),
            limit: default_limit(),
            tier: None,
            topic: None,
            explain: false,
        }
    }

    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

/// One arm's view of a hit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ArmScore {
    /// The arm's raw score (BM25 made positive; cosine; …).
    pub score: f64,
    /// 1-based rank within the arm.
    pub rank: usize,
}

/// The `##` section a hit points into.
#[derive(Debug, Clone, Serialize)]
pub struct HitSection {
    pub heading: String,
    pub anchor: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// One retrieved memory, with why it was returned.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub path: String,
    pub title: String,
    /// Fused score (weighted reciprocal rank): orders hits; compare within one answer only.
    pub score: f64,
    pub arms: BTreeMap<String, ArmScore>,
    pub snippet: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<HitSection>,
    /// Query terms that matched lexically.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_terms: Vec<String>,
}

/// Per-arm candidate lists, for `--explain`.
#[derive(Debug, Clone, Serialize)]
pub struct ArmCandidates {
    pub arm: String,
    pub candidates: Vec<(String, f64)>,
}

/// The answer to a retrieval.
#[derive(Debug, Clone, Serialize)]
pub struct Retrieval {
    pub query: String,
    pub hits: Vec<Hit>,
    /// True when nothing cleared the evidence floor: the honest answer is "nothing".
    pub abstained: bool,
    pub timings_ms: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Vec<ArmCandidates>>,
    pub build: &'static str,
}

impl Engine {
    /// Lexical search only: the raw BM25 arm, no fusion or floor.
    pub fn search(&self, req: &RetrieveRequest) -> Result<Vec<Hit>> {
        self.ensure_synced()?;
        self.lexical_arm(req, req.limit, None)
    }

    fn lexical_arm(
        &self,
        req: &RetrieveRequest,
        limit: usize,
        decorate: Option<usize>,
    ) -> Result<Vec<Hit>> {
        let hits = self.index().lexical(&LexicalQuery {
            text: req.query.clone(),
            limit,
            tier: req.tier,
            topic: req.topic.clone(),
            decorate,
        })?;
        Ok(hits
            .into_iter()
            .map(|h| hit_from_lexical(h, true))
            .collect())
    }

    /// Retrieves the memories that are evidence for `req.query`, best first.
    pub fn retrieve(&self, req: &RetrieveRequest) -> Result<Retrieval> {
        if req.limit == 0 {
            return Err(EngineError::Usage("limit must be at least 1".into()));
        }
        let started = Instant::now();
        self.ensure_synced()?;
        let mut timings = BTreeMap::new();

        let t = Instant::now();
        let depth = self.config.depth.max(req.limit);
        let lexical = self.lexical_arm(req, depth, Some(0))?;
        timings.insert("lexical".to_owned(), ms(t));

        let arms = vec![ArmList {
            name: "lexical",
            weight: self.config.weights.get("lexical").copied().unwrap_or(1.0),
            items: lexical.iter().map(|h| (h.path.clone(), h.score)).collect(),
        }];
        let t = Instant::now();
        let fused = fuse(&arms, self.config.rrf_k);
        let by_path: BTreeMap<&str, &Hit> = lexical.iter().map(|h| (h.path.as_str(), h)).collect();
        let mut hits = Vec::new();
        for f in fused {
            let evidence = f
                .arms
                .iter()
                .any(|(arm, (raw, _))| *raw > self.config.floors.get(*arm).copied().unwrap_or(0.0));
            if !evidence {
                continue;
            }
            let Some(base) = by_path.get(f.key.as_str()) else {
                continue;
            };
            hits.push(Hit {
                path: f.key.clone(),
                title: base.title.clone(),
                score: f.score,
                arms: f
                    .arms
                    .iter()
                    .map(|(arm, (score, rank))| {
                        (
                            (*arm).to_owned(),
                            ArmScore {
                                score: *score,
                                rank: *rank,
                            },
                        )
                    })
                    .collect(),
                snippet: base.snippet.clone(),
                section: base.section.clone(),
                matched_terms: base.matched_terms.clone(),
            });
            if hits.len() == req.limit {
                break;
            }
        }
        timings.insert("fusion".to_owned(), ms(t));
        // Snippets, matched terms and sections for the answer only, not for every candidate.
        let t = Instant::now();
        let paths: Vec<String> = hits.iter().map(|h| h.path.clone()).collect();
        let mut details = self.index().lexical_details(&req.query, &paths)?;
        for h in &mut hits {
            if let Some(d) = details.remove(&h.path) {
                let d = hit_from_lexical(d, false);
                h.snippet = d.snippet;
                h.section = d.section;
                h.matched_terms = d.matched_terms;
            }
        }
        timings.insert("snippets".to_owned(), ms(t));
        timings.insert("total".to_owned(), ms(started));
        let explain = req.explain.then(|| {
            arms.iter()
                .map(|a| ArmCandidates {
                    arm: a.name.to_owned(),
                    candidates: a.items.clone(),
                })
                .collect()
        });
        Ok(Retrieval {
            query: req.query.clone(),
            abstained: hits.is_empty(),
            hits,
            timings_ms: timings,
            warnings: self.take_warnings(),
            explain,
            build: crate::BUILD,
        })
    }
}

fn hit_from_lexical(h: gitloom_index::LexicalHit, with_arm: bool) -> Hit {
    let arms = if with_arm {
        BTreeMap::from([(
            "lexical".to_owned(),
            ArmScore {
                score: h.score,
                rank: h.rank,
            },
        )])
    } else {
        BTreeMap::new()
    };
    Hit {
        path: h.path,
        title: h.title,
        score: h.score,
        arms,
        snippet: h.snippet,
        section: h.section.map(|s| HitSection {
            heading: s.heading,
            anchor: s.anchor,
            start_line: s.start_line,
            end_line: s.end_line,
        }),
        matched_terms: h.matched_terms,
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
