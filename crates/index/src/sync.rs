//! Applying a changeset: one transaction per [`SyncBatch`].

use std::collections::HashSet;

use gitloom_model::{Memory, StorePath, When, fold_name};
use rusqlite::{Connection, OptionalExtension, params};

use crate::links::{link_keys, resolve_pending, unresolve_capturable};
use crate::topics::TopicDeltas;
use crate::{Index, IndexError};

/// A memory file as of the synced commit.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedFile {
    pub path: StorePath,
    /// The git blob id of the file's content.
    pub blob: String,
    pub memory: Memory,
    /// The words of the messages the memory cites (its `sources:` anchors into a
    /// session transcript of the same tree), as the speaker said them: embedded beside
    /// the memory's own prose, so a fact cut from a longer message is found by what the
    /// whole message said. Empty for a memory that cites no message.
    pub said: Vec<Said>,
}

/// One cited message: its citation (`sessions/…md#m3`, one message) and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub source: String,
    pub text: String,
}

/// A file that is in the tree but failed to parse. It stays in git; it is reported,
/// never dropped silently.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// One changeset, applied atomically by [`Index::apply`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncBatch {
    pub commit: String,
    pub tree: String,
    /// Clear every row first (a rebuild): `upserted` is then the whole tree.
    pub full: bool,
    /// Paths no longer in the tree, or no longer valid memories.
    pub removed: Vec<String>,
    /// Files added or changed. Paths outside the four tiers are ignored.
    pub upserted: Vec<IndexedFile>,
    /// Replace the problem rows of these paths. A path that is upserted or removed
    /// (and not listed here) loses its problem row.
    pub problems: Vec<Problem>,
}

/// What an apply did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ApplyStats {
    /// Files written (new or changed).
    pub upserted: usize,
    /// Files that were indexed and are now gone.
    pub removed: usize,
    /// Links examined in this apply (new, dangling or pointing at a changed file)
    /// that now resolve to a file.
    pub links_resolved: usize,
    /// Links in the whole index that are dangling after this apply.
    pub links_dangling: usize,
}

const CLEAR_ALL: &str = "
DELETE FROM files; DELETE FROM fts; DELETE FROM sections; DELETE FROM sections_fts;
DELETE FROM cues; DELETE FROM links; DELETE FROM entities; DELETE FROM entity_keys; DELETE FROM mentions;
DELETE FROM timeline; DELETE FROM topics; DELETE FROM problems; DELETE FROM said;";

