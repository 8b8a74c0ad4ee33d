//! A memory file: YAML frontmatter between `---` lines, then a markdown body.
//!
//! Parsing is strict about what it understands (a malformed date or a missing
//! title is an error naming the file, line and problem) and lenient about what it
//! does not: unknown keys are kept, in order, and written back on rewrite.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::body::{self, Section, WikiLink};
use crate::entity::EntityRef;
use crate::when::When;

/// Largest memory file accepted. Memories are atomic facts; a file this size is a
/// transcript or an accident, and indexing it would skew every BM25 statistic.
pub const MAX_MEMORY_BYTES: usize = 1024 * 1024;

/// Why a file is not a valid memory. Always names the file; `line` is 1-based in
/// the file (not the frontmatter) where known.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct MemoryError {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
}

impl MemoryError {
    fn new(path: &str, line: Option<usize>, message: impl Into<String>) -> Self {
        MemoryError {
            path: path.to_owned(),
            line,
            message: message.into(),
        }
    }
}

/// An edge from `related:`: `"path"` or `"label: path"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    pub label: Option<String>,
    pub target: String,
}

impl Related {
    pub fn parse(s: &str) -> Related {
        let s = s.trim();
        if let Some((label, target)) = s.split_once(':') {
            let (label, target) = (label.trim(), target.trim());
            // A label is a bare word; anything with a slash or dot before the colon is a path.
            if !label.is_empty() && !target.is_empty() && !label.contains(['/', '.', ' ']) {
                return Related {
                    label: Some(label.to_owned()),
                    target: target.to_owned(),
                };
            }
        }
        Related {
            label: None,
            target: s.to_owned(),
        }
    }
}

impl std::fmt::Display for Related {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.label {
            Some(l) => write!(f, "{l}: {}", self.target),
            None => f.write_str(&self.target),
        }
    }
}

/// A dated assertion from `timeline:`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    pub date: When,
    pub text: String,
}

/// The typed frontmatter. Fields the engine understands are typed; everything
/// else is in `extra`, in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    pub title: String,
    pub summary: Option<String>,
    pub tags: Vec<String>,
    pub cues: Vec<String>,
    pub entities: Vec<EntityRef>,
    pub related: Vec<Related>,
    pub supersedes: Vec<String>,
    pub confidence: Option<f64>,
    pub created: Option<When>,
    pub updated: Option<When>,
    pub valid_from: Option<When>,
    pub valid_to: Option<When>,
    pub expires_at: Option<When>,
    pub ttl: Option<String>,
    pub source: Option<String>,
    pub timeline: Vec<TimelineEntry>,
    pub extra: Map<String, Value>,
}

const KNOWN_KEYS: &[&str] = &[
    "title",
    "summary",
    "tags",
    "cues",
    "entities",
    "related",
    "supersedes",
    "confidence",
    "created",
    "updated",
    "valid_from",
    "valid_to",
    "expires_at",
    "ttl",
    "source",
    "timeline",
];

/// A parsed memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub front: Frontmatter,
    /// The markdown after the closing `---`, as written.
    pub body: String,
    /// 1-based line of the file on which the body starts.
    pub body_line: usize,
}

/// One string or a list of them (`supersedes: a.md` and `supersedes: [a.md, b.md]`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) if s.trim().is_empty() => Vec::new(),
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// A scalar that YAML may have typed as a number or boolean but that we read as text
/// (`title: 2026`, `ttl: 30`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Text {
    S(String),
    I(i64),
    F(f64),
    B(bool),
}

