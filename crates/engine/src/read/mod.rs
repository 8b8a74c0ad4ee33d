//! The read path: a pipeline of small typed stages. No model is called except to
//! embed the query.
//!
//! ```text
//! request ─► analysis ─► arms ─► fusion ─► graph ─► priors ─► judge ─► decorate ─► rerank
//!            (once)      lexical  scores    walk +   factors   floor +   hits that   optional
//!                        cues     (or RRF)  re-fuse  on the    gates     explain
//!                        bodies                      head                themselves
//!                        entities
//! ```
//!
//! - `analysis`: the question read once (terms, shape, dates, tier, answer type,
//!   entities) with the workspace's one word splitter.
//! - `arms`: each arm runs once and returns raw scores, best first (on a large
//!   arena the semantic scan runs on the engine's `worker` thread beside the
//!   lexical arm).
//! - [`fusion`]: best cosine plus a share of lexical coverage (or weighted
//!   reciprocal rank, and always without vectors); an arm counts once per candidate.
//! - `graph`: neighbours of the strongest hits, when the question calls for it.
//! - `priors`: factors on the fused score (supersession, dates, tier, …).
//! - `judge`: the evidence floor on raw scores ([`evidence`]) and the gates
//!   (`gates`); nothing returned when nothing is evidence.
//! - `decorate`: snippets, sections, matched terms and cues.
//!
//! The priors and the judge decide the first hits and the abstention on a head of
//! fixed size ([`priors::HEAD`]) of the arms at their configured depth, whatever the
//! limit; a limit beyond that depth ranks deeper lists again for the hits after the
//! head, so a larger limit extends the hits without reordering them.
//! - [`rerank`]: an optional second opinion over the head.
//!
//! Whether a hit is *evidence* is decided on raw arm scores, never on the fused
//! rank (R3, R6). Every stage is a function of its inputs, testable without an
//! engine; `Engine::retrieve` only calls them in order.

pub(crate) mod analysis;
pub mod arm;
pub(crate) mod arms;
pub mod config;
pub(crate) mod decorate;
pub mod evidence;
pub mod fusion;
pub(crate) mod gates;
pub(crate) mod graph;
pub mod hit;
pub(crate) mod judge;
pub(crate) mod priors;
pub mod request;
pub mod rerank;
pub(crate) mod timings;
pub(crate) mod worker;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use gitloom_index::{Index, LexicalQuery};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use analysis::Analysis;
use arm::Arm;
use hit::{Abstention, ArmCandidates, ArmScore, Hit, Retrieval};
use request::RetrieveRequest;
use timings::Timings;

/// The arena size (rows: cues and body chunks) from which the semantic arms' scan
/// runs on the worker thread beside the lexical arm (`Engine::set_concurrent_arms_from`).
/// Under it the hand-over costs about what the overlap saves: in the engine bench
/// (~4.2 rows per memory) 200 and 500 memories were 0.07–0.08 ms slower side by
/// side, 1,000 and 2,000 memories 0.45–0.54 ms faster (BENCHMARKS.md, session 27).
pub const CONCURRENT_ARMS_FROM: usize = 4096;

impl Engine {
    /// Lexical search only: the raw BM25 arm, no fusion or floor.
    pub fn search(&self, req: &RetrieveRequest) -> Result<Vec<Hit>> {
        self.ensure_synced()?;
        let hits = self.index().lexical(&LexicalQuery {
            text: req.query.clone(),
            limit: req.limit,
            tier: req.tier,
            topic: req.topic.clone(),
            decorate: None,
        })?;
        Ok(hits
            .into_iter()
            .map(|h| Hit {
                arms: BTreeMap::from([(
                    Arm::Lexical,
                    ArmScore {
                        score: h.score,
                        rank: h.rank,
                    },
                )]),
                path: h.path,
                title: h.title,
                score: h.score,
                evidence: None,
                snippet: h.snippet,
                section: h.section.map(decorate::section_of),
                matched_terms: h.matched_terms,
                coverage: Some(h.coverage),
                matched_cue: None,
                matched_said: None,
                entities: Vec::new(),
                graph: None,
                priors: Vec::new(),
            })
            .collect())
    }