pub(crate) fn apply(idx: &mut Index, batch: &SyncBatch) -> Result<ApplyStats, IndexError> {
    let path = idx.path.clone();
    let fail_after = idx.fail_after;
    let e = |op: &'static str| {
        let path = path.clone();
        move |source| IndexError::Sql { path, op, source }
    };
    let tx = idx.conn.transaction().map_err(e("begin apply"))?;
    let mut stats = ApplyStats::default();
    let mut deltas = TopicDeltas::default();
    let mut touched_entities: HashSet<i64> = HashSet::new();
    let mut changed: Vec<&str> = Vec::new();
    let mut text = FullTextWrites::default();

    if batch.full {
        tx.execute_batch(CLEAR_ALL).map_err(e("clear index"))?;
    }
    for p in &batch.removed {
        if remove_file(&tx, p, &mut deltas, &mut touched_entities, &mut text)
            .map_err(e("remove file"))?
        {
            stats.removed += 1;
        }
        clear_problem(&tx, p).map_err(e("clear problem"))?;
        changed.push(p);
    }
    for (i, f) in batch.upserted.iter().enumerate() {
        if fail_after.is_some_and(|n| i >= n) {
            return Err(IndexError::Invalid {
                path,
                message: format!("injected failure before upserting {}", f.path),
            });
        }
        let p = f.path.as_str();
        if !f.path.is_memory() {
            continue;
        }
        if !batch.full {
            remove_file(&tx, p, &mut deltas, &mut touched_entities, &mut text)
                .map_err(e("replace file"))?;
            clear_problem(&tx, p).map_err(e("clear problem"))?;
        }
        insert_file(&tx, f, &mut deltas, &mut touched_entities, &mut text)
            .map_err(e("insert file"))?;
        stats.upserted += 1;
        changed.push(p);
    }
    for pr in &batch.problems {
        tx.prepare_cached("INSERT OR REPLACE INTO problems (path, message) VALUES (?1, ?2)")
            .and_then(|mut s| s.execute(params![pr.path, pr.message]))
            .map_err(e("record problem"))?;
    }
    text.write(&tx).map_err(e("write full-text rows"))?;
    deltas.flush(&tx).map_err(e("update topic counts"))?;
    gc_entities(&tx, &touched_entities).map_err(e("drop unused entities"))?;
    canonical_entities(&tx, &touched_entities).map_err(e("settle entity names"))?;
    if !batch.full {
        // Links into a changed or removed file are re-resolved (its title may have changed).
        let mut st = tx
            .prepare_cached("UPDATE links SET resolved = NULL WHERE resolved = ?1")
            .map_err(e("unresolve links"))?;
        for p in &changed {
            st.execute([p]).map_err(e("unresolve links"))?;
        }
        // And links a new or retitled file might now capture from another target.
        for f in &batch.upserted {
            if f.path.is_memory() {
                unresolve_capturable(
                    &tx,
                    f.path.as_str(),
                    &fold_name(&f.memory.front.title),
                    f.path.slug(),
                )
                .map_err(e("unresolve links"))?;
            }
        }
    }
    let (resolved, dangling) = resolve_pending(&tx).map_err(e("resolve links"))?;
    stats.links_resolved = resolved;
    stats.links_dangling = dangling;
    for (k, v) in [("commit", &batch.commit), ("tree", &batch.tree)] {
        tx.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
            params![k, v],
        )
        .map_err(e("record state"))?;
    }
    if batch.full {
        // One segment per full-text table: a full build deletes every old row (a plain
        // FTS5 table records deletions as entries of new segments) and inserts the
        // new ones in several flushes, leaving deleted entries and segments that every
        // later query walks and merges (BENCHMARKS.md, session 23). The rows, and so
        // every query's answer, are the same after the merge.
        tx.execute_batch(
            "INSERT INTO fts (fts) VALUES ('optimize');
             INSERT INTO sections_fts (sections_fts) VALUES ('optimize');",
        )
        .map_err(e("merge full-text segments"))?;
    }
    tx.commit().map_err(e("commit apply"))?;
    Ok(stats)
}

/// One file's row of `fts`.
struct FileText<'a> {
    title: &'a str,
    summary: &'a str,
    cues: String,
    entities: String,
    tags: String,
    body: &'a str,
}

/// The full-text rows an apply deletes (`None`) and inserts, by rowid, kept in the
/// order the files were visited and written together, in rowid order, by
/// [`FullTextWrites::write`] after every file's other rows.
///
/// Why: FTS5 holds a transaction's new terms in memory, and writes them out as a new
/// segment whenever a write's rowid is lower than the one before it (its pending
/// doclists only grow in rowid order: `sqlite3Fts5IndexBeginWrite`). Row ids are path
/// hashes, so visiting files in path order wrote a segment about every second file:
/// a sync of 50 edits left 8–18 segments in `fts` and `sections_fts` where a rebuild
/// leaves one, and every full-text query seeks each of its terms in every segment; a
/// full build wrote thousands and spent its time merging them. In rowid order an apply
/// writes one segment per table (more only past FTS5's 1 MiB of pending terms), and
/// FTS5's own merging keeps the count low. The index holds the same rows either way,
/// so every query's matches and BM25 scores are the same (BENCHMARKS.md, session 30).
#[derive(Default)]
struct FullTextWrites<'a> {
    files: Vec<(i64, Option<FileText<'a>>)>,
    sections: Vec<(i64, Option<(String, String)>)>,
}

impl FullTextWrites<'_> {
    fn write(self, c: &Connection) -> rusqlite::Result<()> {
        let FullTextWrites {
            mut files,
            mut sections,
        } = self;
        // Stable sorts: a rowid deleted and inserted again in one apply (a replaced
        // file, a section id reused) keeps its delete first, which FTS5 takes without
        // a flush, and the delete still reads the old row's text to remove its terms.
        files.sort_by_key(|(id, _)| *id);
        sections.sort_by_key(|(id, _)| *id);
        let mut del = c.prepare_cached("DELETE FROM fts WHERE rowid = ?1")?;
        let mut ins = c.prepare_cached(
            "INSERT INTO fts (rowid, title, summary, cues, entities, tags, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (id, row) in &files {
            match row {
                None => del.execute([id])?,
                Some(t) => ins.execute(params![
                    id, t.title, t.summary, t.cues, t.entities, t.tags, t.body
                ])?,
            };
        }
        let mut del = c.prepare_cached("DELETE FROM sections_fts WHERE rowid = ?1")?;
        let mut ins = c.prepare_cached(
            "INSERT INTO sections_fts (rowid, heading, text) VALUES (?1, ?2, ?3)",
        )?;
        for (id, row) in &sections {
            match row {
                None => del.execute([id])?,
                Some((heading, text)) => ins.execute(params![id, heading, text])?,
            };
        }
        Ok(())
    }
}

