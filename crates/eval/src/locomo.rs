//! LoCoMo (`locomo-dev.json`): one store per conversation, each turn (or session) a memory.
//!
//! Generated memories:
//! - turn: `facts/<conv>/sNN/<dia-id>.md` (e.g. `facts/conv-26/s01/d1-3.md`), title
//!   `<speaker>: <start of text>`, `entities: ["<speaker> (person)"]`, `created` = `valid_from` =
//!   the session's date (read as UTC), `source: "locomo:<sample_id>:<dia_id>"`, body
//!   `[8 May 2023] Caroline: <text> (image: <blip_caption>)`. Questions name speakers in the
//!   third person while turns are in the first, so the speaker is written into the body.
//!   When the turn before it is a question, it follows as a quote (`> Melanie: What did you
//!   paint?`): "A sunset." answers nothing on its own. Measured: recall@10 0.753 → 0.797 and
//!   P@1 0.398 → 0.436 on the dev set; quoting every previous turn, not only questions, reached
//!   recall@10 0.793 but cost P@1 (0.365). A turn of fewer than 30 words (`SHORT_TURN_WORDS`,
//!   three turns in four) also quotes the turn before it whatever it is, and after a
//!   question the turn the question is about ("Three times a week" quotes John's "my kids
//!   are getting excited about staying active!" and Maria's "How often do you all workout
//!   together?"). A quoted turn is cut to its last 15 words (`QUOTE_WORDS`), then its
//!   image caption: a reply answers the end of a turn, and a whole quoted turn drowns the
//!   reply's own words. Session 4 (15 words, whole turns): recall@10 0.812 → 0.826; session
//!   5 (30 words, cut to 15): 0.830 → 0.849, with the read path of each (BENCHMARKS.md).
//! - session: `facts/<conv>/sNN.md`, a `[date] Conversation between A and B.` line, then one
//!   `<speaker>: <text>` line per turn; `source: "locomo:<sample_id>:session_N"`.
//!
//! Gold: each question's `evidence`, normalised with `D:?(\d+):0*(\d+)` (which splits
//! `"D8:6; D9:17"`, reads `"D:11:26"` as `D11:26` and `"D30:05"` as `D30:5`; strings with no
//! id, such as a bare `"D"`, are dropped), deduplicated, and ids that name no turn of the
//! conversation dropped. At session level gold is the sessions holding the evidence, and
//! fractional recall counts evidence ids whose session was retrieved. Categories 1-4 are
//! answerable; a question left with no evidence is skipped (counted in `notes`). Category 5
//! is unanswerable (scored for abstention only).
//!
//! Questions are asked at the conversation's last session (`asked_at`): "in June" is the
//! June before it, not the June before the clock.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

use gitloom_model::slugify;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::memfile::{Front, render, title};
use crate::metrics::Label;
use crate::probe::dedup;
use crate::run::{Dataset, EvalQuery, Granularity, Group, check_only, selected};
use crate::{Doc, EvalError, read_file};

/// A turn shorter than this many words is indexed with the turn before it (and,
/// when that one is a question, the turn the question is about). Three turns in four
/// of the dev set are shorter.
const SHORT_TURN_WORDS: usize = 30;

/// How much of a turn is quoted as another's context: its last this-many words.
const QUOTE_WORDS: usize = 15;

/// `"<speaker>: <last QUOTE_WORDS words of said>"`, with `…` where words were left out.
fn quote_end(speaker: &str, said: &str) -> String {
    let words: Vec<&str> = said.split_whitespace().collect();
    let cut = words.len().saturating_sub(QUOTE_WORDS);
    let ellipsis = if cut > 0 { "… " } else { "" };
    format!("{speaker}: {ellipsis}{}", words[cut..].join(" "))
}

/// A turn of a session.
#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    pub speaker: String,
    pub dia_id: String,
    pub text: String,
    #[serde(default)]
    pub blip_caption: Option<String>,
}

