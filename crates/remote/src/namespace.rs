//! One namespace kept in object storage, served from a warm local mirror.
//!
//! The mirror is a bare gitloom store (git objects + `.gitloom/` index) in a cache
//! directory. Reading: revalidate the head (a conditional GET), fetch only the packs
//! the mirror lacks, move the branch, sync the index incrementally. Writing: run the
//! write locally on top of the current head, upload the new objects as one pack
//! (create-only), then move the head with a conditional update; a lost race
//! re-reads the head and replays the write on top of it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gitloom_engine::{Engine, EngineOptions, SyncReport, WriteOutcome};
use gitloom_store::{ObjectId, Store};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde::Serialize;

use crate::error::{RemoteError, Result, WriteError, io, storage};
use crate::head::{self, Cas, Fetched, HEAD_FORMAT, Head, PackRef, Versioned};
use crate::location::{Location, Namespace};
use crate::{block_on, pack};

/// How many times a write is replayed on a new head before giving up.
pub const MAX_ATTEMPTS: u32 = 64;
/// When the head lists more packs than this, a writer folds the older ones into one
/// full pack, so the head stays small and a cold start fetches a bounded number.
pub const MAX_PACKS: usize = 64;
/// How many recent incremental packs survive a fold: a mirror at most this many
/// pushes behind still fetches only small packs.
pub const KEEP_RECENT_PACKS: usize = 16;
/// Local pack files beyond which the mirror repacks (installing a pack keeps it as
/// a pack, which is crash-safe, so they accumulate). gix sizes its pack table when
/// a repository is opened (at least 32 slots) and cannot see packs beyond it, so
/// this stays well below, leaving room for a cold start's full pack plus
/// [`KEEP_RECENT_PACKS`] incremental ones without a repack.
const MAX_LOCAL_PACKS: usize = 20;

/// The bare repository inside a namespace's cache directory.
pub const MIRROR_DIR: &str = "mirror.git";
/// The file in `.gitloom/` recording the head the mirror follows (and its ETag).
const STATE_FILE: &str = "remote-head.json";
/// Taken for a revalidation or a write, so processes sharing one cache directory
/// move its branch one at a time.
const LOCK_FILE: &str = "remote.lock";

/// What a revalidation did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Revalidation {
    /// False when the head's ETag was unchanged (one conditional request, no body).
    pub changed: bool,
    /// The commit the mirror now serves; `None` for a namespace with no writes yet.
    pub commit: Option<String>,
    pub generation: u64,
    pub fetched_packs: usize,
    pub fetched_bytes: u64,
    /// The index sync, when the head moved.
    pub sync: Option<SyncReport>,
    pub ms: f64,
}

/// What a write through object storage did.
#[derive(Debug, Clone, Serialize)]
pub struct Pushed<T = WriteOutcome> {
    /// What the write returned as finally applied (on the head it won against).
    pub outcome: T,
    /// The head generation it created; `None` when the write changed nothing.
    pub generation: Option<u64>,
    /// 1 if the first attempt won; more when the head moved under us and the write was replayed.
    pub attempts: u32,
    pub pack_bytes: u64,
}

/// A namespace in object storage with its local mirror. `Send + Sync`.
pub struct RemoteNamespace {
    location: Location,
    namespace: Namespace,
    engine: Engine,
    git_dir: PathBuf,
    head_path: ObjectPath,
    node: String,
    opening: Revalidation,
}

impl std::fmt::Debug for RemoteNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteNamespace")
            .field("location", &self.location)
            .field("namespace", &self.namespace)
            .field("cache", &self.git_dir)
            .finish()
    }
}

impl RemoteNamespace {
    /// Opens `namespace` at `location` with its mirror in `cache_dir/mirror.git` (created if
    /// missing: a cold start fetches the head and every pack it lists), then
    /// revalidates once.
    ///
    /// All methods block; from async code call them on a blocking thread.
    pub fn open(
        location: &Location,
        namespace: Namespace,
        cache_dir: &Path,
        options: EngineOptions,
    ) -> Result<RemoteNamespace> {
        std::fs::create_dir_all(cache_dir)
            .map_err(io("cannot create the cache directory", cache_dir))?;
        // Two processes cold-starting one cache must not both create the repository.
        let lock = lock(cache_dir)?;
        let store = Store::init_bare(&cache_dir.join(MIRROR_DIR))?;
        let git_dir = store.git_dir();
        drop(store);
        drop(lock);
        let engine = Engine::open_with(&git_dir, options)?;
        let mut ns = RemoteNamespace {
            head_path: location.path(&namespace, "head.json"),
            location: location.clone(),
            namespace,
            engine,
            git_dir,
            node: format!("{}-{:08x}", std::process::id(), fastrand::u32(..)),
            opening: Revalidation::default(),
        };
        ns.opening = ns.revalidate()?;
        Ok(ns)
    }