impl Text {
    fn into_string(self) -> String {
        match self {
            Text::S(s) => s,
            Text::I(i) => i.to_string(),
            Text::F(f) => f.to_string(),
            Text::B(b) => b.to_string(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct RawTimeline {
    date: Text,
    #[serde(default)]
    text: Option<Text>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct RawFront {
    title: Option<Text>,
    summary: Option<Text>,
    tags: Option<Vec<Text>>,
    cues: Option<Vec<Text>>,
    entities: Option<Vec<EntityRef>>,
    related: Option<Vec<String>>,
    supersedes: Option<OneOrMany>,
    confidence: Option<f64>,
    created: Option<Text>,
    updated: Option<Text>,
    valid_from: Option<Text>,
    valid_to: Option<Text>,
    expires_at: Option<Text>,
    ttl: Option<Text>,
    source: Option<String>,
    timeline: Option<Vec<RawTimeline>>,
}

fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    // Frontmatter is small; these bound alias bombs and deep nesting far below the defaults.
    budget.max_events = 100_000;
    budget.max_depth = 32;
    budget.max_aliases = 1_000;
    budget.max_nodes = 50_000;
    serde_saphyr::options! {
        budget: Some(budget),
        strict_booleans: true,
    }
}

impl Memory {
    /// Parses a memory file. `path` is only used in error messages.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Memory, MemoryError> {
        if bytes.len() > MAX_MEMORY_BYTES {
            return Err(MemoryError::new(
                path,
                None,
                format!(
                    "file is {} bytes; a memory may be at most {MAX_MEMORY_BYTES} bytes",
                    bytes.len()
                ),
            ));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            MemoryError::new(
                path,
                Some(line),
                format!("not valid UTF-8 (byte {})", e.valid_up_to()),
            )
        })?;
        if let Some(pos) = text.find('\0') {
            let line = text[..pos].matches('\n').count() + 1;
            return Err(MemoryError::new(path, Some(line), "contains a NUL byte"));
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Err(MemoryError::new(
                path,
                None,
                "file is empty; a memory needs frontmatter with a title",
            ));
        }
        let (yaml, body, body_line) = split_frontmatter(text).ok_or_else(|| {
            MemoryError::new(
                path,
                Some(1),
                "no frontmatter: the file must start with a `---` line and close it with another",
            )
        })?;
        let front = parse_front(path, yaml)?;
        Ok(Memory {
            front,
            body: body.to_owned(),
            body_line,
        })
    }

    /// A new memory with just a title and body.
    pub fn new(title: impl Into<String>, body: impl Into<String>) -> Memory {
        Memory {
            front: Frontmatter {
                title: title.into(),
                ..Frontmatter::default()
            },
            body: body.into(),
            body_line: 0,
        }
    }

    /// `##` sections of the body, with 1-based file line spans.
    pub fn sections(&self) -> Vec<Section> {
        body::sections(&self.body, self.body_line)
    }

    /// `[[wikilinks]]` in the body.
    pub fn wikilinks(&self) -> Vec<WikiLink> {
        body::wikilinks(&self.body)
    }

    /// Writes the file back: known keys in a canonical order, then unknown keys as
    /// they were. `parse(render(m)) == m` up to `body_line`.
    pub fn render(&self) -> String {
        let f = &self.front;
        let mut map = Map::new();
        map.insert("title".into(), Value::String(f.title.clone()));
        if let Some(s) = &f.summary {
            map.insert("summary".into(), Value::String(s.clone()));
        }
        let list = |v: &[String]| Value::Array(v.iter().cloned().map(Value::String).collect());
        if !f.tags.is_empty() {
            map.insert("tags".into(), list(&f.tags));
        }
        if !f.cues.is_empty() {
            map.insert("cues".into(), list(&f.cues));
        }
        if !f.entities.is_empty() {
            map.insert(
                "entities".into(),
                Value::Array(f.entities.iter().map(EntityRef::to_value).collect()),
            );
        }
        if !f.related.is_empty() {
            map.insert(
                "related".into(),
                Value::Array(
                    f.related
                        .iter()
                        .map(|r| Value::String(r.to_string()))
                        .collect(),
                ),
            );
        }
        match f.supersedes.as_slice() {
            [] => {}
            [one] => {
                map.insert("supersedes".into(), Value::String(one.clone()));
            }
            many => {
                map.insert("supersedes".into(), list(many));
            }
        }
        if let Some(c) = f.confidence.and_then(serde_json::Number::from_f64) {
            map.insert("confidence".into(), Value::Number(c));
        }
        for (key, when) in [
            ("created", f.created),
            ("updated", f.updated),
            ("valid_from", f.valid_from),
            ("valid_to", f.valid_to),
            ("expires_at", f.expires_at),
        ] {
            if let Some(w) = when {
                map.insert(key.into(), Value::String(w.to_string()));
            }
        }
        if let Some(t) = &f.ttl {
            map.insert("ttl".into(), Value::String(t.clone()));
        }
        if let Some(s) = &f.source {
            map.insert("source".into(), Value::String(s.clone()));
        }
        if !f.timeline.is_empty() {
            let items = f
                .timeline
                .iter()
                .map(|t| {
                    let mut m = Map::new();
                    m.insert("date".into(), Value::String(t.date.to_string()));
                    m.insert("text".into(), Value::String(t.text.clone()));
                    Value::Object(m)
                })
                .collect();
            map.insert("timeline".into(), Value::Array(items));
        }
        for (k, v) in &f.extra {
            map.insert(k.clone(), v.clone());
        }
        // Serialising a JSON map of strings, numbers and lists cannot fail; fall back to
        // JSON (valid YAML) rather than lose the memory if it ever does.
        let yaml = serde_saphyr::to_string(&map)
            .unwrap_or_else(|_| serde_json::to_string_pretty(&map).unwrap_or_default());
        let mut out = String::with_capacity(yaml.len() + self.body.len() + 16);
        out.push_str("---\n");
        out.push_str(&yaml);
        if !yaml.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("---\n");
        out.push_str(&self.body);
        if !self.body.is_empty() && !self.body.ends_with('\n') {
            out.push('\n');
        }
        out
    }
}

/// Splits `---\n<yaml>\n---\n<body>`; returns the YAML, the body and the body's first line.
fn split_frontmatter(text: &str) -> Option<(&str, &str, usize)> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let rest = &text[first_end + 1..];
    let mut offset = 0;
    for (line_no, line) in (2..).zip(rest.split_inclusive('\n')) {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Some((yaml, body, line_no + 1));
        }
        offset += line.len();
    }
    None
}

