//! Reading one file's metadata back.

use gitloom_model::Tier;
use rusqlite::OptionalExtension;

use crate::lexical::SectionRef;
use crate::{Index, IndexError};

/// A date from frontmatter: as written (normalised) and as seconds since the epoch
/// (a bare date counts from its UTC midnight).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Stamp {
    pub text: String,
    pub unix: i64,
}

/// Everything the index holds about one memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRow {
    pub path: String,
    pub tier: Tier,
    /// Below the tier: `""`, `work`, `database/replication`.
    pub topic: String,
    pub slug: String,
    pub title: String,
    pub summary: Option<String>,
    pub body: String,
    /// 1-based file line on which the body starts.
    pub body_line: usize,
    pub blob: String,
    pub created: Option<Stamp>,
    pub updated: Option<Stamp>,
    pub valid_from: Option<Stamp>,
    pub valid_to: Option<Stamp>,
    pub expires_at: Option<Stamp>,
    pub ttl: Option<String>,
    pub confidence: Option<f64>,
    /// `supersedes:` targets as written.
    pub supersedes: Vec<String>,
    /// Files whose `supersedes:` resolves to this one (the reverse lookup).
    pub superseded_by: Vec<String>,
    pub source: Option<String>,
    pub tags: Vec<String>,
    pub cues: Vec<String>,
    pub sections: Vec<SectionRef>,
    /// Unknown frontmatter keys, as JSON.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

fn stamp(text: Option<String>, unix: Option<i64>) -> Option<Stamp> {
    match (text, unix) {
        (Some(text), Some(unix)) => Some(Stamp { text, unix }),
        _ => None,
    }
}

pub(crate) fn file(idx: &Index, path: &str) -> Result<Option<FileRow>, IndexError> {
    let op = "read file row";
    let c = &idx.conn;
    let row = c
        .prepare_cached(
            "SELECT path, tier, topic, slug, title, summary, body, body_line, blob,
                created, created_unix, updated, updated_unix, valid_from, valid_from_unix,
                valid_to, valid_to_unix, expires_at, expires_at_unix, ttl, confidence,
                source, tags, extra
             FROM files WHERE path = ?1",
        )
        .and_then(|mut s| {
            s.query_row([path], |r| {
                let tier: String = r.get(1)?;
                let tags: String = r.get(22)?;
                let extra: String = r.get(23)?;
                Ok(FileRow {
                    path: r.get(0)?,
                    tier: tier.parse().unwrap_or(Tier::Facts),
                    topic: r.get(2)?,
                    slug: r.get(3)?,
                    title: r.get(4)?,
                    summary: r.get(5)?,
                    body: r.get(6)?,
                    body_line: r.get::<_, i64>(7)?.max(0) as usize,
                    blob: r.get(8)?,
                    created: stamp(r.get(9)?, r.get(10)?),
                    updated: stamp(r.get(11)?, r.get(12)?),
                    valid_from: stamp(r.get(13)?, r.get(14)?),
                    valid_to: stamp(r.get(15)?, r.get(16)?),
                    expires_at: stamp(r.get(17)?, r.get(18)?),
                    ttl: r.get(19)?,
                    confidence: r.get(20)?,
                    supersedes: Vec::new(),
                    superseded_by: Vec::new(),
                    source: r.get(21)?,
                    tags: serde_json::from_str(&tags).unwrap_or_default(),
                    cues: Vec::new(),
                    sections: Vec::new(),
                    extra: serde_json::from_str(&extra).unwrap_or_default(),
                })
            })
            .optional()
        })
        .map_err(idx.err(op))?;
    let Some(mut row) = row else {
        return Ok(None);
    };
    let strings = |sql: &str| -> Result<Vec<String>, IndexError> {
        let mut st = c.prepare_cached(sql).map_err(idx.err(op))?;
        let rows = st.query_map([path], |r| r.get(0)).map_err(idx.err(op))?;
        rows.collect::<Result<_, _>>().map_err(idx.err(op))
    };
    row.supersedes = strings(
        "SELECT target_raw FROM links WHERE src = ?1 AND kind = 'supersedes' ORDER BY ord",
    )?;
    row.superseded_by = strings(
        "SELECT DISTINCT src FROM links WHERE resolved = ?1 AND kind = 'supersedes' ORDER BY src",
    )?;
    row.cues = strings("SELECT text FROM cues WHERE path = ?1 ORDER BY ord")?;
    {
        let mut st = c
            .prepare_cached(
                "SELECT heading, anchor, start_line, end_line FROM sections
                 WHERE path = ?1 ORDER BY ord",
            )
            .map_err(idx.err(op))?;
        let rows = st
            .query_map([path], |r| {
                Ok(SectionRef {
                    heading: r.get(0)?,
                    anchor: r.get(1)?,
                    start_line: r.get::<_, i64>(2)?.max(0) as usize,
                    end_line: r.get::<_, i64>(3)?.max(0) as usize,
                })
            })
            .map_err(idx.err(op))?;
        row.sections = rows.collect::<Result<_, _>>().map_err(idx.err(op))?;
    }
    Ok(Some(row))
}

pub(crate) fn paths(idx: &Index) -> Result<Vec<String>, IndexError> {
    let op = "list paths";
    let mut st = idx
        .conn
        .prepare_cached("SELECT path FROM files ORDER BY path")
        .map_err(idx.err(op))?;
    let rows = st.query_map([], |r| r.get(0)).map_err(idx.err(op))?;
    rows.collect::<Result<_, _>>().map_err(idx.err(op))
}