    /// The engine over the mirror. Reads through it see the head as of the last
    /// [`RemoteNamespace::revalidate`]; write only through [`RemoteNamespace::write`].
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// What the revalidation done while opening did (a cold start's fetch and index build).
    pub fn opening(&self) -> &Revalidation {
        &self.opening
    }

    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// Brings the mirror up to the namespace's head: one conditional request when
    /// nothing changed; otherwise the missing packs, the branch and an incremental
    /// index sync.
    pub fn revalidate(&self) -> Result<Revalidation> {
        let lock = lock(&self.gitloom_dir())?;
        let r = self.revalidate_locked();
        drop(lock);
        r.map(|(r, _)| r)
    }

    /// Applies a write through object storage. `write` runs against the local mirror
    /// (e.g. `|e| e.remember(req.clone())`); it must be repeatable, because when
    /// another writer moved the head first it runs again on top of the new head.
    /// Returns only once the head names the new commit (the write is acknowledged).
    pub fn write<T, F>(&self, mut write: F) -> Result<Pushed<T>>
    where
        F: FnMut(&Engine) -> gitloom_engine::Result<T>,
    {
        self.write_with(|e| write(e).map_err(RemoteError::from))
    }

    /// [`RemoteNamespace::write`] for a closure with its own error type: a toolkit
    /// op's error comes back as itself, not folded into a storage error.
    pub fn write_with<T, E, F>(&self, write: F) -> Result<Pushed<T>, E>
    where
        E: From<RemoteError>,
        F: FnMut(&Engine) -> Result<T, E>,
    {
        self.push(write, New::Create).map_err(E::from)?
    }

