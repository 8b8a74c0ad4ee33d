//! LongMemEval (`longmemeval_s-dev.json`): one store per question, user turns as the key.
//!
//! Generated memories (the official retrieval protocol indexes user turns only):
//! - session (default): `facts/lme/<h>.md`, body = the session's user turns joined by blank
//!   lines, title = the start of the first user turn. Sessions without user turns are left out.
//! - turn: `facts/lme/<h>/tN.md` for the user turn at index N-1 of the session (the official
//!   id is `<session_id>_N`), body = the turn.
//!
//! `<h>` is the first 16 hex digits of blake3(session id): the ids say `answer_...` for
//! evidence sessions, and the path must not leak that. `created` = `valid_from` = the
//! session's `haystack_dates` entry (read as UTC); the date is kept out of the title and body
//! because the same session carries different dates in different questions, and identical
//! text lets an engine's embedding cache share it. `source: "longmemeval:<h>"`.
//!
//! Gold follows `src/retrieval/run_retrieval.py`: at session level, sessions of
//! `answer_session_ids` that have a user turn with `has_answer: true`; at turn level, the user
//! turns with `has_answer: true`. `_abs` questions are unanswerable (abstention only).
//! Questions without a user-side `has_answer` turn are skipped (they are answerable from
//! assistant turns only). A session id repeated inside one haystack (same content, other
//! date) is indexed once, at its first date.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::memfile::{Front, render, title};
use crate::metrics::Label;
use crate::run::{Dataset, EvalQuery, Granularity, Group, check_only, selected};
use crate::{Doc, EvalError, read_file};

#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
    #[serde(default)]
    pub has_answer: Option<bool>,
}

/// One instance, with the official field names.
#[derive(Debug, Clone, Deserialize)]
pub struct Instance {
    pub question_id: String,
    pub question_type: String,
    pub question: String,
    /// String or int.
    #[serde(default)]
    pub answer: Option<Value>,
    #[serde(default)]
    pub question_date: Option<String>,
    pub haystack_session_ids: Vec<String>,
    pub haystack_dates: Vec<String>,
    pub haystack_sessions: Vec<Vec<Message>>,
    pub answer_session_ids: Vec<String>,
}

impl Instance {
    pub fn is_abstention(&self) -> bool {
        self.question_id.ends_with("_abs")
    }
}

/// `"2023/05/20 (Sat) 03:02"` -> `2023-05-20T03:02:00Z` (the weekday is ignored; read as UTC).
pub fn parse_date(s: &str) -> Option<String> {
    let mut parts = s.split_whitespace();
    let day = parts.next()?;
    let time = parts.find(|p| p.contains(':'))?;
    let dt = jiff::civil::DateTime::strptime("%Y/%m/%d %H:%M", format!("{day} {time}")).ok()?;
    Some(
        dt.to_zoned(jiff::tz::TimeZone::UTC)
            .ok()?
            .timestamp()
            .to_string(),
    )
}

/// The path key of a session id.
pub fn session_key(session_id: &str) -> String {
    let h = blake3::hash(session_id.as_bytes()).to_hex();
    h.as_str()[..16].to_owned()
}

/// Parses the whole file (one pass with serde).
pub fn read(file: &Path) -> Result<Vec<Instance>, EvalError> {
    let bytes = read_file(file)?;
    serde_json::from_slice(&bytes).map_err(|e| EvalError::json(file, "", e))
}

/// Loads the file and builds one group per selected question.
pub fn load(
    file: &Path,
    granularity: Granularity,
    only: Option<&[String]>,
) -> Result<Dataset, EvalError> {
    let instances = read(file)?;
    let present: Vec<&str> = instances.iter().map(|i| i.question_id.as_str()).collect();
    check_only(only, &present, "LongMemEval question")?;
    let mut notes = BTreeMap::new();
    let mut groups = Vec::new();
    for inst in &instances {
        if selected(only, &inst.question_id) {
            groups.push(build(file, inst, granularity, &mut notes)?);
        }
    }
    Ok(Dataset {
        name: "longmemeval".into(),
        granularity: Some(granularity),
        groups,
        notes,
    })
}

