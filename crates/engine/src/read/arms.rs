//! Stage 2: the peer arms, each run once over the index (plan item R5): lexical
//! (BM25), cues and bodies (one scan of the vector arena), entities. Each returns
//! its candidates best first with raw scores; nothing here compares arms.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use gitloom_index::{Index, LexicalHit, LexicalQuery};

use super::analysis::Analysis;
use super::arm::Arm;
use super::config::RetrieveConfig;
use super::fusion::{ArmList, Fusion};
use super::request::{RetrieveRequest, indexed_in_scope};
use super::timings::{Timings, ms};
use super::worker::Worker;
use crate::error::Result;
use crate::semantic::{Semantic, SemanticCut};

/// The arms' candidates, and what each arm knows about them that later stages show.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    pub lists: Vec<ArmList>,
    /// Titles the lexical arm read.
    pub titles: HashMap<String, String>,
    /// The cue that matched each cue-arm candidate best.
    pub matched_cues: HashMap<String, String>,
    /// The cited message (`sessions/…md#m3`) whose words gave a body-arm candidate its cosine, when
    /// they matched better than the memory's own prose.
    pub matched_said: HashMap<String, String>,
    /// The body cosine the semantic cut was made at (0 without vectors).
    pub body_cutoff: f64,
    /// The query's entities each entity-arm candidate mentions.
    pub entity_names: HashMap<String, Vec<String>>,
    /// Under score fusion, the `[cue, body]` cosines of the lexical and entity arms'
    /// candidates that the semantic arms did not list (see [`unlisted_cosines`]).
    pub unlisted: HashMap<String, [Option<f32>; 2]>,
}

