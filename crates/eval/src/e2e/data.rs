//! The data sets as conversations for ingestion, and their gold as messages.
//!
//! - **Probe personas** (`probe-sre`, …): `sessions.json` as it is (the product's own
//!   input format), `queries.jsonl` with `gold_messages`, `facts.jsonl`. One conversation.
//!   Questions are asked at the last session's day.
//! - **LoCoMo**: each conversation's `session_N` lists become sessions dated by
//!   `session_N_date_time`; every turn is a `user` message named by its speaker (both
//!   people's turns are statements by named people; LoCoMo has no assistant). A turn
//!   that shares an image carries the dataset's caption of it after its text, as
//!   `(image: …)`, the only text the data gives for what was shown. Evidence `dia_id`s
//!   map to (session, turn index). Category 5 is unanswerable; a question whose
//!   evidence names no turn is left out (counted in the report's `skipped`). Questions
//!   are asked at the last session's day.
//! - **LongMemEval**: one conversation per question, its haystack sessions with their
//!   roles (the user's and the assistant's turns); `has_answer` user turns are the
//!   message gold, `answer_session_ids` the session gold; `_abs` questions are
//!   unanswerable. Asked at `question_date`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use gitloom_cortex::{Message, Session};
use serde::Deserialize;
use serde_json::Value;

use crate::{EvalError, read_file};

/// A message of a conversation: the session's id and the message's index in it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageRef {
    pub session: String,
    pub index: usize,
}

impl fmt::Display for MessageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.session, self.index)
    }
}

/// What answers a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Gold {
    Unanswerable,
    Answerable {
        /// Messages that state the answer (may be empty: LongMemEval evidence only in
        /// assistant turns).
        messages: BTreeSet<MessageRef>,
        /// Sessions holding the answer.
        sessions: BTreeSet<String>,
    },
}

/// A question asked of a conversation's store.
#[derive(Debug, Clone)]
pub struct Question {
    pub id: String,
    pub query: String,
    /// Probe shape, LoCoMo category name or LongMemEval question type.
    pub shape: String,
    /// When it is asked, seconds since the epoch.
    pub asked_at: Option<i64>,
    pub gold: Gold,
}

/// A fact the data says a message states (`facts.jsonl`).
#[derive(Debug, Clone)]
pub struct StatedFact {
    pub id: String,
    pub message: MessageRef,
    pub text: String,
}

/// One store's worth of input and questions.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub id: String,
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
    pub facts: Vec<StatedFact>,
    /// Folded name words of the people and pets the data's own hand-written store
    /// (`memories/`, where a persona folder has one) types `(person)` or `(pet)`: the
    /// beings a fact can be about other than the speaker (see [`super::facts`]).
    /// Empty when the data has no such store.
    pub beings: BTreeSet<String>,
    /// Questions left out because the data gives them no usable gold.
    pub skipped: usize,
}

/// `YYYY-MM-DD` (midnight UTC) or an RFC 3339 timestamp, in seconds.
fn day_seconds(date: &str) -> Option<i64> {
    if let Ok(ts) = date.parse::<jiff::Timestamp>() {
        return Some(ts.as_second());
    }
    let d: jiff::civil::Date = date.parse().ok()?;
    Some(gitloom_model::When::Date(d).unix_seconds())
}

/// The day of an RFC 3339 timestamp the loaders return (`2023-05-08T13:56:00Z`).
fn day_of(ts: &str) -> String {
    ts.get(..10).unwrap_or(ts).to_owned()
}

fn last_day(sessions: &[Session]) -> Option<i64> {
    sessions.iter().filter_map(|s| day_seconds(&s.date)).max()
}

fn text_of(file: &Path) -> Result<String, EvalError> {
    String::from_utf8(read_file(file)?).map_err(|_| EvalError::data(file, "not UTF-8"))
}

/// Checks that `r` names a user message of `sessions`.
fn check_ref(
    file: &Path,
    ctx: &str,
    r: &MessageRef,
    sessions: &BTreeMap<&str, &Session>,
) -> Result<(), EvalError> {
    let s = sessions
        .get(r.session.as_str())
        .ok_or_else(|| EvalError::data(file, format!("{ctx}: no session {:?}", r.session)))?;
    match s.messages.get(r.index) {
        Some(m) if m.role == "user" => Ok(()),
        Some(m) => Err(EvalError::data(
            file,
            format!("{ctx}: {r} is a {} message, not the user's", m.role),
        )),
        None => Err(EvalError::data(
            file,
            format!(
                "{ctx}: {r}: session {:?} has {} messages",
                r.session,
                s.messages.len()
            ),
        )),
    }
}

