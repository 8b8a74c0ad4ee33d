//! A canonical dump of an index's content, for checking that an index equals a
//! fresh rebuild (`gitloom doctor`, the property and torture tests).
//!
//! Row ids that depend on insertion order (sections, links, entities) are replaced
//! by the stable keys they stand for (`path`+`ord`, the folded entity name), so two
//! indexes of one tree compare equal however they were built. The FTS tables are
//! dumped through their owners' rows, so a stray or missing FTS row shows up too.

use std::collections::BTreeMap;

use rusqlite::types::ValueRef;

use crate::{Index, IndexError};

/// Table name → its rows, each rendered as one JSON array, sorted.
pub type Snapshot = BTreeMap<&'static str, Vec<String>>;

/// One query per logical table; the first column set is the stable key.
const QUERIES: &[(&str, &str)] = &[
    ("meta", "SELECT key, value FROM meta"),
    ("files", "SELECT * FROM files"),
    (
        "fts",
        "SELECT f.path, x.title, x.summary, x.cues, x.entities, x.tags, x.body
         FROM fts x LEFT JOIN files f ON f.id = x.rowid",
    ),
    (
        "sections",
        "SELECT path, ord, anchor, heading, start_line, end_line, text FROM sections",
    ),
    (
        "sections_fts",
        "SELECT s.path, s.ord, x.heading, x.text
         FROM sections_fts x LEFT JOIN sections s ON s.id = x.rowid",
    ),
    ("cues", "SELECT path, ord, text FROM cues"),
    (
        "links",
        "SELECT src, ord, kind, target_raw, label, section, resolved FROM links",
    ),
    ("entities", "SELECT folded, name, kind FROM entities"),
    (
        "mentions",
        "SELECT e.folded, m.path, m.role FROM mentions m LEFT JOIN entities e ON e.id = m.entity_id",
    ),
    (
        "entity_keys",
        "SELECT k.key, e.folded FROM entity_keys k LEFT JOIN entities e ON e.id = k.entity_id",
    ),
    (
        "timeline",
        "SELECT path, ord, date, date_unix, text FROM timeline",
    ),
    (
        "topics",
        "SELECT tier, topic, parent, direct, total FROM topics",
    ),
    ("problems", "SELECT path, message FROM problems"),
];

fn json(v: ValueRef<'_>) -> serde_json::Value {
    match v {
        ValueRef::Null => serde_json::Value::Null,
        ValueRef::Integer(i) => i.into(),
        ValueRef::Real(f) => serde_json::Number::from_f64(f)
            .map(serde_json::Value::Number)
            .unwrap_or_else(|| f.to_string().into()),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
        ValueRef::Blob(b) => format!("<{} bytes>", b.len()).into(),
    }
}

pub(crate) fn snapshot(idx: &Index) -> Result<Snapshot, IndexError> {
    let mut out = Snapshot::new();
    for (table, sql) in QUERIES {
        let mut st = idx.conn.prepare(sql).map_err(idx.err("snapshot"))?;
        let n = st.column_count();
        let mut rows = st
            .query_map([], |r| {
                let mut row = Vec::with_capacity(n);
                for i in 0..n {
                    row.push(json(r.get_ref(i)?));
                }
                Ok(serde_json::Value::Array(row).to_string())
            })
            .map_err(idx.err("snapshot"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(idx.err("snapshot"))?;
        rows.sort();
        out.insert(table, rows);
    }
    Ok(out)
}

/// How two snapshots differ: one line per table that differs, with up to `sample`
/// rows found only on each side. Empty when they are equal.
pub fn snapshot_diff(have: &Snapshot, want: &Snapshot, sample: usize) -> Vec<String> {
    let mut out = Vec::new();
    let empty = Vec::new();
    let tables: std::collections::BTreeSet<&&str> = have.keys().chain(want.keys()).collect();
    for t in tables {
        let a = have.get(*t).unwrap_or(&empty);
        let b = want.get(*t).unwrap_or(&empty);
        if a == b {
            continue;
        }
        let only = |x: &[String], y: &[String]| -> Vec<String> {
            let ys: std::collections::HashSet<&String> = y.iter().collect();
            x.iter().filter(|r| !ys.contains(r)).cloned().collect()
        };
        let extra = only(a, b);
        let missing = only(b, a);
        let mut line = format!(
            "table {t}: {} row(s) only in the index, {} only in a rebuild",
            extra.len(),
            missing.len()
        );
        for r in extra.iter().take(sample) {
            line.push_str(&format!("\n    index:   {}", clip(r)));
        }
        for r in missing.iter().take(sample) {
            line.push_str(&format!("\n    rebuild: {}", clip(r)));
        }
        out.push(line);
    }
    out
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 200 {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(200).collect::<String>())
    }
}

/// A link whose target resolves to no indexed memory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DanglingLink {
    pub src: String,
    pub kind: String,
    pub target: String,
}

pub(crate) fn dangling_links(idx: &Index) -> Result<Vec<DanglingLink>, IndexError> {
    let mut st = idx
        .conn
        .prepare("SELECT src, kind, target_raw FROM links WHERE resolved IS NULL ORDER BY src, ord")
        .map_err(idx.err("dangling links"))?;
    st.query_map([], |r| {
        Ok(DanglingLink {
            src: r.get(0)?,
            kind: r.get(1)?,
            target: r.get(2)?,
        })
    })
    .map_err(idx.err("dangling links"))?
    .collect::<Result<Vec<_>, _>>()
    .map_err(idx.err("dangling links"))
}

/// SQLite's own consistency checks: `PRAGMA integrity_check` and the FTS5
/// `integrity-check` of both full-text tables. Returns what they found.
pub(crate) fn integrity(idx: &Index) -> Result<Vec<String>, IndexError> {
    let mut out = Vec::new();
    let mut st = idx
        .conn
        .prepare("PRAGMA integrity_check")
        .map_err(idx.err("integrity check"))?;
    let rows = st
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(idx.err("integrity check"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(idx.err("integrity check"))?;
    out.extend(rows.into_iter().filter(|r| r != "ok"));
    for t in ["fts", "sections_fts"] {
        if let Err(e) = idx.conn.execute(
            &format!("INSERT INTO {t}({t}) VALUES('integrity-check')"),
            [],
        ) {
            out.push(format!("{t}: {e}"));
        }
    }
    Ok(out)
}
