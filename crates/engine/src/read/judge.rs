//! Stage 5: judging the head. Each candidate is evidence, context or dropped by the
//! floor (`evidence.rs`) and then by the gates (`gates.rs`); the answer stands on
//! its best evidence, so with no evidence at all nothing is returned.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use gitloom_index::{Index, LexicalHit};

use super::analysis::Analysis;
use super::arm::Arm;
use super::config::RetrieveConfig;
use super::evidence::{Evidence, context, evidence};
use super::fusion::Fused;
use super::gates::Anchor;
use super::hit::{Abstention, ArmScore, GraphStep, Judgement, Refusal, Verdict};
use crate::asked::Demand;
use crate::error::Result;
use crate::shape::Shape;

/// A candidate that passed: its evidence, its score after the gates, and the
/// lexical details the judgement read (matched terms and coverage; decoration
/// adds the snippet and section, see `decorate::describe`).
pub(crate) struct Judged<'a> {
    pub fused: &'a Fused,
    pub score: f64,
    pub evidence: Evidence,
    pub details: Option<LexicalHit>,
}

/// The judge's record of the head: what was kept and what was refused, and why.
pub(crate) type Record = Vec<Judgement>;

fn judgement(f: &Fused, coverage: f64, matched: &[String], verdict: Verdict) -> Judgement {
    Judgement {
        path: f.key.clone(),
        score: f.score,
        arms: f
            .arms
            .iter()
            .map(|(a, (s, r))| {
                (
                    *a,
                    ArmScore {
                        score: *s,
                        rank: *r,
                    },
                )
            })
            .collect(),
        coverage,
        matched_terms: matched.to_vec(),
        verdict,
    }
}

/// The longer ranking of a limit beyond the arms' depth (`mod.rs`): its fused list,
/// and what its judging reads (the graph's steps, the priors' notes, the body cut).
pub(crate) struct Deeper<'a> {
    pub fused: &'a [Fused],
    pub steps: &'a HashMap<String, GraphStep>,
    pub notes: &'a HashMap<String, Vec<String>>,
    pub body_cutoff: f64,
}

/// Judges the first `decided` of `fused`, which decide the first hits and whether to
/// abstain; when a limit wants more candidates (`wanted`), judges that longer list too
/// (the first `wanted` of `deeper`'s list when there is one, else of `fused`) and puts
/// the hits it finds that the head did not hold after the head's. Judged together, a
/// deep candidate can change the head's verdicts (a value one memory lacks, an entity
/// another one anchors), so `--limit 50` would open differently from `--limit 10`;
/// this way the shorter list is always the start of the longer one. `record` holds the
/// head's verdicts, then the longer list's for the candidates the head did not hold.
#[allow(clippy::too_many_arguments)]
pub(crate) fn judge_to<'a>(
    index: &Index,
    fused: &'a [Fused],
    deeper: Option<Deeper<'a>>,
    decided: usize,
    wanted: usize,
    q: &Analysis,
    cfg: &RetrieveConfig,
    body_cutoff: f64,
    steps: &HashMap<String, GraphStep>,
    notes: &mut HashMap<String, Vec<String>>,
    record: Option<&mut Record>,
) -> Result<(Vec<Judged<'a>>, Option<Abstention>)> {
    let decided = decided.min(fused.len());
    let head = &fused[..decided];
    let mut record = record;
    let (mut judged, abstention) = judge(
        index,
        head,
        q,
        cfg,
        body_cutoff,
        steps,
        notes,
        record.as_deref_mut(),
    )?;
    let (longer, longer_steps, mut more_notes, longer_cutoff) = match deeper {
        Some(d) => (d.fused, d.steps, d.notes.clone(), d.body_cutoff),
        None => (fused, steps, HashMap::new(), body_cutoff),
    };
    let wanted = wanted.min(longer.len());
    if abstention.is_some() || wanted <= decided {
        return Ok((judged, abstention));
    }
    let mut more_record = record.is_some().then(Record::new);
    let (more, _) = judge(
        index,
        &longer[..wanted],
        q,
        cfg,
        longer_cutoff,
        longer_steps,
        &mut more_notes,
        more_record.as_mut(),
    )?;
    // The head's verdicts stand: a candidate it refused does not come back further
    // down, nor does one it kept come twice.
    let held: HashSet<&str> = head.iter().map(|f| f.key.as_str()).collect();
    let after: HashSet<&str> = longer[..wanted]
        .iter()
        .map(|f| f.key.as_str())
        .filter(|k| !held.contains(k))
        .collect();
    if let (Some(r), Some(more_record)) = (record, more_record) {
        r.extend(
            more_record
                .into_iter()
                .filter(|j| after.contains(j.path.as_str())),
        );
    }
    for j in more {
        if after.contains(j.fused.key.as_str()) {
            if let Some(n) = more_notes.remove(&j.fused.key) {
                notes.insert(j.fused.key.clone(), n);
            }
            judged.push(j);
        }
    }
    Ok((judged, abstention))
}

