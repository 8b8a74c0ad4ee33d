//! Counts for `gitloom stats` and the problem list.

use std::collections::BTreeMap;

use crate::{Index, IndexError, Problem};

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IndexStats {
    pub files: u64,
    pub sections: u64,
    pub cues: u64,
    pub links: u64,
    pub dangling_links: u64,
    pub entities: u64,
    pub mentions: u64,
    pub timeline: u64,
    pub problems: u64,
    /// Files per tier (`facts` → n); every tier is present.
    pub per_tier: BTreeMap<String, u64>,
}

pub(crate) fn stats(idx: &Index) -> Result<IndexStats, IndexError> {
    let op = "stats";
    let count = |sql: &str| -> Result<u64, IndexError> {
        idx.conn
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(idx.err(op))
    };
    let mut per_tier: BTreeMap<String, u64> = gitloom_model::Tier::ALL
        .iter()
        .map(|t| (t.as_str().to_owned(), 0))
        .collect();
    {
        let mut st = idx
            .conn
            .prepare_cached("SELECT tier, total FROM topics WHERE topic = ''")
            .map_err(idx.err(op))?;
        let rows = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(idx.err(op))?;
        for row in rows {
            let (t, n) = row.map_err(idx.err(op))?;
            per_tier.insert(t, n.max(0) as u64);
        }
    }
    Ok(IndexStats {
        files: count("SELECT count(*) FROM files")?,
        sections: count("SELECT count(*) FROM sections")?,
        cues: count("SELECT count(*) FROM cues")?,
        links: count("SELECT count(*) FROM links")?,
        dangling_links: count("SELECT count(*) FROM links WHERE resolved IS NULL")?,
        entities: count("SELECT count(*) FROM entities")?,
        mentions: count("SELECT count(*) FROM mentions")?,
        timeline: count("SELECT count(*) FROM timeline")?,
        problems: count("SELECT count(*) FROM problems")?,
        per_tier,
    })
}

pub(crate) fn problems(idx: &Index) -> Result<Vec<Problem>, IndexError> {
    let op = "list problems";
    let mut st = idx
        .conn
        .prepare_cached("SELECT path, message FROM problems ORDER BY path")
        .map_err(idx.err(op))?;
    let rows = st
        .query_map([], |r| {
            Ok(Problem {
                path: r.get(0)?,
                message: r.get(1)?,
            })
        })
        .map_err(idx.err(op))?;
    rows.collect::<Result<_, _>>().map_err(idx.err(op))
}
