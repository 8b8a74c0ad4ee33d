//! Retrieval metrics: pure functions from scored queries ([`Outcome`]) to numbers ([`Metrics`]).
//!
//! Every query carries a [`Label`]:
//! - **answerable**: it has gold paths; it counts in the ranking metrics (`answerable` in the JSON);
//! - **unanswerable**: the right result is no hits; it counts only in abstention (`unanswerable`);
//! - **skipped**: answerable, but the data gives no usable gold (LoCoMo questions with empty
//!   evidence, LongMemEval questions whose evidence is only in assistant turns). It counts in
//!   nothing but abstention (as a negative), latency and `corpus_return_ratio` (`skipped`).
//!
//! `queries` = answerable + unanswerable + skipped.
//!
//! Ranking metrics are averaged over the **answerable** queries only, on the hit list as the
//! backend returned it for the user's `--limit` (what `gitloom retrieve --limit` shows: the
//! engine's priors and gates look further down the list the more hits are asked for, so
//! asking for more than the limit would measure another answer), after dropping repeated
//! paths (the first occurrence keeps its rank). A metric at a cut-off beyond the limit
//! (`recall_at_20` at `--limit 10`) is `null`: the user was never shown that far. Gold
//! paths are a set (repeats are dropped). With no answerable query every ranking metric
//! is 0.
//!
//! | key | per query, then the mean |
//! |---|---|
//! | `p_at_1` | 1 if the top hit is gold |
//! | `p_at_5` | precision@5 = (gold hits among the top 5) / 5, always divided by 5 even when fewer hits or fewer gold exist |
//! | `recall_at_k` (k = 1, 3, 5, 10, 20) | recall_any: 1 if any gold path is in the top k |
//! | `recall_all_at_k` (k = 5, 10) | 1 if every gold path is in the top k |
//! | `recall_frac_at_k` | the fraction of gold *units* in the top k: LoCoMo's official recall (a unit is one evidence dia_id, mapped to the path that holds it; at session granularity several units share a path) |
//! | `ndcg_at_k` (k = 5, 10) | binary gains, DCG = Σ_{i<k, hit i gold} 1/log2(i+2) (i 0-based); ideal DCG puts min(|gold|, k) gold first. (LongMemEval's own `eval_utils.dcg` weights rank 2 like rank 1; this is the standard form.) |
//! | `mrr` | 1 / (1-based rank of the first gold hit) in the whole fetched list, 0 if none |
//!
//! **Abstention.** The positive prediction is "returned no hits" (an empty hit list, or
//! `abstained: true`); the positive class is unanswerable. Over all queries:
//! TP = unanswerable and abstained, FP = answerable or skipped and abstained, FN = unanswerable
//! and not abstained, TN = the rest. precision = TP/(TP+FP), recall = TP/(TP+FN),
//! F1 = 2PR/(P+R). The 0/0 cases:
//! - recall with no unanswerable query is 1 (nothing to find);
//! - precision with no abstention is 1 if there is no unanswerable query (nothing wrongly
//!   abstained, nothing missed) and 0 otherwise (a system that never abstains gets 0, not 1);
//! - F1 is 0 when precision + recall is 0.
//!
//! **corpus_return_ratio**: mean over all queries of min(hits, limit) / corpus size of that
//! query's store (0 when the store is empty). Lower means the engine returns less of the corpus.
//!
//! **latency_ms**: p50 and p95 of the backend-reported retrieval latency over all queries,
//! nearest-rank (the ⌈p·n⌉-th smallest); 0 with no queries.
//!
//! **arm_attribution**: among answerable queries whose top hit is gold, the share where arm
//! `a` ranked that hit in its own top 5 (`rank` ≤ 5, 1-based), for each arm in [`ARMS`]; 0 when
//! no top hit is correct.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::RankedHit;

/// The arms reported in `arm_attribution`.
pub const ARMS: [&str; 5] = ["lexical", "cues", "bodies", "entities", "graph"];

/// What the right result for a query is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    /// `gold`: the paths that answer; `units`: one path per gold evidence item, for
    /// fractional recall (equal to `gold` when every unit has its own path).
    Answerable {
        gold: Vec<String>,
        units: Vec<String>,
    },
    /// Nothing in the store answers it: the right result is no hits.
    Unanswerable,
    /// Answerable, but no usable gold: scored for abstention (as a negative) only.
    Skipped,
}