/// Judges `head` in fused order. `notes` gains the gates' demotions and refusals;
/// `record` (when asked for) every candidate's verdict.
#[allow(clippy::too_many_arguments)]
pub(crate) fn judge<'a>(
    index: &Index,
    head: &'a [Fused],
    q: &Analysis,
    cfg: &RetrieveConfig,
    body_cutoff: f64,
    steps: &HashMap<String, GraphStep>,
    notes: &mut HashMap<String, Vec<String>>,
    mut record: Option<&mut Record>,
) -> Result<(Vec<Judged<'a>>, Option<Abstention>)> {
    let mut refuse = |f: &Fused, coverage: f64, matched: &[String], reason: Refusal| {
        if let Some(r) = record.as_deref_mut() {
            r.push(judgement(f, coverage, matched, Verdict::Refused { reason }));
        }
    };
    if head.is_empty() {
        return Ok((Vec::new(), Some(Abstention::NoCandidates)));
    }
    let keys: Vec<String> = head.iter().map(|f| f.key.clone()).collect();
    let mut details = index.lexical_details(&q.query, &keys, gitloom_index::Decor::Terms)?;
    let cfg = floor_config(cfg, body_cutoff);

    // The first evidence a gate refused, in fused order: what an abstention names
    // (a refused candidate that was no evidence names nothing).
    let mut refused_evidence: Option<(String, Refusal)> = None;
    let mut note_refusal = |evidence: &Evidence, path: &str, reason: &Refusal| {
        if evidence.is_evidence() {
            refused_evidence.get_or_insert_with(|| (path.to_owned(), reason.clone()));
        }
    };
    // The floor, in fused order (a graph hit counts when its source is evidence).
    let mut passed: Vec<Judged<'a>> = Vec::new();
    let mut evidence_paths: Vec<String> = Vec::new();
    for f in head {
        let d = details.remove(&f.key);
        let coverage = d.as_ref().map_or(0.0, |d| d.coverage);
        let matched: &[String] = d.as_ref().map_or(&[], |d| d.matched_terms.as_slice());
        let Some(support) = evidence(
            &cfg,
            f,
            coverage,
            matched.len(),
            steps.get(&f.key),
            &evidence_paths,
        )
        .or_else(|| context(&cfg, f, coverage, steps.get(&f.key), &evidence_paths)) else {
            refuse(f, coverage, matched, Refusal::BelowFloor);
            continue;
        };
        let why = Evidence {
            support,
            anchored: false,
        };
        // "Who is Bruno": when the question is about a name, a memory that neither
        // mentions an entity of that name nor contains it is no answer, however
        // alike the wording ("who is Arjun" is a close cue).
        if q.shape == Shape::Entity
            && !f.arms.contains_key(&Arm::Entities)
            && coverage < cfg.evidence.weak.lexical
        {
            note_refusal(&why, &f.key, &Refusal::NotNamed);
            refuse(f, coverage, matched, Refusal::NotNamed);
            continue;
        }
        if why.is_evidence() {
            evidence_paths.push(f.key.clone());
        }
        passed.push(Judged {
            fused: f,
            score: f.score,
            evidence: why,
            details: d,
        });
    }

    // The entity anchor, over the answer as a whole.
    let anchor = Anchor::new(
        &anchoring_entities(q),
        &q.terms,
        q.shape,
        cfg.anchor_specific,
    );
    // The answer type, read first: a memory that lacks what the question demands is
    // refused, and so cannot hold the rest of the question for a joined answer.
    let lacks = lacking(index, &passed, q)?;
    let verdicts = if cfg.entity_anchor > 0.0 && !anchor.aliases.is_empty() {
        anchoring(index, &passed, &lacks, &anchor, q, &cfg)?
    } else {
        vec![Anchoring::NotAsked; passed.len()]
    };
    let mut out: Vec<Judged<'a>> = Vec::new();
    // The best score of a memory refused for lacking a value the question asks for.
    let mut lacked_value: Option<(f64, String, String)> = None;
    for ((mut j, verdict), lack) in passed.into_iter().zip(verdicts).zip(lacks) {
        let (coverage, matched) = j
            .details
            .as_ref()
            .map_or((0.0, &[][..]), |d| (d.coverage, &d.matched_terms[..]));
        match verdict {
            Anchoring::NotAsked => {}
            Anchoring::Anchored => j.evidence.anchored = true,
            Anchoring::Unanchored if anchor.soft => {
                j.score *= 0.5;
                notes
                    .entry(j.fused.key.clone())
                    .or_default()
                    .push("unanchored".to_owned());
            }
            Anchoring::Partly => {
                j.score *= 0.5;
                notes
                    .entry(j.fused.key.clone())
                    .or_default()
                    .push("partly anchored".to_owned());
            }
            Anchoring::Unanchored => {
                note_refusal(&j.evidence, &j.fused.key, &Refusal::Unanchored);
                refuse(j.fused, coverage, matched, Refusal::Unanchored);
                continue;
            }
        }
        if let Some(unmet) = lack {
            let label = unmet.label();
            if unmet.is_value() && lacked_value.as_ref().is_none_or(|(s, _, _)| j.score > *s) {
                lacked_value = Some((j.score, j.fused.key.clone(), label.clone()));
            }
            let reason = Refusal::Lacks {
                lacks: label.clone(),
            };
            note_refusal(&j.evidence, &j.fused.key, &reason);
            notes
                .entry(j.fused.key.clone())
                .or_default()
                .push(format!("lacks {label}"));
            refuse(j.fused, coverage, matched, Refusal::Lacks { lacks: label });
            continue;
        }
        out.push(j);
    }
    // Soft anchoring may have demoted some hits below others.
    out.sort_by(|a, b| super::fusion::by_score(a.score, b.score, a.fused, b.fused));
    // The answer stands on its best evidence: with no hit that clears the floor
    // (a strong bar, or weak bars in two arms) nothing is returned; otherwise the
    // hits that clear one weak bar come along as context.
    let abstain = !out.iter().any(|j| j.evidence.is_evidence());
    let not_stored = value_not_stored(&out, lacked_value, cfg.value_owner);
    let abstain = abstain || not_stored.is_some();
    if let Some(r) = record {
        for j in &out {
            let coverage = j.details.as_ref().map_or(0.0, |d| d.coverage);
            let matched = j.details.as_ref().map_or(&[][..], |d| &d.matched_terms[..]);
            let verdict = if let Some((_, lacks)) = &not_stored {
                Verdict::Refused {
                    reason: Refusal::ValueNotStored {
                        lacks: lacks.clone(),
                    },
                }
            } else if abstain {
                Verdict::Refused {
                    reason: Refusal::NoEvidence,
                }
            } else {
                Verdict::Kept {
                    evidence: j.evidence.clone(),
                }
            };
            r.push(judgement(j.fused, coverage, matched, verdict));
        }
        // Fused order, as the head was judged.
        let order: HashMap<&str, usize> = head
            .iter()
            .enumerate()
            .map(|(i, f)| (f.key.as_str(), i))
            .collect();
        r.sort_by_key(|j| order.get(j.path.as_str()).copied().unwrap_or(usize::MAX));
    }
    if !abstain {
        return Ok((out, None));
    }
    let why = match (not_stored, refused_evidence) {
        (Some((path, lacks)), _) => Abstention::ValueNotStored { path, lacks },
        (None, Some((path, reason))) => Abstention::Refused { path, reason },
        (None, None) => Abstention::NoEvidence,
    };
    Ok((Vec::new(), Some(why)))
}

