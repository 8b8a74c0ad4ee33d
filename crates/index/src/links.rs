//! Links (wikilinks, `related:`, `supersedes`) and entity mentions.
//!
//! A link target resolves to a file by exact path (with or without `.md`, relative to
//! the store root), else by case-folded title (the first by path if several share
//! it), else by slug (file name without `.md`, or the slugified target) when exactly
//! one file has it. Unresolved links are kept (dangling) and retried on every apply;
//! links into a file that changed or disappeared are re-resolved too.

use std::collections::HashMap;

use gitloom_model::{fold_name, slugify};
use rusqlite::{Connection, OptionalExtension, params};

use crate::{Index, IndexError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    Wiki,
    Related,
    Supersedes,
}

impl LinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Wiki => "wiki",
            LinkKind::Related => "related",
            LinkKind::Supersedes => "supersedes",
        }
    }

    fn parse(s: &str) -> LinkKind {
        match s {
            "related" => LinkKind::Related,
            "supersedes" => LinkKind::Supersedes,
            _ => LinkKind::Wiki,
        }
    }
}

/// One edge.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LinkRow {
    pub src: String,
    pub kind: LinkKind,
    /// The target as written.
    pub target_raw: String,
    /// `related:` label or `[[target|label]]`.
    pub label: Option<String>,
    /// `[[target#section]]`.
    pub section: Option<String>,
    /// The file it points at; `None` while dangling.
    pub resolved: Option<String>,
}

/// A memory that mentions an entity.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MentionRow {
    pub path: String,
    pub entity: String,
    pub kind: Option<String>,
    pub role: Option<String>,
}

/// What a raw link target can match, in the order [`resolve`] tries them: a path,
/// a folded title, a slug (as written, and slugified).
pub(crate) struct LinkKeys {
    pub path: String,
    pub title: String,
    pub slug: String,
    pub slug2: String,
}

pub(crate) fn link_keys(raw: &str) -> Option<LinkKeys> {
    let t = raw.trim();
    let t = t.strip_prefix("./").unwrap_or(t).trim_start_matches('/');
    if t.is_empty() {
        return None;
    }
    let path = if t.ends_with(".md") {
        t.to_owned()
    } else {
        format!("{t}.md")
    };
    let stem = t.strip_suffix(".md").unwrap_or(t);
    let stem = stem.rsplit('/').next().unwrap_or(stem);
    Some(LinkKeys {
        path,
        title: fold_name(t),
        slug: stem.to_owned(),
        slug2: slugify(stem, 200),
    })
}

pub(crate) fn resolve(c: &Connection, raw: &str) -> rusqlite::Result<Option<String>> {
    let Some(k) = link_keys(raw) else {
        return Ok(None);
    };
    let mut st = c.prepare_cached("SELECT path FROM files WHERE path = ?1")?;
    if let Some(p) = st.query_row([&k.path], |r| r.get(0)).optional()? {
        return Ok(Some(p));
    }
    if !k.title.is_empty() {
        let mut st = c.prepare_cached(
            "SELECT path FROM files WHERE title_folded = ?1 ORDER BY path LIMIT 1",
        )?;
        if let Some(p) = st.query_row([&k.title], |r| r.get(0)).optional()? {
            return Ok(Some(p));
        }
    }
    let mut st = c.prepare_cached("SELECT path FROM files WHERE slug = ?1 LIMIT 2")?;
    for slug in [&k.slug, &k.slug2] {
        let found: Vec<String> = st
            .query_map([slug], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if found.len() == 1 {
            return Ok(found.into_iter().next());
        }
    }
    Ok(None)
}

/// Unresolves every resolved link that `path` (now titled `title_folded`, with
/// `slug`) might capture: one naming its path, its title (a tie now broken
/// differently) or its slug (now ambiguous or newly unique). They are re-resolved
/// by [`resolve_pending`], so an incremental sync resolves exactly as a rebuild.
pub(crate) fn unresolve_capturable(
    c: &Connection,
    path: &str,
    title_folded: &str,
    slug: &str,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE links SET resolved = NULL WHERE resolved IS NOT NULL
           AND (key_path = ?1 OR key_title = ?2 OR key_slug = ?3 OR key_slug2 = ?3)",
    )?
    .execute(params![path, title_folded, slug])?;
    Ok(())
}

