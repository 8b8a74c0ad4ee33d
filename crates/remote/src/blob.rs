//! A small object read conditionally and replaced only by compare-and-swap.
//!
//! The one primitive under both a namespace's `head.json` and a server's shared
//! `accounts.json`: a read that costs no body when the caller's ETag is current, and a
//! write that names the version it replaces (`If-Match`), or creates only when there is
//! none (`If-None-Match: *`). Nothing here ever overwrites unconditionally.

use object_store::path::Path as ObjectPath;
use object_store::{
    GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion,
};
use serde::{Deserialize, Serialize};

use crate::error::{Result, storage};

/// The version of a stored object that a conditional update must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobVersion {
    pub e_tag: Option<String>,
    pub version: Option<String>,
}

impl BlobVersion {
    fn update(&self) -> UpdateVersion {
        UpdateVersion {
            e_tag: self.e_tag.clone(),
            version: self.version.clone(),
        }
    }
}

/// What a conditional read found.
#[derive(Debug)]
pub enum BlobRead {
    /// The version the caller holds is still current (no body was sent).
    Unchanged,
    /// There is no such object.
    Absent,
    Found {
        bytes: Vec<u8>,
        version: BlobVersion,
    },
}

/// Reads `path`; with `known_e_tag`, conditionally (`If-None-Match`).
pub(crate) async fn read(
    store: &dyn ObjectStore,
    path: &ObjectPath,
    known_e_tag: Option<&str>,
) -> Result<BlobRead> {
    let options = GetOptions {
        if_none_match: known_e_tag.map(str::to_owned),
        ..GetOptions::default()
    };
    let got = match store.get_opts(path, options).await {
        Ok(g) => g,
        Err(object_store::Error::NotModified { .. }) => return Ok(BlobRead::Unchanged),
        Err(object_store::Error::NotFound { .. }) => return Ok(BlobRead::Absent),
        Err(e) => return Err(storage(format!("reading {path}"))(e)),
    };
    let version = BlobVersion {
        e_tag: got.meta.e_tag.clone(),
        version: got.meta.version.clone(),
    };
    let bytes = got
        .bytes()
        .await
        .map_err(storage(format!("reading {path}")))?;
    Ok(BlobRead::Found {
        bytes: bytes.to_vec(),
        version,
    })
}

/// Writes `bytes` only if the stored object is still `expected` (`None`: only if
/// there is none). `Ok(None)` when someone else wrote first.
pub(crate) async fn replace(
    store: &dyn ObjectStore,
    path: &ObjectPath,
    expected: Option<&BlobVersion>,
    bytes: Vec<u8>,
) -> Result<Option<BlobVersion>> {
    let mode = match expected {
        None => PutMode::Create,
        Some(v) => PutMode::Update(v.update()),
    };
    let options = PutOptions {
        mode,
        ..PutOptions::default()
    };
    match store.put_opts(path, PutPayload::from(bytes), options).await {
        Ok(r) => Ok(Some(BlobVersion {
            e_tag: r.e_tag,
            version: r.version,
        })),
        Err(
            object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. },
        ) => Ok(None),
        Err(e) => Err(storage(format!("updating {path}"))(e)),
    }
}

/// True when `path` exists.
pub(crate) async fn exists(store: &dyn ObjectStore, path: &ObjectPath) -> Result<bool> {
    match store.head(path).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(storage(format!("looking up {path}"))(e)),
    }
}

/// One object at a [`crate::Location`], for callers outside this crate (the HTTP
/// server keeps its accounts in one). All methods block.
#[derive(Debug, Clone)]
pub struct Blob {
    pub(crate) location: crate::Location,
    pub(crate) path: ObjectPath,
}

impl Blob {
    /// The object's path in the bucket.
    pub fn path(&self) -> String {
        self.path.to_string()
    }

    /// Reads the object; with `known`, conditionally (an unchanged object costs one
    /// small request and no body).
    pub fn read(&self, known: Option<&BlobVersion>) -> Result<BlobRead> {
        let e_tag = known.and_then(|k| k.e_tag.as_deref());
        crate::block_on(read(self.location.store.as_ref(), &self.path, e_tag))
    }

    /// Replaces the object if it is still `expected` (`None`: creates it if absent).
    /// `Ok(None)` when another writer got there first: read again and retry.
    pub fn replace(
        &self,
        expected: Option<&BlobVersion>,
        bytes: Vec<u8>,
    ) -> Result<Option<BlobVersion>> {
        crate::block_on(replace(
            self.location.store.as_ref(),
            &self.path,
            expected,
            bytes,
        ))
    }
}