fn clear_problem(c: &Connection, path: &str) -> rusqlite::Result<()> {
    c.prepare_cached("DELETE FROM problems WHERE path = ?1")?
        .execute([path])?;
    Ok(())
}

/// Deletes every row of `path`. Returns whether it was indexed.
fn remove_file(
    c: &Connection,
    path: &str,
    deltas: &mut TopicDeltas,
    touched: &mut HashSet<i64>,
    text: &mut FullTextWrites<'_>,
) -> rusqlite::Result<bool> {
    let row: Option<(i64, String, String)> = c
        .prepare_cached("SELECT id, tier, topic FROM files WHERE path = ?1")?
        .query_row([path], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((id, tier, topic)) = row else {
        return Ok(false);
    };
    text.files.push((id, None));
    {
        let mut st = c.prepare_cached("SELECT id FROM sections WHERE path = ?1")?;
        for sid in st.query_map([path], |r| r.get::<_, i64>(0))? {
            text.sections.push((sid?, None));
        }
    }
    {
        let mut st = c.prepare_cached("SELECT entity_id FROM mentions WHERE path = ?1")?;
        let ids = st.query_map([path], |r| r.get::<_, i64>(0))?;
        for id in ids {
            touched.insert(id?);
        }
    }
    for sql in [
        "DELETE FROM sections WHERE path = ?1",
        "DELETE FROM cues WHERE path = ?1",
        "DELETE FROM links WHERE src = ?1",
        "DELETE FROM mentions WHERE path = ?1",
        "DELETE FROM timeline WHERE path = ?1",
        "DELETE FROM said WHERE path = ?1",
        "DELETE FROM files WHERE path = ?1",
    ] {
        c.prepare_cached(sql)?.execute([path])?;
    }
    deltas.add(&tier, &topic, -1);
    Ok(true)
}

fn stamp(w: &Option<When>) -> (Option<String>, Option<i64>) {
    match w {
        Some(w) => (Some(w.to_string()), Some(w.unix_seconds())),
        None => (None, None),
    }
}

/// Every row of one file: its `files` row, then what hangs off it (the words it
/// cites, sections, cues, links, entity mentions, timeline), with its full-text rows
/// queued in `text` and its entities marked in `touched`.
fn insert_file<'a>(
    c: &Connection,
    f: &'a IndexedFile,
    deltas: &mut TopicDeltas,
    touched: &mut HashSet<i64>,
    text: &mut FullTextWrites<'a>,
) -> rusqlite::Result<()> {
    let path = f.path.as_str();
    let fm = &f.memory.front;
    let id = insert_row(c, f)?;
    let entity_names: Vec<&str> = fm.entities.iter().map(|e| e.name.as_str()).collect();
    text.files.push((
        id,
        Some(FileText {
            title: &fm.title,
            summary: fm.summary.as_deref().unwrap_or_default(),
            cues: fm.cues.join("\n"),
            entities: entity_names.join("\n"),
            tags: fm.tags.join(" "),
            body: &f.memory.body,
        }),
    ));
    for said in &f.said {
        c.prepare_cached("INSERT OR IGNORE INTO said (path, source, text) VALUES (?1, ?2, ?3)")?
            .execute(params![path, said.source, said.text])?;
    }
    insert_sections(c, path, &f.memory, text)?;
    for (ord, cue) in fm.cues.iter().enumerate() {
        c.prepare_cached("INSERT OR REPLACE INTO cues (path, ord, text) VALUES (?1, ?2, ?3)")?
            .execute(params![path, ord as i64, cue])?;
    }
    let wikis = f.memory.wikilinks();
    insert_links(c, path, &f.memory, &wikis)?;
    insert_mentions(c, path, &f.memory, &wikis, touched)?;
    for (ord, t) in fm.timeline.iter().enumerate() {
        c.prepare_cached(
            "INSERT INTO timeline (path, ord, date, date_unix, text) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            path,
            ord as i64,
            t.date.to_string(),
            t.date.unix_seconds(),
            t.text
        ])?;
    }
    let tier = f.path.tier().map(|t| t.as_str()).unwrap_or_default();
    deltas.add(tier, f.path.topic(), 1);
    Ok(())
}

