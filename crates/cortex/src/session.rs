//! Sessions: the input of ingestion, and their transcripts in the store.

use gitloom_model::{StorePath, slugify};
use jiff::civil::Date;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::CortexError;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `user` or `assistant` (`system` and `tool` messages are kept in the transcript
    /// but never extracted from).
    pub role: String,
    /// Who is speaking, when the conversation says (OpenAI's `name`: `{"role": "user",
    /// "name": "Caroline", …}`). A named user message is a statement by that person:
    /// its facts are attributed to them, and the name becomes an entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub content: String,
}

impl Message {
    /// The speaker's name, if the message carries one.
    pub fn speaker(&self) -> Option<&str> {
        self.name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
    }
}

/// One conversation, dated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    /// `YYYY-MM-DD` (an RFC 3339 timestamp is accepted on input and cut to its day).
    pub date: String,
    pub messages: Vec<Message>,
}

impl Session {
    /// The session's day. [`parse_sessions`] has checked it, so this only fails for a
    /// session built by hand with a bad date.
    pub fn day(&self) -> Result<Date, CortexError> {
        parse_day(&self.date).ok_or_else(|| {
            CortexError::Input(format!(
                "session {:?}: date {:?} is not YYYY-MM-DD",
                self.id, self.date
            ))
        })
    }

    /// Where the transcript is kept: `sessions/<date>/<id>.md`.
    pub fn transcript_path(&self) -> Result<StorePath, CortexError> {
        let day = self.day()?;
        Ok(StorePath::parse(&format!(
            "sessions/{day}/{}.md",
            slugify(&self.id, 80)
        ))?)
    }

    /// The transcript as stored: one `##` section per message, numbered from 0 so a
    /// memory's `source` can point at `#m3`. Deterministic, so re-ingesting the same
    /// session writes the same bytes.
    pub fn transcript(&self) -> String {
        let mut out = format!("# Session {}\n\ndate: {}\n", self.id, self.date);
        for (i, m) in self.messages.iter().enumerate() {
            // A named speaker follows the role (`## m3 user Caroline`); unnamed
            // messages keep the form they always had, so old transcripts still match.
            let who = m.speaker().map(|n| format!(" {n}")).unwrap_or_default();
            out.push_str(&format!(
                "\n## m{i} {}{who}\n\n{}\n",
                m.role,
                m.content.trim_end()
            ));
        }
        out
    }

    /// Messages facts are extracted from: what the user said, and in a conversation
    /// between named people what each of them said (all are `user` messages; the
    /// assistant's and the system's are not statements by a person).
    pub fn speaking_messages(&self) -> impl Iterator<Item = (usize, &Message)> {
        self.user_messages()
    }

    /// The named speakers of the session, in order of first appearance.
    pub fn speakers(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, m) in self.user_messages() {
            if let Some(n) = m.speaker()
                && !out.iter().any(|o| o == n)
            {
                out.push(n.to_owned());
            }
        }
        out
    }

    /// Messages a fact may be extracted from: what the user said.
    pub fn user_messages(&self) -> impl Iterator<Item = (usize, &Message)> {
        self.messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role.eq_ignore_ascii_case("user"))
    }
}

fn parse_day(s: &str) -> Option<Date> {
    let s = s.trim();
    if let Ok(d) = s.parse::<Date>() {
        return Some(d);
    }
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts.to_zoned(jiff::tz::TimeZone::UTC).date());
    }
    s.get(..10).and_then(|p| p.parse::<Date>().ok())
}

/// Reads sessions from JSON: a list of `{id, date, messages}`, `{"sessions": [...]}`,
/// one such object, or an OpenAI-style `{"messages": [...]}` (its id is derived
/// from a hash of its messages so re-ingesting it is idempotent; its date is
/// `date` if present, else today). Every problem names the session and field.
pub fn parse_sessions(text: &str) -> Result<Vec<Session>, CortexError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        CortexError::Input(format!(
            "not JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))
    })?;
    let items: Vec<(String, &Value)> = match &value {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("sessions[{i}]"), v))
            .collect(),
        Value::Object(o) => match o.get("sessions") {
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("sessions[{i}]"), v))
                .collect(),
            Some(_) => return Err(CortexError::Input("`sessions` must be a list".into())),
            None => vec![("session".to_owned(), &value)],
        },
        _ => {
            return Err(CortexError::Input(
                "expected a list of sessions or an object with `messages`".into(),
            ));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    let mut seen = std::collections::HashSet::new();
    for (at, v) in items {
        let s = one_session(&at, v)?;
        if !seen.insert((s.date.clone(), slugify(&s.id, 80))) {
            return Err(CortexError::Input(format!(
                "{at}: session id {:?} on {} appears twice",
                s.id, s.date
            )));
        }
        out.push(s);
    }
    Ok(out)
}

