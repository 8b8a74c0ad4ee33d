//! The table layout, opening (with automatic reset of unusable files) and the meta table.

use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use crate::{Bm25Weights, Index, IndexError, IndexedState, OpenStatus};

/// Bumped on any change to the layout below; a mismatch on open resets the index.
pub const SCHEMA_VERSION: i64 = 6;

/// Every table [`open`] expects to find in a reused index.
const TABLES: &[&str] = &[
    "meta",
    "files",
    "fts",
    "sections",
    "sections_fts",
    "cues",
    "said",
    "links",
    "entities",
    "mentions",
    "timeline",
    "topics",
    "problems",
];

const DDL: &str = r#"
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

-- One row per memory file. `id` is the rowid of the file's row in `fts`.
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    topic TEXT NOT NULL,            -- below the tier: '' or 'work' or 'database/replication'
    slug TEXT NOT NULL,             -- file name without .md
    title TEXT NOT NULL,
    title_folded TEXT NOT NULL,     -- fold_name(title), for link resolution
    summary TEXT,
    body TEXT NOT NULL,
    body_line INTEGER NOT NULL,
    blob TEXT NOT NULL,
    created TEXT, created_unix INTEGER,
    updated TEXT, updated_unix INTEGER,
    valid_from TEXT, valid_from_unix INTEGER,
    valid_to TEXT, valid_to_unix INTEGER,
    expires_at TEXT, expires_at_unix INTEGER,
    ttl TEXT,
    confidence REAL,
    supersedes TEXT,                -- the first `supersedes:` entry as written (all are in links)
    source TEXT,
    tags TEXT NOT NULL,             -- JSON array
    extra TEXT NOT NULL             -- JSON object of unknown frontmatter keys
);
CREATE INDEX files_tier_topic ON files (tier, topic);
CREATE INDEX files_title ON files (title_folded);
CREATE INDEX files_slug ON files (slug);
CREATE INDEX files_supersedes ON files (supersedes);