/// The file's `files` row (its front matter, body and blob); its id.
fn insert_row(c: &Connection, f: &IndexedFile) -> rusqlite::Result<i64> {
    let path = f.path.as_str();
    let m = &f.memory;
    let fm = &m.front;
    let (created, created_u) = stamp(&fm.created);
    let (updated, updated_u) = stamp(&fm.updated);
    let (vfrom, vfrom_u) = stamp(&fm.valid_from);
    let (vto, vto_u) = stamp(&fm.valid_to);
    let (exp, exp_u) = stamp(&fm.expires_at);
    let tags = serde_json::to_string(&fm.tags).unwrap_or_else(|_| "[]".into());
    let extra = serde_json::to_string(&fm.extra).unwrap_or_else(|_| "{}".into());
    let id = free_id(c, path)?;
    let mut st = c.prepare_cached(
        "INSERT INTO files (path, tier, topic, slug, title, title_folded, summary, body, body_line,
            blob, created, created_unix, updated, updated_unix, valid_from, valid_from_unix,
            valid_to, valid_to_unix, expires_at, expires_at_unix, ttl, confidence, supersedes,
            source, tags, extra, id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
            ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
    )?;
    st.execute(params![
        path,
        f.path.tier().map(|t| t.as_str()).unwrap_or_default(),
        f.path.topic(),
        f.path.slug(),
        fm.title,
        fold_name(&fm.title),
        fm.summary,
        m.body,
        m.body_line as i64,
        f.blob,
        created,
        created_u,
        updated,
        updated_u,
        vfrom,
        vfrom_u,
        vto,
        vto_u,
        exp,
        exp_u,
        fm.ttl,
        fm.confidence.filter(|c| c.is_finite()),
        fm.supersedes.first(),
        fm.source,
        tags,
        extra,
        id,
    ])?;
    Ok(id)
}

/// The body's sections, with their full-text rows queued.
fn insert_sections(
    c: &Connection,
    path: &str,
    m: &Memory,
    text: &mut FullTextWrites<'_>,
) -> rusqlite::Result<()> {
    for (ord, s) in m.sections().into_iter().enumerate() {
        c.prepare_cached(
            "INSERT INTO sections (path, ord, anchor, heading, start_line, end_line, text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            path,
            ord as i64,
            s.anchor,
            s.heading,
            s.start_line as i64,
            s.end_line as i64,
            s.text
        ])?;
        let sid = c.last_insert_rowid();
        text.sections.push((sid, Some((s.heading, s.text))));
    }
    Ok(())
}

/// The file's outgoing links, in order: body wikilinks, `related:`, `supersedes:`
/// (resolved after the batch, `links.rs`).
fn insert_links(
    c: &Connection,
    path: &str,
    m: &Memory,
    wikis: &[gitloom_model::WikiLink],
) -> rusqlite::Result<()> {
    let fm = &m.front;
    let mut link = c.prepare_cached(
        "INSERT INTO links (src, ord, kind, target_raw, label, section, resolved,
            key_path, key_title, key_slug, key_slug2)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, ?9, ?10)",
    )?;
    let mut all: Vec<(&str, &str, Option<&str>, Option<&str>)> = Vec::new();
    for w in wikis {
        all.push(("wiki", &w.target, w.label.as_deref(), w.section.as_deref()));
    }
    for r in &fm.related {
        all.push(("related", &r.target, r.label.as_deref(), None));
    }
    for s in &fm.supersedes {
        all.push(("supersedes", s, None, None));
    }
    for (ord, (kind, target, label, section)) in all.into_iter().enumerate() {
        let k = link_keys(target);
        link.execute(params![
            path,
            ord as i64,
            kind,
            target,
            label,
            section,
            k.as_ref().map(|k| &k.path),
            k.as_ref().map(|k| &k.title),
            k.as_ref().map(|k| &k.slug),
            k.as_ref().map(|k| &k.slug2),
        ])?;
    }
    Ok(())
}

