//! The head object of a namespace: which commit is current, and which packs hold
//! everything reachable from it. Small, rewritten on every push by a conditional
//! update; its ETag is the version a writer must match.

use object_store::path::Path as ObjectPath;
use serde::{Deserialize, Serialize};

use crate::blob::{self, BlobRead, BlobVersion};
use crate::error::{RemoteError, Result};

/// The head format this build reads and writes.
pub const HEAD_FORMAT: u32 = 1;

/// One pack: content-addressed (`packs/<blake3>.pack`), immutable once written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackRef {
    /// BLAKE3 of the pack bytes, hex.
    pub name: String,
    /// The commit this pack completes: with every earlier pack in the list, it holds
    /// everything reachable from `tip`.
    pub tip: String,
    pub bytes: u64,
}

/// The content of `head.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    pub format: u32,
    /// The namespace's current commit.
    pub commit: String,
    /// 1 for the first push, +1 on every update.
    pub generation: u64,
    /// Who wrote this version (node id and a per-attempt nonce): every update
    /// changes the bytes, hence the ETag, even if two writers made the same commit.
    pub writer: String,
    /// Oldest first; the first may be a full pack folding older ones.
    pub packs: Vec<PackRef>,
}

/// A head as read, with the version a conditional update must match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Versioned {
    pub head: Head,
    pub e_tag: Option<String>,
    pub version: Option<String>,
}

impl Versioned {
    fn blob_version(&self) -> BlobVersion {
        BlobVersion {
            e_tag: self.e_tag.clone(),
            version: self.version.clone(),
        }
    }
}

/// What a conditional read of the head found.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// The ETag we hold is still current.
    Unchanged,
    /// No namespace yet (no head object).
    Absent,
    Changed(Versioned),
}

/// Reads the head; with `known_e_tag`, conditionally (`If-None-Match`), so an
/// unchanged head costs one small request and no body.
pub(crate) async fn fetch(
    store: &dyn object_store::ObjectStore,
    path: &ObjectPath,
    known_e_tag: Option<&str>,
) -> Result<Fetched> {
    Ok(match blob::read(store, path, known_e_tag).await? {
        BlobRead::Unchanged => Fetched::Unchanged,
        BlobRead::Absent => Fetched::Absent,
        BlobRead::Found { bytes, version } => Fetched::Changed(Versioned {
            head: parse(path, &bytes)?,
            e_tag: version.e_tag,
            version: version.version,
        }),
    })
}

pub(crate) fn parse(path: &ObjectPath, bytes: &[u8]) -> Result<Head> {
    let bad = |reason: String| RemoteError::BadHead {
        path: path.to_string(),
        reason,
    };
    let head: Head = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    if head.format != HEAD_FORMAT {
        return Err(bad(format!(
            "format {} (this build reads {HEAD_FORMAT})",
            head.format
        )));
    }
    if head.packs.is_empty() {
        return Err(bad("it lists no packs".to_owned()));
    }
    if head.packs.last().map(|p| p.tip.as_str()) != Some(head.commit.as_str()) {
        return Err(bad("its last pack does not end at its commit".to_owned()));
    }
    Ok(head)
}

/// The outcome of a conditional write of the head.
pub(crate) enum Cas {
    Won(Versioned),
    /// Someone else moved the head first (412, or the object already existed).
    Lost,
}

/// Writes `head` only if the stored head is still `expected` (`None`: only if there
/// is no head yet). Never overwrites unconditionally.
pub(crate) async fn compare_and_swap(
    store: &dyn object_store::ObjectStore,
    path: &ObjectPath,
    expected: Option<&Versioned>,
    head: Head,
) -> Result<Cas> {
    let body = serde_json::to_vec(&head).expect("a head always serialises");
    let expected = expected.map(Versioned::blob_version);
    Ok(
        match blob::replace(store, path, expected.as_ref(), body).await? {
            Some(v) => Cas::Won(Versioned {
                head,
                e_tag: v.e_tag,
                version: v.version,
            }),
            None => Cas::Lost,
        },
    )
}