/// One `qa` item.
#[derive(Debug, Clone, Deserialize)]
pub struct Qa {
    pub question: String,
    #[serde(default)]
    pub evidence: Vec<String>,
    pub category: u8,
    /// String or int; absent on category 5.
    #[serde(default)]
    pub answer: Option<Value>,
    #[serde(default)]
    pub adversarial_answer: Option<Value>,
}

/// Category number -> the name used in `by_shape`.
pub fn category_name(c: u8) -> Option<&'static str> {
    Some(match c {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => return None,
    })
}

fn dia_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"D:?(\d+):0*(\d+)").unwrap_or_else(|e| panic!("static regex: {e}"))
    })
}

/// Every dia_id in an evidence string, normalised to `D<session>:<turn>`.
pub fn normalise_evidence(s: &str) -> Vec<String> {
    dia_re()
        .captures_iter(s)
        .filter_map(|c| {
            let sess: u32 = c.get(1)?.as_str().parse().ok()?;
            let turn: u32 = c.get(2)?.as_str().parse().ok()?;
            Some(format!("D{sess}:{turn}"))
        })
        .collect()
}

/// `"1:56 pm on 8 May, 2023"` -> (`2023-05-08T13:56:00Z`, `8 May 2023`). Read as UTC.
pub fn parse_date(s: &str) -> Option<(String, String)> {
    let dt = jiff::civil::DateTime::strptime("%I:%M %p on %d %B, %Y", s.trim()).ok()?;
    let ts = dt.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
    Some((ts.to_string(), dt.strftime("%-d %B %Y").to_string()))
}

struct Session {
    n: u32,
    created: String,
    day: String,
    turns: Vec<Turn>,
}

fn str_field<'a>(file: &Path, obj: &'a Value, key: &str, ctx: &str) -> Result<&'a str, EvalError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(EvalError::data(
            file,
            format!("{ctx}: field `{key}` should be a string, found {other}"),
        )),
        None => Err(EvalError::data(
            file,
            format!("{ctx}: missing field `{key}`"),
        )),
    }
}

/// What a turn's memory holds besides the turn itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TurnContext {
    /// The turn alone, as said (speaker, date, image caption): what a user would
    /// write, and what the read path is scored on by default.
    #[default]
    Plain,
    /// Also the end of the turn before it when this turn is short or follows a
    /// question (see the module docs). That is conversation chunking, which is
    /// ingestion's work (`gitloom ingest` with named speakers); kept to compare
    /// with earlier figures.
    Quoted,
}

/// Loads the file and builds one group per selected conversation.
pub fn load(
    file: &Path,
    granularity: Granularity,
    context: TurnContext,
    only: Option<&[String]>,
) -> Result<Dataset, EvalError> {
    let bytes = read_file(file)?;
    let root: Value = serde_json::from_slice(&bytes).map_err(|e| EvalError::json(file, "", e))?;
    let convs = root
        .as_array()
        .ok_or_else(|| EvalError::data(file, "top level should be a list of conversations"))?;
    let mut notes: BTreeMap<String, u64> = BTreeMap::new();
    let mut ids = Vec::new();
    for (i, c) in convs.iter().enumerate() {
        ids.push(str_field(
            file,
            c,
            "sample_id",
            &format!("conversation [{i}]"),
        )?);
    }
    check_only(only, &ids, "LoCoMo conversation")?;
    let mut groups = Vec::new();
    for (c, sample_id) in convs.iter().zip(ids) {
        if !selected(only, sample_id) {
            continue;
        }
        groups.push(load_conversation(
            file,
            c,
            sample_id,
            granularity,
            context,
            &mut notes,
        )?);
    }
    Ok(Dataset {
        name: "locomo".into(),
        granularity: Some(granularity),
        groups,
        notes,
    })
}

