//! Fusion of peer arms into one ordering, two ways ([`Fusion`]):
//!
//! - reciprocal rank (`rrf`): each arm contributes `weight / (k + rank)` for every
//!   candidate it ranked, whatever its score;
//! - scores (`scores`): a candidate's best cosine (cue or body) plus a share of its
//!   lexical coverage (the IDF-weighted share of the query's terms it holds) and
//!   its graph signal (the entity arm finds candidates; its hits are anchored by the
//!   judge, not scored here). A weak lexical match on one incidental word then
//!   adds little, and cannot outrank a strong semantic match by rank alone.
//!
//! Either way an arm runs once and is counted once per candidate (improvement plan
//! R5). The fused score orders the hits; whether a hit is *evidence* is decided on
//! raw arm scores (see `evidence.rs`).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::arm::Arm;

/// One arm's ranked candidates: key (a path) and raw score, best first.
#[derive(Debug, Clone)]
pub struct ArmList {
    pub arm: Arm,
    pub weight: f64,
    pub items: Vec<(String, f64)>,
}

/// A fused candidate: its fused score and, per arm, (raw score, 1-based rank).
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub key: String,
    pub score: f64,
    pub arms: BTreeMap<Arm, (f64, usize)>,
    /// What orders candidates of equal score before their keys do: in score fusion,
    /// the sum of the candidate's weighted cue and body cosines (the score counts
    /// only the better one); 0 in rank fusion.
    pub tie: f64,
}

impl Fused {
    /// Best first: by score, then by [`Fused::tie`], then by key. Memories that
    /// share a cue ("what pets do I have", written on every memory of a topic)
    /// often reach the same score through it; what else of each matches the
    /// question then orders them, rather than their file names.
    pub fn order(&self, other: &Fused) -> std::cmp::Ordering {
        by_score(self.score, other.score, self, other)
    }
}

/// Best first by `(a_score, b_score)`, then as [`Fused::order`]: for a stage that
/// orders candidates by a score of its own (the judge's after demotions).
pub(crate) fn by_score(a_score: f64, b_score: f64, a: &Fused, b: &Fused) -> std::cmp::Ordering {
    b_score
        .total_cmp(&a_score)
        .then_with(|| b.tie.total_cmp(&a.tie))
        .then_with(|| a.key.cmp(&b.key))
}

/// How arm lists are fused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Weighted reciprocal rank.
    Rrf,
    /// Raw scores: best cosine + a share of lexical coverage + the graph signal.
    Scores,
}

/// The fusion a retrieval uses, with what it needs to know beyond the lists.
pub(crate) enum Fuser {
    Rrf {
        k: f64,
    },
    Scores {
        coverage: HashMap<String, f64>,
        /// The share of lexical coverage (0..1) added to the best cosine.
        lexical_share: f64,
        /// `[cue, body]` cosines of candidates the semantic arms did not list.
        unlisted: HashMap<String, [Option<f32>; 2]>,
    },
}

impl Fuser {
    /// The configured fusion for `q`; score fusion reads every candidate's coverage
    /// once (graph neighbours, found later, are no lexical candidates).
    pub fn new(
        index: &gitloom_index::Index,
        q: &super::analysis::Analysis,
        cfg: &super::config::RetrieveConfig,
        lists: &[ArmList],
        unlisted: HashMap<String, [Option<f32>; 2]>,
    ) -> crate::error::Result<Fuser> {
        // Score fusion is defined over cosines; with no vectors (no embedder, or
        // the query's embedding failed) only ranks are left to fuse.
        let cosines = lists
            .iter()
            .any(|l| matches!(l.arm, Arm::Cues | Arm::Bodies));
        Ok(match cfg.fusion {
            Fusion::Scores if cosines => {
                let mut paths: Vec<&str> = lists
                    .iter()
                    .flat_map(|l| l.items.iter().map(|(p, _)| p.as_str()))
                    .collect();
                paths.sort_unstable();
                paths.dedup();
                let coverage = index
                    .term_matches(&q.query, &paths)?
                    .into_iter()
                    .map(|(p, m)| (p, m.coverage))
                    .collect();
                // The lexical arm's weight already carries `advice_lexical`.
                Fuser::Scores {
                    coverage,
                    lexical_share: cfg.lexical_share * spread_factor(lists, cfg.lexical_spread),
                    unlisted,
                }
            }
            Fusion::Scores | Fusion::Rrf => Fuser::Rrf { k: cfg.rrf_k },
        })
    }

