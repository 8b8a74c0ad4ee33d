//! Rows of `files` for a list of paths, in one statement.
//!
//! The read path asks for the ids of every fused candidate (~150 at 10k memories)
//! and of the hits it judges and shows; one prepared `WHERE path = ?` per path cost a
//! statement reset, bind and step each. The list goes in as one JSON array instead,
//! joined to `files` through its unique `path` index.

use rusqlite::Row;

use crate::{Index, IndexError};

/// `map` of the `files` row of each of `paths` that is indexed (a path not indexed
/// gives nothing; one listed twice, two rows). `columns` names what `map` reads,
/// from table alias `f`.
pub(crate) fn rows<S: AsRef<str>, T>(
    idx: &Index,
    paths: &[S],
    columns: &'static str,
    op: &'static str,
    map: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, IndexError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let list: Vec<&str> = paths.iter().map(AsRef::as_ref).collect();
    let json = serde_json::to_string(&list).map_err(|e| IndexError::Invalid {
        path: idx.path.clone(),
        message: format!("{op}: {e}"),
    })?;
    // CROSS JOIN keeps the list as the outer loop: one index probe per path.
    let sql = format!(
        "SELECT {columns} FROM json_each(?1) AS j CROSS JOIN files AS f ON f.path = j.value"
    );
    let mut st = idx.conn.prepare_cached(&sql).map_err(idx.err(op))?;
    let rows = st.query_map([json], map).map_err(idx.err(op))?;
    rows.collect::<Result<_, _>>().map_err(idx.err(op))
}