/// Resolves every link whose `resolved` is NULL. Returns (newly resolved, still dangling).
pub(crate) fn resolve_pending(c: &Connection) -> rusqlite::Result<(usize, usize)> {
    let pending: Vec<(i64, String)> = c
        .prepare_cached("SELECT id, target_raw FROM links WHERE resolved IS NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut cache: HashMap<String, Option<String>> = HashMap::new();
    let mut upd = c.prepare_cached("UPDATE links SET resolved = ?2 WHERE id = ?1")?;
    let (mut resolved, mut dangling) = (0, 0);
    for (id, raw) in pending {
        let target = match cache.get(&raw) {
            Some(t) => t.clone(),
            None => {
                let t = resolve(c, &raw)?;
                cache.insert(raw, t.clone());
                t
            }
        };
        match target {
            Some(t) => {
                upd.execute(params![id, t])?;
                resolved += 1;
            }
            None => dangling += 1,
        }
    }
    Ok((resolved, dangling))
}

const LINK_COLS: &str = "src, kind, target_raw, label, section, resolved";

fn link_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LinkRow> {
    Ok(LinkRow {
        src: r.get(0)?,
        kind: LinkKind::parse(&r.get::<_, String>(1)?),
        target_raw: r.get(2)?,
        label: r.get(3)?,
        section: r.get(4)?,
        resolved: r.get(5)?,
    })
}

pub(crate) fn links_from(idx: &Index, path: &str) -> Result<Vec<LinkRow>, IndexError> {
    let sql = format!("SELECT {LINK_COLS} FROM links WHERE src = ?1 ORDER BY ord");
    query(idx, &sql, path, "links from")
}

pub(crate) fn links_to(idx: &Index, path: &str) -> Result<Vec<LinkRow>, IndexError> {
    let sql = format!("SELECT {LINK_COLS} FROM links WHERE resolved = ?1 ORDER BY src, ord");
    query(idx, &sql, path, "links to")
}

pub(crate) fn cited_by(idx: &Index, path: &str) -> Result<Vec<String>, IndexError> {
    strings(
        idx,
        "SELECT source FROM said WHERE path = ?1 ORDER BY source",
        path,
        "cited by",
    )
}

pub(crate) fn citing(idx: &Index, source: &str) -> Result<Vec<String>, IndexError> {
    strings(
        idx,
        "SELECT path FROM said WHERE source = ?1 ORDER BY path",
        source,
        "citing",
    )
}

fn strings(idx: &Index, sql: &str, arg: &str, op: &'static str) -> Result<Vec<String>, IndexError> {
    let mut st = idx.conn.prepare_cached(sql).map_err(idx.err(op))?;
    let rows = st.query_map([arg], |r| r.get(0)).map_err(idx.err(op))?;
    rows.collect::<Result<_, _>>().map_err(idx.err(op))
}

fn query(idx: &Index, sql: &str, arg: &str, op: &'static str) -> Result<Vec<LinkRow>, IndexError> {
    let mut st = idx.conn.prepare_cached(sql).map_err(idx.err(op))?;
    let rows = st.query_map([arg], link_row).map_err(idx.err(op))?;
    rows.collect::<Result<_, _>>().map_err(idx.err(op))
}

pub(crate) fn mentions_of(idx: &Index, name: &str) -> Result<Vec<MentionRow>, IndexError> {
    let op = "mentions of entity";
    let mut st = idx
        .conn
        .prepare_cached(
            "SELECT m.path, e.name, e.kind, m.role FROM entities e
             JOIN mentions m ON m.entity_id = e.id WHERE e.folded = ?1 ORDER BY m.path",
        )
        .map_err(idx.err(op))?;
    let rows = st
        .query_map([fold_name(name)], |r| {
            Ok(MentionRow {
                path: r.get(0)?,
                entity: r.get(1)?,
                kind: r.get(2)?,
                role: r.get(3)?,
            })
        })
        .map_err(idx.err(op))?;
    rows.collect::<Result<_, _>>().map_err(idx.err(op))
}