fn load_conversation(
    file: &Path,
    c: &Value,
    sample_id: &str,
    granularity: Granularity,
    context: TurnContext,
    notes: &mut BTreeMap<String, u64>,
) -> Result<Group, EvalError> {
    let conv = c
        .get("conversation")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            EvalError::data(
                file,
                format!("{sample_id}: missing or non-object field `conversation`"),
            )
        })?;
    let sessions = sessions_of(file, conv, sample_id)?;
    let date_keys = conv.keys().filter(|k| k.ends_with("_date_time")).count();
    note(
        notes,
        "locomo_date_keys_without_session",
        date_keys.saturating_sub(sessions.len()) as u64,
    );
    let speakers: Vec<String> = ["speaker_a", "speaker_b"]
        .iter()
        .filter_map(|k| conv.get(*k).and_then(Value::as_str).map(str::to_owned))
        .collect();
    let written = Written {
        file,
        sample_id,
        speakers: &speakers,
        granularity,
        context,
    };
    let docs = written.documents(&sessions, notes)?;
    let queries = questions(
        file,
        c,
        sample_id,
        granularity,
        &sessions,
        &docs.where_is,
        notes,
    )?;
    Ok(Group {
        id: sample_id.to_owned(),
        docs: docs.docs,
        queries,
        ids: docs.ids,
    })
}

/// Adds `n` to the note `k` (a count of what the loader rewrote or dropped).
fn note(notes: &mut BTreeMap<String, u64>, k: &str, n: u64) {
    if n > 0 {
        *notes.entry(k.to_owned()).or_default() += n;
    }
}

/// The conversation's `session_N` lists with their dates, in N order.
fn sessions_of(
    file: &Path,
    conv: &serde_json::Map<String, Value>,
    sample_id: &str,
) -> Result<Vec<Session>, EvalError> {
    let session_re =
        Regex::new(r"^session_(\d+)$").map_err(|e| EvalError::data(file, e.to_string()))?;
    let mut sessions = Vec::new();
    for (key, value) in conv {
        let Some(n) = session_re
            .captures(key)
            .and_then(|m| m.get(1))
            .and_then(|m| m.as_str().parse::<u32>().ok())
        else {
            continue;
        };
        let ctx = format!("{sample_id} {key}");
        let date_key = format!("{key}_date_time");
        let raw = match conv.get(&date_key) {
            Some(Value::String(s)) => s,
            _ => {
                return Err(EvalError::data(
                    file,
                    format!("{ctx}: missing or non-string `{date_key}`"),
                ));
            }
        };
        let (created, day) = parse_date(raw).ok_or_else(|| {
            EvalError::data(
                file,
                format!(
                    "{ctx}: cannot read date {raw:?} (expected e.g. \"1:56 pm on 8 May, 2023\")"
                ),
            )
        })?;
        let turns: Vec<Turn> =
            serde_json::from_value(value.clone()).map_err(|e| EvalError::json(file, &ctx, e))?;
        sessions.push(Session {
            n,
            created,
            day,
            turns,
        });
    }
    sessions.sort_by_key(|s| s.n);
    if sessions.is_empty() {
        return Err(EvalError::data(
            file,
            format!("{sample_id}: conversation has no session_N lists"),
        ));
    }
    Ok(sessions)
}

/// How one conversation's memories are written.
struct Written<'a> {
    file: &'a Path,
    sample_id: &'a str,
    speakers: &'a [String],
    granularity: Granularity,
    context: TurnContext,
}

/// A conversation's memory files, their gold ids, and where each turn went.
struct Documents {
    docs: Vec<Doc>,
    ids: BTreeMap<String, String>,
    /// dia_id → (turn path, session path).
    where_is: BTreeMap<String, (String, String)>,
}

/// What the next turns quote of the turns before them (see [`Written::turn_doc`]).
#[derive(Default)]
struct Quotes {
    last_turn: Option<String>,
    before_last: Option<String>,
    /// Whether the last turn's own words (not its image caption) end in a question.
    last_asked: bool,
}

