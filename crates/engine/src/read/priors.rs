//! Stage 4: priors. Each is a factor on a candidate's fused score, applied when a
//! fact of the memory (superseded, dated, its tier…) meets a reading of the question
//! (about the past, asks when, names a span…); a factor of 1 is inert. Applied to
//! the head of the fused list, which is then re-sorted.

use std::collections::{HashMap, HashSet};

use gitloom_index::{EntityMatch, Index, PriorAsks};

use super::analysis::Analysis;
use super::config::RetrieveConfig;
use super::fusion::Fused;
use crate::error::Result;
use crate::shape::{Orientation, Shape};

/// The head: how many of the fused candidates the priors reorder and the judge decides
/// the answer on, whatever the limit. Were it the limit's, a prior lifting a candidate
/// from deep in the list would make `--limit 50` open differently from `--limit 10`.
pub(crate) const HEAD: usize = 20;

/// How many fused candidates are judged for a list of `limit` hits.
pub(crate) fn judged_len(limit: usize) -> usize {
    limit.saturating_mul(2).max(HEAD)
}

/// Applies the priors to the [`HEAD`] of `fused` and re-sorts it; returns, per path,
/// the priors that changed its score (shown on the hit).
pub(crate) fn apply(
    index: &Index,
    fused: &mut [Fused],
    q: &Analysis,
    cfg: &RetrieveConfig,
) -> Result<HashMap<String, Vec<String>>> {
    let p = &cfg.priors;
    let head = HEAD.min(fused.len());
    let named = named_paths(index, &fused[..head], q, cfg)?;
    let introduced = introductions(index, q, cfg)?;
    let mut applied: HashMap<String, Vec<String>> = HashMap::new();
    // The facts that cost a lookup of their own, read only for the priors that use them.
    let asks = PriorAsks {
        timeline: (q.asks_when && p.says_when != 1.0)
            || (q.shape == Shape::Temporal && p.timeline != 1.0),
        supersedes: q.says_now && p.current != 1.0,
    };
    for f in fused.iter_mut().take(head) {
        let Some(row) = index.prior_facts(&f.key, asks)? else {
            continue;
        };
        let mut notes = Vec::new();
        let mut stale_factor = 1.0;
        let stale = row.superseded || row.valid_to.is_some_and(|v| v < q.now);
        if stale {
            let (factor, note) = match q.orientation {
                Orientation::Past => (p.past, "past"),
                Orientation::Present if row.superseded => (p.superseded, "superseded"),
                Orientation::Present => (p.ended, "ended"),
                Orientation::PastTense | Orientation::Across => (1.0, ""),
            };
            if factor != 1.0 {
                stale_factor = factor;
                notes.push(note.to_owned());
            }
        }
        let mut times = |factor: f64, note: String| {
            f.score *= factor;
            notes.push(note);
        };
        if let Some(u) = row.updated
            && p.recency > 0.0
            && q.orientation == Orientation::Present
        {
            let age_days = ((q.now - u) as f64 / 86_400.0).max(0.0);
            let factor =
                1.0 + p.recency * 0.5f64.powf(age_days / p.recency_half_life_days.max(1.0));
            times(factor, format!("recency {age_days:.0}d"));
        }
        if !q.reference.is_empty() && p.reference != 1.0 {
            let title = gitloom_model::fold_name(&row.title);
            let title_words: Vec<&str> = title.split(' ').collect();
            if q.reference
                .iter()
                .all(|w| title_words.contains(&w.as_str()))
            {
                times(
                    p.reference,
                    format!("reference \"{}\"", q.reference.join(" ")),
                );
            }
        }
        if let Some(w) = q.window
            && index.dated_within(&f.key, w.start, w.end)?
        {
            times(p.when, "when".to_owned());
        }
        if q.asks_when
            && p.says_when != 1.0
            // Ingestion resolves "yesterday" to a date and records it in `timeline:`:
            // the memory says when as much as the words it was written from did.
            && (row.says_dates == Some(true)
                || index
                    .file(&f.key)?
                    .is_some_and(|r| crate::when::says_when(&r.body)))
        {
            times(p.says_when, "says when".to_owned());
        }
        if q.says_now
            && p.current != 1.0
            && row.supersedes == Some(true)
            && !stale
            && q.orientation == Orientation::Present
        {
            times(p.current, "current".to_owned());
        }
        if row.dated == Some(true) && q.shape == Shape::Temporal && p.timeline != 1.0 {
            times(p.timeline, "dated".to_owned());
        }
        if let Some(t) = q.tier
            && p.tier != 1.0
            && f.key.split('/').next() == Some(t.as_str())
        {
            times(p.tier, format!("tier {t}"));
        }
        if named.contains(&f.key) {
            times(p.named, "named".to_owned());
        }
        if introduced.contains(&f.key) {
            times(p.introduces, "introduces".to_owned());
        }
        if let Some(c) = row.confidence
            && p.confidence > 0.0
        {
            times(
                1.0 - p.confidence * (1.0 - c.clamp(0.0, 1.0)),
                format!("confidence {c}"),
            );
        }
        f.score *= stale_factor;
        if !notes.is_empty() {
            applied.insert(f.key.clone(), notes);
        }
    }
    fused[..head].sort_by(Fused::order);
    Ok(applied)
}

/// The head's paths that mention a named entity too common for the entity arm to
/// pick memories out (both speakers of a conversation): the `named` prior.
fn named_paths(
    index: &Index,
    head: &[Fused],
    q: &Analysis,
    cfg: &RetrieveConfig,
) -> Result<HashSet<String>> {
    let common: Vec<&EntityMatch> = q.entities.iter().filter(|m| m.common).collect();
    let ids: Vec<i64> = if cfg.priors.named_subject {
        super::gates::subject(&common, &q.query)
    } else {
        common.iter().map(|m| m.id).collect()
    };
    if cfg.priors.named == 1.0 || ids.is_empty() {
        return Ok(HashSet::new());
    }
    let keys: Vec<&str> = head.iter().map(|f| f.key.as_str()).collect();
    Ok(index.which_mention(&ids, &keys)?.into_iter().collect())
}

/// The memories that introduce whom an entity question asks about (`introduces`):
/// the names it gives that pick memories out (not the conversation's speakers) and
/// are not places, a one-word name also standing for the full names it begins.
fn introductions(index: &Index, q: &Analysis, cfg: &RetrieveConfig) -> Result<HashSet<String>> {
    if cfg.priors.introduces == 1.0 || q.shape != Shape::Entity {
        return Ok(HashSet::new());
    }
    // A place is mostly first named in passing ("flew to Lisbon"); people, pets and
    // organisations are introduced ("my physio, Jo Park").
    let asked: Vec<&EntityMatch> = q
        .entities
        .iter()
        .filter(|m| !m.common && m.kind.as_deref() != Some("place"))
        .collect();
    if asked.is_empty() {
        return Ok(HashSet::new());
    }
    let ids: Vec<i64> = asked.iter().map(|m| m.id).collect();
    let given: Vec<&str> = asked
        .iter()
        .map(|m| m.alias.as_str())
        .filter(|a| !a.contains(' '))
        .collect();
    Ok(index.introductions(&ids, &given)?.into_iter().collect())
}