    /// Retrieves the memories that are evidence for `req.query`, best first.
    pub fn retrieve(&self, req: &RetrieveRequest) -> Result<Retrieval> {
        self.retrieve_at(req, None)
    }

    /// [`Engine::retrieve`] against the store as it was at a revision or date: an
    /// index of that commit is built on first use and kept in `.gitloom/at/`.
    pub fn retrieve_at(&self, req: &RetrieveRequest, at: Option<&str>) -> Result<Retrieval> {
        if req.limit == 0 {
            return Err(EngineError::Usage("limit must be at least 1".into()));
        }
        let started = Instant::now();
        match at {
            None => {
                self.ensure_synced()?;
                // One read transaction for the whole pipeline: its two hundred or so
                // statements see one state of the index, even while another process
                // syncs it (the arena is chosen by the commit read first). Not for
                // speed: at 10k it changed no stage beyond the bench's noise.
                self.index()
                    .read(|index| self.retrieve_in(index, req, started))
            }
            Some(rev) => {
                let commit = self.store.resolve(rev)?;
                let dir = self.store.gitloom_dir().join("at");
                std::fs::create_dir_all(&dir).map_err(|source| EngineError::Io {
                    what: "cannot create",
                    path: dir.clone(),
                    source,
                })?;
                let (mut index, _) = Index::open(&dir.join(format!("{commit}.db")))?;
                if index.state()?.is_none_or(|s| {
                    s.commit.parse::<gitloom_store::ObjectId>().ok() != Some(commit)
                }) {
                    self.sync_index_to(&mut index, commit, true, false, Instant::now())?;
                }
                index.read(|index| self.retrieve_in(index, req, started))
            }
        }
    }