-- Plain FTS5 table (it keeps its own copy of the text, so deletes by rowid always work).
CREATE VIRTUAL TABLE fts USING fts5 (
    title, summary, cues, entities, tags, body,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE sections (
    id INTEGER PRIMARY KEY,         -- rowid in sections_fts
    path TEXT NOT NULL,
    ord INTEGER NOT NULL,
    anchor TEXT NOT NULL,
    heading TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX sections_path ON sections (path, ord);
CREATE VIRTUAL TABLE sections_fts USING fts5 (
    heading, text,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE cues (path TEXT NOT NULL, ord INTEGER NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (path, ord)) WITHOUT ROWID;

-- The words of the messages a memory cites (source `sessions/…md#m3`, one message).
CREATE TABLE said (path TEXT NOT NULL, source TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (path, source)) WITHOUT ROWID;
CREATE INDEX said_source ON said (source);

-- kind: 'wiki' | 'related' | 'supersedes'. resolved is NULL while dangling.
CREATE TABLE links (
    id INTEGER PRIMARY KEY,
    src TEXT NOT NULL,
    ord INTEGER NOT NULL,
    kind TEXT NOT NULL,
    target_raw TEXT NOT NULL,
    label TEXT,
    section TEXT,
    resolved TEXT,
    -- what target_raw can match (links::link_keys), so a file that appears or
    -- changes title can unresolve exactly the links it might capture
    key_path TEXT, key_title TEXT, key_slug TEXT, key_slug2 TEXT
);
CREATE INDEX links_key_path ON links (key_path);
CREATE INDEX links_key_title ON links (key_title);
CREATE INDEX links_key_slug ON links (key_slug);
CREATE INDEX links_key_slug2 ON links (key_slug2);
CREATE INDEX links_src ON links (src, ord);
CREATE INDEX links_resolved ON links (resolved, kind);
CREATE INDEX links_dangling ON links (id) WHERE resolved IS NULL;

CREATE TABLE entities (
    id INTEGER PRIMARY KEY,
    folded TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    kind TEXT
);
-- Shorter keys an entity is also found by: the multi-word tails of its name
-- ("rtx 5090" and "geforce rtx 5090" for "NVIDIA GeForce RTX 5090").
CREATE TABLE entity_keys (key TEXT NOT NULL, entity_id INTEGER NOT NULL,
    PRIMARY KEY (key, entity_id)) WITHOUT ROWID;
CREATE INDEX entity_keys_entity ON entity_keys (entity_id);
-- name and kind as this file wrote them: an entity's displayed name and kind are
-- recomputed from its mentions (first by path), so they never depend on the order
-- files were indexed in, nor outlive the file that wrote them.
CREATE TABLE mentions (entity_id INTEGER NOT NULL, path TEXT NOT NULL, role TEXT,
    name TEXT NOT NULL, kind TEXT,
    PRIMARY KEY (entity_id, path)) WITHOUT ROWID;
CREATE INDEX mentions_path ON mentions (path);

CREATE TABLE timeline (path TEXT NOT NULL, ord INTEGER NOT NULL, date TEXT NOT NULL,
    date_unix INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (path, ord)) WITHOUT ROWID;
CREATE INDEX timeline_date ON timeline (date_unix);

-- Per-topic counts, maintained on every apply. The tier itself is topic ''.
-- direct: files directly in the topic; total: files in its subtree.
CREATE TABLE topics (
    tier TEXT NOT NULL,
    topic TEXT NOT NULL,
    parent TEXT,                    -- NULL for the tier row
    direct INTEGER NOT NULL,
    total INTEGER NOT NULL,
    PRIMARY KEY (tier, topic)
) WITHOUT ROWID;
CREATE INDEX topics_parent ON topics (tier, parent);

CREATE TABLE problems (path TEXT PRIMARY KEY, message TEXT NOT NULL) WITHOUT ROWID;
"#;

fn io_err<'a>(path: &'a Path, op: &'static str) -> impl FnOnce(std::io::Error) -> IndexError + 'a {
    move |source| IndexError::Io {
        path: path.to_path_buf(),
        op,
        source,
    }
}

fn sql_err<'a>(
    path: &'a Path,
    op: &'static str,
) -> impl FnOnce(rusqlite::Error) -> IndexError + 'a {
    move |source| IndexError::Sql {
        path: path.to_path_buf(),
        op,
        source,
    }
}

fn wrap(conn: Connection, path: PathBuf) -> Index {
    Index {
        conn,
        path,
        weights: Bm25Weights::default(),
        fail_after: None,
        vocab_ready: std::cell::Cell::new(false),
        snippets_ready: std::cell::Cell::new(false),
        vocab: crate::Vocab::default(),
        vocab_key: None,
        vocab_tree: None,
        doc_freq_memo: std::cell::RefCell::new(None),
        walk_memo: std::cell::RefCell::new(Default::default()),
        bm25_memo: std::cell::RefCell::new(Default::default()),
        kept_scoring: std::cell::Cell::new(Default::default()),
        all_terms_by_query: std::cell::Cell::new(false),
    }
}

pub(crate) fn open_in_memory() -> Result<Index, IndexError> {
    let path = PathBuf::from(":memory:");
    let conn = Connection::open_in_memory().map_err(sql_err(&path, "open"))?;
    stable_plans(&conn).map_err(sql_err(&path, "configure"))?;
    create(&conn).map_err(sql_err(&path, "create schema"))?;
    Ok(wrap(conn, path))
}

pub(crate) fn open(path: &Path) -> Result<(Index, OpenStatus), IndexError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err(dir, "create directory"))?;
    }
    // Deciding that a file is unusable, removing it and creating a new one must not
    // interleave across processes: without this lock, one process could remove the
    // index another is creating (or using), and two could create it at once ("table
    // meta already exists"). The lock is an flock on the index's directory (no extra
    // file beside the index), held only while opening.
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let lock = std::fs::File::open(&dir).map_err(io_err(&dir, "open the index directory"))?;
    lock.lock()
        .map_err(io_err(&dir, "lock the index directory"))?;
    let existed = match std::fs::metadata(path) {
        Ok(m) => m.len() > 0 || wal_exists(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io_err(path, "stat")(e)),
    };
    let status = if existed {
        match check_header(path)? {
            Some(reason) => Some(reason),
            None => match try_reuse(path) {
                Ok(idx) => return Ok((idx, OpenStatus::Reused)),
                // Busy is not damage: another process holds a lock longer than the
                // busy timeout. Say so rather than throw its index away.
                Err(Reuse::Busy(reason)) => {
                    return Err(IndexError::Invalid {
                        path: path.to_path_buf(),
                        message: format!("the index is busy ({reason}); try again"),
                    });
                }
                Err(Reuse::Unusable(reason)) => Some(reason),
            },
        }
    } else {
        None
    };
    if status.is_some() || path.exists() {
        remove_files(path)?;
    }
    let conn = Connection::open(path).map_err(sql_err(path, "create"))?;
    configure(&conn).map_err(sql_err(path, "configure"))?;
    create(&conn).map_err(sql_err(path, "create schema"))?;
    let idx = wrap(conn, path.to_path_buf());
    Ok(match status {
        Some(reason) => (idx, OpenStatus::Reset { reason }),
        None => (idx, OpenStatus::Created),
    })
}

