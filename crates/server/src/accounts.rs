//! Accounts and API keys, kept in `DATA/accounts.json`, or with `--storage` in
//! `accounts.json` at the storage location, so every node of a cluster knows every key.
//!
//! A key is 32 random bytes from the operating system (`getrandom`), shown once, as
//! `glk_` + hex. Only its SHA-256 is stored: a key is looked up by its hash, so the
//! file is useless to whoever reads it. The file is rewritten atomically (temp file +
//! rename) under a process-wide lock; `gitloom admin` and a running server may both
//! write it, so the server re-reads it when a key it does not know is presented.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use gitloom_remote::{Blob, BlobRead, BlobVersion, Location};

use crate::names;

pub const ACCOUNTS_FILE: &str = "accounts.json";

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("{0}")]
    InvalidName(String),
    #[error("account {0:?} already exists")]
    Exists(String),
    #[error("no account {0:?}")]
    NoSuchAccount(String),
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("cannot draw random bytes for a key: {0}")]
    Random(String),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct AccountsFile {
    accounts: BTreeMap<String, AccountRecord>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct AccountRecord {
    created: String,
    keys: Vec<KeyRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct KeyRecord {
    /// SHA-256 of the key, hex.
    sha256: String,
    /// The key's first characters, to tell keys apart in listings.
    prefix: String,
    created: String,
}

/// A freshly made key: the only time it is visible.
#[derive(Debug, Clone, Serialize)]
pub struct NewKey {
    pub account: String,
    pub api_key: String,
}

/// Where the accounts file lives.
#[derive(Debug)]
enum Source {
    File(PathBuf),
    /// In object storage, shared by every node; written by compare-and-swap.
    Object(Blob),
}

/// Which version of the file was last read: an unknown key re-reads the file only if
/// it changed since.
#[derive(Debug, Clone, PartialEq)]
enum Stamp {
    Mtime(Option<std::time::SystemTime>),
    Object {
        version: Option<BlobVersion>,
        /// When it was last checked: object storage is asked at most once per
        /// [`OBJECT_RECHECK`], so a stream of bad keys cannot become a stream of requests.
        checked: std::time::Instant,
    },
}

/// How often an unknown key may cause a look at shared accounts in object storage
/// (a key made on another machine is usable on this node within this time).
const OBJECT_RECHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// The accounts of one data directory (or one storage location).
#[derive(Debug)]
pub struct Accounts {
    source: Source,
    /// key hash → account, from the file.
    by_hash: RwLock<BTreeMap<String, String>>,
    loaded: std::sync::Mutex<Stamp>,
}

fn hash(key: &str) -> String {
    let d = Sha256::digest(key.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn new_key() -> Result<String, AccountError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AccountError::Random(e.to_string()))?;
    Ok(format!(
        "glk_{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

static FILE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Attempts at adding a key when other writers keep changing shared accounts.
const MAX_ACCOUNT_WRITES: usize = 32;

impl Accounts {
    /// The accounts of a data directory (`DATA/accounts.json`).
    pub fn open(data: &Path) -> Result<Accounts, AccountError> {
        Accounts::from_source(Source::File(data.join(ACCOUNTS_FILE)))
    }

    /// The accounts shared through object storage (`<location>/accounts.json`).
    pub fn open_remote(location: &Location) -> Result<Accounts, AccountError> {
        let blob = location
            .blob(ACCOUNTS_FILE)
            .map_err(|e| AccountError::File {
                path: PathBuf::from(location.url()),
                message: e.to_string(),
            })?;
        Accounts::from_source(Source::Object(blob))
    }

    fn from_source(source: Source) -> Result<Accounts, AccountError> {
        let a = Accounts {
            source,
            by_hash: RwLock::new(BTreeMap::new()),
            loaded: std::sync::Mutex::new(Stamp::Mtime(None)),
        };
        a.reload()?;
        Ok(a)
    }

    fn error(&self, message: impl std::fmt::Display) -> AccountError {
        AccountError::File {
            path: match &self.source {
                Source::File(p) => p.clone(),
                Source::Object(b) => PathBuf::from(b.path()),
            },
            message: message.to_string(),
        }
    }

    /// The file as it is now, with its stamp.
    fn read(&self) -> Result<(AccountsFile, Stamp), AccountError> {
        let parse = |bytes: &[u8]| -> Result<AccountsFile, AccountError> {
            serde_json::from_slice(bytes).map_err(|e| self.error(e))
        };
        match &self.source {
            Source::File(path) => {
                let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                let file = match std::fs::read(path) {
                    Ok(bytes) => parse(&bytes)?,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => AccountsFile::default(),
                    Err(e) => return Err(self.error(e)),
                };
                Ok((file, Stamp::Mtime(mtime)))
            }
            Source::Object(blob) => {
                let checked = std::time::Instant::now();
                match blob.read(None).map_err(|e| self.error(e))? {
                    BlobRead::Found { bytes, version } => Ok((
                        parse(&bytes)?,
                        Stamp::Object {
                            version: Some(version),
                            checked,
                        },
                    )),
                    BlobRead::Absent | BlobRead::Unchanged => Ok((
                        AccountsFile::default(),
                        Stamp::Object {
                            version: None,
                            checked,
                        },
                    )),
                }
            }
        }
    }

    /// Writes the file if it is still at `stamp`; false when another writer changed
    /// it first (object storage only: a local file is written under [`FILE_LOCK`]).
    fn write(&self, file: &AccountsFile, stamp: &Stamp) -> Result<bool, AccountError> {
        match &self.source {
            Source::File(path) => {
                let err = |e: &dyn std::fmt::Display| self.error(e);
                let dir = path.parent().unwrap_or(Path::new("."));
                std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
                let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| err(&e))?;
                serde_json::to_writer_pretty(&mut tmp, file).map_err(|e| err(&e))?;
                tmp.as_file().sync_all().map_err(|e| err(&e))?;
                tmp.persist(path).map_err(|e| err(&e.error))?;
                Ok(true)
            }
            Source::Object(blob) => {
                let expected = match stamp {
                    Stamp::Object { version, .. } => version.as_ref(),
                    Stamp::Mtime(_) => None,
                };
                let body = serde_json::to_vec_pretty(file).map_err(|e| self.error(e))?;
                Ok(blob
                    .replace(expected, body)
                    .map_err(|e| self.error(e))?
                    .is_some())
            }
        }
    }

    /// Re-reads the file (keys made by `gitloom admin` while the server runs).
    pub fn reload(&self) -> Result<(), AccountError> {
        let (file, stamp) = self.read()?;
        self.install(&file, stamp);
        Ok(())
    }

    fn install(&self, file: &AccountsFile, stamp: Stamp) {
        let mut map = BTreeMap::new();
        for (name, rec) in &file.accounts {
            for k in &rec.keys {
                map.insert(k.sha256.clone(), name.clone());
            }
        }
        *self.by_hash.write().unwrap_or_else(|p| p.into_inner()) = map;
        *self.loaded.lock().unwrap_or_else(|p| p.into_inner()) = stamp;
    }

    /// True when the file may have changed since it was loaded (cheap: a `stat`, or
    /// nothing at all within [`OBJECT_RECHECK`] of the last look at object storage).
    fn maybe_changed(&self) -> bool {
        let loaded = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match (&self.source, loaded) {
            (Source::File(path), Stamp::Mtime(at)) => {
                let now = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                now.is_some() && now != at
            }
            (Source::Object(blob), Stamp::Object { version, checked }) => {
                if checked.elapsed() < OBJECT_RECHECK {
                    return false;
                }
                let changed = !matches!(blob.read(version.as_ref()), Ok(BlobRead::Unchanged));
                if !changed {
                    *self.loaded.lock().unwrap_or_else(|p| p.into_inner()) = Stamp::Object {
                        version,
                        checked: std::time::Instant::now(),
                    };
                }
                changed
            }
            _ => true,
        }
    }

    fn add_key(&self, account: &str, create: bool) -> Result<NewKey, AccountError> {
        names::validate("account", account).map_err(AccountError::InvalidName)?;
        let _guard = FILE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let key = new_key()?;
        // Read, change, write if unchanged: in object storage another node may add
        // a key at the same moment, and neither may lose the other's.
        for _ in 0..MAX_ACCOUNT_WRITES {
            let (mut file, stamp) = self.read()?;
            let exists = file.accounts.contains_key(account);
            if create && exists {
                return Err(AccountError::Exists(account.to_owned()));
            }
            if !create && !exists {
                return Err(AccountError::NoSuchAccount(account.to_owned()));
            }
            let rec = file
                .accounts
                .entry(account.to_owned())
                .or_insert_with(|| AccountRecord {
                    created: now(),
                    keys: Vec::new(),
                });
            rec.keys.push(KeyRecord {
                sha256: hash(&key),
                prefix: key[..12].to_owned(),
                created: now(),
            });
            if self.write(&file, &stamp)? {
                self.reload()?;
                return Ok(NewKey {
                    account: account.to_owned(),
                    api_key: key,
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(fastrand::u64(1..=20)));
        }
        Err(self.error(format!(
            "changed by other writers {MAX_ACCOUNT_WRITES} times in a row; the key was not added"
        )))
    }

    /// Creates an account with its first key.
    pub fn create_account(&self, account: &str) -> Result<NewKey, AccountError> {
        self.add_key(account, true)
    }

    /// Adds a key to an existing account.
    pub fn create_key(&self, account: &str) -> Result<NewKey, AccountError> {
        self.add_key(account, false)
    }

    /// The account a key belongs to.
    pub fn authenticate(&self, key: &str) -> Option<String> {
        let h = hash(key);
        if let Some(a) = self
            .by_hash
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&h)
        {
            return Some(a.clone());
        }
        // A key made since the file was read (`gitloom admin` while serving, or
        // another node): look once more if the file changed.
        if !self.maybe_changed() {
            return None;
        }
        if self.reload().is_ok() {
            return self
                .by_hash
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(&h)
                .cloned();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// Two "nodes" adding keys to one account in shared storage at once: every key
    /// lands (the compare-and-swap loop), and each node knows the other's keys.
    #[test]
    fn concurrent_key_writers_in_object_storage_lose_no_key() {
        let store = Arc::new(object_store::memory::InMemory::new());
        let location =
            Location::new("memory://accounts", store, "p").expect("an in-memory location");
        let first = Accounts::open_remote(&location).expect("open");
        first.create_account("acme").expect("create");
        let keys: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let location = location.clone();
                    scope.spawn(move || {
                        let node = Accounts::open_remote(&location).expect("open");
                        (0..10)
                            .map(|_| node.create_key("acme").expect("key").api_key)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("thread"))
                .collect()
        });
        assert_eq!(keys.len(), 20);
        let fresh = Accounts::open_remote(&location).expect("open");
        for k in &keys {
            assert_eq!(fresh.authenticate(k).as_deref(), Some("acme"));
        }
        // A node that loaded the file before the keys existed learns them on a
        // reload (which an unknown key triggers at most every OBJECT_RECHECK; the
        // serve test `serve_nodes_over_one_bucket_…` covers that path).
        first.reload().expect("reload");
        assert_eq!(first.authenticate(&keys[0]).as_deref(), Some("acme"));
        assert_eq!(first.authenticate("glk_nope"), None);
    }
}