/// The indexed memories whose `source:` or `sources:` cite one of `transcripts`
/// (session paths): what a sync re-reads when those transcripts change, so the words
/// indexed for them follow the transcripts. One pass over the files that cite any.
pub(crate) fn citing(idx: &Index, transcripts: &[&str]) -> Result<Vec<String>, IndexError> {
    let op = "memories citing a transcript";
    if transcripts.is_empty() {
        return Ok(Vec::new());
    }
    let wanted: std::collections::HashSet<&str> = transcripts.iter().copied().collect();
    let mut st = idx
        .conn
        .prepare_cached(
            "SELECT path, extra, coalesce(source, '') FROM files
             WHERE instr(extra, '\"sources\"') > 0 OR instr(source, '#') > 0 ORDER BY path",
        )
        .map_err(idx.err(op))?;
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .map_err(idx.err(op))?;
    let mut out = Vec::new();
    for row in rows {
        let (path, extra, source) = row.map_err(idx.err(op))?;
        let cited = |raw: &str| wanted.contains(gitloom_model::Citation::parse(raw).file);
        let cites = cited(&source)
            || serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&extra)
                .is_ok_and(|map| gitloom_model::cite::sources(&map).any(cited));
        if cites {
            out.push(path);
        }
    }
    Ok(out)
}

/// What the read path's priors need to know about one file: cheap to ask for the
/// head of every answer (no body, cues or sections are read).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriorFacts {
    /// Another memory names this one in `supersedes`.
    pub superseded: bool,
    /// This memory names another in `supersedes`, and that one is in the store: it
    /// is the newer state of something that changed. `None` unless asked for
    /// ([`PriorAsks::supersedes`]).
    pub supersedes: Option<bool>,
    /// `valid_to`, as seconds since the epoch.
    pub valid_to: Option<i64>,
    pub confidence: Option<f64>,
    /// `updated`, else `created`, as seconds since the epoch.
    pub updated: Option<i64>,
    pub title: String,
    /// The memory carries dates of its own: `timeline:` assertions or a validity
    /// interval (`valid_from`/`valid_to`). `None` unless asked for
    /// ([`PriorAsks::timeline`]).
    pub dated: Option<bool>,
    /// The memory asserts dates of events: `timeline:` entries (what a text that
    /// says when becomes once its dates are resolved). `None` unless asked for.
    pub says_dates: Option<bool>,
}

/// The prior facts that cost a lookup of their own, read only when a question's
/// priors use them: most questions need neither, and for the head of every answer
/// each is an index search per candidate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PriorAsks {
    /// The `timeline:` entries ([`PriorFacts::dated`], [`PriorFacts::says_dates`]).
    pub timeline: bool,
    /// Whether the memory supersedes one in the store ([`PriorFacts::supersedes`]).
    pub supersedes: bool,
}

pub(crate) fn prior_facts(
    idx: &Index,
    path: &str,
    asks: PriorAsks,
) -> Result<Option<PriorFacts>, IndexError> {
    let op = "prior facts";
    // `CASE` evaluates its `EXISTS` only when asked for.
    let mut st = idx
        .conn
        .prepare_cached(
            "SELECT valid_to_unix, confidence,
                    EXISTS (SELECT 1 FROM links WHERE resolved = ?1 AND kind = 'supersedes'),
                    coalesce(updated_unix, created_unix), title,
                    valid_from_unix IS NOT NULL OR valid_to_unix IS NOT NULL,
                    CASE WHEN ?2 THEN EXISTS (SELECT 1 FROM timeline WHERE path = ?1) END,
                    CASE WHEN ?3 THEN EXISTS (SELECT 1 FROM links
                            WHERE src = ?1 AND kind = 'supersedes' AND resolved IS NOT NULL) END
             FROM files WHERE path = ?1",
        )
        .map_err(idx.err(op))?;
    st.query_row(
        rusqlite::params![path, asks.timeline, asks.supersedes],
        |r| {
            let interval: bool = r.get(5)?;
            let timeline: Option<bool> = r.get(6)?;
            Ok(PriorFacts {
                valid_to: r.get(0)?,
                confidence: r.get(1)?,
                superseded: r.get(2)?,
                updated: r.get(3)?,
                title: r.get(4)?,
                dated: timeline.map(|t| interval || t),
                says_dates: timeline,
                supersedes: r.get(7)?,
            })
        },
    )
    .optional()
    .map_err(idx.err(op))
}

/// Whether a file carries a date in `[start, end)` (seconds since the epoch): its
/// `created`, `updated` or `valid_from`, or a `timeline:` assertion.
pub(crate) fn dated_within(
    idx: &Index,
    path: &str,
    start: i64,
    end: i64,
) -> Result<bool, IndexError> {
    let op = "dated within";
    let mut st = idx
        .conn
        .prepare_cached(
            "SELECT (created_unix >= ?2 AND created_unix < ?3)
                 OR (updated_unix >= ?2 AND updated_unix < ?3)
                 OR (valid_from_unix >= ?2 AND valid_from_unix < ?3)
                 OR EXISTS (SELECT 1 FROM timeline
                            WHERE path = ?1 AND date_unix >= ?2 AND date_unix < ?3)
             FROM files WHERE path = ?1",
        )
        .map_err(idx.err(op))?;
    let found: Option<Option<bool>> = st
        .query_row(rusqlite::params![path, start, end], |r| r.get(0))
        .optional()
        .map_err(idx.err(op))?;
    Ok(found.flatten().unwrap_or(false))
}