/// The entities the file names (`entities:`, and name-style wikilinks such as
/// `[[Ada Byron]]`), each once, with the keys its name is found by; their ids
/// go into `touched`.
fn insert_mentions(
    c: &Connection,
    path: &str,
    m: &Memory,
    wikis: &[gitloom_model::WikiLink],
    touched: &mut HashSet<i64>,
) -> rusqlite::Result<()> {
    let named = wikis
        .iter()
        .filter(|w| !w.target.contains('/') && !w.target.ends_with(".md"))
        .map(|w| gitloom_model::EntityRef {
            name: w.target.clone(),
            kind: None,
            role: None,
        });
    let ents: Vec<gitloom_model::EntityRef> =
        m.front.entities.iter().cloned().chain(named).collect();
    let mut seen = HashSet::new();
    for ent in &ents {
        let folded = fold_name(&ent.name);
        if folded.is_empty() || !seen.insert(folded.clone()) {
            continue;
        }
        // Name and kind are settled after the whole batch (`canonical_entities`).
        let eid = entity_id(c, &folded, &ent.name, ent.kind.as_deref())?;
        let words: Vec<&str> = folded.split(' ').collect();
        for start in 1..words.len().saturating_sub(1) {
            c.prepare_cached("INSERT OR IGNORE INTO entity_keys (key, entity_id) VALUES (?1, ?2)")?
                .execute(params![words[start..].join(" "), eid])?;
        }
        c.prepare_cached(
            "INSERT OR REPLACE INTO mentions (entity_id, path, role, name, kind)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![eid, path, ent.role, ent.name, ent.kind])?;
        touched.insert(eid);
    }
    Ok(())
}

/// The id of the entity `folded`, inserted (with this name and kind) if it is new.
///
/// A lookup, then a plain one-row insert, and not an upsert (`ON CONFLICT … DO
/// UPDATE … RETURNING`): SQLite runs an upsert inside a statement savepoint, and at
/// every savepoint FTS5 writes the terms it holds for the transaction to disk as a
/// new segment, which it must later merge. The upsert made a sync write a segment
/// of each full-text table per file with an entity, and merge them (4 % of an
/// offline ingestion's CPU, profiled); now a sync writes one segment of each. The
/// rows, and so every query's answer, are the same.
fn entity_id(
    c: &Connection,
    folded: &str,
    name: &str,
    kind: Option<&str>,
) -> rusqlite::Result<i64> {
    let found = c
        .prepare_cached("SELECT id FROM entities WHERE folded = ?1")?
        .query_row([folded], |r| r.get(0))
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    c.prepare_cached("INSERT INTO entities (folded, name, kind) VALUES (?1, ?2, ?3)")?
        .execute(params![folded, name, kind])?;
    Ok(c.last_insert_rowid())
}

fn gc_entities(c: &Connection, touched: &HashSet<i64>) -> rusqlite::Result<()> {
    let mut keys = c.prepare_cached(
        "DELETE FROM entity_keys WHERE entity_id = ?1
           AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity_id = ?1)",
    )?;
    for id in touched {
        keys.execute([id])?;
    }
    let mut st = c.prepare_cached(
        "DELETE FROM entities WHERE id = ?1
           AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity_id = ?1)",
    )?;
    for id in touched {
        st.execute([id])?;
    }
    Ok(())
}

/// Sets each touched entity's name and kind from its mentions, first by path (the
/// kind: the first mention that gives one). A rebuild and any sequence of
/// incremental syncs of one tree so agree, whatever order files arrived in.
fn canonical_entities(c: &Connection, touched: &HashSet<i64>) -> rusqlite::Result<()> {
    let mut st = c.prepare_cached(
        "UPDATE entities SET
            name = (SELECT name FROM mentions WHERE entity_id = ?1 ORDER BY path LIMIT 1),
            kind = (SELECT kind FROM mentions WHERE entity_id = ?1 AND kind IS NOT NULL
                    ORDER BY path LIMIT 1)
         WHERE id = ?1",
    )?;
    for id in touched {
        st.execute([id])?;
    }
    Ok(())
}

