//! The durable vector cache: its own SQLite file (e.g. `.gitloom/vectors.db`), apart
//! from the rebuildable index, keyed by (model id, BLAKE3 hex of the exact text).
//! Vectors are little-endian f32 blobs. Embeddings are the one expensive thing the
//! engine computes: a rebuild or schema bump of the index recomputes none of them, and
//! identical texts (a cue repeated across memories) share one vector.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};

use crate::{EmbedError, Embedder};

const SCHEMA_VERSION: &str = "1";
/// Texts handed to the embedder per call of [`embed_cached`] (and per cache write).
const JOB_BATCH: usize = 256;

/// How [`VectorCache::open`] found the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheStatus {
    /// A cache of this schema was there.
    Reused,
    /// There was no file; an empty cache was created.
    Created,
    /// The file was unusable (not a database, damaged, another schema) and was replaced
    /// by an empty cache: every vector will be recomputed. The caller should say why.
    Reset { reason: String },
}

/// Counts of one [`embed_cached`] call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EmbedStats {
    /// Distinct texts sent to the embedder (and now cached).
    pub embedded: usize,
    /// Input texts answered from the cache.
    pub cached: usize,
}

/// The durable vector cache (one SQLite connection behind a mutex: shareable).
pub struct VectorCache {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl std::fmt::Debug for VectorCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorCache")
            .field("path", &self.path)
            .finish()
    }
}

/// BLAKE3 hex of the exact text: the cache key with the model id.
pub fn text_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

impl VectorCache {
    /// Opens (or creates) the cache at `path`. A file that is not a usable cache is
    /// removed (with its `-wal`/`-shm`) and replaced by an empty one: see [`CacheStatus`].
    /// Fails only for real I/O errors.
    pub fn open(path: &Path) -> Result<(VectorCache, CacheStatus), EmbedError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(EmbedError::io(dir, "create directory"))?;
        }
        let existed = path.exists();
        match try_open(path) {
            Ok(conn) => {
                let status = if existed {
                    CacheStatus::Reused
                } else {
                    CacheStatus::Created
                };
                Ok((Self::wrap(conn, path), status))
            }
            Err(reason) if existed => {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let mut p = path.as_os_str().to_owned();
                    p.push(suffix);
                    let p = PathBuf::from(p);
                    if p.exists() {
                        std::fs::remove_file(&p)
                            .map_err(EmbedError::io(&p, "remove damaged cache"))?;
                    }
                }
                let conn = try_open(path).map_err(|e| EmbedError::invalid(path, e))?;
                tracing::warn!(path = %path.display(), %reason, "vector cache replaced");
                Ok((Self::wrap(conn, path), CacheStatus::Reset { reason }))
            }
            Err(reason) => Err(EmbedError::invalid(path, reason)),
        }
    }

    /// A private in-memory cache (tests, one-shot tools).
    pub fn open_in_memory() -> Result<VectorCache, EmbedError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(sql(&path, "open"))?;
        init(&conn).map_err(sql(&path, "create schema"))?;
        Ok(Self::wrap(conn, &path))
    }

    fn wrap(conn: Connection, path: &Path) -> VectorCache {
        VectorCache {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        }
    }

    /// The database file (or `:memory:`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached vectors of `model_id` among `hashes` (absent ones are simply missing;
    /// a damaged blob counts as absent).
    pub fn get_many(
        &self,
        model_id: &str,
        hashes: &[&str],
    ) -> Result<HashMap<String, Vec<f32>>, EmbedError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached("SELECT vec FROM vectors WHERE model = ?1 AND hash = ?2")
            .map_err(sql(&self.path, "prepare get"))?;
        let mut out = HashMap::with_capacity(hashes.len());
        for &h in hashes {
            if out.contains_key(h) {
                continue;
            }
            let blob: Option<Vec<u8>> = stmt
                .query_row(params![model_id, h], |r| r.get(0))
                .optional()
                .map_err(sql(&self.path, "get vectors"))?;
            if let Some(v) = blob.as_deref().and_then(decode) {
                out.insert(h.to_string(), v);
            }
        }
        Ok(out)
    }

    /// Stores vectors of `model_id` under their text hashes, in one transaction.
    pub fn put_many(&self, model_id: &str, items: &[(&str, &[f32])]) -> Result<(), EmbedError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(sql(&self.path, "begin"))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO vectors (model, hash, dim, vec) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sql(&self.path, "prepare put"))?;
            for (h, v) in items {
                stmt.execute(params![model_id, h, v.len() as i64, encode(v)])
                    .map_err(sql(&self.path, "put vectors"))?;
            }
        }
        tx.commit().map_err(sql(&self.path, "commit"))
    }

    /// How many vectors are stored for `model_id`.
    pub fn count(&self, model_id: &str) -> Result<usize, EmbedError> {
        self.conn()
            .query_row(
                "SELECT count(*) FROM vectors WHERE model = ?1",
                [model_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(sql(&self.path, "count"))
    }
}

fn sql(path: &Path, op: &'static str) -> impl FnOnce(rusqlite::Error) -> EmbedError {
    let path = path.to_path_buf();
    move |source| EmbedError::Sql { path, op, source }
}

fn try_open(path: &Path) -> Result<Connection, String> {
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    // Reading the schema is what fails on a file that is not a database.
    let has_meta: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| e.to_string())?
        > 0;
    if has_meta {
        let v: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| e.to_string())?;
        if v.as_deref() != Some(SCHEMA_VERSION) {
            return Err(format!(
                "schema version {} (expected {SCHEMA_VERSION})",
                v.as_deref().unwrap_or("missing")
            ));
        }
        conn.query_row("SELECT count(*) FROM vectors WHERE 0", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| e.to_string())?;
    } else {
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if tables > 0 {
            return Err("a database, but not a vector cache".into());
        }
    }
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| e.to_string())?;
    init(&conn).map_err(|e| e.to_string())?;
    Ok(conn)
}