impl Label {
    /// An answerable label whose units are its gold paths.
    pub fn answerable(gold: Vec<String>) -> Label {
        Label::Answerable {
            units: gold.clone(),
            gold,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Label::Answerable { .. } => "answerable",
            Label::Unanswerable => "unanswerable",
            Label::Skipped => "skipped",
        }
    }

    pub fn gold(&self) -> &[String] {
        match self {
            Label::Answerable { gold, .. } => gold,
            _ => &[],
        }
    }
}

/// One query after retrieval: the input of the metrics.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub shape: String,
    pub label: Label,
    /// As returned, best first (asked for with `limit`).
    pub hits: Vec<RankedHit>,
    /// The user's `--limit`: the deepest cut-off a metric is given at, and the
    /// bound of corpus_return_ratio.
    pub limit: usize,
    pub corpus_size: usize,
    pub latency_ms: f64,
    pub abstained: bool,
}

impl Outcome {
    /// The positive abstention prediction: no hits, or the backend said it abstained.
    pub fn predicted_abstain(&self) -> bool {
        self.abstained || self.hits.is_empty()
    }

    /// Whether the query's first answer is right, as P@1 and abstention count it: an
    /// answerable query's top hit is gold, an unanswerable one returns nothing. `None`
    /// for a skipped query (no usable gold).
    pub fn right_at_1(&self) -> Option<bool> {
        match &self.label {
            Label::Answerable { gold, .. } => Some(
                dedup_paths(&self.hits)
                    .first()
                    .is_some_and(|top| gold.iter().any(|g| g == top)),
            ),
            Label::Unanswerable => Some(self.predicted_abstain()),
            Label::Skipped => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Abstention {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub tp: usize,
    pub fp: usize,
    #[serde(rename = "fn")]
    pub fn_: usize,
    pub tn: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
}

/// Every metric for a set of queries (a whole run or one shape). A metric at a cut-off
/// beyond the queries' limit is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Metrics {
    pub queries: usize,
    pub answerable: usize,
    pub unanswerable: usize,
    pub skipped: usize,
    pub p_at_1: f64,
    pub p_at_5: Option<f64>,
    pub recall_at_1: f64,
    pub recall_at_3: Option<f64>,
    pub recall_at_5: Option<f64>,
    pub recall_at_10: Option<f64>,
    pub recall_at_20: Option<f64>,
    pub recall_all_at_5: Option<f64>,
    pub recall_all_at_10: Option<f64>,
    pub recall_frac_at_1: f64,
    pub recall_frac_at_3: Option<f64>,
    pub recall_frac_at_5: Option<f64>,
    pub recall_frac_at_10: Option<f64>,
    pub recall_frac_at_20: Option<f64>,
    pub ndcg_at_5: Option<f64>,
    pub ndcg_at_10: Option<f64>,
    pub mrr: f64,
    pub abstention: Abstention,
    pub corpus_return_ratio: f64,
    pub latency_ms: Latency,
    pub arm_attribution: BTreeMap<String, f64>,
}

/// A whole run: overall metrics, the same per shape, data notes and the build.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// `probe`, `locomo` or `longmemeval`.
    pub dataset: String,
    /// `turn` / `session` for LoCoMo and LongMemEval; absent for the probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub granularity: Option<String>,
    pub limit: usize,
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Shape (probe), category name (LoCoMo) or question type (LongMemEval) -> metrics.
    pub by_shape: BTreeMap<String, Metrics>,
    /// Counts of data quirks met while loading (skipped questions, dropped evidence ids, ...).
    pub notes: BTreeMap<String, u64>,
    /// Filled by the caller (version, commit, config).
    pub build: String,
    /// Per query, in the order asked, [`Outcome::right_at_1`]: what two runs over the
    /// same data compare query by query (`eval suite --ablate`). Not serialised.
    #[serde(skip)]
    pub right_at_1: Vec<Option<bool>>,
}

impl Report {
    pub fn to_json(&self) -> serde_json::Value {
        // A Report holds only strings, integers, finite floats and maps with string keys.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// Builds a report from outcomes; `notes` and `build` are passed through.
pub fn report(
    dataset: &str,
    granularity: Option<&str>,
    limit: usize,
    outcomes: &[Outcome],
    notes: BTreeMap<String, u64>,
    build: &str,
) -> Report {
    let mut shapes: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        shapes.entry(o.shape.as_str()).or_default().push(o);
    }
    Report {
        dataset: dataset.to_owned(),
        granularity: granularity.map(str::to_owned),
        limit,
        metrics: compute(outcomes.iter()),
        by_shape: shapes
            .into_iter()
            .map(|(s, os)| (s.to_owned(), compute(os.into_iter())))
            .collect(),
        notes,
        build: build.to_owned(),
        right_at_1: outcomes.iter().map(Outcome::right_at_1).collect(),
    }
}

/// Paths of `hits` with repeats dropped (first occurrence keeps its rank).
pub fn dedup_paths(hits: &[RankedHit]) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    hits.iter()
        .map(|h| h.path.as_str())
        .filter(|p| seen.insert(*p))
        .collect()
}

fn in_top(ranked: &[&str], gold: &str, k: usize) -> bool {
    ranked.iter().take(k).any(|p| *p == gold)
}

pub fn precision_at(ranked: &[&str], gold: &BTreeSet<&str>, k: usize) -> f64 {
    let n = ranked.iter().take(k).filter(|p| gold.contains(*p)).count();
    n as f64 / k as f64
}

pub fn recall_any_at(ranked: &[&str], gold: &BTreeSet<&str>, k: usize) -> f64 {
    f64::from(u8::from(ranked.iter().take(k).any(|p| gold.contains(p))))
}

pub fn recall_all_at(ranked: &[&str], gold: &BTreeSet<&str>, k: usize) -> f64 {
    f64::from(u8::from(
        !gold.is_empty() && gold.iter().all(|g| in_top(ranked, g, k)),
    ))
}

pub fn recall_frac_at(ranked: &[&str], units: &[String], k: usize) -> f64 {
    if units.is_empty() {
        return 0.0;
    }
    let n = units.iter().filter(|u| in_top(ranked, u, k)).count();
    n as f64 / units.len() as f64
}

pub fn ndcg_at(ranked: &[&str], gold: &BTreeSet<&str>, k: usize) -> f64 {
    let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, p)| gold.contains(*p))
        .map(|(i, _)| gain(i))
        .sum();
    let ideal: f64 = (0..gold.len().min(k)).map(gain).sum();
    if ideal == 0.0 { 0.0 } else { dcg / ideal }
}

