//! The segment count of an FTS5 table, read from its structure record (tests).

use rusqlite::{Connection, OptionalExtension};

/// The rowid of an FTS5 table's structure record in `%_data` (`FTS5_STRUCTURE_ROWID`).
const STRUCTURE_ROWID: i64 = 10;

/// The number of segments `table`'s full-text index is split into (0 when it has no
/// structure record yet). Every full-text query walks and merges every segment.
///
/// The record is a 4-byte cookie, an optional 4-byte `0xff000001` version marker,
/// then varints: the number of levels, then of segments (`fts5StructureDecode`).
pub(crate) fn count(c: &Connection, table: &str) -> rusqlite::Result<i64> {
    let blob: Option<Vec<u8>> = c
        .query_row(
            &format!("SELECT block FROM \"{table}_data\" WHERE id = ?1"),
            [STRUCTURE_ROWID],
            |r| r.get(0),
        )
        .optional()?;
    let Some(blob) = blob else {
        return Ok(0);
    };
    let mut rest = blob.get(4..).unwrap_or_default();
    if rest.starts_with(&[0xff, 0x00, 0x00, 0x01]) {
        rest = &rest[4..];
    }
    let (_levels, rest) = varint(rest);
    let (segments, _) = varint(rest);
    Ok(segments)
}

/// SQLite's big-endian varint (at most 9 bytes), and what follows it; 0 on a short
/// buffer (a corrupt record reads as no segments rather than an error: the count
/// only steers merging).
fn varint(b: &[u8]) -> (i64, &[u8]) {
    let mut v: u64 = 0;
    for (i, &byte) in b.iter().enumerate().take(9) {
        if i == 8 {
            v = (v << 8) | u64::from(byte);
            return (v as i64, &b[9..]);
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return (v as i64, &b[i + 1..]);
        }
    }
    (0, &[])
}
