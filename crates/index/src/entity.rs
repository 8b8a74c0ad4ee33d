//! The entity arm's lookups: which known entities a query names, and which files
//! mention them (plan item R12).
//!
//! Query n-grams (up to four words, case- and diacritic-folded) are looked up in
//! the entity table; a person is also found by first name or surname alone ("alex"
//! or "park" → Alex Park), the way people refer to people they know.

use std::collections::{BTreeMap, HashSet};

use gitloom_model::fold_name;

use crate::query::is_stopword;
use crate::{Index, IndexError};

/// A file that mentions entities named in the query.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EntityHit {
    pub path: String,
    /// Raw arm score: one per matched entity, weighted towards rarely mentioned
    /// entities, plus one when the file's title names the entity (it is about it).
    pub score: f64,
    /// Display names of the matched entities.
    pub entities: Vec<String>,
    /// Roles the file gives them (`manager`, `office`, …), where stated.
    pub roles: Vec<String>,
}

/// An entity found in a query.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EntityMatch {
    pub id: i64,
    pub name: String,
    pub kind: Option<String>,
    /// The query words that named it.
    pub alias: String,
    /// Where those words start among the query's folded words (`fold_name(query)`
    /// split on spaces): which of several names comes first.
    pub at: usize,
    /// Files that mention it.
    pub mentions: i64,
    /// Mentioned in a quarter of a store of 20 files or more: it does not pick
    /// memories out (the user; both speakers of a conversation).
    pub common: bool,
}