fn parse_ref(file: &Path, ctx: &str, s: &str) -> Result<MessageRef, EvalError> {
    let (session, index) = s
        .rsplit_once('#')
        .and_then(|(a, b)| Some((a, b.parse::<usize>().ok()?)))
        .ok_or_else(|| {
            EvalError::data(
                file,
                format!("{ctx}: {s:?} is not <session id>#<message index>"),
            )
        })?;
    Ok(MessageRef {
        session: session.to_owned(),
        index,
    })
}

#[derive(Deserialize)]
struct PersonaQuery {
    id: String,
    query: String,
    #[serde(default)]
    shape: String,
    abstain: bool,
    #[serde(default)]
    gold_messages: Vec<String>,
}

#[derive(Deserialize)]
struct FactLine {
    id: String,
    session: String,
    message: usize,
    fact: String,
}

/// A probe persona folder: `sessions.json`, `queries.jsonl` (with `gold_messages`),
/// `facts.jsonl` if present.
pub fn persona(dir: &Path) -> Result<Conversation, EvalError> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "probe".into());
    let sfile = dir.join("sessions.json");
    let sessions = gitloom_cortex::parse_sessions(&text_of(&sfile)?)
        .map_err(|e| EvalError::data(&sfile, e.to_string()))?;
    let by_id: BTreeMap<&str, &Session> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    let asked_at = last_day(&sessions);
    let qfile = dir.join("queries.jsonl");
    let mut questions = Vec::new();
    for (i, line) in text_of(&qfile)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let ctx = format!("line {}", i + 1);
        let q: PersonaQuery =
            serde_json::from_str(line).map_err(|e| EvalError::json(&qfile, &ctx, e))?;
        let gold = if q.abstain {
            Gold::Unanswerable
        } else {
            if q.gold_messages.is_empty() {
                return Err(EvalError::data(
                    &qfile,
                    format!("{ctx}: answerable query {:?} has no gold_messages", q.id),
                ));
            }
            let mut messages = BTreeSet::new();
            for g in &q.gold_messages {
                let r = parse_ref(&qfile, &ctx, g)?;
                check_ref(&qfile, &ctx, &r, &by_id)?;
                messages.insert(r);
            }
            let sessions = messages.iter().map(|m| m.session.clone()).collect();
            Gold::Answerable { messages, sessions }
        };
        questions.push(Question {
            id: q.id,
            query: q.query,
            shape: q.shape,
            asked_at,
            gold,
        });
    }
    if questions.is_empty() {
        return Err(EvalError::data(&qfile, "holds no queries"));
    }
    let ffile = dir.join("facts.jsonl");
    let mut facts = Vec::new();
    if ffile.is_file() {
        for (i, line) in text_of(&ffile)?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let ctx = format!("line {}", i + 1);
            let f: FactLine =
                serde_json::from_str(line).map_err(|e| EvalError::json(&ffile, &ctx, e))?;
            let message = MessageRef {
                session: f.session,
                index: f.message,
            };
            check_ref(&ffile, &ctx, &message, &by_id)?;
            facts.push(StatedFact {
                id: f.id,
                message,
                text: f.fact,
            });
        }
    }
    let beings = beings_of(dir)?;
    Ok(Conversation {
        id: name,
        sessions,
        questions,
        facts,
        beings,
        skipped: 0,
    })
}

/// The name words of every entity `dir/memories` types as a person or a pet (words of
/// three letters or more, folded; honorifics out); empty when there is no such folder.
fn beings_of(dir: &Path) -> Result<BTreeSet<String>, EvalError> {
    if !dir.join("memories").is_dir() {
        return Ok(BTreeSet::new());
    }
    let mut out = BTreeSet::new();
    for doc in crate::probe::load_corpus(dir)? {
        let memory = gitloom_model::Memory::parse(&doc.path, doc.content.as_bytes())
            .map_err(|e| EvalError::data(&dir.join("memories").join(&doc.path), e.to_string()))?;
        for e in &memory.front.entities {
            if matches!(e.kind.as_deref(), Some("person" | "pet")) {
                out.extend(super::facts::name_words(&e.name));
            }
        }
    }
    Ok(out)
}