    pub fn fuse(&self, lists: &[ArmList]) -> Vec<Fused> {
        match self {
            Fuser::Rrf { k } => fuse(lists, *k),
            Fuser::Scores {
                coverage,
                lexical_share,
                unlisted,
            } => fuse_scores(lists, coverage, *lexical_share, unlisted),
        }
    }
}

/// How much a term match weighs against a cosine step, read from this query's own
/// body cosines: `reference / σ` of the best of them (clamped to 0.5–3), or 1 when
/// `reference` is 0 or there are too few. Where the cosines bunch (many short chat
/// turns, all about the same people), a cosine step says little and the words
/// decide; where they spread (paraphrased memories), the cosine leads.
pub(crate) fn spread_factor(lists: &[ArmList], reference: f64) -> f64 {
    if reference <= 0.0 {
        return 1.0;
    }
    let cosines: Vec<f64> = lists
        .iter()
        .filter(|l| l.arm == Arm::Bodies)
        .flat_map(|l| l.items.iter().take(50).map(|(_, c)| *c))
        .collect();
    if cosines.len() < 5 {
        return 1.0;
    }
    let n = cosines.len() as f64;
    let mean = cosines.iter().sum::<f64>() / n;
    let sd = (cosines.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n).sqrt();
    if sd <= f64::EPSILON {
        return 3.0;
    }
    (reference / sd).clamp(0.5, 3.0)
}

/// Fuses arm lists by their raw scores (see the module docs); `coverage` holds each
/// candidate's lexical coverage, `unlisted` the `[cue, body]` cosines of candidates
/// a semantic arm did not list. Ties break as [`Fused::order`] says.
pub fn fuse_scores(
    arms: &[ArmList],
    coverage: &HashMap<String, f64>,
    lexical_share: f64,
    unlisted: &HashMap<String, [Option<f32>; 2]>,
) -> Vec<Fused> {
    let mut out = collect(arms);
    let weight = |arm: Arm| arms.iter().find(|a| a.arm == arm).map_or(0.0, |a| a.weight);
    for f in &mut out {
        let raw = |arm: Arm| f.arms.get(&arm).map(|(s, _)| *s);
        let other = unlisted.get(&f.key);
        let (cosine, all) = [(Arm::Cues, 0), (Arm::Bodies, 1)]
            .into_iter()
            .filter_map(|(a, slot)| {
                raw(a)
                    .or_else(|| other.and_then(|c| c[slot]).map(f64::from))
                    .map(|s| s * weight(a))
            })
            .fold((0.0f64, 0.0f64), |(best, sum), c| (best.max(c), sum + c));
        f.tie = all;
        let lexical =
            lexical_share * weight(Arm::Lexical) * coverage.get(&f.key).copied().unwrap_or(0.0);
        // A graph neighbour's raw score is already a share of its source's score.
        let graph = raw(Arm::Graph).map_or(0.0, |s| s * weight(Arm::Graph));
        f.score = cosine + lexical + graph;
    }
    sort(&mut out);
    out
}

/// Every candidate once, with each arm's raw score and rank (score 0).
fn collect(arms: &[ArmList]) -> Vec<Fused> {
    let mut by_key: BTreeMap<&str, Fused> = BTreeMap::new();
    for arm in arms {
        for (i, (key, raw)) in arm.items.iter().enumerate() {
            let entry = by_key.entry(key.as_str()).or_insert_with(|| Fused {
                key: key.clone(),
                score: 0.0,
                arms: BTreeMap::new(),
                tie: 0.0,
            });
            // A key listed twice by one arm counts once, at its best rank.
            entry.arms.entry(arm.arm).or_insert((*raw, i + 1));
        }
    }
    by_key.into_values().collect()
}

fn sort(out: &mut [Fused]) {
    out.sort_by(Fused::order);
}