fn wal_exists(path: &Path) -> bool {
    side(path, "-wal").exists()
}

fn side(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn remove_files(path: &Path) -> Result<(), IndexError> {
    for p in [path.to_path_buf(), side(path, "-wal"), side(path, "-shm")] {
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&p, "remove unusable index")(e)),
        }
    }
    Ok(())
}

/// Cheap structural check of the SQLite header: magic, and a file at least as long
/// as the page count it declares (catches truncation). `Some(reason)` = unusable.
fn check_header(path: &Path) -> Result<Option<String>, IndexError> {
    let mut f = std::fs::File::open(path).map_err(io_err(path, "open"))?;
    let len = f.metadata().map_err(io_err(path, "stat"))?.len();
    let mut head = [0u8; 100];
    let mut got = 0;
    while got < head.len() {
        let n = f
            .read(&mut head[got..])
            .map_err(io_err(path, "read header"))?;
        if n == 0 {
            break;
        }
        got += n;
    }
    if got == 0 {
        // An empty main file with a WAL next to it: let SQLite decide.
        return Ok(None);
    }
    if got < 100 || &head[..16] != b"SQLite format 3\0" {
        return Ok(Some("the file is not a SQLite database".into()));
    }
    let raw = u16::from_be_bytes([head[16], head[17]]) as u64;
    let page_size = if raw == 1 { 65536 } else { raw };
    let pages = u32::from_be_bytes([head[28], head[29], head[30], head[31]]) as u64;
    let change = &head[24..28];
    let valid_for = &head[92..96];
    if change == valid_for && pages > 0 && len < pages * page_size {
        return Ok(Some(format!(
            "the file is truncated ({len} bytes; its header declares {pages} pages of {page_size})"
        )));
    }
    Ok(None)
}