/// The memory and the value a question asks for, when that memory lacks it and
/// outscores every kept memory by more than `factor` (`RetrieveConfig::value_owner`;
/// 0 never): the best match is what the question is about, and it does not state
/// the value.
fn value_not_stored(
    kept: &[Judged<'_>],
    lacked: Option<(f64, String, String)>,
    factor: f64,
) -> Option<(String, String)> {
    let (lacking, path, label) = lacked?;
    let best = kept
        .iter()
        .map(|j| j.score)
        .fold(f64::NEG_INFINITY, f64::max);
    (factor > 0.0 && !kept.is_empty() && lacking > factor * best).then_some((path, label))
}

/// A body cosine under the semantic cut ranks (corroboration) but is no evidence:
/// the bars were calibrated on what clears the cut.
fn floor_config(cfg: &RetrieveConfig, body_cutoff: f64) -> Cow<'_, RetrieveConfig> {
    if body_cutoff > 0.0 {
        let mut c = cfg.clone();
        c.evidence.strong.bodies = c.evidence.strong.bodies.max(body_cutoff);
        c.evidence.weak.bodies = c.evidence.weak.bodies.max(body_cutoff);
        Cow::Owned(c)
    } else {
        Cow::Borrowed(cfg)
    }
}

/// Per candidate, the first demand of the question its text does not meet
/// (`asked.rs`); all `None` for the usual question, which demands nothing.
fn lacking(index: &Index, passed: &[Judged<'_>], q: &Analysis) -> Result<Vec<Option<Demand>>> {
    if q.demands.is_empty() {
        return Ok(vec![None; passed.len()]);
    }
    let mut out = Vec::with_capacity(passed.len());
    for j in passed {
        // Only for the rare question with a demand: its text is read here.
        let text = index
            .file(&j.fused.key)?
            .map(|r| {
                let summary = r.summary.unwrap_or_default();
                format!("{}\n{summary}\n{}\n{}", r.title, r.cues.join("\n"), r.body)
            })
            .unwrap_or_default();
        out.push(q.demands.iter().find(|d| !d.met_by(&text)).cloned());
    }
    Ok(out)
}

/// The entities a hit must be anchored to: those the question names, less the
/// reference point of a "before X" / "after X" question. "Who was my manager before
/// Ivo" starts from Ivo; its answer is by construction another memory (the one that
/// the memory about Ivo supersedes), which need not name him.
fn anchoring_entities(q: &Analysis) -> Vec<gitloom_index::EntityMatch> {
    q.entities
        .iter()
        .filter(|m| {
            let mut named = m
                .alias
                .split(' ')
                .filter(|w| !w.is_empty() && !gitloom_model::text::is_stopword(w))
                .peekable();
            // (An entity "The Old Mill": the reference drops the article.)
            q.reference.is_empty()
                || named.peek().is_none()
                || !named.all(|w| q.reference.iter().any(|r| r == w))
        })
        .cloned()
        .collect()
}

/// What the entity anchor says of one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchoring {
    /// The question names no known entity.
    NotAsked,
    /// It names the entity and holds the rest of the question, alone or joined
    /// with a linked memory that holds the rest.
    Anchored,
    /// It names the entity and holds some of the rest, too little to be anchored
    /// ([`RetrieveConfig::anchor_refuse`]): ranked below the anchored, not refused.
    Partly,
    Unanchored,
}

