//! The topic tree: per-topic counts maintained incrementally on every apply, so a
//! listing at any depth reads only the rows of its children.

use std::collections::BTreeMap;

use gitloom_model::Tier;
use rusqlite::{Connection, params};

use crate::{Index, IndexError};

/// A topic with its counts. `topic` is the full path including the tier
/// (`facts`, `facts/work`); `name` its last component.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TopicCount {
    pub topic: String,
    pub name: String,
    /// Files directly in this topic.
    pub direct: u64,
    /// Files in this topic and every topic below it.
    pub total: u64,
}

/// A file listed directly in a topic.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TreeFile {
    pub path: String,
    pub title: String,
}

/// One level of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct TreeListing {
    /// The listed topic (`None` = the root, whose children are the tiers).
    pub topic: Option<String>,
    /// Files in the subtree of the listed topic.
    pub total: u64,
    pub children: Vec<TopicCount>,
    pub files: Vec<TreeFile>,
}

/// Count changes accumulated during an apply and written once at its end.
#[derive(Default)]
pub(crate) struct TopicDeltas {
    /// (tier, topic below the tier) → (direct, total)
    map: BTreeMap<(String, String), (i64, i64)>,
}

fn parent(topic: &str) -> Option<&str> {
    if topic.is_empty() {
        None
    } else {
        Some(topic.rfind('/').map(|i| &topic[..i]).unwrap_or(""))
    }
}

impl TopicDeltas {
    pub(crate) fn add(&mut self, tier: &str, topic: &str, n: i64) {
        self.map
            .entry((tier.to_owned(), topic.to_owned()))
            .or_default()
            .0 += n;
        let mut t = Some(topic);
        while let Some(cur) = t {
            self.map
                .entry((tier.to_owned(), cur.to_owned()))
                .or_default()
                .1 += n;
            t = parent(cur);
        }
    }

    pub(crate) fn flush(&self, c: &Connection) -> rusqlite::Result<()> {
        let mut up = c.prepare_cached(
            "INSERT INTO topics (tier, topic, parent, direct, total) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (tier, topic) DO UPDATE
               SET direct = direct + excluded.direct, total = total + excluded.total",
        )?;
        let mut del =
            c.prepare_cached("DELETE FROM topics WHERE tier = ?1 AND topic = ?2 AND total <= 0")?;
        for ((tier, topic), (d, t)) in &self.map {
            if *d == 0 && *t == 0 {
                continue;
            }
            up.execute(params![tier, topic, parent(topic), d, t])?;
            if *t < 0 {
                del.execute(params![tier, topic])?;
            }
        }
        Ok(())
    }
}

fn full(tier: &str, topic: &str) -> String {
    if topic.is_empty() {
        tier.to_owned()
    } else {
        format!("{tier}/{topic}")
    }
}

fn count_row(tier: &str, topic: &str, direct: i64, total: i64) -> TopicCount {
    let f = full(tier, topic);
    TopicCount {
        name: f.rsplit('/').next().unwrap_or_default().to_owned(),
        topic: f,
        direct: direct.max(0) as u64,
        total: total.max(0) as u64,
    }
}

pub(crate) fn tree(idx: &Index, topic: Option<&str>) -> Result<TreeListing, IndexError> {
    let Some(topic) = topic
        .map(|t| t.trim().trim_matches('/'))
        .filter(|t| !t.is_empty())
    else {
        let mut children = Vec::new();
        let mut st = idx
            .conn
            .prepare_cached("SELECT tier, direct, total FROM topics WHERE topic = '' ORDER BY tier")
            .map_err(idx.err("list tiers"))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(idx.err("list tiers"))?;
        for row in rows {
            let (tier, d, t) = row.map_err(idx.err("list tiers"))?;
            children.push(count_row(&tier, "", d, t));
        }
        return Ok(TreeListing {
            topic: None,
            total: children.iter().map(|c| c.total).sum(),
            children,
            files: Vec::new(),
        });
    };
    let (tier, rest) = topic.split_once('/').unwrap_or((topic, ""));
    let tier = tier.parse::<Tier>().map_err(|m| IndexError::Invalid {
        path: idx.path.clone(),
        message: format!("topic {topic:?}: {m}"),
    })?;
    let tier = tier.as_str();
    let total: i64 = idx
        .conn
        .prepare_cached("SELECT total FROM topics WHERE tier = ?1 AND topic = ?2")
        .and_then(|mut s| {
            s.query_row(params![tier, rest], |r| r.get(0))
                .or_else(|err| match err {
                    rusqlite::Error::QueryReturnedNoRows => Ok(0),
                    other => Err(other),
                })
        })
        .map_err(idx.err("list topic"))?;
    let mut children = Vec::new();
    {
        let mut st = idx
            .conn
            .prepare_cached(
                "SELECT topic, direct, total FROM topics WHERE tier = ?1 AND parent = ?2 ORDER BY topic",
            )
            .map_err(idx.err("list topic"))?;
        let rows = st
            .query_map(params![tier, rest], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(idx.err("list topic"))?;
        for row in rows {
            let (t, d, n) = row.map_err(idx.err("list topic"))?;
            children.push(count_row(tier, &t, d, n));
        }
    }
    let mut files = Vec::new();
    {
        let mut st = idx
            .conn
            .prepare_cached(
                "SELECT path, title FROM files WHERE tier = ?1 AND topic = ?2 ORDER BY path",
            )
            .map_err(idx.err("list topic files"))?;
        let rows = st
            .query_map(params![tier, rest], |r| {
                Ok(TreeFile {
                    path: r.get(0)?,
                    title: r.get(1)?,
                })
            })
            .map_err(idx.err("list topic files"))?;
        for row in rows {
            files.push(row.map_err(idx.err("list topic files"))?);
        }
    }
    Ok(TreeListing {
        topic: Some(full(tier, rest)),
        total: total.max(0) as u64,
        children,
        files,
    })
}

pub(crate) fn all(idx: &Index) -> Result<Vec<TopicCount>, IndexError> {
    let mut st = idx
        .conn
        .prepare_cached("SELECT tier, topic, direct, total FROM topics ORDER BY tier, topic")
        .map_err(idx.err("list topics"))?;
    let rows = st
        .query_map([], |r| {
            Ok(count_row(
                &r.get::<_, String>(0)?,
                &r.get::<_, String>(1)?,
                r.get(2)?,
                r.get(3)?,
            ))
        })
        .map_err(idx.err("list topics"))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(idx.err("list topics"))
}