pub fn reciprocal_rank(ranked: &[&str], gold: &BTreeSet<&str>) -> f64 {
    ranked
        .iter()
        .position(|p| gold.contains(p))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// Nearest-rank percentile (`p` in 0..=1) of `values`; 0 when empty.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = (p * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Precision, recall and F1 of abstention with the documented 0/0 rules.
pub fn abstention(tp: usize, fp: usize, fn_: usize, tn: usize) -> Abstention {
    let positives = tp + fn_;
    let recall = if positives == 0 {
        1.0
    } else {
        tp as f64 / positives as f64
    };
    let precision = if tp + fp == 0 {
        if positives == 0 { 1.0 } else { 0.0 }
    } else {
        tp as f64 / (tp + fp) as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    Abstention {
        precision: round(precision),
        recall: round(recall),
        f1: round(f1),
        tp,
        fp,
        fn_,
        tn,
    }
}

fn round(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e6).round() / 1e6
    } else {
        0.0
    }
}

fn mean(sum: f64, n: usize) -> f64 {
    if n == 0 { 0.0 } else { round(sum / n as f64) }
}

/// Computes every metric over `outcomes`.
pub fn compute<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> Metrics {
    #[derive(Default)]
    struct Sums {
        p1: f64,
        p5: f64,
        any: [f64; 5],
        all5: f64,
        all10: f64,
        frac: [f64; 5],
        ndcg5: f64,
        ndcg10: f64,
        mrr: f64,
    }
    const KS: [usize; 5] = [1, 3, 5, 10, 20];
    let mut s = Sums::default();
    let (mut queries, mut answerable, mut unanswerable, mut skipped) = (0, 0, 0, 0);
    let (mut tp, mut fp, mut fn_, mut tn) = (0, 0, 0, 0);
    let mut ratio_sum = 0.0;
    let mut latencies = Vec::new();
    let mut correct_top1 = 0usize;
    let mut arm_hits = [0usize; ARMS.len()];
    let mut limit: Option<usize> = None;

    for o in outcomes {
        queries += 1;
        limit = Some(limit.map_or(o.limit, |l| l.min(o.limit)));
        latencies.push(o.latency_ms);
        if o.corpus_size > 0 {
            ratio_sum += o.hits.len().min(o.limit) as f64 / o.corpus_size as f64;
        }
        let abstain = o.predicted_abstain();
        match (&o.label, abstain) {
            (Label::Unanswerable, true) => tp += 1,
            (Label::Unanswerable, false) => fn_ += 1,
            (_, true) => fp += 1,
            (_, false) => tn += 1,
        }
        match &o.label {
            Label::Unanswerable => unanswerable += 1,
            Label::Skipped => skipped += 1,
            Label::Answerable { gold, units } => {
                answerable += 1;
                let ranked = dedup_paths(&o.hits);
                let gold: BTreeSet<&str> = gold.iter().map(String::as_str).collect();
                s.p1 += recall_any_at(&ranked, &gold, 1);
                s.p5 += precision_at(&ranked, &gold, 5);
                for (i, k) in KS.iter().enumerate() {
                    s.any[i] += recall_any_at(&ranked, &gold, *k);
                    s.frac[i] += recall_frac_at(&ranked, units, *k);
                }
                s.all5 += recall_all_at(&ranked, &gold, 5);
                s.all10 += recall_all_at(&ranked, &gold, 10);
                s.ndcg5 += ndcg_at(&ranked, &gold, 5);
                s.ndcg10 += ndcg_at(&ranked, &gold, 10);
                s.mrr += reciprocal_rank(&ranked, &gold);
                if let Some(top) = o.hits.first().filter(|h| gold.contains(h.path.as_str())) {
                    correct_top1 += 1;
                    for (i, arm) in ARMS.iter().enumerate() {
                        if top.arms.get(*arm).is_some_and(|a| a.rank <= 5) {
                            arm_hits[i] += 1;
                        }
                    }
                }
            }
        }
    }
    let n = answerable;
    let at = |k: usize, sum: f64| limit.is_none_or(|l| k <= l).then(|| mean(sum, n));
    Metrics {
        queries,
        answerable,
        unanswerable,
        skipped,
        p_at_1: mean(s.p1, n),
        p_at_5: at(5, s.p5),
        recall_at_1: mean(s.any[0], n),
        recall_at_3: at(3, s.any[1]),
        recall_at_5: at(5, s.any[2]),
        recall_at_10: at(10, s.any[3]),
        recall_at_20: at(20, s.any[4]),
        recall_all_at_5: at(5, s.all5),
        recall_all_at_10: at(10, s.all10),
        recall_frac_at_1: mean(s.frac[0], n),
        recall_frac_at_3: at(3, s.frac[1]),
        recall_frac_at_5: at(5, s.frac[2]),
        recall_frac_at_10: at(10, s.frac[3]),
        recall_frac_at_20: at(20, s.frac[4]),
        ndcg_at_5: at(5, s.ndcg5),
        ndcg_at_10: at(10, s.ndcg10),
        mrr: mean(s.mrr, n),
        abstention: abstention(tp, fp, fn_, tn),
        corpus_return_ratio: mean(ratio_sum, queries),
        latency_ms: Latency {
            p50: round(percentile(&latencies, 0.5)),
            p95: round(percentile(&latencies, 0.95)),
        },
        arm_attribution: ARMS
            .iter()
            .zip(arm_hits)
            .map(|(a, h)| ((*a).to_owned(), mean(h as f64, correct_top1)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArmRank;

    fn hit(p: &str) -> RankedHit {
        RankedHit {
            path: p.to_owned(),
            arms: BTreeMap::new(),
        }
    }

    fn hit_arms(p: &str, arms: &[(&str, usize)]) -> RankedHit {
        RankedHit {
            path: p.to_owned(),
            arms: arms
                .iter()
                .map(|(a, r)| {
                    (
                        (*a).to_owned(),
                        ArmRank {
                            score: 1.0,
                            rank: *r,
                        },
                    )
                })
                .collect(),
        }
    }

    fn outcome(label: Label, hits: Vec<RankedHit>) -> Outcome {
        Outcome {
            shape: "s".into(),
            label,
            hits,
            limit: 10,
            corpus_size: 100,
            latency_ms: 1.0,
            abstained: false,
        }
    }

    fn ans(gold: &[&str]) -> Label {
        Label::answerable(gold.iter().map(|s| (*s).to_owned()).collect())
    }

    /// `a` is given (within the limit) and equals `b`.
    fn close(a: impl Into<Option<f64>>, b: f64) {
        let a = a.into().expect("a metric within the limit");
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    #[test]
    fn gold_ranked_sixth() {
        let hits: Vec<RankedHit> = ["a", "b", "c", "d", "e", "g", "h"]
            .iter()
            .map(|p| hit(p))
            .collect();
        let m = compute([outcome(ans(&["g"]), hits)].iter());
        assert_eq!((m.queries, m.answerable), (1, 1));
        close(m.p_at_1, 0.0);
        close(m.p_at_5, 0.0);
        close(m.recall_at_5, 0.0);
        close(m.recall_at_10, 1.0);
        // Limit 10: nothing is said at 20, the user never saw that far.
        assert_eq!((m.recall_at_20, m.recall_frac_at_20), (None, None));
        close(m.recall_all_at_5, 0.0);
        close(m.recall_all_at_10, 1.0);
        close(m.mrr, 1.0 / 6.0);
        close(m.ndcg_at_5, 0.0);
        // DCG = 1/log2(7), ideal = 1.
        close(m.ndcg_at_10, 1.0 / 7f64.log2());
        // 7 hits, limit 10, corpus 100.
        close(m.corpus_return_ratio, 0.07);
    }

    #[test]
    fn two_gold_precision_ndcg_frac() {
        let hits: Vec<RankedHit> = ["x", "g1", "y", "z", "w", "g2"]
            .iter()
            .map(|p| hit(p))
            .collect();
        let m = compute([outcome(ans(&["g1", "g2"]), hits)].iter());
        close(m.p_at_1, 0.0);
        close(m.p_at_5, 1.0 / 5.0);
        close(m.recall_at_3, 1.0);
        close(m.recall_all_at_5, 0.0);
        close(m.recall_frac_at_5, 0.5);
        close(m.recall_frac_at_10, 1.0);
        close(m.mrr, 0.5);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 7f64.log2();
        let ideal = 1.0 + 1.0 / 3f64.log2();
        close(m.ndcg_at_10, dcg / ideal);
        close(m.ndcg_at_5, (1.0 / 3f64.log2()) / ideal);
    }

    #[test]
    fn a_cut_off_beyond_the_limit_is_not_given() {
        let hits: Vec<RankedHit> = (0..20).map(|i| hit(&format!("p{i}"))).collect();
        let at = |limit: usize| {
            let mut o = outcome(ans(&["p14"]), hits[..limit].to_vec());
            o.limit = limit;
            compute([o].iter())
        };
        let m = at(20);
        close(m.recall_at_10, 0.0);
        close(m.recall_at_20, 1.0);
        close(m.recall_frac_at_20, 1.0);
        let m = at(3);
        close(m.recall_at_3, 0.0);
        assert_eq!(
            (m.p_at_5, m.recall_at_5, m.recall_all_at_10, m.ndcg_at_5),
            (None, None, None, None)
        );
        // The smallest limit of the set decides.
        let mut deep = outcome(ans(&["p14"]), hits.clone());
        deep.limit = 20;
        let m = compute([deep, outcome(ans(&["p1"]), hits[..10].to_vec())].iter());
        assert_eq!(m.recall_at_20, None);
        close(m.recall_at_10, 0.5);
    }

    #[test]
    fn duplicates_are_dropped() {
        // The same path twice: the second does not take a rank, so g is 2nd, not 3rd.
        let hits = vec![hit("a"), hit("a"), hit("g"), hit("g")];
        let gold = Label::Answerable {
            gold: vec!["g".into()],
            units: vec!["g".into(), "g".into()],
        };
        let m = compute([outcome(gold, hits)].iter());
        close(m.mrr, 0.5);
        close(m.p_at_5, 0.2);
        close(m.recall_frac_at_1, 0.0);
        close(m.recall_frac_at_3, 1.0);
        // corpus_return_ratio counts what was returned, repeats included.
        close(m.corpus_return_ratio, 0.04);
    }

    #[test]
    fn all_abstain_run() {
        let os = [
            outcome(ans(&["g"]), vec![]),
            outcome(ans(&["h"]), vec![]),
            outcome(Label::Unanswerable, vec![]),
            outcome(Label::Skipped, vec![]),
        ];
        let m = compute(os.iter());
        assert_eq!(
            (m.queries, m.answerable, m.unanswerable, m.skipped),
            (4, 2, 1, 1)
        );
        close(m.p_at_1, 0.0);
        close(m.mrr, 0.0);
        close(m.ndcg_at_10, 0.0);
        // TP 1, FP 3 (two answerable, one skipped).
        assert_eq!(
            (
                m.abstention.tp,
                m.abstention.fp,
                m.abstention.fn_,
                m.abstention.tn
            ),
            (1, 3, 0, 0)
        );
        close(m.abstention.precision, 0.25);
        close(m.abstention.recall, 1.0);
        close(m.abstention.f1, 0.4);
        close(m.corpus_return_ratio, 0.0);
        for arm in ARMS {
            close(m.arm_attribution[arm], 0.0);
        }
    }

    #[test]
    fn abstention_zero_cases() {
        // Never abstains, nothing unanswerable: perfect.
        let a = abstention(0, 0, 0, 5);
        close(a.precision, 1.0);
        close(a.recall, 1.0);
        close(a.f1, 1.0);
        // Never abstains, but should have.
        let a = abstention(0, 0, 3, 5);
        close(a.precision, 0.0);
        close(a.recall, 0.0);
        close(a.f1, 0.0);
        // Abstains wrongly, nothing unanswerable.
        let a = abstention(0, 2, 0, 3);
        close(a.precision, 0.0);
        close(a.recall, 1.0);
        close(a.f1, 0.0);
        // The abstained flag counts as no hits.
        let mut o = outcome(Label::Unanswerable, vec![hit("a")]);
        o.abstained = true;
        assert_eq!(compute([o].iter()).abstention.tp, 1);
    }

    #[test]
    fn empty_gold_and_no_queries() {
        let m = compute([].iter());
        assert_eq!(m.queries, 0);
        close(m.recall_at_5, 0.0);
        close(m.latency_ms.p95, 0.0);
        // An answerable label with empty gold scores 0 everywhere and never panics.
        let m = compute([outcome(ans(&[]), vec![hit("a")])].iter());
        close(m.recall_at_10, 0.0);
        close(m.recall_all_at_5, 0.0);
        close(m.ndcg_at_5, 0.0);
        close(m.recall_frac_at_5, 0.0);
    }

    #[test]
    fn latency_percentiles() {
        let os: Vec<Outcome> = (1..=20)
            .map(|i| Outcome {
                latency_ms: f64::from(i),
                ..outcome(Label::Skipped, vec![])
            })
            .collect();
        let m = compute(os.iter());
        close(m.latency_ms.p50, 10.0);
        close(m.latency_ms.p95, 19.0);
        close(percentile(&[3.0], 0.95), 3.0);
    }

    #[test]
    fn arm_attribution_counts_correct_top1_only() {
        let os = [
            outcome(
                ans(&["g"]),
                vec![hit_arms("g", &[("lexical", 1), ("cues", 6)])],
            ),
            outcome(
                ans(&["g"]),
                vec![hit_arms("g", &[("lexical", 5), ("graph", 2)])],
            ),
            // wrong top-1: ignored
            outcome(ans(&["g"]), vec![hit_arms("x", &[("bodies", 1)]), hit("g")]),
        ];
        let m = compute(os.iter());
        close(m.arm_attribution["lexical"], 1.0);
        close(m.arm_attribution["cues"], 0.0);
        close(m.arm_attribution["graph"], 0.5);
        close(m.arm_attribution["bodies"], 0.0);
        close(m.arm_attribution["entities"], 0.0);
    }

    #[test]
    fn report_groups_by_shape_and_has_keys() {
        let mut a = outcome(ans(&["g"]), vec![hit("g")]);
        a.shape = "lookup".into();
        let mut b = outcome(Label::Unanswerable, vec![]);
        b.shape = "unanswerable".into();
        let r = report("probe", None, 10, &[a, b], BTreeMap::new(), "test");
        assert_eq!(r.by_shape.len(), 2);
        close(r.by_shape["lookup"].p_at_1, 1.0);
        close(r.by_shape["unanswerable"].abstention.recall, 1.0);
        let v = r.to_json();
        for k in [
            "dataset",
            "queries",
            "recall_at_20",
            "abstention",
            "latency_ms",
            "by_shape",
            "build",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert!(v.get("granularity").is_none());
    }
}