    /// [`RemoteNamespace::write_with`] that never creates the namespace: one deleted
    /// (or never created) is [`WriteError::NoNamespace`], not silently brought back.
    pub fn write_existing_with<T, E, F>(&self, write: F) -> Result<Pushed<T>, WriteError<E>>
    where
        F: FnMut(&Engine) -> Result<T, E>,
    {
        match self.push(write, New::Refuse) {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(e)) => Err(WriteError::Op(e)),
            Err(RemoteError::NoNamespace { .. }) => Err(WriteError::NoNamespace),
            Err(e) => Err(WriteError::Storage(e)),
        }
    }

    /// Creates the namespace (publishes a first, empty commit) if it has no head yet.
    /// False when it already existed, including when another node created it first.
    pub fn create(&self) -> Result<bool> {
        if self.revalidate()?.commit.is_some() {
            return Ok(false);
        }
        let pushed = self.push(|_| Ok::<_, RemoteError>(()), New::Publish)??;
        Ok(pushed.generation.is_some())
    }

    /// The write loop. The outer error is storage's; the inner one is `write`'s own,
    /// returned as soon as it happens.
    fn push<T, E, F>(&self, mut write: F, new: New) -> Result<Result<Pushed<T>, E>>
    where
        F: FnMut(&Engine) -> Result<T, E>,
    {
        let lock = lock(&self.gitloom_dir())?;
        let store = self.engine.store();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let (_, known) = self.revalidate_locked()?;
            let base = match &known {
                Some(v) => Some(parse_id(&v.head.commit, &self.head_path)?),
                None if new == New::Refuse => {
                    return Err(RemoteError::NoNamespace {
                        namespace: self.namespace.to_string(),
                    });
                }
                None => {
                    // A new namespace: start from the same first commit a local store has.
                    store.set_branch(None)?;
                    store.ensure_initial_commit()?;
                    None
                }
            };
            let before = if new == New::Publish && known.is_none() {
                None
            } else {
                store.head()?
            };
            let outcome = match write(&self.engine) {
                Ok(o) => o,
                // Anything it committed locally is unpublished; the next
                // revalidation puts the branch back on the head.
                Err(e) => return Ok(Err(e)),
            };
            let Some(tip) = store.head()? else {
                return Err(RemoteError::Git {
                    command: "write".into(),
                    reason: "the mirror has no commit after a write".into(),
                });
            };
            if Some(tip) == before {
                // The write changed nothing: no push, nothing to acknowledge (and a
                // namespace that does not exist yet is not created for it).
                return Ok(Ok(Pushed {
                    outcome,
                    generation: None,
                    attempts,
                    pack_bytes: 0,
                }));
            }
            let bytes = pack::create(&self.git_dir, tip, base)?;
            let pack_bytes = bytes.len() as u64;
            let mut packs = known
                .as_ref()
                .map(|v| v.head.packs.clone())
                .unwrap_or_default();
            packs.push(self.upload_pack(bytes, tip)?);
            if packs.len() > MAX_PACKS {
                packs = self.fold(packs)?;
            }
            let head = Head {
                format: HEAD_FORMAT,
                commit: tip.to_string(),
                generation: known.as_ref().map_or(0, |v| v.head.generation) + 1,
                writer: format!("{}/{:016x}", self.node, fastrand::u64(..)),
                packs,
            };
            let generation = head.generation;
            let swapped = block_on(head::compare_and_swap(
                self.location.store.as_ref(),
                &self.head_path,
                known.as_ref(),
                head.clone(),
            ))?;
            match swapped {
                Cas::Won(v) => {
                    self.save_state(Some(&v))?;
                    drop(lock);
                    return Ok(Ok(Pushed {
                        outcome,
                        generation: Some(generation),
                        attempts,
                        pack_bytes,
                    }));
                }
                Cas::Lost => {
                    // A retried request may report a conflict with our own success.
                    if let Fetched::Changed(v) = block_on(head::fetch(
                        self.location.store.as_ref(),
                        &self.head_path,
                        None,
                    ))? && v.head == head
                    {
                        self.save_state(Some(&v))?;
                        drop(lock);
                        return Ok(Ok(Pushed {
                            outcome,
                            generation: Some(generation),
                            attempts,
                            pack_bytes,
                        }));
                    }
                    if attempts >= MAX_ATTEMPTS {
                        return Err(RemoteError::Contended {
                            namespace: self.namespace.to_string(),
                            attempts,
                        });
                    }
                    tracing::debug!(namespace = %self.namespace, attempts, "head moved; replaying the write");
                    // Jittered exponential backoff, so writers that collided do not collide again.
                    let cap = 5u64 << attempts.min(6);
                    std::thread::sleep(Duration::from_millis(fastrand::u64(1..=cap)));
                }
            }
        }
    }

    fn gitloom_dir(&self) -> PathBuf {
        self.git_dir.join(".gitloom")
    }

    /// Revalidates with the lock held; also returns the head now followed.
    fn revalidate_locked(&self) -> Result<(Revalidation, Option<Versioned>)> {
        let started = Instant::now();
        let store = self.engine.store();
        let known = self.load_state();
        let local = store.head()?;
        // The stored ETag counts only if the branch is where that head put it (a
        // write that lost its race, or a crash, may have left it elsewhere).
        let known =
            known.filter(|k| local.map(|c| c.to_string()).as_deref() == Some(&k.head.commit));
        let fetched = block_on(head::fetch(
            self.location.store.as_ref(),
            &self.head_path,
            known.as_ref().and_then(|k| k.e_tag.as_deref()),
        ))?;
        let mut report = Revalidation::default();
        let current = match fetched {
            Fetched::Unchanged => known,
            Fetched::Absent => {
                if local.is_some() && !only_initial_commit(store)? {
                    // Only commits that were never published (a first push that
                    // failed) can be here. Back to a bare first commit, so the index
                    // drops what they added.
                    store.set_branch(None)?;
                    store.ensure_initial_commit()?;
                    report.changed = true;
                }
                self.save_state(None)?;
                None
            }
            Fetched::Changed(v) => {
                report.changed = true;
                let commit = parse_id(&v.head.commit, &self.head_path)?;
                if !store.has_object(commit) {
                    let (n, bytes) = self.fetch_packs(&v.head)?;
                    report.fetched_packs = n;
                    report.fetched_bytes = bytes;
                    if !store.has_object(commit) {
                        return Err(RemoteError::BadHead {
                            path: self.head_path.to_string(),
                            reason: format!("its packs do not contain its commit {commit}"),
                        });
                    }
                }
                if local != Some(commit) {
                    store.set_branch(Some(commit))?;
                }

                self.save_state(Some(&v))?;
                Some(v)
            }
        };
        if report.changed {
            report.sync = Some(self.engine.sync()?);
        }
        if let Some(v) = &current {
            report.commit = Some(v.head.commit.clone());
            report.generation = v.head.generation;
        }
        report.ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok((report, current))
    }

    /// Downloads and installs the packs after the newest one whose tip the mirror
    /// already has (all of them on a cold start).
    fn fetch_packs(&self, head: &Head) -> Result<(usize, u64)> {
        let store = self.engine.store();
        let start = head
            .packs
            .iter()
            .rposition(|p| {
                p.tip
                    .parse::<ObjectId>()
                    .is_ok_and(|id| store.has_object(id))
            })
            .map_or(0, |i| i + 1);
        let wanted = &head.packs[start..];
        let object_store = self.location.store.clone();
        let paths: Vec<(String, ObjectPath)> = wanted
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    self.location
                        .path(&self.namespace, &format!("packs/{}.pack", p.name)),
                )
            })
            .collect();
        let downloads = block_on(async move {
            use futures_util::StreamExt;
            futures_util::stream::iter(paths)
                .map(|(name, path)| {
                    let s = object_store.clone();
                    async move {
                        let got = s
                            .get(&path)
                            .await
                            .map_err(storage(format!("reading pack {path}")))?;
                        let bytes = got
                            .bytes()
                            .await
                            .map_err(storage(format!("reading pack {path}")))?;
                        Ok::<_, RemoteError>((name, bytes))
                    }
                })
                .buffered(8)
                .collect::<Vec<_>>()
                .await
        });
        let mut total = 0u64;
        for d in downloads {
            let (name, bytes) = d?;
            if pack::name_of(&bytes) != name {
                return Err(RemoteError::BadPack {
                    name,
                    reason: "its content does not match its name (BLAKE3)".into(),
                });
            }
            total += bytes.len() as u64;
            pack::install(&self.git_dir, &bytes)?;
            pack::maybe_repack(&self.git_dir, MAX_LOCAL_PACKS)?;
        }
        if !wanted.is_empty() {
            // Packs came and went under this process's object store.
            store.reload_objects()?;
        }
        Ok((wanted.len(), total))
    }

    /// Uploads a pack under its content address, create-only. An existing object of
    /// that name has the same bytes, so finding one is success.
    fn upload_pack(&self, bytes: Vec<u8>, tip: ObjectId) -> Result<PackRef> {
        let name = pack::name_of(&bytes);
        let size = bytes.len() as u64;
        let path = self
            .location
            .path(&self.namespace, &format!("packs/{name}.pack"));
        let options = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        let put = block_on(
            self.location
                .store
                .put_opts(&path, PutPayload::from(bytes), options),
        );
        match put {
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(PackRef {
                name,
                tip: tip.to_string(),
                bytes: size,
            }),
            Err(e) => Err(storage(format!("writing pack {path}"))(e)),
        }
    }

    /// Folds all but the newest [`KEEP_RECENT_PACKS`] packs into one full pack.
    fn fold(&self, packs: Vec<PackRef>) -> Result<Vec<PackRef>> {
        let fold_at = packs.len() - KEEP_RECENT_PACKS - 1;
        let tip = parse_id(&packs[fold_at].tip, &self.head_path)?;
        let full = pack::create(&self.git_dir, tip, None)?;
        let mut out = vec![self.upload_pack(full, tip)?];
        out.extend_from_slice(&packs[fold_at + 1..]);
        Ok(out)
    }

    fn load_state(&self) -> Option<Versioned> {
        let path = self.gitloom_dir().join(STATE_FILE);
        let text = std::fs::read(&path).ok()?;
        // An unreadable state only costs one unconditional read of the head.
        serde_json::from_slice(&text).ok()
    }

    fn save_state(&self, state: Option<&Versioned>) -> Result<()> {
        let path = self.gitloom_dir().join(STATE_FILE);
        match state {
            None => match std::fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io("cannot remove", &path)(e)),
            },
            Some(v) => {
                let tmp = path.with_extension("json.tmp");
                let body = serde_json::to_vec(v).expect("a head always serialises");
                std::fs::write(&tmp, body).map_err(io("cannot write", &tmp))?;
                std::fs::rename(&tmp, &path).map_err(io("cannot replace", &path))
            }
        }
    }
}

/// What a write does to a namespace that has no head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum New {
    /// Creates it if the write commits something (the CLI's first write).
    Create,
    /// Creates it even with nothing committed (publishes the first commit).
    Publish,
    /// Refuses: [`RemoteError::NoNamespace`].
    Refuse,
}

/// True when the branch holds just the first commit a new store gets.
fn only_initial_commit(store: &Store) -> Result<bool> {
    let log = store.log(None, Some(2))?;
    Ok(log.len() == 1 && log[0].summary == gitloom_store::INIT_MESSAGE)
}

fn parse_id(hex: &str, head_path: &ObjectPath) -> Result<ObjectId> {
    hex.parse().map_err(|_| RemoteError::BadHead {
        path: head_path.to_string(),
        reason: format!("{hex:?} is not a commit id"),
    })
}

fn lock(gitloom_dir: &Path) -> Result<File> {
    let path = gitloom_dir.join(LOCK_FILE);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io("cannot open the lock", &path))?;
    file.lock().map_err(io("cannot take the lock", &path))?;
    Ok(file)
}
