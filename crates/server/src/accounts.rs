//! Accounts and API keys, kept in `DATA/accounts.json`, or with `--storage` in
//! `accounts.json` at the storage location, so every node of a cluster knows every key.
//!
//! A key is 32 random bytes from the operating system (`getrandom`), shown once, as
//! `glk_` + hex. Only its SHA-256 is stored: a key is looked up by its hash, so the
//! file is useless to whoever reads it. A key's id (`key_` + the first 16 hex digits
//! of that hash) names it in listings and revocations and reveals nothing of it.
//!
//! **Revocation is seen at once.** Every authentication first checks whether the
//! file changed: a `stat` for a local file; for object storage a conditional read
//! (`If-None-Match`, no body when unchanged) shared by every request that arrived
//! while it was in flight, so a key revoked or an account deleted through any node
//! or `gitloom admin` is refused by the next request to start after the change was
//! written (an operator may trade that for fewer requests with
//! [`Accounts::set_recheck`]).
//!
//! **A deleted account leaves a tombstone.** Each incarnation of an account name has
//! a generation; its data lives under its *tenant id*, the name for the first one
//! and `name.N` after `N` deletions (a dot never occurs in a name, so no other
//! account can own that id). A re-created account therefore starts from an empty
//! place whatever happened to the old one's data (deleted, kept for the operator, or
//! half-deleted by a crash): it can never see it.
//!
//! Writes are read-modify-write: under an flock on `accounts.json.lock` beside a
//! local file (temp file + rename), by compare-and-swap in object storage.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

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
    #[error("account {account:?} has no key {key_id:?} (see `gitloom admin list-keys {account}`)")]
    NoSuchKey { account: String, key_id: String },
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("cannot draw random bytes for a key: {0}")]
    Random(String),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct AccountsFile {
    accounts: BTreeMap<String, AccountRecord>,
    /// Accounts deleted so far, oldest first. A name listed here is re-created with a
    /// higher generation, hence a new tenant id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deleted: Vec<Tombstone>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct AccountRecord {
    created: String,
    /// How many accounts of this name were deleted before this one was made.
    #[serde(default, skip_serializing_if = "is_zero")]
    generation: u32,
    keys: Vec<KeyRecord>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct KeyRecord {
    /// SHA-256 of the key, hex.
    sha256: String,
    /// The key's first characters, to tell keys apart in listings.
    prefix: String,
    created: String,
}

impl KeyRecord {
    fn info(&self) -> KeyInfo {
        KeyInfo {
            id: key_id(&self.sha256),
            prefix: self.prefix.clone(),
            created: self.created.clone(),
        }
    }
}

/// What became of a deleted account's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataFate {
    /// Kept where it was, for the operator; no account can reach it.
    Kept,
    /// Being deleted (an interrupted deletion is finished by deleting the account's
    /// name again).
    Deleting,
    /// Gone.
    Deleted,
}

/// A deleted account: its name, the tenant id its data lived under, and what became
/// of that data.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tombstone {
    pub account: String,
    pub generation: u32,
    pub tenant: String,
    pub deleted: String,
    pub data: DataFate,
}

/// A freshly made key: the only time it is visible.
#[derive(Debug, Clone, Serialize)]
pub struct NewKey {
    pub account: String,
    pub key_id: String,
    pub api_key: String,
}

/// A key as listings show it: never the key, never its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyInfo {
    pub id: String,
    pub prefix: String,
    pub created: String,
}

/// An account as listings show it.
#[derive(Debug, Clone, Serialize)]
pub struct AccountInfo {
    pub account: String,
    /// Where its data lives (`accounts/<tenant>` in the data directory or bucket).
    pub tenant: String,
    pub created: String,
    pub keys: Vec<KeyInfo>,
}

/// Who a key belongs to: the account's name and the tenant id its data lives under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tenant {
    pub name: String,
    pub id: String,
}

/// The tenant id of generation `generation` of account `name`.
pub fn tenant_id(name: &str, generation: u32) -> String {
    if generation == 0 {
        name.to_owned()
    } else {
        format!("{name}.{generation}")
    }
}

/// Where the accounts file lives.
#[derive(Debug)]
enum Source {
    File(PathBuf),
    /// In object storage, shared by every node; written by compare-and-swap.
    Object(Blob),
}

/// Which version of the file was last read.
#[derive(Debug, Clone, PartialEq)]
enum Stamp {
    /// A local file's identity: modification time, length and inode (a rename by
    /// another writer changes the inode even within one clock tick).
    File(Option<(std::time::SystemTime, u64, u64)>),
    Object(Option<BlobVersion>),
}