impl Written<'_> {
    /// One memory per turn, or per session, by the granularity.
    fn documents(
        &self,
        sessions: &[Session],
        notes: &mut BTreeMap<String, u64>,
    ) -> Result<Documents, EvalError> {
        let conv_slug = slugify(self.sample_id, 60);
        let mut out = Documents {
            docs: Vec::new(),
            ids: BTreeMap::new(),
            where_is: BTreeMap::new(),
        };
        let mut duplicates = 0;
        for s in sessions {
            let session_path = format!("facts/{conv_slug}/s{:02}.md", s.n);
            let mut lines = vec![format!(
                "[{}] Conversation between {}.",
                s.day,
                self.speakers.join(" and ")
            )];
            let mut who = BTreeSet::new();
            let mut quotes = Quotes::default();
            for t in &s.turns {
                let dia = normalise_evidence(&t.dia_id);
                let [dia] = dia.as_slice() else {
                    return Err(EvalError::data(
                        self.file,
                        format!(
                            "{} session_{}: turn dia_id {:?} is not of the form D<session>:<turn>",
                            self.sample_id, s.n, t.dia_id
                        ),
                    ));
                };
                let turn_path = format!("facts/{conv_slug}/s{:02}/{}.md", s.n, slugify(dia, 40));
                if out.where_is.contains_key(dia) {
                    duplicates += 1;
                    continue;
                }
                out.where_is
                    .insert(dia.clone(), (turn_path.clone(), session_path.clone()));
                who.insert(t.speaker.clone());
                match self.granularity {
                    Granularity::Turn => {
                        out.docs
                            .push(self.turn_doc(s, t, dia, &turn_path, &mut quotes));
                        out.ids.insert(turn_path, dia.clone());
                    }
                    Granularity::Session => lines.push(turn_text(t)),
                }
            }
            if self.granularity == Granularity::Session && !s.turns.is_empty() {
                let names: Vec<&str> = who.iter().map(String::as_str).collect();
                let front = Front {
                    title: format!("{}, session {} ({})", names.join(" and "), s.n, s.day),
                    entities: who.iter().map(|w| format!("{w} (person)")).collect(),
                    created: Some(&s.created),
                    source: format!("locomo:{}:session_{}", self.sample_id, s.n),
                };
                out.docs.push(Doc {
                    path: session_path.clone(),
                    content: render(&front, &lines.join("\n")),
                });
                out.ids.insert(session_path, format!("session_{}", s.n));
            }
        }
        note(notes, "locomo_duplicate_dia_ids", duplicates);
        Ok(out)
    }

    /// A turn's memory. Context, quoted: the turn it answers ("A sunset." means nothing
    /// without "What did you paint?"), and for a short turn also what it reacts to
    /// ("Three times a week" needs "How often do you work out?" and the workouts that
    /// question is about). Only the end of a quoted turn: that is what a reply
    /// responds to, and a whole turn would speak louder than the reply's own words.
    fn turn_doc(
        &self,
        s: &Session,
        t: &Turn,
        dia: &str,
        turn_path: &str,
        quotes: &mut Quotes,
    ) -> Doc {
        let (previous, earlier, asked) = quotes.next(t);
        let front = Front {
            title: title(&format!("{}: ", t.speaker), &t.text, 60),
            entities: vec![format!("{} (person)", t.speaker)],
            created: Some(&s.created),
            source: format!("locomo:{}:{dia}", self.sample_id),
        };
        let short = t.text.split_whitespace().count() < SHORT_TURN_WORDS;
        let mut quoted: Vec<String> = Vec::new();
        let quoting = self.context == TurnContext::Quoted;
        if quoting && asked && short {
            quoted.extend(earlier);
        }
        if quoting && (asked || short) {
            quoted.extend(previous);
        }
        let text = turn_text(t);
        let body = if quoted.is_empty() {
            format!("[{}] {text}", s.day)
        } else {
            format!("[{}] {text}\n\n> {}", s.day, quoted.join("\n>\n> "))
        };
        Doc {
            path: turn_path.to_owned(),
            content: render(&front, &body),
        }
    }
}