fn one_session(at: &str, v: &Value) -> Result<Session, CortexError> {
    let o = v
        .as_object()
        .ok_or_else(|| CortexError::Input(format!("{at}: expected an object")))?;
    let raw = o
        .get("messages")
        .ok_or_else(|| CortexError::Input(format!("{at}: missing `messages`")))?
        .as_array()
        .ok_or_else(|| CortexError::Input(format!("{at}.messages: expected a list")))?;
    let mut messages = Vec::with_capacity(raw.len());
    for (i, m) in raw.iter().enumerate() {
        let here = format!("{at}.messages[{i}]");
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| CortexError::Input(format!("{here}: missing string `role`")))?;
        let content = match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            // OpenAI content parts: keep the text parts, in order.
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Some(Value::Null) | None => String::new(),
            Some(_) => {
                return Err(CortexError::Input(format!(
                    "{here}.content: expected a string or a list of text parts"
                )));
            }
        };
        let name = match m.get("name") {
            Some(Value::String(n)) if !n.trim().is_empty() => {
                let n = n.trim();
                if n.chars().count() > 100 || n.chars().any(char::is_control) {
                    return Err(CortexError::Input(format!(
                        "{here}.name: a speaker's name is one line of at most 100 characters"
                    )));
                }
                Some(n.to_owned())
            }
            Some(Value::String(_)) | Some(Value::Null) | None => None,
            Some(_) => {
                return Err(CortexError::Input(format!(
                    "{here}.name: expected a string (the speaker's name)"
                )));
            }
        };
        messages.push(Message {
            role: role.trim().to_lowercase(),
            name,
            content,
        });
    }
    let date = match o.get("date") {
        Some(Value::String(d)) => {
            let day = parse_day(d).ok_or_else(|| {
                CortexError::Input(format!(
                    "{at}.date: {d:?} is not a date (YYYY-MM-DD or RFC 3339)"
                ))
            })?;
            day.to_string()
        }
        Some(_) => return Err(CortexError::Input(format!("{at}.date: expected a string"))),
        None if o.contains_key("id") => {
            return Err(CortexError::Input(format!("{at}: missing `date`")));
        }
        None => jiff::Zoned::now().date().to_string(),
    };
    let id = match o.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => {
            return Err(CortexError::Input(format!(
                "{at}.id: expected a non-empty string"
            )));
        }
        None => {
            let mut h = blake3::Hasher::new();
            for m in &messages {
                h.update(m.role.as_bytes());
                h.update(&[0]);
                // Only named messages hash their name, so ids of unnamed sessions
                // stay what they were.
                if let Some(n) = m.speaker() {
                    h.update(n.as_bytes());
                    h.update(&[1]);
                }
                h.update(m.content.as_bytes());
                h.update(&[0]);
            }
            format!("chat-{}", &h.finalize().to_hex()[..12])
        }
    };
    Ok(Session { id, date, messages })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_and_clear_errors() {
        let list =
            r#"[{"id":"a","date":"2026-05-20","messages":[{"role":"user","content":"hi"}]}]"#;
        let s = parse_sessions(list).expect("list");
        assert_eq!(
            s[0].transcript_path().expect("path").as_str(),
            "sessions/2026-05-20/a.md"
        );
        let single = r#"{"date":"2026-01-02T10:00:00Z","messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}"#;
        let a = parse_sessions(single).expect("openai");
        let b = parse_sessions(single).expect("openai");
        assert_eq!(a[0].id, b[0].id, "derived ids are stable");
        assert_eq!(a[0].date, "2026-01-02");
        assert_eq!(a[0].messages[0].content, "hello");
        let err =
            parse_sessions(r#"[{"id":"a","date":"2026-05-20","messages":[{"content":"x"}]}]"#)
                .expect_err("no role");
        assert!(err.to_string().contains("sessions[0].messages[0]"), "{err}");
        let named = parse_sessions(
            r#"[{"id":"n","date":"2023-05-08","messages":[{"role":"user","name":"Caroline","content":"I went to a support group."},{"role":"user","name":"Melanie","content":"Proud of you!"}]}]"#,
        )
        .expect("named");
        assert_eq!(named[0].messages[0].speaker(), Some("Caroline"));
        let t = named[0].transcript();
        assert!(t.contains("## m0 user Caroline\n"), "{t}");
        assert!(t.contains("## m1 user Melanie\n"), "{t}");
        assert!(
            s[0].transcript().contains("## m0 user\n"),
            "unnamed: as before"
        );
        let err = parse_sessions(
            r#"[{"id":"a","date":"2026-05-20","messages":[{"role":"user","name":7,"content":"x"}]}]"#,
        )
        .expect_err("name not a string");
        assert!(
            err.to_string().contains("sessions[0].messages[0].name"),
            "{err}"
        );
        let err =
            parse_sessions(r#"[{"id":"a","date":"May","messages":[]}]"#).expect_err("bad date");
        assert!(err.to_string().contains("sessions[0].date"), "{err}");
    }
}