/// A file's row id: derived from its path, so every build of the index (incremental
/// or full, in any order) gives a file the same id, and ranking ties broken on the
/// id come out the same. A collision (two paths, one 63-bit hash) probes upwards.
fn free_id(c: &rusqlite::Connection, path: &str) -> rusqlite::Result<i64> {
    let h = blake3::hash(path.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&h.as_bytes()[..8]);
    let mut id = (u64::from_le_bytes(bytes) >> 1) as i64;
    let mut st = c.prepare_cached("SELECT 1 FROM files WHERE id = ?1")?;
    while st.exists([id])? {
        id = id.checked_add(1).unwrap_or(1);
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{indexed, memory_text};
    use crate::{LexicalQuery, segments};

    fn file(i: usize, version: usize) -> IndexedFile {
        let body = format!(
            "Note {i} version {version} about kalaviix{} and labrafeix{}.\n\n\
             ## Plans\n\nTrip {version} to the harbour with ticket {}.\n\n\
             ## People\n\nMet Ben{} at the station.\n",
            i % 7,
            (i + version) % 11,
            i * 31 % 97,
            i % 13
        );
        let text = memory_text(&format!("Memory {i}"), &[&format!("cue {}", i % 17)], &body);
        indexed(&format!("facts/t{}/m{i:04}.md", i % 5), &text).expect("valid memory")
    }

    fn batch(
        commit: &str,
        full: bool,
        upserted: Vec<IndexedFile>,
        removed: Vec<String>,
    ) -> SyncBatch {
        SyncBatch {
            commit: commit.into(),
            tree: format!("tree-{commit}"),
            full,
            removed,
            upserted,
            problems: Vec::new(),
        }
    }

    fn counts(idx: &Index) -> (i64, i64) {
        (
            segments::count(&idx.conn, "fts").expect("fts segments"),
            segments::count(&idx.conn, "sections_fts").expect("sections_fts segments"),
        )
    }

    /// Incremental syncs of edits in hashed (random) rowid order add at most one
    /// segment per full-text table each; the index answers as a fresh full build of
    /// the same files does, scores included. Writing the rows in the order the files
    /// are visited adds a segment about every second file, and fails this.
    #[test]
    fn incremental_syncs_add_at_most_a_segment_each() {
        const N: usize = 300;
        let mut idx = Index::open_in_memory().expect("index");
        let mut current: Vec<Option<IndexedFile>> = (0..N).map(|i| Some(file(i, 0))).collect();
        idx.apply(&batch(
            "c0",
            false,
            current.iter().flatten().cloned().collect(),
            Vec::new(),
        ))
        .expect("import");
        let (fts0, sections0) = counts(&idx);
        for round in 1..=12usize {
            // 30 edited files and one removed, spread over the hashed ids.
            let mut upserted = Vec::new();
            for k in 0..30 {
                let i = (k * 37 + round * 11) % N;
                let f = file(i, round);
                current[i] = Some(f.clone());
                upserted.push(f);
            }
            let gone = (round * 53 + 5) % N;
            let removed = match current[gone].take() {
                Some(f) => vec![f.path.as_str().to_owned()],
                None => Vec::new(),
            };
            upserted.retain(|f| f.path.as_str() != removed.first().map_or("", String::as_str));
            idx.apply(&batch(&format!("c{round}"), false, upserted, removed))
                .expect("sync");
            let (fts, sections) = counts(&idx);
            let bound = |base: i64| base + i64::try_from(round).expect("small");
            assert!(
                fts <= bound(fts0) && sections <= bound(sections0),
                "after sync {round}: {fts} segments in fts (from {fts0}), \
                 {sections} in sections_fts (from {sections0})"
            );
        }
        for t in ["fts", "sections_fts"] {
            idx.conn
                .execute(
                    &format!("INSERT INTO {t} ({t}) VALUES ('integrity-check')"),
                    [],
                )
                .expect("full-text index consistent with its rows");
        }

        let mut fresh = Index::open_in_memory().expect("index");
        fresh
            .apply(&batch(
                "full",
                true,
                current.iter().flatten().cloned().collect(),
                Vec::new(),
            ))
            .expect("full build");
        assert_eq!(counts(&fresh), (1, 1));
        for text in [
            "kalaviix3 harbour",
            "labrafeix5 ticket",
            "ben4 station plans",
            "note version",
        ] {
            let q = LexicalQuery {
                text: text.into(),
                limit: 50,
                ..LexicalQuery::default()
            };
            let a = idx.lexical(&q).expect("incremental");
            let b = fresh.lexical(&q).expect("full");
            assert!(!b.is_empty(), "{text}: no hits");
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{text}");
        }
    }
}
