//! What gets embedded: every cue, every `##` section of a file that has sections
//! (else the file's title, summary and body as one text), and the words of each
//! message the file cites (see the `said` table). The engine
//! embeds these (through a cache keyed by the text's hash) and scans them.

use std::collections::HashMap;

use crate::{Index, IndexError};

/// Whether a unit is a cue (a question the memory answers) or prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitKind {
    Cue,
    Body,
}

/// The label prefix of a unit holding a cited message's words
/// (`said:sessions/…md#m3`); no section anchor can start with it (anchors are slugs).
pub const SAID_LABEL: &str = "said:";

/// One text to embed, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedUnit {
    pub path: String,
    pub kind: UnitKind,
    /// The cue itself, or the section anchor (`""` for a whole file or its head).
    pub label: String,
    pub text: String,
}

fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Units of every indexed file, or of the given paths only, in path order.
pub(crate) fn units(idx: &Index, paths: Option<&[String]>) -> Result<Vec<EmbedUnit>, IndexError> {
    let op = "embedding units";
    let c = &idx.conn;
    let mut files: Vec<(String, String, String, String)> = Vec::new();
    {
        let mut st = c
            .prepare_cached(
                "SELECT path, title, coalesce(summary, ''), body FROM files ORDER BY path",
            )
            .map_err(idx.err(op))?;
        let mut one = c
            .prepare_cached(
                "SELECT path, title, coalesce(summary, ''), body FROM files WHERE path = ?1",
            )
            .map_err(idx.err(op))?;
        let map = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?));
        match paths {
            None => {
                for row in st.query_map([], map).map_err(idx.err(op))? {
                    files.push(row.map_err(idx.err(op))?);
                }
            }
            Some(ps) => {
                let mut ps = ps.to_vec();
                ps.sort();
                for p in ps {
                    for row in one.query_map([&p], map).map_err(idx.err(op))? {
                        files.push(row.map_err(idx.err(op))?);
                    }
                }
            }
        }
    }
    let mut cues: HashMap<String, Vec<String>> = HashMap::new();
    let mut sections: HashMap<String, Vec<(String, String, String)>> = HashMap::new();
    let mut said: HashMap<String, Vec<(String, String)>> = HashMap::new();
    {
        let mut sd = c
            .prepare_cached("SELECT source, text FROM said WHERE path = ?1 ORDER BY source")
            .map_err(idx.err(op))?;
        let mut st = c
            .prepare_cached("SELECT text FROM cues WHERE path = ?1 ORDER BY ord")
            .map_err(idx.err(op))?;
        let mut ss = c
            .prepare_cached(
                "SELECT anchor, heading, text FROM sections WHERE path = ?1 ORDER BY ord",
            )
            .map_err(idx.err(op))?;
        for (path, ..) in &files {
            let v = st
                .query_map([path], |r| r.get::<_, String>(0))
                .map_err(idx.err(op))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(idx.err(op))?;
            cues.insert(path.clone(), v);
            let v = ss
                .query_map([path], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(idx.err(op))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(idx.err(op))?;
            sections.insert(path.clone(), v);
            let v = sd
                .query_map([path], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(idx.err(op))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(idx.err(op))?;
            said.insert(path.clone(), v);
        }
    }
    let mut out = Vec::new();
    for (path, title, summary, body) in files {
        for cue in cues.remove(&path).unwrap_or_default() {
            out.push(EmbedUnit {
                path: path.clone(),
                kind: UnitKind::Cue,
                label: cue.clone(),
                text: cue,
            });
        }
        let secs = sections.remove(&path).unwrap_or_default();
        if secs.is_empty() {
            out.push(EmbedUnit {
                path: path.clone(),
                kind: UnitKind::Body,
                label: String::new(),
                text: join(&[&title, &summary, &body]),
            });
        } else {
            let intro = body
                .split("\n## ")
                .next()
                .filter(|_| !body.starts_with("## "))
                .unwrap_or_default();
            out.push(EmbedUnit {
                path: path.clone(),
                kind: UnitKind::Body,
                label: String::new(),
                text: join(&[&title, &summary, intro]),
            });
            for (anchor, heading, text) in secs {
                out.push(EmbedUnit {
                    path: path.clone(),
                    kind: UnitKind::Body,
                    label: anchor,
                    text: join(&[&format!("{title}: {heading}"), &text]),
                });
            }
        }
        // The cited messages' words, prose of the memory like its body.
        for (source, text) in said.remove(&path).unwrap_or_default() {
            out.push(EmbedUnit {
                path: path.clone(),
                kind: UnitKind::Body,
                label: format!("{SAID_LABEL}{source}"),
                text,
            });
        }
    }
    Ok(out)
}