impl Quotes {
    /// Moves past turn `t`; returns the turn before it and the one before that (as
    /// quoted), and whether the turn before it asked a question.
    fn next(&mut self, t: &Turn) -> (Option<String>, Option<String>, bool) {
        // How the next turns quote this one: the end of its words (a question is asked
        // last), then the image it shared, whole (a reply often reacts to the picture).
        let mut quote = quote_end(&t.speaker, &t.text);
        if let Some(cap) = caption(t) {
            quote.push_str(&format!(" (image: {cap})"));
        }
        let previous = self.last_turn.replace(quote);
        let earlier = std::mem::replace(&mut self.before_last, previous.clone());
        let asked = std::mem::replace(&mut self.last_asked, t.text.trim_end().ends_with('?'));
        (previous, earlier, asked)
    }
}

/// The turn's image caption, if it has one.
fn caption(t: &Turn) -> Option<&str> {
    t.blip_caption
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

/// A turn as written: its speaker, its words and the image it shared.
fn turn_text(t: &Turn) -> String {
    let mut text = format!("{}: {}", t.speaker, t.text.trim());
    if let Some(cap) = caption(t) {
        text.push_str(&format!(" (image: {cap})"));
    }
    text
}

/// The conversation's questions, each with its gold memories (the turns or sessions
/// its evidence names); category 5 is unanswerable. They were written after the
/// conversation: they are asked at its last session ("in June" is the June before
/// it, not the one before the clock).
fn questions(
    file: &Path,
    c: &Value,
    sample_id: &str,
    granularity: Granularity,
    sessions: &[Session],
    where_is: &BTreeMap<String, (String, String)>,
    notes: &mut BTreeMap<String, u64>,
) -> Result<Vec<EvalQuery>, EvalError> {
    let qa = c.get("qa").and_then(Value::as_array).ok_or_else(|| {
        EvalError::data(file, format!("{sample_id}: missing or non-list field `qa`"))
    })?;
    let asked_at = sessions
        .iter()
        .filter_map(|s| s.created.parse::<jiff::Timestamp>().ok())
        .max()
        .map(|t| t.as_second());
    let mut queries = Vec::new();
    for (i, item) in qa.iter().enumerate() {
        let ctx = format!("{sample_id} qa[{i}]");
        let q: Qa =
            serde_json::from_value(item.clone()).map_err(|e| EvalError::json(file, &ctx, e))?;
        let shape = category_name(q.category).ok_or_else(|| {
            EvalError::data(file, format!("{ctx}: unknown category {}", q.category))
        })?;
        let label = if q.category == 5 {
            Label::Unanswerable
        } else {
            gold_of(&q, granularity, where_is, notes)
        };
        queries.push(EvalQuery {
            id: format!("{sample_id}:q{i}"),
            query: q.question,
            shape: shape.to_owned(),
            label,
            asked_at,
        });
    }
    Ok(queries)
}

/// An answerable question's label: the memories its evidence turns are in (skipped
/// when none is known).
fn gold_of(
    q: &Qa,
    granularity: Granularity,
    where_is: &BTreeMap<String, (String, String)>,
    notes: &mut BTreeMap<String, u64>,
) -> Label {
    let mut evidence = Vec::new();
    for e in &q.evidence {
        let found = normalise_evidence(e);
        match found.as_slice() {
            [] => note(notes, "locomo_evidence_unparsable", 1),
            [one] if one != e => note(notes, "locomo_evidence_rewritten", 1),
            [_] => {}
            _ => note(notes, "locomo_evidence_split", 1),
        }
        evidence.extend(found);
    }
    let evidence = dedup(evidence);
    let known: Vec<&(String, String)> = evidence.iter().filter_map(|d| where_is.get(d)).collect();
    note(
        notes,
        "locomo_evidence_unknown_dropped",
        (evidence.len() - known.len()) as u64,
    );
    let units: Vec<String> = known
        .iter()
        .map(|(turn, session)| match granularity {
            Granularity::Turn => turn.clone(),
            Granularity::Session => session.clone(),
        })
        .collect();
    if units.is_empty() {
        note(notes, "locomo_no_evidence_skipped", 1);
        Label::Skipped
    } else {
        Label::Answerable {
            gold: dedup(units.clone()),
            units,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{RunOptions, run_locomo, testing::Overlap};

    fn data_file() -> Option<std::path::PathBuf> {
        crate::data_root::data_dir("locomo").map(|d| d.join("locomo-dev.json"))
    }

    #[test]
    fn evidence_quirks() {
        assert_eq!(normalise_evidence("D8:6; D9:17"), ["D8:6", "D9:17"]);
        assert_eq!(normalise_evidence("D:11:26"), ["D11:26"]);
        assert_eq!(normalise_evidence("D30:05"), ["D30:5"]);
        assert_eq!(
            normalise_evidence("D1:3 D1:4,D2:10"),
            ["D1:3", "D1:4", "D2:10"]
        );
        assert!(normalise_evidence("D").is_empty());
        assert_eq!(normalise_evidence("D1:10"), ["D1:10"]);
    }

    #[test]
    fn dates() {
        assert_eq!(
            parse_date("1:56 pm on 8 May, 2023"),
            Some(("2023-05-08T13:56:00Z".into(), "8 May 2023".into()))
        );
        assert_eq!(
            parse_date("12:09 am on 13 September, 2023").map(|d| d.0),
            Some("2023-09-13T00:09:00Z".into())
        );
        assert_eq!(
            parse_date("10:04 AM on 19 December, 2023").map(|d| d.0),
            Some("2023-12-19T10:04:00Z".into())
        );
        assert_eq!(parse_date("yesterday"), None);
    }

    #[test]
    fn malformed_files_name_the_problem() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("l.json");
        let conv = |qa: &str, date: &str| {
            format!(
                r#"[{{"sample_id":"c1","conversation":{{"speaker_a":"A","speaker_b":"B","session_1_date_time":{date},
                "session_1":[{{"speaker":"A","dia_id":"D1:1","text":"hi"}}]}},"qa":{qa}}}]"#
            )
        };
        let cases = [
            (
                conv(
                    r#"[{"question":"q","evidence":["D1:1"]}]"#,
                    r#""1:56 pm on 8 May, 2023""#,
                ),
                "c1 qa[0]: missing field `category`",
            ),
            (
                conv(
                    r#"[{"question":"q","evidence":"D1:1","category":1}]"#,
                    r#""1:56 pm on 8 May, 2023""#,
                ),
                "invalid type",
            ),
            (
                conv(
                    r#"[{"question":"q","evidence":[],"category":9}]"#,
                    r#""1:56 pm on 8 May, 2023""#,
                ),
                "unknown category 9",
            ),
            (conv("[]", r#""someday""#), "cannot read date"),
            (conv("[]", "3"), "session_1_date_time"),
            (
                r#"[{"sample_id":"c1","conversation":{"session_1":["#.to_owned(),
                "truncated JSON",
            ),
            (r#"{"sample_id":"c1"}"#.to_owned(), "list of conversations"),
            (
                r#"[{"sample_id":7}]"#.to_owned(),
                "`sample_id` should be a string",
            ),
        ];
        for (text, want) in cases {
            std::fs::write(&f, &text).expect("write");
            let e = load(&f, Granularity::Turn, TurnContext::Plain, None)
                .expect_err(&text)
                .to_string();
            assert!(
                e.contains(want) && e.contains("l.json"),
                "{e:?} should mention {want:?}"
            );
        }
    }

    #[test]
    fn dev_split_counts_and_quirks() {
        let Some(file) = data_file() else { return };
        let f = file.as_path();
        let ds = load(f, Granularity::Turn, TurnContext::Plain, None).expect("load");
        assert_eq!(ds.groups.len(), 6);
        let docs: usize = ds.groups.iter().map(|g| g.docs.len()).sum();
        assert_eq!(docs, 3435);
        let qs: Vec<&EvalQuery> = ds.groups.iter().flat_map(|g| &g.queries).collect();
        assert_eq!(qs.len(), 1157);
        assert_eq!(
            qs.iter().filter(|q| q.label == Label::Unanswerable).count(),
            272
        );
        assert_eq!(qs.iter().filter(|q| q.label == Label::Skipped).count(), 2);
        assert_eq!(ds.notes.get("locomo_no_evidence_skipped"), Some(&2));
        assert_eq!(ds.notes.get("locomo_evidence_split"), Some(&1));
        assert_eq!(ds.notes.get("locomo_evidence_unparsable"), Some(&1));
        assert_eq!(ds.notes.get("locomo_evidence_rewritten"), Some(&1));
        assert_eq!(ds.notes.get("locomo_evidence_unknown_dropped"), Some(&1));
        assert_eq!(ds.notes.get("locomo_date_keys_without_session"), Some(&16));
        let g = &ds.groups[0];
        let d = g
            .docs
            .iter()
            .find(|d| d.path == "facts/conv-26/s01/d1-3.md")
            .expect("d1-3");
        assert!(
            d.content.contains("\n[8 May 2023] Caroline: "),
            "{}",
            d.content
        );
        assert!(d.content.contains("created: 2023-05-08T13:56:00Z\n"));
        assert!(d.content.contains("source: \"locomo:conv-26:D1:3\"\n"));
        assert_eq!(g.ids["facts/conv-26/s01/d1-3.md"], "D1:3");
        let painted = qs
            .iter()
            .find(|q| q.query == "What did Melanie paint recently?")
            .expect("painted");
        assert_eq!(
            painted.label.gold(),
            ["facts/conv-26/s08/d8-6.md", "facts/conv-26/s09/d9-17.md"]
        );
        // Every generated file has valid YAML frontmatter with ISO dates.
        #[derive(serde::Deserialize)]
        struct Fm {
            title: String,
            entities: Vec<String>,
            created: String,
            valid_from: String,
            source: String,
        }
        let with_caption = ds
            .groups
            .iter()
            .flat_map(|g| &g.docs)
            .filter(|d| {
                // The turn's own line, not a quoted neighbour's.
                let (_, body) = crate::memfile::split(&d.content).expect("frontmatter");
                let own = body.split_once("\n\n> ").map_or(body, |(own, _)| own);
                own.contains("(image: ")
            })
            .count();
        assert_eq!(with_caption, 758);
        for d in ds.groups.iter().flat_map(|g| &g.docs) {
            let (fm, body) = crate::memfile::split(&d.content).expect("frontmatter");
            let fm: Fm = serde_saphyr::from_str(fm).unwrap_or_else(|e| panic!("{}: {e}", d.path));
            assert!(!fm.title.is_empty() && !fm.title.contains('\n'));
            assert_eq!(fm.entities.len(), 1);
            assert!(
                fm.created.parse::<jiff::Timestamp>().is_ok(),
                "{}",
                fm.created
            );
            assert_eq!(fm.created, fm.valid_from);
            assert!(fm.source.starts_with("locomo:"));
            assert!(
                gitloom_model::StorePath::parse(&d.path).is_ok(),
                "{}",
                d.path
            );
            assert!(body.starts_with('['));
        }
    }

    #[test]
    fn a_quote_is_the_end_of_a_turn() {
        assert_eq!(quote_end("Mel", " A  sunset. "), "Mel: A sunset.");
        let long = (1..=20)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            quote_end("Jon", &long),
            format!(
                "Jon: … {}",
                (6..=20)
                    .map(|i| format!("w{i}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        );
    }

    #[test]
    fn short_turns_carry_their_context() {
        let Some(file) = data_file() else { return };
        let f = file.as_path();
        let only = ["conv-41".to_owned()];
        let plain = load(f, Granularity::Turn, TurnContext::Plain, Some(&only)).expect("load");
        assert!(
            plain.groups[0]
                .docs
                .iter()
                .all(|d| !d.content.contains("\n> ")),
            "plain turns quote nothing"
        );
        let ds = load(f, Granularity::Turn, TurnContext::Quoted, Some(&only)).expect("load");
        let body = |path: &str| {
            let d = ds.groups[0]
                .docs
                .iter()
                .find(|d| d.path == path)
                .unwrap_or_else(|| panic!("{path}"));
            crate::memfile::split(&d.content)
                .expect("frontmatter")
                .1
                .to_owned()
        };
        // A short answer: the question and the turn it asks about, in that order.
        let often = body("facts/conv-41/s13/d13-7.md");
        assert!(
            often.contains("] John: Thanks, Maria! Three times a week"),
            "{often}"
        );
        let (_, quote) = often.split_once("\n\n> ").expect("quoted context");
        // Each quoted turn is cut to its end, where the reply picks up.
        let about = quote
            .find("John: … ")
            .unwrap_or_else(|| panic!("topic: {often}"));
        assert!(
            quote.contains("my kids are getting excited about staying active!"),
            "{often}"
        );
        assert!(!quote.contains("lots more energy"), "{often}");
        let asked = quote
            .find("How often do you all workout together?")
            .unwrap_or_else(|| panic!("question: {often}"));
        assert!(about < asked, "{often}");
        // A long turn after a statement stands alone.
        let long = body("facts/conv-41/s24/d24-9.md");
        assert!(!long.contains("\n> "), "{long}");
        // Questions are asked at the conversation's last session.
        let last = ds.groups[0]
            .docs
            .iter()
            .filter_map(|d| {
                let (fm, _) = crate::memfile::split(&d.content)?;
                let line = fm.lines().find(|l| l.starts_with("created: "))?;
                line["created: ".len()..].parse::<jiff::Timestamp>().ok()
            })
            .max()
            .expect("dated turns");
        assert!(
            ds.groups[0]
                .queries
                .iter()
                .all(|q| q.asked_at == Some(last.as_second()))
        );
    }

    #[test]
    fn session_granularity() {
        let Some(file) = data_file() else { return };
        let f = file.as_path();
        let ds = load(
            f,
            Granularity::Session,
            TurnContext::Plain,
            Some(&["conv-26".to_owned()]),
        )
        .expect("load");
        assert_eq!(ds.groups.len(), 1);
        assert_eq!(ds.groups[0].docs.len(), 19);
        assert!(
            ds.groups[0]
                .docs
                .iter()
                .any(|d| d.path == "facts/conv-26/s01.md")
        );
        let painted = ds.groups[0]
            .queries
            .iter()
            .find(|q| q.query == "What did Melanie paint recently?")
            .expect("q");
        assert_eq!(
            painted.label.gold(),
            ["facts/conv-26/s08.md", "facts/conv-26/s09.md"]
        );
        assert!(
            load(
                f,
                Granularity::Session,
                TurnContext::Plain,
                Some(&["conv-99".to_owned()])
            )
            .is_err()
        );
    }

    #[test]
    fn conv26_end_to_end_with_toy_backend() {
        let Some(file) = data_file() else { return };
        let f = file.as_path();
        let opts = RunOptions {
            only: Some(vec!["conv-26".into()]),
            ..RunOptions::default()
        };
        let mut b = Overlap::default();
        let r = run_locomo(&mut b, f, &opts).expect("run");
        assert_eq!(b.loads, 1);
        assert_eq!(r.metrics.queries, 199);
        assert_eq!(
            (
                r.metrics.answerable,
                r.metrics.unanswerable,
                r.metrics.skipped
            ),
            (150, 47, 2)
        );
        assert_eq!(r.granularity.as_deref(), Some("turn"));
        let shapes: Vec<&str> = r.by_shape.keys().map(String::as_str).collect();
        assert_eq!(
            shapes,
            [
                "adversarial",
                "multi-hop",
                "open-domain",
                "single-hop",
                "temporal"
            ]
        );
        let (frac, any) = (r.metrics.recall_frac_at_10, r.metrics.recall_at_10);
        assert!(
            frac.zip(any).is_some_and(|(f, a)| f <= a + 1e-9),
            "{frac:?} {any:?}"
        );
        assert!(r.to_json()["recall_frac_at_5"].is_number());
    }
}