/// LoCoMo conversations (`locomo-dev.json`), optionally only some `sample_id`s.
pub fn locomo(file: &Path, only: Option<&[String]>) -> Result<Vec<Conversation>, EvalError> {
    let root: Value =
        serde_json::from_slice(&read_file(file)?).map_err(|e| EvalError::json(file, "", e))?;
    let convs = root
        .as_array()
        .ok_or_else(|| EvalError::data(file, "top level should be a list of conversations"))?;
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for (n, c) in convs.iter().enumerate() {
        let id = c
            .get("sample_id")
            .and_then(Value::as_str)
            .ok_or_else(|| EvalError::data(file, format!("conversation [{n}]: no `sample_id`")))?;
        seen.push(id.to_owned());
        if only.is_some_and(|o| !o.iter().any(|x| x == id)) {
            continue;
        }
        out.push(locomo_conversation(file, c, id)?);
    }
    if let Some(o) = only
        && let Some(missing) = o.iter().find(|x| !seen.contains(x))
    {
        return Err(EvalError::NothingSelected(format!(
            "no LoCoMo conversation {missing:?} in {}",
            file.display()
        )));
    }
    Ok(out)
}

fn locomo_conversation(file: &Path, c: &Value, id: &str) -> Result<Conversation, EvalError> {
    let conv = c
        .get("conversation")
        .and_then(Value::as_object)
        .ok_or_else(|| EvalError::data(file, format!("{id}: no `conversation` object")))?;
    let mut numbered: Vec<(u32, Session)> = Vec::new();
    let mut turn_of: BTreeMap<String, MessageRef> = BTreeMap::new();
    let mut last_created: Option<i64> = None;
    for (key, value) in conv {
        let Some(n) = key
            .strip_prefix("session_")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let ctx = format!("{id} {key}");
        let raw = conv
            .get(&format!("{key}_date_time"))
            .and_then(Value::as_str)
            .ok_or_else(|| EvalError::data(file, format!("{ctx}: no `{key}_date_time`")))?;
        let (created, _) = crate::locomo::parse_date(raw)
            .ok_or_else(|| EvalError::data(file, format!("{ctx}: cannot read date {raw:?}")))?;
        last_created = last_created.max(day_seconds(&created));
        let turns: Vec<crate::locomo::Turn> =
            serde_json::from_value(value.clone()).map_err(|e| EvalError::json(file, &ctx, e))?;
        let sid = format!("{id}-s{n:02}");
        let mut messages = Vec::with_capacity(turns.len());
        for (i, t) in turns.iter().enumerate() {
            let content = match t.blip_caption.as_deref().filter(|c| !c.trim().is_empty()) {
                Some(cap) => format!("{} (image: {})", t.text.trim_end(), cap.trim()),
                None => t.text.clone(),
            };
            messages.push(Message {
                role: "user".into(),
                name: Some(t.speaker.clone()),
                content,
            });
            for d in crate::locomo::normalise_evidence(&t.dia_id) {
                turn_of.insert(
                    d,
                    MessageRef {
                        session: sid.clone(),
                        index: i,
                    },
                );
            }
        }
        numbered.push((
            n,
            Session {
                id: sid,
                date: day_of(&created),
                messages,
            },
        ));
    }
    numbered.sort_by_key(|(n, _)| *n);
    let sessions: Vec<Session> = numbered.into_iter().map(|(_, s)| s).collect();
    if sessions.is_empty() {
        return Err(EvalError::data(file, format!("{id}: no session_N lists")));
    }
    // Asked at the last session's time, as the read-path harness asks.
    let asked_at = last_created;
    let qa: Vec<crate::locomo::Qa> = serde_json::from_value(
        c.get("qa")
            .cloned()
            .ok_or_else(|| EvalError::data(file, format!("{id}: no `qa` list")))?,
    )
    .map_err(|e| EvalError::json(file, &format!("{id} qa"), e))?;
    let mut questions = Vec::new();
    let mut skipped = 0;
    for (i, q) in qa.iter().enumerate() {
        let shape = crate::locomo::category_name(q.category)
            .unwrap_or("unknown")
            .to_owned();
        let gold = if q.category == 5 {
            Gold::Unanswerable
        } else {
            let messages: BTreeSet<MessageRef> = q
                .evidence
                .iter()
                .flat_map(|e| crate::locomo::normalise_evidence(e))
                .filter_map(|d| turn_of.get(&d).cloned())
                .collect();
            if messages.is_empty() {
                skipped += 1;
                continue;
            }
            let sessions = messages.iter().map(|m| m.session.clone()).collect();
            Gold::Answerable { messages, sessions }
        };
        questions.push(Question {
            id: format!("{id}/qa{i}"),
            query: q.question.clone(),
            shape,
            asked_at,
            gold,
        });
    }
    Ok(Conversation {
        id: id.to_owned(),
        sessions,
        questions,
        facts: Vec::new(),
        beings: BTreeSet::new(),
        skipped,
    })
}