/// Fuses arm lists by weighted reciprocal rank. Ties break on the key so the order
/// is deterministic.
pub fn fuse(arms: &[ArmList], k: f64) -> Vec<Fused> {
    let mut by_key: BTreeMap<&str, Fused> = BTreeMap::new();
    for arm in arms {
        for (i, (key, raw)) in arm.items.iter().enumerate() {
            let rank = i + 1;
            let entry = by_key.entry(key.as_str()).or_insert_with(|| Fused {
                key: key.clone(),
                score: 0.0,
                arms: BTreeMap::new(),
                tie: 0.0,
            });
            // A key listed twice by one arm counts once, at its best rank.
            if entry.arms.contains_key(&arm.arm) {
                continue;
            }
            entry.score += arm.weight / (k + rank as f64);
            entry.arms.insert(arm.arm, (*raw, rank));
        }
    }
    let mut out: Vec<Fused> = by_key.into_values().collect();
    sort(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(arm: Arm, weight: f64, keys: &[&str]) -> ArmList {
        ArmList {
            arm,
            weight,
            items: keys.iter().map(|k| ((*k).to_owned(), 1.0)).collect(),
        }
    }

    #[test]
    fn arithmetic() {
        let f = fuse(
            &[
                list(Arm::Lexical, 1.0, &["x", "y"]),
                list(Arm::Cues, 2.0, &["y"]),
            ],
            60.0,
        );
        assert_eq!(f[0].key, "y");
        assert!((f[0].score - (1.0 / 62.0 + 2.0 / 61.0)).abs() < 1e-12);
        assert!((f[1].score - 1.0 / 61.0).abs() < 1e-12);
        assert_eq!(f[0].arms[&Arm::Lexical], (1.0, 2));
    }

    #[test]
    fn ties_are_deterministic_and_duplicates_count_once() {
        let f = fuse(
            &[
                list(Arm::Lexical, 1.0, &["b", "b"]),
                list(Arm::Cues, 1.0, &["a"]),
            ],
            60.0,
        );
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].key, "a");
        assert!((f[1].score - 1.0 / 61.0).abs() < 1e-12);
    }

    fn scored(arm: Arm, weight: f64, items: &[(&str, f64)]) -> ArmList {
        ArmList {
            arm,
            weight,
            items: items.iter().map(|(k, s)| ((*k).to_owned(), *s)).collect(),
        }
    }

    #[test]
    fn a_weak_lexical_match_cannot_outrank_a_strong_semantic_one() {
        // `lex` is the lexical arm's first hit on one incidental word (coverage 0.2)
        // with a poor cosine; `para` is a paraphrase sharing no word, cosine 0.62.
        let lists = [
            scored(Arm::Lexical, 1.0, &[("lex", 7.5)]),
            scored(Arm::Cues, 1.0, &[("para", 0.62), ("lex", 0.30)]),
            scored(Arm::Bodies, 1.0, &[("para", 0.55), ("lex", 0.41)]),
        ];
        let coverage = HashMap::from([("lex".to_owned(), 0.2)]);
        let f = fuse_scores(&lists, &coverage, 0.3, &HashMap::new());
        assert_eq!(f[0].key, "para");
        assert!(
            (f[0].score - 0.62).abs() < 1e-12,
            "best cosine, no lexical share"
        );
        assert!((f[1].score - (0.41 + 0.3 * 0.2)).abs() < 1e-12);
        // Reciprocal rank puts `lex` first: it is ranked by two arms and first by one.
        let r = fuse(&lists, 60.0);
        assert_eq!(r[0].key, "lex");
        // Full coverage of the question does lift a lexical match over the cosine gap.
        let coverage = HashMap::from([("lex".to_owned(), 1.0)]);
        assert_eq!(
            fuse_scores(&lists, &coverage, 0.3, &HashMap::new())[0].key,
            "lex"
        );
    }

    #[test]
    fn a_shared_cue_ties_two_memories_and_their_bodies_order_them() {
        // Both hold the cue "what pets do I have" (a topic's cue, on every memory of
        // it); `b-pets` says in its body what the question asks, `a-kids` does not.
        let lists = [
            scored(Arm::Cues, 1.0, &[("a-kids", 0.9), ("b-pets", 0.9)]),
            scored(Arm::Bodies, 1.0, &[("b-pets", 0.6), ("a-kids", 0.2)]),
        ];
        let f = fuse_scores(&lists, &HashMap::new(), 0.3, &HashMap::new());
        assert_eq!(f[0].score, f[1].score, "the cue decides both scores");
        assert_eq!(f[0].key, "b-pets", "not the file name");
        assert!(f[0].order(&f[1]).is_lt());
        // With nothing else to tell them apart, the key does, as before.
        let lists = [scored(Arm::Cues, 1.0, &[("b", 0.9), ("a", 0.9)])];
        let f = fuse_scores(&lists, &HashMap::new(), 0.3, &HashMap::new());
        assert_eq!(f[0].key, "a");
    }

    #[test]
    fn score_fusion_weighs_each_arm_and_counts_a_graph_neighbour_once() {
        let lists = [
            scored(Arm::Cues, 0.5, &[("a", 0.8)]),
            scored(Arm::Bodies, 1.0, &[("a", 0.5), ("b", 0.45)]),
            scored(Arm::Graph, 1.0, &[("b", 0.1), ("b", 0.05)]),
        ];
        let f = fuse_scores(&lists, &HashMap::new(), 0.3, &HashMap::new());
        // a: max(0.5 * 0.8, 0.5) = 0.5; b: 0.45 + 0.1 (its best graph step).
        assert_eq!(f[0].key, "b");
        assert!((f[0].score - 0.55).abs() < 1e-12);
        assert!((f[1].score - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_candidate_no_semantic_arm_listed_is_weighed_at_its_own_cosine() {
        // `deep` is the lexical arm's best hit (full coverage) but ranked past the
        // semantic arms' depth: listed by neither, it would weigh no cosine at all.
        let lists = [
            scored(Arm::Lexical, 1.0, &[("deep", 9.0), ("near", 2.0)]),
            scored(Arm::Cues, 1.0, &[("near", 0.52)]),
            scored(Arm::Bodies, 1.0, &[("near", 0.50)]),
        ];
        let coverage = HashMap::from([("deep".to_owned(), 1.0), ("near".to_owned(), 0.1)]);
        let f = fuse_scores(&lists, &coverage, 0.2, &HashMap::new());
        assert_eq!(f[0].key, "near", "without its cosine `deep` has only 0.2");
        let unlisted = HashMap::from([("deep".to_owned(), [None, Some(0.45f32)])]);
        let f = fuse_scores(&lists, &coverage, 0.2, &unlisted);
        assert_eq!(f[0].key, "deep");
        assert!((f[0].score - (f64::from(0.45f32) + 0.2)).abs() < 1e-9);
        // A listed score is never replaced by the unlisted one.
        let unlisted = HashMap::from([("near".to_owned(), [Some(0.99f32), Some(0.99)])]);
        let f = fuse_scores(&lists, &coverage, 0.2, &unlisted);
        let near = f.iter().find(|x| x.key == "near").expect("near");
        assert!((near.score - (0.52 + 0.2 * 0.1)).abs() < 1e-9);
    }

    #[test]
    fn the_lexical_share_grows_as_the_cosines_bunch() {
        let bodies = |cs: &[f64]| {
            let items: Vec<(&str, f64)> = cs.iter().map(|c| ("k", *c)).collect();
            [scored(Arm::Bodies, 1.0, &items)]
        };
        let spread = bodies(&[0.8, 0.7, 0.6, 0.5, 0.4, 0.3]);
        let middling = bodies(&[0.66, 0.64, 0.62, 0.60, 0.58, 0.56]);
        let bunched = bodies(&[0.62, 0.61, 0.60, 0.59, 0.58, 0.57]);
        let (s, m, b) = (
            spread_factor(&spread, 0.06),
            spread_factor(&middling, 0.06),
            spread_factor(&bunched, 0.06),
        );
        assert!(s < m && m < b, "{s} {m} {b}");
        // Clamped both ways: σ 0.171 and 0.017 would give 0.35 and 3.5.
        assert_eq!((s, b), (0.5, 3.0));
        // σ of 0.66 … 0.56 is 0.0342.
        assert!((m - 0.06 / 0.034_156_502_553_198_66).abs() < 1e-9, "{m}");
        // Off, or too few cosines to say: unchanged.
        assert_eq!(spread_factor(&bunched, 0.0), 1.0);
        assert_eq!(spread_factor(&bodies(&[0.9, 0.1]), 0.06), 1.0);
    }
}
