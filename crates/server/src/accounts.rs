//! Accounts and API keys, kept in `DATA/accounts.json`.
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

/// The accounts of one data directory.
#[derive(Debug)]
pub struct Accounts {
    path: PathBuf,
    /// key hash → account, from the file.
    by_hash: RwLock<BTreeMap<String, String>>,
    /// The file's modification time when it was last read: an unknown key re-reads
    /// the file only if it changed since, so a stream of bad keys costs a `stat` each.
    loaded_mtime: std::sync::Mutex<Option<std::time::SystemTime>>,
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

impl Accounts {
    pub fn open(data: &Path) -> Result<Accounts, AccountError> {
        let a = Accounts {
            path: data.join(ACCOUNTS_FILE),
            by_hash: RwLock::new(BTreeMap::new()),
            loaded_mtime: std::sync::Mutex::new(None),
        };
        a.reload()?;
        Ok(a)
    }

    fn read(&self) -> Result<AccountsFile, AccountError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| AccountError::File {
                path: self.path.clone(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(AccountsFile::default()),
            Err(e) => Err(AccountError::File {
                path: self.path.clone(),
                message: e.to_string(),
            }),
        }
    }

    fn write(&self, file: &AccountsFile) -> Result<(), AccountError> {
        let err = |e: &dyn std::fmt::Display| AccountError::File {
            path: self.path.clone(),
            message: e.to_string(),
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| err(&e))?;
        serde_json::to_writer_pretty(&mut tmp, file).map_err(|e| err(&e))?;
        tmp.as_file().sync_all().map_err(|e| err(&e))?;
        tmp.persist(&self.path).map_err(|e| err(&e.error))?;
        Ok(())
    }

    /// Re-reads the file (keys made by `gitloom admin` while the server runs).
    pub fn reload(&self) -> Result<(), AccountError> {
        let mtime = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        let file = self.read()?;
        let mut map = BTreeMap::new();
        for (name, rec) in &file.accounts {
            for k in &rec.keys {
                map.insert(k.sha256.clone(), name.clone());
            }
        }
        *self.by_hash.write().unwrap_or_else(|p| p.into_inner()) = map;
        *self.loaded_mtime.lock().unwrap_or_else(|p| p.into_inner()) = mtime;
        Ok(())
    }

    fn add_key(&self, account: &str, create: bool) -> Result<NewKey, AccountError> {
        names::validate("account", account).map_err(AccountError::InvalidName)?;
        let _guard = FILE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let mut file = self.read()?;
        let exists = file.accounts.contains_key(account);
        if create && exists {
            return Err(AccountError::Exists(account.to_owned()));
        }
        if !create && !exists {
            return Err(AccountError::NoSuchAccount(account.to_owned()));
        }
        let key = new_key()?;
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
        self.write(&file)?;
        self.reload()?;
        Ok(NewKey {
            account: account.to_owned(),
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
        // A key made since the file was read (`gitloom admin` while serving): look
        // once more if the file changed.
        let mtime = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        if mtime.is_none() || *self.loaded_mtime.lock().unwrap_or_else(|p| p.into_inner()) == mtime
        {
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