impl Candidates {
    /// Adds what `other` (a deeper run of the arms) knows of candidates this one
    /// did not list: their titles, matched cues and cited messages, entity names.
    pub(crate) fn absorb(&mut self, other: &Candidates) {
        fn add<V: Clone>(into: &mut HashMap<String, V>, from: &HashMap<String, V>) {
            for (k, v) in from {
                into.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        add(&mut self.titles, &other.titles);
        add(&mut self.matched_cues, &other.matched_cues);
        add(&mut self.matched_said, &other.matched_said);
        add(&mut self.entity_names, &other.entity_names);
    }
}

/// Runs every arm for `q`. With an arena of at least `concurrent_from` rows the
/// semantic arms' scan (a `gitloom_embed::ScanJob`: pieces of its int8 pass) is begun
/// on the engine's [`Worker`] thread while this one runs the lexical arm, then this
/// thread does the pieces still left and ranks the scan: the
/// scan reads only the arena and the query's vector, the lexical arm only the index,
/// the scan's answer does not depend on which thread did which piece, and each list is
/// built from the same inputs either way, so the candidates are the same.
/// `timings_ms.semantic` is then the scan's wall time from the hand-over (it overlaps
/// the lexical arm's) and `semantic_share` this thread's part after the lexical arm.
/// Under that size the hand-over costs more than the overlap saves.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    index: &Index,
    semantic: Option<(&Semantic, &[f32])>,
    commit: &str,
    req: &RetrieveRequest,
    q: &Analysis,
    cfg: &RetrieveConfig,
    worker: &Worker,
    concurrent_from: usize,
    timings: &mut Timings,
    warnings: &mut Vec<String>,
) -> Result<Candidates> {
    let depth = cfg.depth.max(req.limit);
    let mut out = Candidates::default();
    let lexical_arm = || -> Result<(Vec<LexicalHit>, f64)> {
        let t = Instant::now();
        let hits = index.lexical(&LexicalQuery {
            text: req.query.clone(),
            limit: depth,
            tier: req.tier,
            topic: req.topic.clone(),
            decorate: Some(0),
        })?;
        Ok((hits, ms(t)))
    };
    // The arena is found (or loaded, or built) here, on this thread: that may read the
    // index. Its failure only skips the semantic arms, as the scan's would.
    let (lexical, scanned) = match semantic {
        None => (lexical_arm()?, None),
        Some((sem, qv)) => {
            let t = Instant::now();
            // Reciprocal rank counts a poor cosine at rank 3 as much as a good one, so
            // its lists are cut where the distribution falls off; score fusion weighs
            // each cosine itself and keeps them all.
            let cut = cfg.semantic.unwrap_or_else(|| match cfg.fusion {
                Fusion::Rrf => SemanticCut::for_model(sem.model_id()),
                Fusion::Scores => SemanticCut::KEEP_ALL,
            });
            let found = sem.scanner(index, commit);
            let found_ms = ms(t);
            match found {
                Ok(s) if s.rows() >= concurrent_from => {
                    let t = Instant::now();
                    let scan = Arc::new(s.scan_job(qv, depth));
                    let theirs = scan.clone();
                    let job = worker.submit(move || theirs.help());
                    let lexical = lexical_arm();
                    // The lexical arm done, this thread does the scan's pieces still
                    // left (all of them if the worker has not begun), waits for those
                    // the worker is doing, and builds the lists.
                    let share = Instant::now();
                    let hits = s.search_job(&scan, depth, cut, &|p| indexed_in_scope(req, p));
                    timings.add("semantic_share", ms(share));
                    let scan_ms = found_ms + ms(t);
                    // Joined before the lexical arm's error is returned: the job
                    // borrows nothing, but its panic is still this call's. The worker
                    // has no piece left by now; if it never began, it is taken back
                    // and finds nothing to do.
                    job.join();
                    // `None` only if the worker panicked in a piece, which the join
                    // has just raised here.
                    let Some(hits) = hits else {
                        unreachable!("the worker's panic was raised by the join")
                    };
                    (lexical?, Some(Ok((hits, scan_ms))))
                }
                Ok(s) => {
                    let lexical = lexical_arm()?;
                    let t = Instant::now();
                    let hits = s.search(qv, depth, cut, &|p| indexed_in_scope(req, p));
                    (lexical, Some(Ok((hits, found_ms + ms(t)))))
                }
                Err(e) => (lexical_arm()?, Some(Err((e, found_ms)))),
            }
        }
    };

    let ((lexical, lexical_ms), t) = (lexical, Instant::now());
    out.titles = lexical
        .iter()
        .map(|h| (h.path.clone(), h.title.clone()))
        .collect();
    out.lists.push(ArmList {
        arm: Arm::Lexical,
        weight: if q.advice {
            cfg.weights.lexical * cfg.advice_lexical
        } else {
            cfg.weights.lexical
        },
        items: lexical.iter().map(|h| (h.path.clone(), h.score)).collect(),
    });
    timings.add("lexical", lexical_ms + ms(t));

    if let Some(scanned) = scanned {
        let t = Instant::now();
        let lexical_paths: HashSet<&str> = lexical.iter().map(|h| h.path.as_str()).collect();
        let scan_ms = match scanned {
            Ok((hits, scan_ms)) => {
                for (p, _, label) in &hits.cues {
                    out.matched_cues.insert(p.clone(), label.clone());
                }
                out.lists.push(ArmList {
                    arm: Arm::Cues,
                    weight: cfg.weights.cues,
                    items: hits
                        .cues
                        .iter()
                        .map(|(p, c, _)| (p.clone(), f64::from(*c)))
                        .collect(),
                });
                // Under the cut a body cosine is noise on its own, but it still
                // orders memories the lexical arm found: long chat sessions score
                // low cosines even when they hold the answer.
                out.body_cutoff = f64::from(hits.body_cutoff);
                for (p, _, label) in &hits.bodies {
                    if let Some(anchor) = label.strip_prefix(gitloom_index::SAID_LABEL) {
                        out.matched_said.insert(p.clone(), anchor.to_owned());
                    }
                }
                let corroborated = hits.bodies_below.iter().filter(|(p, c, _)| {
                    f64::from(*c) >= cfg.corroborate && lexical_paths.contains(p.as_str())
                });
                out.lists.push(ArmList {
                    arm: Arm::Bodies,
                    weight: cfg.weights.bodies,
                    items: hits
                        .bodies
                        .iter()
                        .chain(corroborated)
                        .take(depth)
                        .map(|(p, c, _)| (p.clone(), f64::from(*c)))
                        .collect(),
                });
                scan_ms
            }
            Err((e, scan_ms)) => {
                warnings.push(format!("semantic arms skipped: {e}"));
                scan_ms
            }
        };
        timings.add("semantic", scan_ms + ms(t));
    }

    timings.start();
    let mut items = Vec::new();
    for h in index
        .entity_hits(&q.entities)?
        .into_iter()
        .filter(|h| indexed_in_scope(req, &h.path))
        .take(depth)
    {
        items.push((h.path.clone(), h.score));
        out.entity_names.insert(h.path, h.entities);
    }
    out.lists.push(ArmList {
        arm: Arm::Entities,
        weight: cfg.weights.entities,
        items,
    });
    timings.stop("entities");

    if cfg.fusion == Fusion::Scores
        && let Some((sem, qv)) = semantic
        && out.lists.iter().any(|l| l.arm == Arm::Cues)
    {
        timings.start();
        out.unlisted = unlisted_cosines(index, sem, qv, commit, &out.lists)?;
        timings.stop("unlisted");
    }
    Ok(out)
}

/// Score fusion weighs each candidate's cosine; a candidate the lexical or entity arm
/// found, ranked past the semantic arms' depth, would weigh none and sink under every
/// cosine candidate however well its terms match (short chat turns, whose cosines
/// bunch together, lose their answers that way). Their cosines are read here: the
/// scan's own estimate, one int8 dot product per row of theirs.
fn unlisted_cosines(
    index: &Index,
    sem: &Semantic,
    query_vec: &[f32],
    commit: &str,
    lists: &[ArmList],
) -> Result<HashMap<String, [Option<f32>; 2]>> {
    let listed = |arm: Arm| -> HashSet<&str> {
        lists
            .iter()
            .filter(|l| l.arm == arm)
            .flat_map(|l| l.items.iter().map(|(p, _)| p.as_str()))
            .collect()
    };
    let (cues, bodies) = (listed(Arm::Cues), listed(Arm::Bodies));
    let mut wanted: Vec<&str> = lists
        .iter()
        .filter(|l| matches!(l.arm, Arm::Lexical | Arm::Entities))
        .flat_map(|l| l.items.iter().map(|(p, _)| p.as_str()))
        .filter(|p| !cues.contains(p) || !bodies.contains(p))
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    sem.cosines_of(index, commit, query_vec, &wanted)
}