    /// The pipeline, stage by stage.
    fn retrieve_in(
        &self,
        index: &Index,
        req: &RetrieveRequest,
        started: Instant,
    ) -> Result<Retrieval> {
        let cfg = &self.config;
        let mut warnings = self.take_warnings();
        let mut timings = Timings::new();

        let q = Analysis::of(req, index, cfg)?;
        timings.stop("analysis");
        // Embedding the query is the slow part; the index is only read after it.
        let query_vec = self.embed_query_for(&q.query, &mut timings, &mut warnings);

        let commit = index.state()?.map(|s| s.commit).unwrap_or_default();
        let ask = Ask {
            index,
            q: &q,
            query_vec: query_vec.as_deref(),
            commit: &commit,
        };
        // The first hits and the abstention are decided on the arms at the configured
        // depth whatever the limit: a limit beyond it lists deeper, and deeper lists
        // fuse differently (each arm's cut reads its whole list), so `--limit 100`
        // would open differently from `--limit 10`. Such a limit ranks the deeper
        // lists too, for the hits after the head (the arms' cost twice). A depth of 0
        // lists as deep as the limit, as it always did.
        let (head, deep) = if cfg.depth > 0 && req.limit > cfg.depth {
            let at_depth = RetrieveRequest {
                limit: cfg.depth,
                ..req.clone()
            };
            let head = self.rank(&ask, &at_depth, &mut timings, &mut warnings)?;
            let said = warnings.len();
            let deep = self.rank(&ask, req, &mut timings, &mut warnings)?;
            // The second ranking's warnings that the first already gave are said once.
            let (first, second) = warnings.split_at(said);
            let second: Vec<String> = second
                .iter()
                .filter(|w| !first.contains(w))
                .cloned()
                .collect();
            warnings.truncate(said);
            warnings.extend(second);
            (head, Some(deep))
        } else {
            (self.rank(&ask, req, &mut timings, &mut warnings)?, None)
        };
        let Ranked {
            mut candidates,
            fused,
            mut steps,
            mut notes,
        } = head;

        timings.start();
        let mut record = req.explain.then(judge::Record::new);
        let (mut judged, abstention) = judge::judge_to(
            index,
            &fused,
            deep.as_ref().map(|d| judge::Deeper {
                fused: &d.fused,
                steps: &d.steps,
                notes: &d.notes,
                body_cutoff: d.candidates.body_cutoff,
            }),
            priors::HEAD,
            priors::judged_len(req.limit),
            &q,
            cfg,
            candidates.body_cutoff,
            &steps,
            &mut notes,
            record.as_mut(),
        )?;
        timings.stop("floor");
        if let Some(deep) = &deep {
            // What the hits after the head were found and walked by.
            candidates.absorb(&deep.candidates);
            for (k, v) in &deep.steps {
                steps.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }

        timings.start();
        // A reranker reorders every judged hit, by its snippet among other things;
        // without one only the first `limit` are shown.
        if self.reranker.is_none() {
            judged.truncate(req.limit);
        }
        decorate::describe(index, &q.query, &mut judged)?;
        let mut hits = decorate::hits(judged, &candidates, &steps, &mut notes);
        timings.stop("decorate");

        if let Some(r) = &self.reranker
            && hits.len() > 1
        {
            timings.start();
            rerank::apply(r.as_ref(), &req.query, &mut hits, &mut warnings);
            timings.stop("rerank");
        }
        hits.truncate(req.limit);
        timings.since("total", started);
        // The arms' lists as the whole answer was ranked (the deeper ones, for a limit
        // beyond the depth).
        let explain = req.explain.then(|| {
            deep.as_ref()
                .map_or(&candidates.lists, |d| &d.candidates.lists)
                .iter()
                .map(|a| ArmCandidates {
                    arm: a.arm,
                    candidates: a.items.clone(),
                })
                .collect()
        });
        Ok(Retrieval {
            query: req.query.clone(),
            shape: q.shape,
            abstained: hits.is_empty(),
            abstention: if hits.is_empty() {
                abstention.or(Some(Abstention::NoEvidence))
            } else {
                None
            },
            hits,
            timings_ms: timings.map,
            warnings,
            explain,
            judged: record,
            build: crate::BUILD,
        })
    }

    /// The arms at `req`'s depth, fused, walked from, and with the priors applied to
    /// the head.
    fn rank(
        &self,
        ask: &Ask<'_>,
        req: &RetrieveRequest,
        timings: &mut Timings,
        warnings: &mut Vec<String>,
    ) -> Result<Ranked> {
        let (index, cfg) = (ask.index, &self.config);
        let semantic = self.semantic.as_ref().zip(ask.query_vec);
        let mut candidates = arms::run(
            index,
            semantic,
            ask.commit,
            req,
            ask.q,
            cfg,
            &self.worker,
            self.concurrent_from,
            timings,
            warnings,
        )?;

        timings.start();
        let unlisted = std::mem::take(&mut candidates.unlisted);
        let fuser = fusion::Fuser::new(index, ask.q, cfg, &candidates.lists, unlisted)?;
        let mut fused = fuser.fuse(&candidates.lists);
        timings.stop("fusion");

        timings.start();
        let steps = match graph::expand(index, &fused, req, ask.q, cfg)? {
            Some((list, steps)) => {
                candidates.lists.push(list);
                fused = fuser.fuse(&candidates.lists);
                steps
            }
            None => Default::default(),
        };
        timings.stop("graph");

        timings.start();
        let notes = priors::apply(index, &mut fused, ask.q, cfg)?;
        timings.stop("priors");
        Ok(Ranked {
            candidates,
            fused,
            steps,
            notes,
        })
    }

    /// The query's vector, if there is an embedder; a failure is a warning (the
    /// lexical and entity arms still answer), never an error.
    fn embed_query_for(
        &self,
        query: &str,
        timings: &mut Timings,
        warnings: &mut Vec<String>,
    ) -> Option<Vec<f32>> {
        let sem = self.semantic.as_ref()?;
        timings.start();
        let v = match sem.embed_query(query) {
            Ok(v) => Some(v),
            Err(e) => {
                warnings.push(format!("semantic arms skipped: {e}"));
                None
            }
        };
        timings.stop("embed_query");
        v
    }
}

/// What every ranking of one retrieval reads.
struct Ask<'a> {
    index: &'a Index,
    q: &'a Analysis,
    query_vec: Option<&'a [f32]>,
    commit: &'a str,
}

/// One ranking of the candidates: the arms' lists, fused (the head reordered by the
/// priors), the graph's steps and the priors' notes.
struct Ranked {
    candidates: arms::Candidates,
    fused: Vec<fusion::Fused>,
    steps: HashMap<String, hit::GraphStep>,
    notes: HashMap<String, Vec<String>>,
}