fn init(conn: &Connection) -> rusqlite::Result<()> {
    // Plans that do not depend on bound values: otherwise each cached statement is
    // prepared again on every use, since rusqlite clears its bindings when the
    // statement goes back to the cache (see the index's `schema::stable_plans`).
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS vectors (
             model TEXT NOT NULL,
             hash TEXT NOT NULL,
             dim INTEGER NOT NULL,
             vec BLOB NOT NULL,
             PRIMARY KEY (model, hash)
         ) WITHOUT ROWID;",
    )?;
    conn.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?1)",
        [SCHEMA_VERSION],
    )?;
    Ok(())
}

fn encode(v: &[f32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(v.len() * 4);
    for x in v {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
}

fn decode(b: &[u8]) -> Option<Vec<f32>> {
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Embeds what the cache lacks and returns one vector per text, in order.
///
/// Texts are looked up by [`text_hash`] under `embedder.model_id()`; the missing ones
/// are de-duplicated, embedded in batches of 256 and written to the cache after each
/// batch (an interrupted job keeps what it finished). `progress` is called after each
/// batch with (texts embedded so far, texts to embed). A vector of the wrong dimension
/// is an error and is not stored.
pub fn embed_cached(
    embedder: &dyn Embedder,
    cache: &VectorCache,
    texts: &[&str],
    progress: Option<&dyn Fn(usize, usize)>,
) -> Result<(Vec<Vec<f32>>, EmbedStats), EmbedError> {
    let model = embedder.model_id();
    let dim = embedder.dim();
    let hashes: Vec<String> = texts.iter().map(|t| text_hash(t)).collect();
    let hash_refs: Vec<&str> = hashes.iter().map(String::as_str).collect();
    let mut found = cache.get_many(model, &hash_refs)?;
    found.retain(|_, v| v.len() == dim);
    let mut stats = EmbedStats::default();
    let mut seen = HashSet::new();
    let mut todo: Vec<usize> = Vec::new();
    for (i, h) in hashes.iter().enumerate() {
        if found.contains_key(h) {
            stats.cached += 1;
        } else if seen.insert(h.as_str()) {
            todo.push(i);
        }
    }
    let mut done = 0;
    for group in todo.chunks(JOB_BATCH) {
        let batch: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
        let vecs = embedder.embed(&batch)?;
        if vecs.len() != batch.len() {
            return Err(EmbedError::model(
                model,
                format!("asked for {} vectors, got {}", batch.len(), vecs.len()),
            ));
        }
        if let Some(bad) = vecs.iter().find(|v| v.len() != dim) {
            return Err(EmbedError::Dimension {
                model: model.to_string(),
                expected: dim,
                actual: bad.len(),
            });
        }
        let items: Vec<(&str, &[f32])> = group
            .iter()
            .zip(&vecs)
            .map(|(&i, v)| (hashes[i].as_str(), v.as_slice()))
            .collect();
        cache.put_many(model, &items)?;
        for (&i, v) in group.iter().zip(vecs) {
            found.insert(hashes[i].clone(), v);
        }
        done += group.len();
        stats.embedded += group.len();
        if let Some(f) = progress {
            f(done, todo.len());
        }
    }
    let out = hashes
        .iter()
        .map(|h| found.get(h).cloned().unwrap_or_default())
        .collect();
    Ok((out, stats))
}