/// The accounts of one data directory (or one storage location).
#[derive(Debug)]
pub struct Accounts {
    source: Source,
    /// key hash → tenant, from the file.
    by_hash: RwLock<BTreeMap<String, Tenant>>,
    loaded: Mutex<Stamp>,
    /// Object storage only: when the last completed look at the object started, so a
    /// request knows whether a look that began after it arrived already answered.
    /// Held while looking, which makes concurrent requests share one look.
    checked: Mutex<Option<Instant>>,
    /// Object storage only: how stale a look may be (zero: none may be).
    recheck: Mutex<Duration>,
    /// Tenants that disappeared from the file since the last [`Accounts::take_removed`].
    removed: Mutex<BTreeSet<String>>,
}

fn hash(key: &str) -> String {
    let d = Sha256::digest(key.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn key_id(sha256: &str) -> String {
    format!("key_{}", &sha256[..16.min(sha256.len())])
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

/// Serialises this process's writers of a local file (the flock serialises processes).
static FILE_LOCK: Mutex<()> = Mutex::new(());

/// Attempts at a change when other writers keep changing shared accounts.
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
            loaded: Mutex::new(match source {
                Source::File(_) => Stamp::File(None),
                Source::Object(_) => Stamp::Object(None),
            }),
            source,
            by_hash: RwLock::new(BTreeMap::new()),
            checked: Mutex::new(None),
            recheck: Mutex::new(Duration::ZERO),
            removed: Mutex::new(BTreeSet::new()),
        };
        a.reload()?;
        Ok(a)
    }

    /// With object storage, let a look at the accounts object answer requests for
    /// `every` after it began (default zero: each request waits for a look that began
    /// after it arrived, so a revocation anywhere is seen by the next request).
    pub fn set_recheck(&self, every: Duration) {
        *self.recheck.lock().unwrap_or_else(|p| p.into_inner()) = every;
    }

    /// True when authenticating may wait on the network (call it off async threads).
    pub fn is_remote(&self) -> bool {
        matches!(self.source, Source::Object(_))
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

    fn file_stamp(path: &Path) -> Stamp {
        let meta = std::fs::metadata(path).ok();
        Stamp::File(meta.and_then(|m| {
            #[cfg(unix)]
            let ino = std::os::unix::fs::MetadataExt::ino(&m);
            #[cfg(not(unix))]
            let ino = 0;
            Some((m.modified().ok()?, m.len(), ino))
        }))
    }

    /// The file as it is now, with its stamp.
    fn read(&self) -> Result<(AccountsFile, Stamp), AccountError> {
        let parse = |bytes: &[u8]| -> Result<AccountsFile, AccountError> {
            serde_json::from_slice(bytes).map_err(|e| self.error(e))
        };
        match &self.source {
            Source::File(path) => {
                let stamp = Accounts::file_stamp(path);
                let file = match std::fs::read(path) {
                    Ok(bytes) => parse(&bytes)?,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => AccountsFile::default(),
                    Err(e) => return Err(self.error(e)),
                };
                Ok((file, stamp))
            }
            Source::Object(blob) => match blob.read(None).map_err(|e| self.error(e))? {
                BlobRead::Found { bytes, version } => {
                    Ok((parse(&bytes)?, Stamp::Object(Some(version))))
                }
                BlobRead::Absent | BlobRead::Unchanged => {
                    Ok((AccountsFile::default(), Stamp::Object(None)))
                }
            },
        }
    }

    /// Writes the file if it is still at `stamp`; false when another writer changed
    /// it first (object storage only: a local file is written under its lock).
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
                    Stamp::Object(version) => version.as_ref(),
                    Stamp::File(_) => None,
                };
                let body = serde_json::to_vec_pretty(file).map_err(|e| self.error(e))?;
                Ok(blob
                    .replace(expected, body)
                    .map_err(|e| self.error(e))?
                    .is_some())
            }
        }
    }

    /// Re-reads the file.
    pub fn reload(&self) -> Result<(), AccountError> {
        let (file, stamp) = self.read()?;
        self.install(&file, stamp);
        Ok(())
    }

    fn install(&self, file: &AccountsFile, stamp: Stamp) {
        let mut map = BTreeMap::new();
        for (name, rec) in &file.accounts {
            let tenant = Tenant {
                name: name.clone(),
                id: tenant_id(name, rec.generation),
            };
            for k in &rec.keys {
                map.insert(k.sha256.clone(), tenant.clone());
            }
        }
        let live: BTreeSet<&str> = map.values().map(|t| t.id.as_str()).collect();
        let mut by_hash = self.by_hash.write().unwrap_or_else(|p| p.into_inner());
        let gone: Vec<String> = by_hash
            .values()
            .filter(|t| !live.contains(t.id.as_str()))
            .map(|t| t.id.clone())
            .collect();
        *by_hash = map;
        drop(by_hash);
        if !gone.is_empty() {
            self.removed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(gone);
        }
        *self.loaded.lock().unwrap_or_else(|p| p.into_inner()) = stamp;
    }

    /// Tenants whose every key went away (account deleted or all keys revoked) since
    /// the last call: the server closes what it holds open for them.
    pub fn take_removed(&self) -> Vec<String> {
        std::mem::take(&mut *self.removed.lock().unwrap_or_else(|p| p.into_inner()))
            .into_iter()
            .collect()
    }

    /// Brings the keys up to date if the file changed since it was loaded. `arrived`:
    /// when the request being authenticated arrived.
    fn refresh(&self, arrived: Instant) -> Result<(), AccountError> {
        match &self.source {
            Source::File(path) => {
                let loaded = self
                    .loaded
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                if Accounts::file_stamp(path) != loaded {
                    self.reload()?;
                }
                Ok(())
            }
            Source::Object(blob) => {
                let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
                let slack = *self.recheck.lock().unwrap_or_else(|p| p.into_inner());
                if checked.is_some_and(|at| at + slack > arrived) {
                    // A look that began after this request arrived (or within the
                    // allowed staleness) has answered already.
                    return Ok(());
                }
                let started = Instant::now();
                let version = match &*self.loaded.lock().unwrap_or_else(|p| p.into_inner()) {
                    Stamp::Object(v) => v.clone(),
                    Stamp::File(_) => None,
                };
                match blob.read(version.as_ref()).map_err(|e| self.error(e))? {
                    BlobRead::Unchanged => {}
                    BlobRead::Absent if version.is_none() => {}
                    _ => self.reload()?,
                }
                *checked = Some(started);
                Ok(())
            }
        }
    }

    /// Read-modify-write of the file: `change` edits it (or refuses); retried on
    /// the new version when another writer got there first.
    fn update<T>(
        &self,
        mut change: impl FnMut(&mut AccountsFile) -> Result<T, AccountError>,
    ) -> Result<T, AccountError> {
        let _guard = FILE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let _flock = self.lock_file()?;
        for _ in 0..MAX_ACCOUNT_WRITES {
            let (mut file, stamp) = self.read()?;
            let out = change(&mut file)?;
            if self.write(&file, &stamp)? {
                self.reload()?;
                return Ok(out);
            }
            std::thread::sleep(Duration::from_millis(fastrand::u64(1..=20)));
        }
        Err(self.error(format!(
            "changed by other writers {MAX_ACCOUNT_WRITES} times in a row; nothing was changed"
        )))
    }

    /// The flock beside a local file (several `gitloom admin` processes and servers
    /// may change one data directory's accounts); none in object storage.
    fn lock_file(&self) -> Result<Option<std::fs::File>, AccountError> {
        let Source::File(path) = &self.source else {
            return Ok(None);
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.error(e))?;
        let lock = path.with_extension("json.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock)
            .map_err(|e| self.error(e))?;
        file.lock().map_err(|e| self.error(e))?;
        Ok(Some(file))
    }

    fn add_key(&self, account: &str, create: bool) -> Result<NewKey, AccountError> {
        names::validate("account", account).map_err(AccountError::InvalidName)?;
        let key = new_key()?;
        let sha = hash(&key);
        self.update(|file| {
            let exists = file.accounts.contains_key(account);
            if create && exists {
                return Err(AccountError::Exists(account.to_owned()));
            }
            if !create && !exists {
                return Err(AccountError::NoSuchAccount(account.to_owned()));
            }
            // A name deleted before comes back under a new tenant id.
            let generation = file
                .deleted
                .iter()
                .filter(|t| t.account == account)
                .map(|t| t.generation + 1)
                .max()
                .unwrap_or(0);
            let rec = file
                .accounts
                .entry(account.to_owned())
                .or_insert_with(|| AccountRecord {
                    created: now(),
                    generation,
                    keys: Vec::new(),
                });
            rec.keys.push(KeyRecord {
                sha256: sha.clone(),
                prefix: key[..12].to_owned(),
                created: now(),
            });
            Ok(())
        })?;
        Ok(NewKey {
            account: account.to_owned(),
            key_id: key_id(&sha),
            api_key: key,
        })
    }

    /// Creates an account with its first key.
    pub fn create_account(&self, account: &str) -> Result<NewKey, AccountError> {
        self.add_key(account, true)
    }

    /// Adds a key to an existing account.
    pub fn create_key(&self, account: &str) -> Result<NewKey, AccountError> {
        self.add_key(account, false)
    }

    /// Every account with its keys' ids (never the keys).
    pub fn list(&self) -> Result<Vec<AccountInfo>, AccountError> {
        let (file, _) = self.read()?;
        Ok(file
            .accounts
            .iter()
            .map(|(name, rec)| AccountInfo {
                account: name.clone(),
                tenant: tenant_id(name, rec.generation),
                created: rec.created.clone(),
                keys: rec.keys.iter().map(KeyRecord::info).collect(),
            })
            .collect())
    }

    /// One account's keys.
    pub fn list_keys(&self, account: &str) -> Result<AccountInfo, AccountError> {
        self.list()?
            .into_iter()
            .find(|a| a.account == account)
            .ok_or_else(|| AccountError::NoSuchAccount(account.to_owned()))
    }

    /// The tenant of an existing account.
    pub fn tenant(&self, account: &str) -> Result<Tenant, AccountError> {
        let a = self.list_keys(account)?;
        Ok(Tenant {
            name: a.account,
            id: a.tenant,
        })
    }

    /// Revokes one key of `account` (by its id, or by the key itself): every server
    /// over these accounts refuses it from its next request on.
    pub fn revoke_key(&self, account: &str, key: &str) -> Result<KeyInfo, AccountError> {
        let wanted = if key.starts_with("glk_") {
            key_id(&hash(key))
        } else {
            key.to_owned()
        };
        self.update(|file| {
            let rec = file
                .accounts
                .get_mut(account)
                .ok_or_else(|| AccountError::NoSuchAccount(account.to_owned()))?;
            let at = rec
                .keys
                .iter()
                .position(|k| key_id(&k.sha256) == wanted)
                .ok_or_else(|| AccountError::NoSuchKey {
                    account: account.to_owned(),
                    key_id: wanted.clone(),
                })?;
            Ok(rec.keys.remove(at).info())
        })
    }

    /// Deletes an account and its keys, leaving a tombstone naming its tenant id
    /// (`data`: [`DataFate::Kept`] or [`DataFate::Deleting`]; the caller deletes the
    /// data and then calls [`Accounts::mark_deleted`]). A later account of the same
    /// name gets a new tenant id. Deleting a name that is gone already returns the
    /// tombstones whose data is still to be deleted (an interrupted deletion).
    pub fn delete_account(
        &self,
        account: &str,
        data: DataFate,
    ) -> Result<Vec<Tombstone>, AccountError> {
        names::validate("account", account).map_err(AccountError::InvalidName)?;
        self.update(|file| {
            match file.accounts.remove(account) {
                Some(rec) => file.deleted.push(Tombstone {
                    account: account.to_owned(),
                    generation: rec.generation,
                    tenant: tenant_id(account, rec.generation),
                    deleted: now(),
                    data,
                }),
                None if file.deleted.iter().any(|t| t.account == account) => {}
                None => return Err(AccountError::NoSuchAccount(account.to_owned())),
            }
            if data == DataFate::Deleting {
                for t in file.deleted.iter_mut().filter(|t| t.account == account) {
                    if t.data == DataFate::Kept {
                        t.data = DataFate::Deleting;
                    }
                }
            }
            Ok(file
                .deleted
                .iter()
                .filter(|t| t.account == account && t.data != DataFate::Deleted)
                .cloned()
                .collect())
        })
    }

    /// Records that a tombstoned tenant's data is gone.
    pub fn mark_deleted(&self, tenant: &str) -> Result<(), AccountError> {
        self.update(|file| {
            for t in file.deleted.iter_mut().filter(|t| t.tenant == tenant) {
                t.data = DataFate::Deleted;
            }
            Ok(())
        })
    }

    /// Every tombstone, oldest first.
    pub fn tombstones(&self) -> Result<Vec<Tombstone>, AccountError> {
        Ok(self.read()?.0.deleted)
    }

    /// The tenant a key belongs to, as the accounts are now. Blocks on object
    /// storage (see [`Accounts::is_remote`]).
    pub fn authenticate(&self, key: &str) -> Option<Tenant> {
        self.authenticate_at(key, Instant::now())
    }

    /// [`Accounts::authenticate`] for a request that arrived at `arrived`.
    pub fn authenticate_at(&self, key: &str, arrived: Instant) -> Option<Tenant> {
        if let Err(e) = self.refresh(arrived) {
            // The file cannot be read now: keep answering from what was loaded
            // (revocations made since are seen once it can be read again).
            tracing::warn!(error = %e, "cannot re-read the accounts");
        }
        self.by_hash
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&hash(key))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn memory_location() -> Location {
        let store = Arc::new(object_store::memory::InMemory::new());
        Location::new("memory://accounts", store, "p").expect("an in-memory location")
    }

    /// Two "nodes" adding keys to one account in shared storage at once: every key
    /// lands (the compare-and-swap loop), and each node knows the other's keys.
    #[test]
    fn concurrent_key_writers_in_object_storage_lose_no_key() {
        let location = memory_location();
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
            assert_eq!(
                fresh.authenticate(k).map(|t| t.name).as_deref(),
                Some("acme")
            );
        }
        // A node that loaded the file before the keys existed knows them on its
        // next authentication.
        assert_eq!(
            first.authenticate(&keys[0]).map(|t| t.id).as_deref(),
            Some("acme")
        );
        assert_eq!(first.authenticate("glk_nope"), None);
    }

    /// A key revoked through one node is refused by another on its very next
    /// authentication, for a local file and for object storage alike.
    #[test]
    fn a_revoked_key_is_refused_at_once_everywhere() {
        let dir = tempfile::tempdir().expect("tempdir");
        let location = memory_location();
        let pairs = [
            (
                Accounts::open(dir.path()).expect("open"),
                Accounts::open(dir.path()).expect("open"),
            ),
            (
                Accounts::open_remote(&location).expect("open"),
                Accounts::open_remote(&location).expect("open"),
            ),
        ];
        for (admin, server) in &pairs {
            let first = admin.create_account("acme").expect("create");
            let second = admin.create_key("acme").expect("key");
            assert!(server.authenticate(&first.api_key).is_some());
            assert!(server.authenticate(&second.api_key).is_some());
            let info = admin.revoke_key("acme", &first.key_id).expect("revoke");
            assert_eq!(info.id, first.key_id);
            assert_eq!(server.authenticate(&first.api_key), None);
            assert!(server.authenticate(&second.api_key).is_some());
            // By the key itself, too; then the account has no key left.
            admin.revoke_key("acme", &second.api_key).expect("revoke");
            assert_eq!(server.authenticate(&second.api_key), None);
            assert_eq!(server.take_removed(), vec!["acme".to_owned()]);
            let err = admin.revoke_key("acme", "key_0000").expect_err("unknown");
            assert!(matches!(err, AccountError::NoSuchKey { .. }), "{err}");
        }
    }

    #[test]
    fn a_recreated_account_gets_a_new_tenant_and_listings_show_no_secret() {
        let dir = tempfile::tempdir().expect("tempdir");
        let accounts = Accounts::open(dir.path()).expect("open");
        let old = accounts.create_account("carol").expect("create");
        assert_eq!(accounts.tenant("carol").expect("tenant").id, "carol");
        let stones = accounts
            .delete_account("carol", DataFate::Kept)
            .expect("delete");
        assert_eq!(stones.len(), 1);
        assert_eq!(stones[0].tenant, "carol");
        assert_eq!(accounts.authenticate(&old.api_key), None);
        let new = accounts.create_account("carol").expect("again");
        let t = accounts.authenticate(&new.api_key).expect("new key");
        assert_eq!((t.name.as_str(), t.id.as_str()), ("carol", "carol.1"));
        accounts
            .delete_account("carol", DataFate::Deleting)
            .expect("delete");
        accounts.create_account("carol").expect("third");
        assert_eq!(accounts.tenant("carol").expect("tenant").id, "carol.2");
        let text = std::fs::read_to_string(dir.path().join(ACCOUNTS_FILE)).expect("file");
        let listing = serde_json::to_string(&accounts.list().expect("list")).expect("json");
        for secret in [&old.api_key, &new.api_key] {
            assert!(!text.contains(secret.as_str()) && !listing.contains(secret.as_str()));
        }
        assert!(!listing.contains(&hash(&new.api_key)), "{listing}");
        // Deleting the name again finishes what is left to delete.
        accounts.mark_deleted("carol").expect("mark");
        accounts
            .delete_account("carol", DataFate::Deleting)
            .expect("delete");
        let left = accounts
            .delete_account("carol", DataFate::Deleting)
            .expect("again");
        assert_eq!(
            left.iter().map(|t| t.tenant.as_str()).collect::<Vec<_>>(),
            ["carol.1", "carol.2"]
        );
        assert!(matches!(
            accounts.delete_account("nobody", DataFate::Deleting),
            Err(AccountError::NoSuchAccount(_))
        ));
    }
}