/// The entity anchor over the candidates that passed the floor. A memory that names
/// the entity is anchored when it holds enough of the rest of the question, when a
/// cue of it matches the question closely, or when the rest it lacks is held by
/// memories linked to it (a link, `related:`, `supersedes`, an entity both mention,
/// or another entity the question names, which only the other memory mentions):
/// "what hours does Ivo work" is answered by Ivo's memory (he cooks at a
/// restaurant) and the restaurant's memory (its hours) together. A memory that
/// does not name the entity is anchored as the other half of such a join, when the
/// join pivots on a memory about the entity (the entity arm found it). "What camera
/// does Ivo own" stays unanswered: his memory holds no camera, and the camera
/// memories are not linked to him.
fn anchoring(
    index: &Index,
    passed: &[Judged<'_>],
    lacks: &[Option<Demand>],
    anchor: &Anchor,
    q: &Analysis,
    cfg: &RetrieveConfig,
) -> Result<Vec<Anchoring>> {
    let matched = |j: &Judged<'_>| -> Vec<String> {
        j.details
            .as_ref()
            .map(|d| d.matched_terms.clone())
            .unwrap_or_default()
    };
    let named: Vec<bool> = passed
        .iter()
        .map(|j| j.fused.arms.contains_key(&Arm::Entities) || anchor.mentions(&matched(j)))
        .collect();
    let alone: Vec<bool> = passed
        .iter()
        .zip(&named)
        .map(|(j, named)| {
            let cue_says = j
                .fused
                .arms
                .get(&Arm::Cues)
                .is_some_and(|(c, _)| *c >= cfg.anchor_cue);
            *named && (anchor.rest_share(&matched(j)) >= cfg.entity_anchor || cue_says)
        })
        .collect();
    let mut out: Vec<Anchoring> = alone
        .iter()
        .map(|a| {
            if *a {
                Anchoring::Anchored
            } else {
                Anchoring::Unanchored
            }
        })
        .collect();
    if !cfg.anchor_join || !named.iter().any(|n| *n) {
        return Ok(partly(out, &named, passed, anchor, cfg, matched));
    }
    // Joins: a named memory and the linked evidence that holds the rest it lacks.
    let links = Links::of(index, passed, q)?;
    for (i, j) in passed.iter().enumerate() {
        // The pivot of a join is a memory about the entity (the entity arm found
        // it: its frontmatter names it), not one whose text mentions the name in
        // passing; a memory linked to a passing mention is about something else.
        if !named[i] || alone[i] || !j.fused.arms.contains_key(&Arm::Entities) {
            continue;
        }
        let mut held = matched(j);
        let partners: Vec<usize> = (0..passed.len())
            .filter(|k| *k != i && passed[*k].evidence.is_evidence() && lacks[*k].is_none())
            .filter(|k| links.linked(&j.fused.key, &passed[*k].fused.key))
            .collect();
        for k in &partners {
            held.extend(matched(&passed[*k]));
        }
        let verdict = if anchor.rest_share(&held) >= cfg.entity_anchor {
            Anchoring::Anchored
        } else if partly_holds(anchor, cfg, &held) {
            Anchoring::Partly
        } else {
            continue;
        };
        out[i] = verdict;
        for k in partners {
            // A partner counts when it holds part of the rest.
            if anchor.rest_share(&matched(&passed[k])) > 0.0 && out[k] != Anchoring::Anchored {
                out[k] = verdict;
            }
        }
    }
    Ok(partly(out, &named, passed, anchor, cfg, matched))
}

