//! The end-to-end report: hit rates by message and by session, abstention, fact
//! figures and what ingestion cost. Rates are in `[0, 1]`; counts live under
//! `counts` (not gated) or are gated as exact (`questions`, `answerable`,
//! `unanswerable`, `skipped`); `false_abstentions` and `catch_all_share` are gated as
//! lower-is-better.

use std::collections::BTreeMap;

use serde::Serialize;

use super::facts::FactScores;
use super::{Asked, E2eOptions, ExtractorChoice, Store};
use crate::metrics::Abstention;

/// Hit rates at one level (message or session).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Hits {
    /// Questions with gold at this level (the denominator).
    pub scored: usize,
    pub hit_at_1: f64,
    pub hit_at_5: f64,
    pub hit_at_10: f64,
    pub mrr: f64,
}

fn hits(ranks: &[Option<usize>]) -> Hits {
    let n = ranks.len();
    if n == 0 {
        return Hits::default();
    }
    let at =
        |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n as f64;
    Hits {
        scored: n,
        hit_at_1: at(1),
        hit_at_5: at(5),
        hit_at_10: at(10),
        mrr: ranks
            .iter()
            .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
            .sum::<f64>()
            / n as f64,
    }
}

/// The scores of a set of questions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scores {
    pub questions: usize,
    pub answerable: usize,
    pub unanswerable: usize,
    pub message: Hits,
    pub session: Hits,
    /// Answerable questions that came back with no hits.
    pub false_abstentions: usize,
    pub abstention: Abstention,
}

fn scores(asked: &[&Asked]) -> Scores {
    let answerable: Vec<&&Asked> = asked.iter().filter(|a| a.answerable).collect();
    let message: Vec<Option<usize>> = answerable
        .iter()
        .filter(|a| a.has_message_gold)
        .map(|a| a.message_rank)
        .collect();
    let session: Vec<Option<usize>> = answerable.iter().map(|a| a.session_rank).collect();
    let (mut tp, mut fp, mut fn_, mut tn) = (0, 0, 0, 0);
    for a in asked {
        match (a.answerable, a.abstained) {
            (false, true) => tp += 1,
            (true, true) => fp += 1,
            (false, false) => fn_ += 1,
            (true, false) => tn += 1,
        }
    }
    let unanswerable = tp + fn_;
    // The 0/0 conventions of crate::metrics.
    let precision = if tp + fp == 0 {
        if unanswerable == 0 { 1.0 } else { 0.0 }
    } else {
        tp as f64 / (tp + fp) as f64
    };
    let recall = if unanswerable == 0 {
        1.0
    } else {
        tp as f64 / unanswerable as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    Scores {
        questions: asked.len(),
        answerable: answerable.len(),
        unanswerable,
        message: hits(&message),
        session: hits(&session),
        false_abstentions: fp,
        abstention: Abstention {
            precision,
            recall,
            f1,
            tp,
            fp,
            fn_,
            tn,
        },
    }
}

/// What ingestion did for one store.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IngestFigures {
    pub sessions: usize,
    pub turns: usize,
    pub memories: usize,
    /// Memories filed under no topic (`facts::in_catch_all`): the catch-all share of
    /// every store, also of those with no fact list (LoCoMo, LongMemEval).
    pub catch_all: usize,
    pub failed_sessions: usize,
    pub errors: usize,
    pub elapsed_ms: f64,
}

impl IngestFigures {
    pub fn of(store: &Store) -> IngestFigures {
        IngestFigures {
            sessions: store.ingest.sessions.len(),
            turns: store.ingest.turns,
            memories: store.memories.len(),
            catch_all: store
                .memories
                .keys()
                .filter(|p| super::facts::in_catch_all(p))
                .count(),
            failed_sessions: store.ingest.failed,
            errors: store.ingest.errors,
            elapsed_ms: store.ingest.elapsed_ms,
        }
    }
}