/// The typed known keys and the untyped unknown ones, from one YAML parse: the
/// document is read as a map, its known keys typed from that map. Only where the map
/// cannot give what the typed parse would (text where YAML wrote a number, as in
/// `source: 2024`), or the document does not parse, is it parsed again as
/// [`RawFront`], so values and errors are the typed parse's.
fn read_front(yaml: &str) -> Result<(RawFront, Map<String, Value>), serde_saphyr::Error> {
    let typed = || serde_saphyr::from_str_with_options::<RawFront>(yaml, yaml_options());
    let all = match serde_saphyr::from_str_with_options::<Option<Map<String, Value>>>(
        yaml,
        yaml_options(),
    ) {
        Ok(all) => all.unwrap_or_default(),
        Err(e) => {
            typed()?;
            return Err(e);
        }
    };
    let (known, extra): (Map<String, Value>, Map<String, Value>) = all
        .into_iter()
        .partition(|(k, _)| KNOWN_KEYS.contains(&k.as_str()));
    let raw = match serde_json::from_value::<RawFront>(Value::Object(known)) {
        Ok(raw) => raw,
        Err(_) => typed()?,
    };
    Ok((raw, extra))
}

fn parse_front(path: &str, yaml: &str) -> Result<Frontmatter, MemoryError> {
    // Line numbers from the YAML parser count from the frontmatter's first line, which
    // is line 2 of the file.
    let yaml_err = |e: serde_saphyr::Error| {
        let line = e.location().map(|l| l.line() as usize + 1);
        let msg = e.to_string();
        let first = msg.lines().next().unwrap_or("invalid YAML").to_owned();
        MemoryError::new(path, line, format!("invalid frontmatter: {first}"))
    };
    let (raw, extra) = read_front(yaml).map_err(yaml_err)?;
    let key_line = |key: &str| {
        yaml.lines()
            .position(|l| l.starts_with(key) && l[key.len()..].trim_start().starts_with(':'))
            .map(|i| i + 2)
    };
    let when = |key: &str, v: Option<Text>| -> Result<Option<When>, MemoryError> {
        match v.map(Text::into_string) {
            None => Ok(None),
            Some(s) if s.trim().is_empty() => Ok(None),
            Some(s) => When::parse(&s)
                .map(Some)
                .map_err(|m| MemoryError::new(path, key_line(key), format!("{key}: {m}"))),
        }
    };
    let title = raw
        .title
        .map(Text::into_string)
        .unwrap_or_default()
        .trim()
        .to_owned();
    if title.is_empty() {
        return Err(MemoryError::new(
            path,
            key_line("title").or(Some(2)),
            "frontmatter has no `title` (required)",
        ));
    }
    if title.contains('\n') {
        return Err(MemoryError::new(
            path,
            key_line("title"),
            "title must be one line",
        ));
    }
    if let Some(c) = raw.confidence
        && !(0.0..=1.0).contains(&c)
    {
        return Err(MemoryError::new(
            path,
            key_line("confidence"),
            format!("confidence {c} is outside 0..1"),
        ));
    }
    let mut timeline = Vec::new();
    for t in raw.timeline.unwrap_or_default() {
        let date_s = t.date.into_string();
        let date = When::parse(&date_s)
            .map_err(|m| MemoryError::new(path, key_line("timeline"), format!("timeline: {m}")))?;
        timeline.push(TimelineEntry {
            date,
            text: t.text.map(Text::into_string).unwrap_or_default(),
        });
    }
    let texts = |v: Option<Vec<Text>>| -> Vec<String> {
        v.unwrap_or_default()
            .into_iter()
            .map(Text::into_string)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    Ok(Frontmatter {
        title,
        summary: raw
            .summary
            .map(Text::into_string)
            .filter(|s| !s.trim().is_empty()),
        tags: texts(raw.tags),
        cues: texts(raw.cues),
        entities: raw
            .entities
            .unwrap_or_default()
            .into_iter()
            .filter(|e| !e.name.is_empty())
            .collect(),
        related: raw
            .related
            .unwrap_or_default()
            .iter()
            .map(|s| Related::parse(s))
            .filter(|r| !r.target.is_empty())
            .collect(),
        supersedes: raw.supersedes.map(OneOrMany::into_vec).unwrap_or_default(),
        confidence: raw.confidence,
        created: when("created", raw.created)?,
        updated: when("updated", raw.updated)?,
        valid_from: when("valid_from", raw.valid_from)?,
        valid_to: when("valid_to", raw.valid_to)?,
        expires_at: when("expires_at", raw.expires_at)?,
        ttl: raw
            .ttl
            .map(Text::into_string)
            .filter(|s| !s.trim().is_empty()),
        source: raw.source.filter(|s| !s.trim().is_empty()),
        timeline,
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORBITAL: &str = "---\ntitle: Works at Orbital AI as an ML engineer\nsummary: User joined.\ntags: [work]\ncues:\n  - where do I work\n  - who is my employer\nentities:\n  - Orbital AI (org)\n  - {name: Lena Fischer, kind: person, role: manager}\n  - Berlin\nrelated:\n  - \"previous-employer: facts/work/acme-robotics.md\"\n  - facts/people/lena.md\nsupersedes: facts/work/acme-robotics.md\nconfidence: 0.9\ncreated: 2026-07-30T19:12:00Z\nvalid_from: 2026-08-03\nvalid_to:\nx-custom:\n  nested: [1, 2]\ntimeline:\n  - {date: 2026-07-30, text: accepted the offer}\n---\nML engineer.\n\n## Team\nInference team. Reports to [[Lena Fischer]].\n";

    /// [`read_front`] against the two parses it replaces: the same typed keys, the
    /// same unknown keys, the same error.
    #[test]
    fn one_parse_reads_what_two_parses_read() {
        let cases = [
            ORBITAL.split("---\n").nth(1).unwrap_or_default(),
            "title: a\ncues:\n- b\n- c\nsummary: |\n  x: y\n  z\n",
            "# comment\ntitle: 2026\nttl: 30\nconfidence: 1\ncreated: 2026-01-02\n",
            "title: 0.70\nsummary: yes\ntags: [1, true, 2.5, x]\n",
            "title: a\nsource: 2024\n",
            "title: a\nrelated: [12, b]\n",
            "title: a\nsupersedes: 7\n",
            "title: a\nentities: [B, {name: 5}, {name: C, kind: person, role: x}]\n",
            "title: a\ntimeline:\n  - {date: 2026-01-02, text: 5}\n",
            "title: a\nvalid_to:\ntags: ~\nx-custom:\n  nested: [1, 2]\n",
            "title: a\ntitle: b\n",
            "title: [a\n",
            "- a\n- b\n",
            "just text\n",
            "title: a\nconfidence: high\n",
            "title: a\ncues: {a: b}\n",
            "title: &t a\nsummary: *t\n",
            "",
        ];
        for yaml in cases {
            let before = serde_saphyr::from_str_with_options::<RawFront>(yaml, yaml_options())
                .and_then(|raw| {
                    let all = serde_saphyr::from_str_with_options::<Option<Map<String, Value>>>(
                        yaml,
                        yaml_options(),
                    )?
                    .unwrap_or_default();
                    let extra: Map<String, Value> = all
                        .into_iter()
                        .filter(|(k, _)| !KNOWN_KEYS.contains(&k.as_str()))
                        .collect();
                    Ok((raw, extra))
                });
            let now = read_front(yaml);
            match (before, now) {
                (Ok(b), Ok(n)) => assert_eq!(format!("{b:?}"), format!("{n:?}"), "{yaml:?}"),
                (Err(b), Err(n)) => assert_eq!(b.to_string(), n.to_string(), "{yaml:?}"),
                (b, n) => panic!("{yaml:?}: before {:?}, now {:?}", b.is_ok(), n.is_ok()),
            }
        }
    }

    #[test]
    fn parses_every_field() {
        let m = Memory::parse("facts/work/orbital-ai.md", ORBITAL.as_bytes()).expect("valid");
        let f = &m.front;
        assert_eq!(f.title, "Works at Orbital AI as an ML engineer");
        assert_eq!(f.cues, vec!["where do I work", "who is my employer"]);
        assert_eq!(f.entities.len(), 3);
        assert_eq!(f.entities[0].kind.as_deref(), Some("org"));
        assert_eq!(f.entities[1].role.as_deref(), Some("manager"));
        assert_eq!(f.related[0].label.as_deref(), Some("previous-employer"));
        assert_eq!(f.related[1].label, None);
        assert_eq!(f.supersedes, vec!["facts/work/acme-robotics.md"]);
        assert_eq!(f.valid_to, None);
        assert_eq!(f.timeline.len(), 1);
        assert!(f.extra.contains_key("x-custom"));
        assert_eq!(m.body_line, 25);
        let s = m.sections();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].heading, "Team");
        assert_eq!(s[0].start_line, 27);
        assert_eq!(m.wikilinks()[0].target, "Lena Fischer");
    }

    #[test]
    fn rewrite_keeps_unknown_keys_and_round_trips() {
        let m = Memory::parse("facts/a.md", ORBITAL.as_bytes()).expect("valid");
        let out = m.render();
        assert!(out.contains("x-custom"), "{out}");
        let again = Memory::parse("facts/a.md", out.as_bytes()).expect("rendered file parses");
        assert_eq!(again.front, m.front);
        assert_eq!(again.body, m.body);
        assert_eq!(again.render(), out, "render is a fixed point");
    }

    #[test]
    fn errors_name_file_line_and_problem() {
        let e = Memory::parse("facts/x.md", b"---\ntitle: [unclosed\n---\nbody\n")
            .expect_err("bad yaml");
        assert_eq!(e.path, "facts/x.md");
        assert!(e.line.is_some(), "{e}");
        let e =
            Memory::parse("facts/x.md", b"---\nsummary: no title\n---\n").expect_err("no title");
        assert!(e.to_string().contains("title"), "{e}");
        let e = Memory::parse("facts/x.md", b"---\ntitle: t\ncreated: yesterday\n---\n")
            .expect_err("bad date");
        assert!(e.to_string().starts_with("facts/x.md:3: created"), "{e}");
        assert!(Memory::parse("facts/x.md", b"").is_err());
        assert!(Memory::parse("facts/x.md", b"just text\n").is_err());
        assert!(
            Memory::parse("facts/x.md", b"---\ntitle: t\n").is_err(),
            "unclosed frontmatter"
        );
        assert!(Memory::parse("facts/x.md", b"---\ntitle: t\n---\n\xff\xfe").is_err());
        assert!(Memory::parse("facts/x.md", b"---\ntitle: t\n---\na\0b").is_err());
        assert!(Memory::parse("facts/x.md", b"---\ntitle: t\nconfidence: 7\n---\n").is_err());
        let big = format!("---\ntitle: t\n---\n{}", "a".repeat(MAX_MEMORY_BYTES));
        assert!(
            Memory::parse("facts/x.md", big.as_bytes())
                .expect_err("huge")
                .to_string()
                .contains("at most")
        );
    }

    #[test]
    fn yaml_bombs_are_refused_quickly() {
        let mut bomb = String::from("---\ntitle: t\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..12 {
            let prev = if i == 0 {
                "a".to_owned()
            } else {
                format!("b{}", i - 1)
            };
            bomb.push_str(&format!("b{i}: &b{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        bomb.push_str("---\n");
        assert!(Memory::parse("facts/x.md", bomb.as_bytes()).is_err());
        let deep = format!(
            "---\ntitle: t\nx: {}{}\n---\n",
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(Memory::parse("facts/x.md", deep.as_bytes()).is_err());
    }

    #[test]
    fn yaml_booleans_are_strict() {
        let m =
            Memory::parse("facts/x.md", b"---\ntitle: no\ntags: [yes, on]\n---\n").expect("valid");
        assert_eq!(m.front.title, "no");
        assert_eq!(m.front.tags, vec!["yes", "on"]);
    }
}