/// A named memory left unanchored that still holds some of the rest of the
/// question (at least `anchor_refuse` of it) is only partly anchored: refusing it
/// would abstain on "how long did it take Maren to paint the boat" because "long"
/// and "take" are not in her memory that says she painted it. Only a memory that
/// holds nothing of the question but the name ("what's Maren's phone number"
/// against her memory) is refused. Under a soft anchor every unanchored
/// hit is demoted anyway.
fn partly(
    mut out: Vec<Anchoring>,
    named: &[bool],
    passed: &[Judged<'_>],
    anchor: &Anchor,
    cfg: &RetrieveConfig,
    matched: impl Fn(&Judged<'_>) -> Vec<String>,
) -> Vec<Anchoring> {
    for (i, j) in passed.iter().enumerate() {
        // A memory that names only a speaker of the conversation, where the question
        // also names what it is about, is ranked below the memories that name that.
        let held = matched(j);
        let named = named[i] || anchor.mentions_common(&held);
        if out[i] == Anchoring::Unanchored && named && partly_holds(anchor, cfg, &held) {
            out[i] = Anchoring::Partly;
        }
    }
    out
}

/// Whether `held` is enough of the rest of the question for a hit to be partly
/// anchored (see [`partly`]); never under a soft anchor, which demotes instead.
fn partly_holds(anchor: &Anchor, cfg: &RetrieveConfig, held: &[String]) -> bool {
    !anchor.soft
        && cfg.anchor_refuse > 0.0
        && cfg.anchor_refuse < cfg.entity_anchor
        && anchor.rest_share(held) >= cfg.anchor_refuse
}

/// Which candidates are linked: by a link either way, or by an entity both mention
/// (other than the ones the question names), or by the question itself, when each
/// names an entity it asks about that the other does not ("which did I buy first,
/// the bed for Biscuit or the lead for Pip": Biscuit's memory and Pip's answer together).
struct Links {
    edges: std::collections::HashSet<(String, String)>,
    entities: HashMap<String, Vec<i64>>,
    /// The entities the question names that each candidate mentions.
    asked: HashMap<String, Vec<i64>>,
}

impl Links {
    fn of(index: &Index, passed: &[Judged<'_>], q: &Analysis) -> Result<Links> {
        let mut edges = std::collections::HashSet::new();
        for j in passed {
            for l in index.links_from(&j.fused.key)? {
                if let Some(r) = l.resolved {
                    edges.insert((j.fused.key.clone(), r.clone()));
                    edges.insert((r, j.fused.key.clone()));
                }
            }
        }
        let paths: Vec<&str> = passed.iter().map(|j| j.fused.key.as_str()).collect();
        let asked: Vec<i64> = q.entities.iter().map(|m| m.id).collect();
        let mut entities = index.entities_of(&paths)?;
        let mut of_asked = HashMap::new();
        for (path, ids) in entities.iter_mut() {
            let (named, other): (Vec<i64>, Vec<i64>) =
                ids.iter().partition(|id| asked.contains(id));
            of_asked.insert(path.clone(), named);
            *ids = other;
        }
        Ok(Links {
            edges,
            entities,
            asked: of_asked,
        })
    }

    fn linked(&self, a: &str, b: &str) -> bool {
        self.edges.contains(&(a.to_owned(), b.to_owned()))
            || self
                .entities
                .get(a)
                .zip(self.entities.get(b))
                .is_some_and(|(x, y)| x.iter().any(|id| y.contains(id)))
            || self
                .asked
                .get(a)
                .zip(self.asked.get(b))
                .is_some_and(|(x, y)| y.iter().any(|id| !x.contains(id)))
    }
}