/// LongMemEval instances (S or oracle format), one conversation each.
pub fn longmemeval(file: &Path, only: Option<&[String]>) -> Result<Vec<Conversation>, EvalError> {
    let all = crate::longmemeval::read(file)?;
    if let Some(o) = only
        && let Some(missing) = o.iter().find(|x| !all.iter().any(|i| &i.question_id == *x))
    {
        return Err(EvalError::NothingSelected(format!(
            "no LongMemEval question {missing:?} in {}",
            file.display()
        )));
    }
    let mut out = Vec::new();
    for inst in all {
        if only.is_some_and(|o| !o.contains(&inst.question_id)) {
            continue;
        }
        out.push(longmemeval_instance(file, inst)?);
    }
    Ok(out)
}

fn longmemeval_instance(
    file: &Path,
    inst: crate::longmemeval::Instance,
) -> Result<Conversation, EvalError> {
    let ctx = &inst.question_id;
    if inst.haystack_sessions.len() != inst.haystack_session_ids.len()
        || inst.haystack_dates.len() != inst.haystack_session_ids.len()
    {
        return Err(EvalError::data(
            file,
            format!("{ctx}: haystack ids, dates and sessions differ in length"),
        ));
    }
    let mut sessions = Vec::new();
    let mut messages_gold = BTreeSet::new();
    for ((sid, date), turns) in inst
        .haystack_session_ids
        .iter()
        .zip(&inst.haystack_dates)
        .zip(&inst.haystack_sessions)
    {
        let day = crate::longmemeval::parse_date(date)
            .map(|ts| day_of(&ts))
            .ok_or_else(|| {
                EvalError::data(
                    file,
                    format!("{ctx}: session {sid}: cannot read date {date:?}"),
                )
            })?;
        let mut messages = Vec::with_capacity(turns.len());
        for (i, t) in turns.iter().enumerate() {
            if t.role == "user" && t.has_answer == Some(true) {
                messages_gold.insert(MessageRef {
                    session: sid.clone(),
                    index: i,
                });
            }
            messages.push(Message {
                role: t.role.clone(),
                name: None,
                content: t.content.clone(),
            });
        }
        sessions.push(Session {
            id: sid.clone(),
            date: day,
            messages,
        });
    }
    let abstain = inst.question_id.ends_with("_abs");
    let gold = if abstain {
        Gold::Unanswerable
    } else {
        let sessions: BTreeSet<String> = inst.answer_session_ids.iter().cloned().collect();
        Gold::Answerable {
            messages: messages_gold,
            sessions,
        }
    };
    let asked_at = inst
        .question_date
        .as_deref()
        .and_then(crate::longmemeval::parse_date)
        .and_then(|d| day_seconds(&d))
        .or_else(|| last_day(&sessions));
    // The same session id twice in one haystack would be one transcript path.
    let mut ids = BTreeSet::new();
    sessions.retain(|s| ids.insert((s.date.clone(), s.id.clone())));
    Ok(Conversation {
        id: inst.question_id.clone(),
        questions: vec![Question {
            id: inst.question_id,
            query: inst.question,
            shape: inst.question_type,
            asked_at,
            gold,
        }],
        sessions,
        facts: Vec::new(),
        beings: BTreeSet::new(),
        skipped: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_beings_are_the_people_and_pets_the_data_s_store_types() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let facts = dir.path().join("memories/facts/people");
        std::fs::create_dir_all(&facts).expect("folders");
        std::fs::write(
            facts.join("orla.md"),
            "---\ntitle: Orla Quist\nentities: [\"Orla Quist (person)\", \"Eastfield School (org)\", \"Tansy (pet)\", \"Dr Ines Ferro (person)\", \"Restic\"]\n---\nPartner.\n",
        )
        .expect("memory");
        let beings = beings_of(dir.path()).expect("beings");
        let want: BTreeSet<String> = ["orla", "quist", "tansy", "ines", "ferro"]
            .map(str::to_owned)
            .into();
        assert_eq!(beings, want);
        // No store: nothing to ask.
        let bare = tempfile::tempdir().expect("temporary folder");
        assert!(beings_of(bare.path()).expect("beings").is_empty());
    }
}