/// Why an existing file cannot be reused.
enum Reuse {
    /// Damaged, foreign or of another schema: replace it.
    Unusable(String),
    /// Locked by another connection past the busy timeout: leave it alone.
    Busy(String),
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn try_reuse(path: &Path) -> Result<Index, Reuse> {
    try_reuse_inner(path).map_err(|(busy, reason)| {
        if busy {
            Reuse::Busy(reason)
        } else {
            Reuse::Unusable(reason)
        }
    })
}

/// Err((busy, reason)).
fn try_reuse_inner(path: &Path) -> Result<Index, (bool, String)> {
    let fail = |what: &str| {
        let what = what.to_owned();
        move |e: rusqlite::Error| (is_busy(&e), format!("{what}: {e}"))
    };
    let conn = Connection::open(path).map_err(fail("cannot open"))?;
    configure(&conn).map_err(fail("not a usable database"))?;
    let mut missing = Vec::new();
    for t in TABLES {
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                [t],
                |r| r.get(0),
            )
            .map_err(fail("not a usable database"))?;
        if n == 0 {
            missing.push(*t);
        }
    }
    if !missing.is_empty() {
        return Err((false, format!("missing table(s): {}", missing.join(", "))));
    }
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(fail("cannot read schema_version"))?;
    match v.as_deref().map(str::parse::<i64>) {
        Some(Ok(v)) if v == SCHEMA_VERSION => {}
        Some(Ok(v)) => {
            return Err((
                false,
                format!("schema version {v} (this build expects {SCHEMA_VERSION})"),
            ));
        }
        _ => return Err((false, "no schema_version".into())),
    }
    // Touch every table once so a damaged page in a root is caught now.
    for t in TABLES {
        conn.query_row(
            &format!("SELECT count(*) FROM (SELECT 1 FROM {t} LIMIT 1)"),
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(fail(&format!("table {t} unreadable")))?;
    }
    Ok(wrap(conn, path.to_path_buf()))
}

/// Plans that do not depend on bound values, so a cached statement is reused as
/// prepared. Without this, SQLite marks a statement to be prepared again whenever
/// a parameter the planner looked at (an `=` filter's value, a LIKE pattern) is
/// rebound or cleared, and rusqlite clears the bindings of every statement it
/// returns to its cache: each cached statement was parsed and planned anew on
/// every use (under a busy server, most of the statement preparation in its
/// profile). Results cannot change: only plans do, and only where a value could
/// have steered one (the index keeps no `sqlite_stat4` samples; a LIKE on a bound
/// prefix is filtered row by row instead of as an index range).
pub(crate) fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// Prepared statements kept per connection. One retrieve runs more distinct
/// statements than rusqlite's default of 16 (IN lists of several lengths among
/// them), so with the default some were parsed again on every retrieve.
const STATEMENT_CACHE: usize = 128;

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    stable_plans(conn)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    let _ = mode;
    conn.execute_batch(
        "PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32000;",
    )?;
    Ok(())
}

fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN")?;
    let r = conn.execute_batch(DDL).and_then(|_| {
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
            [SCHEMA_VERSION.to_string()],
        )
    });
    match r {
        Ok(_) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

pub(crate) fn state(idx: &Index) -> Result<Option<IndexedState>, IndexError> {
    let get = |k: &str| -> Result<Option<String>, IndexError> {
        idx.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
            .optional()
            .map_err(idx.err("read state"))
    };
    Ok(match (get("commit")?, get("tree")?) {
        (Some(commit), Some(tree)) => Some(IndexedState { commit, tree }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cached statement rebound and reused is not prepared again: the planner
    /// looks at the value of an `=` filter, so without stable plans SQLite expires
    /// the statement when rusqlite clears its bindings on return to the cache.
    fn reprepares_of_a_reused_statement(idx: &Index) -> i32 {
        let sql = "SELECT src, kind FROM links WHERE src = ?1 ORDER BY ord";
        for src in ["facts/a.md", "facts/b.md", "facts/c.md"] {
            let mut st = idx.conn.prepare_cached(sql).expect("prepare");
            let n = st
                .query_map([src], |r| r.get::<_, String>(0))
                .expect("query")
                .count();
            assert_eq!(n, 0);
        }
        let st = idx.conn.prepare_cached(sql).expect("prepare");
        st.get_status(rusqlite::StatementStatus::RePrepare)
    }

    #[test]
    fn cached_statements_are_reused_as_prepared() {
        let idx = open_in_memory().expect("index");
        assert_eq!(reprepares_of_a_reused_statement(&idx), 0);
        let dir = tempfile::tempdir().expect("tempdir");
        let (idx, _) = crate::Index::open(&dir.path().join("index.db")).expect("index");
        assert_eq!(reprepares_of_a_reused_statement(&idx), 0);
    }

    #[test]
    fn without_stable_plans_the_same_statement_is_prepared_again() {
        // The control: what the setting prevents does happen on this SQLite.
        let idx = open_in_memory().expect("index");
        idx.conn
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
                false,
            )
            .expect("config");
        assert!(reprepares_of_a_reused_statement(&idx) > 0);
    }
}