/// Builds the store and the query of one instance.
pub fn build(
    file: &Path,
    inst: &Instance,
    granularity: Granularity,
    notes: &mut BTreeMap<String, u64>,
) -> Result<Group, EvalError> {
    let mut note = |k: &str| *notes.entry(k.to_owned()).or_default() += 1;
    let qid = &inst.question_id;
    let n = inst.haystack_session_ids.len();
    if inst.haystack_dates.len() != n || inst.haystack_sessions.len() != n {
        return Err(EvalError::data(
            file,
            format!(
                "{qid}: haystack_session_ids ({n}), haystack_dates ({}) and haystack_sessions ({}) differ in length",
                inst.haystack_dates.len(),
                inst.haystack_sessions.len()
            ),
        ));
    }
    let answer_sessions: BTreeSet<&str> =
        inst.answer_session_ids.iter().map(String::as_str).collect();
    let mut seen = BTreeSet::new();
    let mut docs = Vec::new();
    let mut ids = BTreeMap::new();
    let mut gold = Vec::new();
    let mut any_user_evidence = false;
    for ((sid, date), session) in inst
        .haystack_session_ids
        .iter()
        .zip(&inst.haystack_dates)
        .zip(&inst.haystack_sessions)
    {
        if !seen.insert(sid.as_str()) {
            note("longmemeval_repeated_session_ids");
            continue;
        }
        let created = parse_date(date).ok_or_else(|| {
            EvalError::data(
                file,
                format!("{qid} session {sid}: cannot read date {date:?}"),
            )
        })?;
        let key = session_key(sid);
        let user: Vec<(usize, &Message)> = session
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == "user")
            .collect();
        let session_evidence = user.iter().any(|(_, m)| m.has_answer == Some(true));
        any_user_evidence |= session_evidence;
        if user.is_empty() {
            note("longmemeval_sessions_without_user_turns");
            continue;
        }
        match granularity {
            Granularity::Session => {
                let path = format!("facts/lme/{key}.md");
                let body: Vec<&str> = user.iter().map(|(_, m)| m.content.trim()).collect();
                let front = Front {
                    title: title("", user[0].1.content.as_str(), 60),
                    entities: vec![],
                    created: Some(&created),
                    source: format!("longmemeval:{key}"),
                };
                docs.push(Doc {
                    path: path.clone(),
                    content: render(&front, &body.join("\n\n")),
                });
                if session_evidence && answer_sessions.contains(sid.as_str()) {
                    gold.push(path.clone());
                }
                ids.insert(path, sid.clone());
            }
            Granularity::Turn => {
                for (i, m) in &user {
                    let path = format!("facts/lme/{key}/t{}.md", i + 1);
                    let front = Front {
                        title: title("", &m.content, 60),
                        entities: vec![],
                        created: Some(&created),
                        source: format!("longmemeval:{key}:{}", i + 1),
                    };
                    docs.push(Doc {
                        path: path.clone(),
                        content: render(&front, &m.content),
                    });
                    if m.has_answer == Some(true) {
                        gold.push(path.clone());
                    }
                    ids.insert(path, format!("{sid}_{}", i + 1));
                }
            }
        }
    }
    for a in &inst.answer_session_ids {
        if !seen.contains(a.as_str()) {
            return Err(EvalError::data(
                file,
                format!("{qid}: answer session {a:?} is not in the haystack"),
            ));
        }
    }
    let label = if inst.is_abstention() {
        Label::Unanswerable
    } else if !any_user_evidence || gold.is_empty() {
        note("longmemeval_no_user_evidence_skipped");
        Label::Skipped
    } else {
        Label::answerable(gold)
    };
    let query = EvalQuery {
        id: qid.clone(),
        query: inst.question.clone(),
        shape: inst.question_type.clone(),
        label,
        asked_at: inst
            .question_date
            .as_deref()
            .and_then(parse_date)
            .and_then(|s| s.parse::<jiff::Timestamp>().ok())
            .map(|t| t.as_second()),
    };
    Ok(Group {
        id: qid.clone(),
        docs,
        queries: vec![query],
        ids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{RunOptions, run_dataset, testing::Overlap};

    fn msg(role: &str, content: &str, has: Option<bool>) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
            has_answer: has,
        }
    }

    fn instance() -> Instance {
        Instance {
            question_id: "q1".into(),
            question_type: "single-session-user".into(),
            question: "what is my hamster called".into(),
            answer: None,
            question_date: None,
            haystack_session_ids: vec![
                "s_a".into(),
                "answer_x_1".into(),
                "s_a".into(),
                "s_b".into(),
            ],
            haystack_dates: vec![
                "2023/05/20 (Sat) 03:02".into(),
                "2023/05/21 (Sun) 10:00".into(),
                "2023/05/22 (Mon) 10:00".into(),
                "2023/05/23 (Tue) 10:00".into(),
            ],
            haystack_sessions: vec![
                vec![msg("user", "hello", None), msg("assistant", "hi", None)],
                vec![
                    msg("user", "I like tea", Some(false)),
                    msg("assistant", "ok", None),
                    msg("user", "My hamster is Bob", Some(true)),
                ],
                vec![msg("user", "hello", None)],
                vec![msg("assistant", "only me", None)],
            ],
            answer_session_ids: vec!["answer_x_1".into()],
        }
    }

    #[test]
    fn session_and_turn_gold() {
        let p = Path::new("x.json");
        let mut notes = BTreeMap::new();
        let g = build(p, &instance(), Granularity::Session, &mut notes).expect("build");
        assert_eq!(g.docs.len(), 2);
        let gold = format!("facts/lme/{}.md", session_key("answer_x_1"));
        assert_eq!(g.queries[0].label.gold(), std::slice::from_ref(&gold));
        assert!(!gold.contains("answer"));
        assert_eq!(g.ids[&gold], "answer_x_1");
        let d = g.docs.iter().find(|d| d.path == gold).expect("doc");
        assert!(d.content.contains("created: 2023-05-21T10:00:00Z\n"));
        assert!(d.content.ends_with("I like tea\n\nMy hamster is Bob\n"));
        assert_eq!(notes["longmemeval_repeated_session_ids"], 1);
        assert_eq!(notes["longmemeval_sessions_without_user_turns"], 1);

        let g = build(p, &instance(), Granularity::Turn, &mut notes).expect("build");
        assert_eq!(g.docs.len(), 3);
        let gold = format!("facts/lme/{}/t3.md", session_key("answer_x_1"));
        assert_eq!(g.queries[0].label.gold(), std::slice::from_ref(&gold));
        assert_eq!(g.ids[&gold], "answer_x_1_3");

        let mut abs = instance();
        abs.question_id = "q1_abs".into();
        assert_eq!(
            build(p, &abs, Granularity::Session, &mut notes)
                .expect("abs")
                .queries[0]
                .label,
            Label::Unanswerable
        );

        let mut assistant_only = instance();
        assistant_only.haystack_sessions[1][2].has_answer = Some(false);
        let g = build(p, &assistant_only, Granularity::Session, &mut notes).expect("skip");
        assert_eq!(g.queries[0].label, Label::Skipped);

        let mut bad = instance();
        bad.haystack_dates.pop();
        assert!(
            build(p, &bad, Granularity::Session, &mut notes)
                .expect_err("len")
                .to_string()
                .contains("differ in length")
        );
        let mut bad = instance();
        bad.answer_session_ids.push("answer_nowhere".into());
        assert!(build(p, &bad, Granularity::Session, &mut notes).is_err());
    }

    #[test]
    fn malformed_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("lme.json");
        std::fs::write(&f, r#"[{"question_id":"a","question_type":"t","question":"q","haystack_session_ids":[],"haystack_dates":[],"haystack_sessions":[]}]"#).expect("w");
        let e = read(&f).expect_err("missing").to_string();
        assert!(
            e.contains("lme.json") && e.contains("missing field `answer_session_ids`"),
            "{e}"
        );
        std::fs::write(&f, r#"[{"question_id":"a","#).expect("w");
        assert!(
            read(&f)
                .expect_err("eof")
                .to_string()
                .contains("truncated JSON")
        );
        std::fs::write(&f, r#"[{"question_id":1}]"#).expect("w");
        assert!(
            read(&f)
                .expect_err("type")
                .to_string()
                .contains("invalid type")
        );
        assert!(matches!(
            read(&dir.path().join("none.json")),
            Err(EvalError::Read { .. })
        ));
    }

    #[test]
    fn dates() {
        assert_eq!(
            parse_date("2023/05/20 (Sat) 03:02").as_deref(),
            Some("2023-05-20T03:02:00Z")
        );
        assert_eq!(
            parse_date("2023/05/20 (Mon) 23:59").as_deref(),
            Some("2023-05-20T23:59:00Z")
        );
        assert_eq!(parse_date("May 20"), None);
    }

    #[test]
    fn dev_split() {
        let Some(dir) = crate::data_root::data_dir("longmemeval") else {
            return;
        };
        let file = dir.join("longmemeval_s-dev.json");
        let f = file.as_path();
        let instances = read(f).expect("read");
        assert_eq!(instances.len(), 98);
        let mut notes = BTreeMap::new();
        let mut counts = BTreeMap::new();
        let mut texts: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for inst in &instances {
            let g = build(f, inst, Granularity::Session, &mut notes).expect("build");
            *counts.entry(g.queries[0].label.kind()).or_insert(0) += 1;
            for d in &g.docs {
                let (_, body) = crate::memfile::split(&d.content).expect("split");
                texts
                    .entry(d.path.clone())
                    .or_default()
                    .insert(body.to_owned());
            }
        }
        assert_eq!(counts["answerable"], 82);
        assert_eq!(counts["unanswerable"], 5);
        assert_eq!(counts["skipped"], 11);
        assert_eq!(notes["longmemeval_repeated_session_ids"], 3);
        // A session shared by several questions has one path and one body.
        assert!(texts.values().all(|t| t.len() == 1));
        // Run one question end to end, at turn granularity.
        let ds = load(
            f,
            Granularity::Turn,
            Some(&[instances[0].question_id.clone()]),
        )
        .expect("load");
        let mut b = Overlap::default();
        let r = run_dataset(&mut b, ds, &RunOptions::default()).expect("run");
        assert_eq!(r.metrics.queries, 1);
        assert_eq!(r.granularity.as_deref(), Some("turn"));
    }
}