/// Fact figures over all stores with a fact list.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FactFigures {
    pub fact_recall: f64,
    pub subject_purity: f64,
    /// Subject purity by the fact's first name, whatever it names (the stricter
    /// reading; see `facts`).
    pub subject_purity_any_name: f64,
    pub catch_all_share: f64,
    pub title_share: f64,
    pub counts: FactCounts,
    /// Facts not recalled and titles that do not read as titles (first 40 of each),
    /// for reading; not gated.
    pub examples: FactExamples,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FactExamples {
    pub missed: Vec<String>,
    pub bad_titles: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FactCounts {
    pub facts: usize,
    pub recalled: usize,
    pub stated_pairs: usize,
    pub pure_pairs: usize,
    pub pure_pairs_any_name: usize,
    pub memories: usize,
    pub catch_all: usize,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

fn fact_figures(all: &[FactScores]) -> Option<FactFigures> {
    if all.is_empty() {
        return None;
    }
    let sum = |f: fn(&FactScores) -> usize| all.iter().map(f).sum::<usize>();
    let counts = FactCounts {
        facts: sum(|s| s.facts),
        recalled: sum(|s| s.recalled),
        stated_pairs: sum(|s| s.stated_pairs),
        pure_pairs: sum(|s| s.pure_pairs),
        pure_pairs_any_name: sum(|s| s.pure_pairs_any_name),
        memories: sum(|s| s.memories),
        catch_all: sum(|s| s.catch_all),
    };
    Some(FactFigures {
        fact_recall: ratio(counts.recalled, counts.facts),
        subject_purity: ratio(counts.pure_pairs, counts.stated_pairs),
        subject_purity_any_name: ratio(counts.pure_pairs_any_name, counts.stated_pairs),
        catch_all_share: ratio(counts.catch_all, counts.memories),
        title_share: ratio(sum(|s| s.titles_ok), counts.memories),
        counts,
        examples: FactExamples {
            missed: all
                .iter()
                .flat_map(|s| s.missed.iter().map(|(id, t)| format!("{id}: {t}")))
                .take(40)
                .collect(),
            bad_titles: all
                .iter()
                .flat_map(|s| s.bad_titles.iter().cloned())
                .take(40)
                .collect(),
        },
    })
}

/// An end-to-end run's report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct E2eReport {
    pub dataset: String,
    pub via: &'static str,
    pub extractor: String,
    pub limit: usize,
    /// Questions the data gives no usable gold (LoCoMo evidence naming no turn).
    pub skipped: usize,
    #[serde(flatten)]
    pub all: Scores,
    pub by_shape: BTreeMap<String, Scores>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<FactFigures>,
    pub ingest: IngestTotals,
    pub build: String,
}

/// Ingestion over every store of the run (not gated: `counts`, `timings_ms`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct IngestTotals {
    pub counts: IngestFigures,
    /// Turns per second of ingestion wall time (extraction, reconciliation, commits
    /// and index syncs, with whatever embedder the run uses).
    pub timings_ms: BTreeMap<&'static str, f64>,
}

pub(super) fn build(
    dataset: &str,
    skipped: usize,
    opts: &E2eOptions,
    asked: &[Asked],
    ingests: &[IngestFigures],
    facts: &[FactScores],
) -> E2eReport {
    let refs: Vec<&Asked> = asked.iter().collect();
    let mut by: BTreeMap<String, Vec<&Asked>> = BTreeMap::new();
    for a in asked {
        by.entry(a.shape.clone()).or_default().push(a);
    }
    let mut totals = IngestFigures::default();
    for i in ingests {
        totals.sessions += i.sessions;
        totals.turns += i.turns;
        totals.memories += i.memories;
        totals.catch_all += i.catch_all;
        totals.failed_sessions += i.failed_sessions;
        totals.errors += i.errors;
        totals.elapsed_ms += i.elapsed_ms;
    }
    let mut timings = BTreeMap::new();
    timings.insert("ingest", totals.elapsed_ms);
    timings.insert(
        "turns_per_s",
        if totals.elapsed_ms > 0.0 {
            totals.turns as f64 / (totals.elapsed_ms / 1e3)
        } else {
            0.0
        },
    );
    E2eReport {
        dataset: dataset.to_owned(),
        via: "ingest",
        extractor: match &opts.extractor {
            ExtractorChoice::Offline => "offline".into(),
            ExtractorChoice::Model(c) => format!("model:{}", c.model),
        },
        limit: opts.limit,
        skipped,
        all: scores(&refs),
        by_shape: by.into_iter().map(|(k, v)| (k, scores(&v))).collect(),
        facts: fact_figures(facts),
        ingest: IngestTotals {
            counts: totals,
            timings_ms: timings,
        },
        build: opts.build.clone(),
    }
}

impl E2eReport {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