pub(crate) fn entities_in(idx: &Index, query: &str) -> Result<Vec<EntityMatch>, IndexError> {
    let op = "entity lookup";
    let words: Vec<String> = fold_name(query)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let mut used = vec![false; words.len()];
    let mut out: Vec<EntityMatch> = Vec::new();
    let mut exact = idx
        .conn
        .prepare_cached("SELECT id, name, kind FROM entities WHERE folded = ?1")
        .map_err(idx.err(op))?;
    let mut tail = idx
        .conn
        .prepare_cached(
            "SELECT e.id, e.name, e.kind FROM entity_keys k JOIN entities e ON e.id = k.entity_id
             WHERE k.key = ?1 ORDER BY e.folded",
        )
        .map_err(idx.err(op))?;
    let mut by_one_name = idx
        .conn
        .prepare_cached(
            "SELECT id, name, kind FROM entities WHERE kind = 'person'
               AND ((folded > ?1 AND folded < ?2) OR folded LIKE ?3 ESCAPE '\\')
             ORDER BY folded",
        )
        .map_err(idx.err(op))?;
    let files: i64 = idx
        .conn
        .prepare_cached("SELECT count(*) FROM files")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(idx.err(op))?;
    let mut count = idx
        .conn
        .prepare_cached("SELECT count(*) FROM mentions WHERE entity_id = ?1")
        .map_err(idx.err(op))?;
    let vocab = if words.len() >= LONG_TEXT {
        Some(vocabulary(idx)?)
    } else {
        None
    };
    let mut seen = HashSet::new();
    for n in (1..=4.min(words.len())).rev() {
        for start in 0..=words.len() - n {
            if used[start..start + n].iter().any(|u| *u) {
                continue;
            }
            let gram = words[start..start + n].join(" ");
            if n == 1 && (gram.len() < 3 || is_stopword(&gram)) {
                continue;
            }
            if let Some(v) = &vocab
                && !words[start..start + n].iter().all(|w| v.knows(w))
            {
                continue;
            }
            let mut found: Vec<(i64, String, Option<String>)> = exact
                .query_map([&gram], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(idx.err(op))?
                .collect::<Result<_, _>>()
                .map_err(idx.err(op))?;
            if found.is_empty() && n > 1 {
                found = tail
                    .query_map([&gram], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .map_err(idx.err(op))?
                    .collect::<Result<_, _>>()
                    .map_err(idx.err(op))?;
            }
            if n == 1 {
                // "alex " < folded < "alex!" selects names starting with the word,
                // "% park" names ending with it. A first name or a surname also stands
                // for the full names it begins or ends where the store knows both
                // ("Alex" in one memory, "Alex Park" in another): one person,
                // named both ways.
                let surname = format!(
                    "% {}",
                    gram.replace('\\', "\\\\")
                        .replace('%', "\\%")
                        .replace('_', "\\_")
                );
                let full: Vec<(i64, String, Option<String>)> = by_one_name
                    .query_map([format!("{gram} "), format!("{gram}!"), surname], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })
                    .map_err(idx.err(op))?
                    .collect::<Result<_, _>>()
                    .map_err(idx.err(op))?;
                found.extend(full);
            }
            if found.is_empty() {
                continue;
            }
            used[start..start + n].iter_mut().for_each(|u| *u = true);
            for (id, name, kind) in found {
                if seen.insert(id) {
                    let mentions: i64 = count.query_row([id], |r| r.get(0)).map_err(idx.err(op))?;
                    let common = files >= 20 && mentions * 4 > files;
                    out.push(EntityMatch {
                        id,
                        name,
                        kind,
                        alias: gram.clone(),
                        at: start,
                        mentions,
                        common,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Texts of this many words or more (a session's transcript, looked up whole during
/// ingestion) are first held against the entity tables' words: every one of their
/// n-grams would otherwise cost up to three SQL lookups, one of them a `LIKE` scan,
/// while one scan of the tables lets the n-grams naming nothing be skipped. A query
/// (a few words) is cheaper looked up directly.
const LONG_TEXT: usize = 64;

/// Every word of every entity's folded name and of every lookup key, ASCII
/// lower-cased (as SQLite's `LIKE` compares).
struct Vocabulary(HashSet<String>);

impl Vocabulary {
    /// Whether `word` can be part of a name the entity lookups would find. Each of
    /// them needs it as a whole word of a folded name or key: `folded = gram` and
    /// `key = gram` match whole names, the first-name range `(w , w!)` selects names
    /// whose first word is `w`, and `LIKE '% w'` names whose last word is `w`
    /// (ASCII case aside, hence the folding on both sides). So a gram with a word
    /// not in here finds nothing, and skipping it changes no result.
    fn knows(&self, word: &str) -> bool {
        if word.bytes().any(|b| b.is_ascii_uppercase()) {
            self.0.contains(&word.to_ascii_lowercase())
        } else {
            self.0.contains(word)
        }
    }
}

fn vocabulary(idx: &Index) -> Result<Vocabulary, IndexError> {
    let op = "entity vocabulary";
    let mut words = HashSet::new();
    let mut names = idx
        .conn
        .prepare_cached("SELECT folded FROM entities UNION ALL SELECT key FROM entity_keys")
        .map_err(idx.err(op))?;
    let mut rows = names.query([]).map_err(idx.err(op))?;
    while let Some(row) = rows.next().map_err(idx.err(op))? {
        let name: String = row.get(0).map_err(idx.err(op))?;
        for w in name.split(' ') {
            if !words.contains(w) {
                words.insert(w.to_ascii_lowercase());
            }
        }
    }
    Ok(Vocabulary(words))
}

/// The entity arm over entities already found in a query (see [`entities_in`]).
pub(crate) fn entity_hits(
    idx: &Index,
    matches: &[EntityMatch],
) -> Result<Vec<EntityHit>, IndexError> {
    let op = "entity arm";
    let mut by_path: BTreeMap<String, EntityHit> = BTreeMap::new();
    let mut mentions = idx
        .conn
        .prepare_cached(
            "SELECT m.path, m.role, f.title_folded FROM mentions m JOIN files f ON f.path = m.path WHERE m.entity_id = ?1",
        )
        .map_err(idx.err(op))?;
    for m in matches {
        let rows: Vec<(String, Option<String>, String)> = mentions
            .query_map([m.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(idx.err(op))?
            .collect::<Result<_, _>>()
            .map_err(idx.err(op))?;
        // An entity in a quarter of the store or more (the user, both speakers of a
        // conversation) does not pick memories out; listing them would only add
        // noise to fusion, in path order.
        if m.common {
            continue;
        }
        // An entity mentioned everywhere (the user's city) says less than one
        // mentioned in two files.
        let weight = 1.0 / (1.0 + (rows.len() as f64).ln());
        let folded = fold_name(&m.name);
        for (path, role, title) in rows {
            let h = by_path.entry(path.clone()).or_insert_with(|| EntityHit {
                path,
                score: 0.0,
                entities: Vec::new(),
                roles: Vec::new(),
            });
            h.score += weight;
            if title.contains(&folded) || title.contains(&m.alias) {
                h.score += 1.0;
            }
            h.entities.push(m.name.clone());
            if let Some(r) = role {
                h.roles.push(r);
            }
        }
    }
    let mut out: Vec<EntityHit> = by_path.into_values().collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(out)
}

/// Which of `paths` mention any of `entities`: one indexed lookup per path, so a
/// common entity (the user, in most of a large store) costs no more than a rare one.
pub(crate) fn which_mention(
    idx: &Index,
    entities: &[i64],
    paths: &[&str],
) -> Result<HashSet<String>, IndexError> {
    let op = "entity mentions";
    let mut st = idx
        .conn
        .prepare_cached("SELECT entity_id FROM mentions WHERE path = ?1")
        .map_err(idx.err(op))?;
    let mut out = HashSet::new();
    for p in paths {
        let ids = st
            .query_map([p], |r| r.get::<_, i64>(0))
            .map_err(idx.err(op))?;
        for id in ids {
            if entities.contains(&id.map_err(idx.err(op))?) {
                out.insert((*p).to_owned());
                break;
            }
        }
    }
    Ok(out)
}

/// The files that introduce the entities `entities`, or any entity whose name begins
/// with one of the one-word `given` names ("alex" → "Alex Park"): of the
/// files mentioning them, those said first, by `created` and then by the earliest
/// message they cite (`sources: [… #m4]`); the one file that mentions them. Empty
/// when several mentions have no order (one date and message for all): a person is
/// introduced where they first come up, and a store that does not say when they came
/// up says nothing.
pub(crate) fn introductions(
    idx: &Index,
    entities: &[i64],
    given: &[&str],
) -> Result<Vec<String>, IndexError> {
    let op = "entity introductions";
    let mut ids: Vec<i64> = entities.to_vec();
    let mut starting = idx
        .conn
        .prepare_cached("SELECT id FROM entities WHERE folded > ?1 AND folded < ?2")
        .map_err(idx.err(op))?;
    for g in given {
        let found = starting
            .query_map([format!("{g} "), format!("{g}!")], |r| r.get::<_, i64>(0))
            .map_err(idx.err(op))?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(idx.err(op))?;
        ids.extend(found);
    }
    let mut files = idx
        .conn
        .prepare_cached(
            "SELECT m.path, f.created_unix FROM mentions m JOIN files f ON f.path = m.path
             WHERE m.entity_id = ?1",
        )
        .map_err(idx.err(op))?;
    let mut created: BTreeMap<String, i64> = BTreeMap::new();
    for id in ids {
        let rows = files
            .query_map([id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?))
            })
            .map_err(idx.err(op))?;
        for row in rows {
            let (path, at) = row.map_err(idx.err(op))?;
            created.insert(path, at.unwrap_or(i64::MAX));
        }
    }
    let Some(first_day) = created.values().min().copied() else {
        return Ok(Vec::new());
    };
    // Only the files of the first date are told apart by message: an entity
    // mentioned in thousands of files costs one JSON read per file of that date.
    let mut extra = idx
        .conn
        .prepare_cached("SELECT extra FROM files WHERE path = ?1")
        .map_err(idx.err(op))?;
    let mut said: Vec<(u32, String)> = Vec::new();
    for (path, _) in created.iter().filter(|(_, at)| **at == first_day) {
        let json: String = extra.query_row([path], |r| r.get(0)).map_err(idx.err(op))?;
        said.push((first_cited_message(&json), path.clone()));
    }
    let Some(first) = said.iter().map(|(m, _)| *m).min() else {
        return Ok(Vec::new());
    };
    let all_alike = said.len() == created.len() && said.iter().all(|(m, _)| *m == first);
    if created.len() > 1 && all_alike {
        return Ok(Vec::new());
    }
    Ok(said
        .into_iter()
        .filter(|(m, _)| *m == first)
        .map(|(_, p)| p)
        .collect())
}

/// The earliest message a file cites in `sources:` (`…/session.md#m4,m6` → 4), read
/// from the unknown-keys JSON the index keeps; 0 when it cites none.
fn first_cited_message(extra: &str) -> u32 {
    let Ok(map) = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(extra) else {
        return 0;
    };
    gitloom_model::cite::sources(&map)
        .flat_map(|s| gitloom_model::Citation::parse(s).messages)
        .min()
        .map_or(0, |m| u32::try_from(m).unwrap_or(u32::MAX))
}

/// The entities each of `paths` mentions (ids), for paths that mention any.
pub(crate) fn entities_of(
    idx: &Index,
    paths: &[&str],
) -> Result<std::collections::HashMap<String, Vec<i64>>, IndexError> {
    let op = "entity mentions";
    let mut st = idx
        .conn
        .prepare_cached("SELECT entity_id FROM mentions WHERE path = ?1 ORDER BY entity_id")
        .map_err(idx.err(op))?;
    let mut out = std::collections::HashMap::new();
    for p in paths {
        let ids = st
            .query_map([p], |r| r.get::<_, i64>(0))
            .map_err(idx.err(op))?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(idx.err(op))?;
        if !ids.is_empty() {
            out.insert((*p).to_owned(), ids);
        }
    }
    Ok(out)
}
