//! One commit per batch: blobs → trees → commit in the object database, then a
//! compare-and-swap of the branch ref, then the work tree and git index.

use std::collections::BTreeMap;
use std::time::Duration;

use gitloom_model::{StorePath, is_committable};
use gix::ObjectId;
use gix::refs::transaction::{Change as RefChange, LogChange, PreviousValue, RefEdit, RefLog};

use crate::error::{GitContext, chain};
use crate::{Store, StoreError, gitindex, read, worktree};

/// How many times a lost compare-and-swap is retried on the new head.
pub const MAX_ATTEMPTS: u32 = 20;
/// How long a writer waits for a `.git/index.lock` held by someone else.
const INDEX_LOCK_WAIT: Duration = Duration::from_secs(10);

/// A set of changes that becomes exactly one commit.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// New content per path; `None` deletes. A path named twice takes its last value.
    pub changes: Vec<(StorePath, Option<Vec<u8>>)>,
    pub message: String,
    /// Author and committer time; now if `None`.
    pub time: Option<jiff::Timestamp>,
    /// Overwrite work-tree files the user edited without committing (default: refuse).
    pub allow_dirty_overwrite: bool,
    /// The commit these changes were computed from (read-modify-write). If a path of
    /// the batch differs between it and the branch tip when the commit is made, the
    /// batch is refused with [`StoreError::Stale`] instead of silently overwriting
    /// the other writer's change; the caller re-reads and recomputes. `None` = the
    /// changes do not depend on what was there (a plain put or delete).
    pub base: Option<ObjectId>,
}

impl Batch {
    pub fn new(message: impl Into<String>) -> Batch {
        Batch {
            message: message.into(),
            ..Batch::default()
        }
    }

    /// Adds (or replaces) the file at `path`.
    pub fn put(mut self, path: StorePath, content: impl Into<Vec<u8>>) -> Batch {
        self.changes.push((path, Some(content.into())));
        self
    }

    /// Deletes the file at `path` (no error if it does not exist).
    pub fn delete(mut self, path: StorePath) -> Batch {
        self.changes.push((path, None));
        self
    }

    /// Sets the author and committer time.
    pub fn at(mut self, time: jiff::Timestamp) -> Batch {
        self.time = Some(time);
        self
    }
}

/// What a successful [`Store::commit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitOutcome {
    pub commit: ObjectId,
    /// The commit it was built on (the head at the time the ref moved).
    pub parent: Option<ObjectId>,
    pub tree: ObjectId,
    /// How many times the ref moved under us and the commit was rebuilt.
    pub retries: u32,
    /// The paths whose content actually changed, sorted.
    pub paths: Vec<String>,
    /// Problems refreshing the work tree or git index *after* the commit landed
    /// (the commit itself is safe in history). Empty normally.
    pub warnings: Vec<String>,
}

/// Proof that this process holds a store's write lock ([`Store::lock_writes`]);
/// released on drop.
#[derive(Debug)]
pub struct WriteLock {
    #[allow(dead_code)] // held for its lock, never read
    file: std::fs::File,
    path: std::path::PathBuf,
}

/// What a [`Store::commit_group`] did.
#[derive(Debug)]
pub struct GroupOutcome {
    /// The one commit, if any batch changed anything.
    pub commit: Option<CommitOutcome>,
    /// Per batch, in order: the paths it changed (empty when it changed nothing), or
    /// why it was refused.
    pub results: Vec<Result<Vec<String>, StoreError>>,
}

/// One batch as the commit core sees it: content per path (`None` deletes).
pub(crate) struct Part {
    changes: BTreeMap<String, Option<Vec<u8>>>,
    allow_dirty: bool,
    base: Option<ObjectId>,
}

type PartsOutcome = (Option<CommitOutcome>, Vec<Result<Vec<String>, StoreError>>);

/// Refusals of a part that do not depend on the branch tip: a path gitloom may not
/// commit or may not create (its name), two paths of the part that are one file on a
/// case-insensitive file system, a path (or its case-folded form) that an earlier
/// part of the group already claims.
fn precheck<'a>(part: &'a Part, claimed: &mut BTreeMap<String, &'a str>) -> Result<(), StoreError> {
    for (path, content) in &part.changes {
        // Defence in depth: `StorePath` already guarantees this for public callers.
        if !is_committable(path) {
            return Err(StoreError::NotCommittable { path: path.clone() });
        }
        if content.is_some()
            && path != ".gitignore"
            && let Err(e) = StorePath::parse(path).and_then(|p| p.check_new())
        {
            return Err(StoreError::BadName(e));
        }
    }
    // Two paths of one batch that are one file on a case-insensitive file system.
    let mut folded: BTreeMap<String, &str> = BTreeMap::new();
    for path in part.changes.keys() {
        if let Some(other) = folded.insert(path.to_lowercase(), path)
            && other != path
        {
            return Err(StoreError::CaseCollision {
                path: path.clone(),
                existing: other.to_owned(),
            });
        }
    }
    for (fold, path) in &folded {
        if let Some(other) = claimed.get(fold) {
            return Err(if other == path {
                StoreError::Conflict {
                    retries: 0,
                    cause: format!("{path} is written by another batch of the same group"),
                }
            } else {
                StoreError::CaseCollision {
                    path: (*path).to_owned(),
                    existing: (*other).to_owned(),
                }
            });
        }
    }
    claimed.extend(folded);
    Ok(())
}

/// Per part: its tip-independent refusal, else its judgement (paths it changed).
fn merge_results(
    parts: &[Part],
    refused: Vec<Option<StoreError>>,
    judged: Vec<Result<Vec<Edit<'_>>, StoreError>>,
) -> Vec<Result<Vec<String>, StoreError>> {
    refused
        .into_iter()
        .zip(judged)
        .zip(parts)
        .map(|((r, j), _)| match (r, j) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(e),
            (None, Ok(edits)) => Ok(edits.iter().map(|e| e.path.to_owned()).collect()),
        })
        .collect()
}

/// Results when nothing reached the tip: each part's refusal, or nothing changed.
fn finish_results(
    parts: &[Part],
    refused: Vec<Option<StoreError>>,
) -> Vec<Result<Vec<String>, StoreError>> {
    let judged = parts.iter().map(|_| Ok(Vec::new())).collect();
    merge_results(parts, refused, judged)
}

/// Each part's refusal that does not depend on the tip ([`precheck`]), in order.
fn prechecks(parts: &[Part]) -> Vec<Option<StoreError>> {
    let mut claimed: BTreeMap<String, &str> = BTreeMap::new();
    parts
        .iter()
        .map(|part| precheck(part, &mut claimed).err())
        .collect()
}

/// A part's blobs: the id each path's new content was written as (`None` deletes).
type Blobs<'a> = BTreeMap<&'a str, Option<ObjectId>>;

/// The commit message as written (ending in a newline) and its first line, for the
/// reflog.
struct CommitMessage {
    text: String,
    summary: String,
}

impl CommitMessage {
    fn new(message: &str) -> CommitMessage {
        let text = if message.ends_with('\n') {
            message.to_owned()
        } else {
            format!("{message}\n")
        };
        let summary = text.lines().next().unwrap_or_default().to_owned();
        CommitMessage { text, summary }
    }
}

/// What every try at a commit shares: the parts, their fixed refusals and blobs,
/// and the commit's signature and message.
struct Attempt<'r, 'a> {
    repo: &'r gix::Repository,
    parts: &'a [Part],
    refused: &'r [Option<StoreError>],
    blobs: &'r [Blobs<'a>],
    workdir: Option<&'r std::path::Path>,
    signature: gix::actor::Signature,
    message: CommitMessage,
}

/// A commit that moved the branch.
struct Landed<'a> {
    commit: ObjectId,
    parent: Option<ObjectId>,
    tree: ObjectId,
    /// Every part's edits, together.
    edits: Vec<Edit<'a>>,
    /// Per part: its edits, or why the tip refused it.
    judged: Vec<Result<Vec<Edit<'a>>, StoreError>>,
}

/// How one try at a commit ended.
enum Tried<'a> {
    /// Nothing to commit on this tip: per part, nothing changed or why it was refused.
    Unchanged(Vec<Result<Vec<Edit<'a>>, StoreError>>),
    Landed(Landed<'a>),
    /// The branch moved under us, or its lock is held: try again on the new tip.
    Lost {
        branch: String,
        cause: String,
    },
}

/// The parent's tree with `edits` made, written to the object database.
///
/// gix's porcelain editor checks, for every tree it writes, that each of the tree's
/// entries is in the object store: one `stat` per file of every directory on an
/// edited path, a sixth of a write's CPU in a topic of a few hundred memories. The
/// plumbing editor writes without it: the blobs edited in were written before, every
/// other entry is the parent tree's own, and the names edited in passed `precheck`
/// (`StorePath::check_new`, which runs gix's own name validation with every
/// protection on, and more).
fn write_tree(
    repo: &gix::Repository,
    parent_tree: ObjectId,
    edits: &[Edit<'_>],
) -> Result<ObjectId, StoreError> {
    let mut editor = repo
        .edit_tree(parent_tree)
        .git(|| format!("cannot edit tree {parent_tree}"))?
        .detach();
    for e in edits {
        match e.new {
            Some(id) => editor.upsert(e.path.split('/'), gix::objs::tree::EntryKind::Blob, id),
            None => editor.remove(e.path.split('/')),
        }
        .git(|| format!("cannot place {} in the tree", e.path))?;
    }
    editor
        .write(|t| repo.write_object(t).map(gix::Id::detach))
        .git(|| "cannot write the new tree".to_owned())
}

/// One path whose blob changes in this commit.
#[derive(Clone)]
pub(crate) struct Edit<'a> {
    pub path: &'a str,
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
    pub content: Option<&'a [u8]>,
}

impl Store {
    /// Writes `batch` as one commit on the branch HEAD names. Returns `None` when
    /// nothing would change (no empty commits). See the crate docs for the rules:
    /// only the named paths change, the ref moves by compare-and-swap (retried on a
    /// new head, never overwriting), and uncommitted work-tree edits to a named path
    /// fail with [`StoreError::Dirty`] before anything is written.
    pub fn commit(&self, batch: &Batch) -> Result<Option<CommitOutcome>, StoreError> {
        let changes = batch
            .changes
            .iter()
            .map(|(p, c)| (p.as_str().to_owned(), c.clone()))
            .collect();
        self.commit_raw(
            changes,
            &batch.message,
            batch.time,
            batch.allow_dirty_overwrite,
            None,
            batch.base,
        )
    }

    /// Takes `.gitloom/write.lock` and holds it until the guard is dropped. While it
    /// is held no other gitloom writer (in any process) can commit, so a caller can
    /// decide what to write from HEAD and commit it with [`Store::commit_locked`]
    /// knowing HEAD did not move in between, or run maintenance (repack, prune) that
    /// must not interleave with a commit.
    pub fn lock_writes(&self) -> Result<WriteLock, StoreError> {
        Ok(WriteLock {
            file: self.write_lock()?,
            path: self.gitloom_dir().join("write.lock"),
        })
    }

    /// [`Store::commit`] under a write lock the caller already holds (from
    /// [`Store::lock_writes`] on this store).
    pub fn commit_locked(
        &self,
        lock: &WriteLock,
        batch: &Batch,
    ) -> Result<Option<CommitOutcome>, StoreError> {
        if lock.path != self.gitloom_dir().join("write.lock") {
            return Err(StoreError::Locked {
                path: lock.path.clone(),
                cause: "that write lock belongs to another store".into(),
            });
        }
        let changes = batch
            .changes
            .iter()
            .map(|(p, c)| (p.as_str().to_owned(), c.clone()))
            .collect();
        self.commit_raw(
            changes,
            &batch.message,
            batch.time,
            batch.allow_dirty_overwrite,
            Some(lock),
            batch.base,
        )
    }

    pub(crate) fn commit_raw(
        &self,
        changes: Vec<(String, Option<Vec<u8>>)>,
        message: &str,
        time: Option<jiff::Timestamp>,
        allow_dirty: bool,
        held: Option<&WriteLock>,
        base: Option<ObjectId>,
    ) -> Result<Option<CommitOutcome>, StoreError> {
        let one = Part {
            changes: changes.into_iter().collect(),
            allow_dirty,
            base,
        };
        let (outcome, mut results) = self.commit_parts(vec![one], message, time, held)?;
        match results.pop() {
            Some(Err(e)) => Err(e),
            _ => Ok(outcome),
        }
    }

    /// Writes several batches as **one** commit (group commit): each batch is judged
    /// on its own, exactly as [`Store::commit`] would judge it alone against the
    /// branch tip (its `base`, dirty files, case and look-alike collisions), and a
    /// batch that is refused is left out with its own error while the others are
    /// committed. The batches must name disjoint paths (a path named by an earlier
    /// batch refuses the later one). `message` and `time` are the commit's.
    ///
    /// Returns the commit (if anything changed) and, per batch in order, the paths
    /// it changed or why it was refused.
    pub fn commit_group(
        &self,
        batches: &[Batch],
        message: &str,
        time: Option<jiff::Timestamp>,
    ) -> Result<GroupOutcome, StoreError> {
        let parts = batches
            .iter()
            .map(|b| Part {
                changes: b
                    .changes
                    .iter()
                    .map(|(p, c)| (p.as_str().to_owned(), c.clone()))
                    .collect(),
                allow_dirty: b.allow_dirty_overwrite,
                base: b.base,
            })
            .collect();
        let (commit, results) = self.commit_parts(parts, message, time, None)?;
        Ok(GroupOutcome { commit, results })
    }

    /// The one commit path: checks each part, writes blobs, then (under the write
    /// lock and git's index lock) judges each part against the tip, builds one tree
    /// from the parts that pass, moves the branch by compare-and-swap (judging again
    /// on a new tip if it lost the race), and refreshes the work tree.
    fn commit_parts(
        &self,
        parts: Vec<Part>,
        message: &str,
        time: Option<jiff::Timestamp>,
        held: Option<&WriteLock>,
    ) -> Result<PartsOutcome, StoreError> {
        // Refusals that do not depend on the tip: fixed for the whole call.
        let mut refused = prechecks(&parts);
        if parts
            .iter()
            .zip(&refused)
            .all(|(p, r)| r.is_some() || p.changes.is_empty())
        {
            return Ok((None, finish_results(&parts, refused)));
        }

        // flock locks belong to an open file description: taking it again here while
        // the caller holds it would deadlock, so a held lock is used as is.
        let _write_lock = match held {
            Some(_) => None,
            None => Some(self.write_lock()?),
        };
        let repo = self.repo();
        let blobs = self.write_blobs(&repo, &parts, &refused)?;
        let workdir = (!self.bare).then(|| self.root.clone());
        // Holding git's own index lock for the whole commit keeps a concurrent
        // `git commit`/`git add` from building a tree out of an index that is about
        // to change under it.
        let index_lock = match &workdir {
            Some(root) => Some(self.lock_index(&repo, root, &parts, &mut refused)?),
            None => None,
        };

        let attempt = Attempt {
            repo: &repo,
            parts: &parts,
            refused: &refused,
            blobs: &blobs,
            workdir: workdir.as_deref(),
            signature: signature(&repo, time),
            message: CommitMessage::new(message),
        };
        let mut retries = 0u32;
        let landed = loop {
            match self.try_commit(&attempt)? {
                Tried::Unchanged(judged) => {
                    return Ok((None, merge_results(&parts, refused, judged)));
                }
                Tried::Landed(landed) => break landed,
                Tried::Lost { branch, cause } => {
                    retries += 1;
                    if retries >= MAX_ATTEMPTS {
                        return Err(StoreError::Conflict {
                            retries,
                            cause: format!("updating {branch}: {cause}"),
                        });
                    }
                    // Someone else moved the branch (or holds its lock): rebuild on the new head.
                    std::thread::sleep(Duration::from_millis(
                        u64::from(retries * retries).min(100),
                    ));
                }
            }
        };

        let warnings = match (&workdir, index_lock) {
            (Some(root), Some((lock, _owner))) => self.refresh_worktree(&repo, root, &landed, lock),
            _ => Vec::new(),
        };
        let mut paths: Vec<String> = landed.edits.iter().map(|e| e.path.to_owned()).collect();
        paths.sort();
        let results = merge_results(&parts, refused, landed.judged);
        Ok((
            Some(CommitOutcome {
                commit: landed.commit,
                parent: landed.parent,
                tree: landed.tree,
                retries,
                paths,
                warnings,
            }),
            results,
        ))
    }

    /// The blob of every path the parts not refused write (`None` for a deletion),
    /// per part.
    fn write_blobs<'a>(
        &self,
        repo: &gix::Repository,
        parts: &'a [Part],
        refused: &[Option<StoreError>],
    ) -> Result<Vec<Blobs<'a>>, StoreError> {
        let mut blobs = Vec::with_capacity(parts.len());
        for (part, r) in parts.iter().zip(refused) {
            let mut ids = BTreeMap::new();
            if r.is_none() {
                for (path, content) in &part.changes {
                    let id = match content {
                        Some(bytes) => {
                            let id = repo
                                .write_blob(bytes)
                                .git(|| format!("cannot write the blob for {path}"))?
                                .detach();
                            self.written.keep(id, bytes);
                            Some(id)
                        }
                        None => None,
                    };
                    ids.insert(path.as_str(), id);
                }
            }
            blobs.push(ids);
        }
        Ok(blobs)
    }

    /// Refuses each part that would write through a symlinked directory of the work
    /// tree, finishes a refresh a killed writer left, and takes git's index lock.
    fn lock_index(
        &self,
        repo: &gix::Repository,
        root: &std::path::Path,
        parts: &[Part],
        refused: &mut [Option<StoreError>],
    ) -> Result<(gix::lock::File, LockOwner), StoreError> {
        let mut dirs = worktree::Dirs::new(root);
        for (part, r) in parts.iter().zip(refused.iter_mut()) {
            if r.is_some() {
                continue;
            }
            if let Some(e) = part
                .changes
                .keys()
                .find_map(|path| dirs.check_symlinks(path).err())
            {
                *r = Some(e);
            }
        }
        crate::recover::refresh_pending(self, repo, root)?;
        self.acquire_index_lock(repo)
    }

    /// One try at the commit on the branch's current tip: judges every part against
    /// it, writes the tree and the commit, and moves the branch by compare-and-swap.
    fn try_commit<'a>(&self, at: &Attempt<'_, 'a>) -> Result<Tried<'a>, StoreError> {
        let repo = at.repo;
        let branch = head_branch(repo)?;
        let parent = branch_tip(repo, &branch)?;
        let parent_tree = match parent {
            Some(p) => self.tree_of(p)?,
            None => ObjectId::empty_tree(repo.object_hash()),
        };
        // Each part against this tip: its edits, or why it is refused now.
        let judged: Vec<Result<Vec<Edit<'a>>, StoreError>> = at
            .parts
            .iter()
            .enumerate()
            .map(|(i, part)| match &at.refused[i] {
                Some(_) => Ok(Vec::new()),
                None => self.judge(repo, part, &at.blobs[i], parent, parent_tree, at.workdir),
            })
            .collect();
        let unchanged = |judged: Vec<Result<Vec<Edit<'a>>, StoreError>>| {
            Tried::Unchanged(judged.into_iter().map(|j| j.map(|_| Vec::new())).collect())
        };
        let edits: Vec<Edit<'a>> = judged.iter().flatten().flatten().cloned().collect();
        if edits.is_empty() {
            return Ok(unchanged(judged));
        }
        let tree = write_tree(repo, parent_tree, &edits)?;
        if tree == parent_tree {
            return Ok(unchanged(judged));
        }
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: at.signature.clone(),
            committer: at.signature.clone(),
            encoding: None,
            message: at.message.text.as_str().into(),
            extra_headers: Vec::new(),
        };
        let commit_id = repo
            .write_object(&commit)
            .git(|| "cannot write the commit object".to_owned())?
            .detach();
        let moved = self.move_branch(at, &branch, parent, commit_id, (parent_tree, tree));
        Ok(match moved {
            Ok(()) => Tried::Landed(Landed {
                commit: commit_id,
                parent,
                tree,
                edits,
                judged,
            }),
            Err(cause) => Tried::Lost {
                branch: branch.as_bstr().to_string(),
                cause,
            },
        })
    }

    /// Moves `branch` from `parent` to `commit` by compare-and-swap, with its reflog
    /// entry; the error (the branch moved, or its lock is held) as text. `trees` are
    /// the parent's and the commit's, for the journal a killed writer leaves.
    fn move_branch(
        &self,
        at: &Attempt<'_, '_>,
        branch: &gix::refs::FullName,
        parent: Option<ObjectId>,
        commit: ObjectId,
        (parent_tree, tree): (ObjectId, ObjectId),
    ) -> Result<(), String> {
        let repo = at.repo;
        let summary = &at.message.summary;
        let edit = RefEdit {
            change: RefChange::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: if parent.is_some() {
                        format!("commit: {summary}").into()
                    } else {
                        format!("commit (initial): {summary}").into()
                    },
                },
                expected: match parent {
                    Some(p) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(p)),
                    None => PreviousValue::MustNotExist,
                },
                new: gix::refs::Target::Object(commit),
            },
            name: branch.clone(),
            deref: false,
        };
        let mut time_buf = gix::date::parse::TimeBuf::default();
        // gix takes `<ref>.lock` inside this call; a writer killed in it leaves
        // the lock behind, which the next writer recognises as stale.
        let ref_owner = LockOwner::new(
            self.gitloom_dir().join("ref-lock.owner"),
            repo.git_dir().join(format!("{}.lock", branch.as_bstr())),
        );
        ref_owner.clear_stale_and_claim();
        // If we die after the ref moves but before the work tree and git index
        // follow, the next writer finishes the refresh from this journal.
        let journal = at
            .workdir
            .map(|_| crate::recover::Journal::write(self, parent_tree, tree));
        let edited = repo.edit_references_as(Some(edit), Some(at.signature.to_ref(&mut time_buf)));
        drop(ref_owner);
        match edited {
            Ok(_) => Ok(()),
            Err(err) => {
                if let Some(j) = journal {
                    j.done();
                }
                Err(chain(&err))
            }
        }
    }

    /// Brings the work tree and git's index to the landed commit: deletions first, so
    /// a file replaced by a directory (or the reverse) works; what could not be done
    /// is returned as warnings (the commit itself is safe in history).
    fn refresh_worktree(
        &self,
        repo: &gix::Repository,
        root: &std::path::Path,
        landed: &Landed<'_>,
        index_lock: gix::lock::File,
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        let mut written = Vec::new();
        let mut dirs = worktree::Dirs::new(root);
        let (deletes, writes): (Vec<&Edit<'_>>, Vec<&Edit<'_>>) =
            landed.edits.iter().partition(|e| e.new.is_none());
        for e in deletes.into_iter().chain(writes) {
            match worktree::apply(&mut dirs, e) {
                Ok(()) => written.push(e.path),
                Err(err) => warnings.push(format!("work tree not refreshed for {}: {err}", e.path)),
            }
        }
        if let Err(err) =
            gitindex::update(repo, index_lock, root, &landed.edits, &written, landed.tree)
        {
            warnings.push(format!("git index not refreshed: {err}"));
        }
        crate::recover::Journal::clear(self);
        warnings
    }

    /// One part against the tip `parent`: its edits, or why it is refused (a path
    /// changed since its base, a case or look-alike collision with the tree, an
    /// uncommitted edit in the work tree).
    fn judge<'a>(
        &self,
        repo: &gix::Repository,
        part: &'a Part,
        blobs: &BTreeMap<&'a str, Option<ObjectId>>,
        parent: Option<ObjectId>,
        parent_tree: ObjectId,
        workdir: Option<&std::path::Path>,
    ) -> Result<Vec<Edit<'a>>, StoreError> {
        // Read-modify-write: refuse when another writer changed one of our paths
        // after the base our changes were computed from.
        let mut trees = read::Trees::new(repo);
        if let Some(b) = part.base
            && parent != Some(b)
        {
            let base_tree = self.tree_of(b)?;
            for path in blobs.keys() {
                if trees.blob_at(base_tree, path)? != trees.blob_at(parent_tree, path)? {
                    return Err(StoreError::Stale {
                        path: (*path).to_owned(),
                        base: b.to_string(),
                    });
                }
            }
        }
        let mut edits = Vec::new();
        for (&path, new) in blobs {
            let old = trees.blob_at(parent_tree, path)?;
            if old != *new {
                edits.push(Edit {
                    path,
                    old,
                    new: *new,
                    content: part.changes.get(path).and_then(|c| c.as_deref()),
                });
            }
        }
        for e in &edits {
            if e.old.is_none() && e.new.is_some() {
                if let Some(existing) = trees.case_collision(parent_tree, e.path)? {
                    return Err(StoreError::CaseCollision {
                        path: e.path.to_owned(),
                        existing,
                    });
                }
                if let Some(existing) = trees.look_alike(parent_tree, e.path)? {
                    return Err(StoreError::LookAlike {
                        path: e.path.to_owned(),
                        existing,
                    });
                }
            }
        }
        if let (Some(root), false) = (workdir, part.allow_dirty) {
            let mut dirs = worktree::Dirs::new(root);
            for e in &edits {
                if let Some(path) = worktree::dirty(repo, &mut dirs, e, &edits)? {
                    return Err(StoreError::Dirty { path });
                }
            }
        }
        Ok(edits)
    }

    /// Takes `.git/index.lock` (clearing one a killed gitloom writer left behind).
    pub(crate) fn acquire_index_lock(
        &self,
        repo: &gix::Repository,
    ) -> Result<(gix::lock::File, LockOwner), StoreError> {
        let index_path = repo.index_path();
        let mut lock_file = index_path.as_os_str().to_owned();
        lock_file.push(".lock");
        let owner = LockOwner::new(
            self.gitloom_dir().join("index-lock.owner"),
            lock_file.into(),
        );
        owner.clear_stale_and_claim();
        let lock = gix::lock::File::acquire_to_update_resource(
            &index_path,
            gix::lock::acquire::Fail::AfterDurationWithBackoff(INDEX_LOCK_WAIT),
            None,
            0,
        )
        .map_err(|e| StoreError::Locked {
            path: index_path.clone(),
            cause: chain(&e),
        })?;
        owner.record();
        Ok((lock, owner))
    }

    /// Blocks until this process holds `.gitloom/write.lock`.
    pub(crate) fn write_lock(&self) -> Result<std::fs::File, StoreError> {
        let dir = self.gitloom_dir();
        std::fs::create_dir_all(&dir).map_err(crate::error::io("cannot create", &dir))?;
        let path = dir.join("write.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(crate::error::io("cannot open the write lock", &path))?;
        file.lock().map_err(|e| StoreError::Locked {
            path: path.clone(),
            cause: e.to_string(),
        })?;
        Ok(file)
    }
}

/// Who holds a git lock file (`.git/index.lock`, `.git/refs/heads/main.lock`), so a
/// lock left by a gitloom writer that was killed (SIGKILL, power loss: no
/// destructor runs) does not block every later write.
///
/// Before taking the lock a writer writes `pending` to a record in `.gitloom/`;
/// where it can, right after, it writes the lock file's identity (device and inode)
/// to a second record (`<name>.held`) and removes the first; it removes its records
/// when done. Records are only touched under `.gitloom/write.lock`, so no other
/// gitloom writer is alive mid-commit: a record left behind means its writer died.
/// The lock is then stale if it is the very file recorded, or if the writer died
/// while acquiring (`pending`) and the lock file is no older than the record. A lock
/// held by a `git` process otherwise never matches and is waited for as before.
/// (Residual risk, accepted: a `git` process that took the lock in the instant after
/// a gitloom writer died acquiring it loses its lock, and its own write then fails
/// cleanly.)
///
/// Why two records and not one replaced: on ext4, renaming a file over another
/// forces the new file's blocks to be allocated (`auto_da_alloc`), so removing it
/// at the end of the commit freed blocks, and on a disk mounted with `discard`
/// each freed block is discarded synchronously, a few milliseconds per commit (a
/// third of an ingestion's waiting on such a disk, measured with `strace -T`). A
/// record renamed to a free name and removed within the commit never reaches the
/// disk.
pub(crate) struct LockOwner {
    record: std::path::PathBuf,
    held: std::path::PathBuf,
    lock: std::path::PathBuf,
}

const PENDING: &str = "pending";

impl LockOwner {
    fn new(record: std::path::PathBuf, lock: std::path::PathBuf) -> LockOwner {
        LockOwner {
            held: record.with_extension("held"),
            record,
            lock,
        }
    }

    /// The lock file's device and inode: stable while the file exists (the writer
    /// fills it later, so size and mtime are not), and not reusable by another
    /// file while it does.
    fn identity(&self) -> Option<String> {
        let meta = std::fs::symlink_metadata(&self.lock).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(format!("{}:{}", meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        {
            // No inode: creation time is the closest stable identity.
            let t = meta.created().ok()?;
            Some(format!("{t:?}"))
        }
    }

    /// Whether the records a dead writer left say the lock file is its own. The
    /// identity record wins over a `pending` one (the writer died between writing
    /// the one and removing the other); a record holding an identity itself is
    /// what writers before the `.held` record left.
    fn left_stale(&self) -> bool {
        if let Ok(held) = std::fs::read_to_string(&self.held) {
            return self.identity().as_deref() == Some(held.trim());
        }
        let Ok(recorded) = std::fs::read_to_string(&self.record) else {
            return false;
        };
        let recorded = recorded.trim();
        if recorded == PENDING {
            let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified());
            matches!(
                (modified(&self.record), modified(&self.lock)),
                (Ok(r), Ok(l)) if l >= r
            )
        } else {
            self.identity().as_deref() == Some(recorded)
        }
    }

    /// Removes the lock file if a (dead) gitloom writer left it; then writes
    /// `pending`. Called with the write lock held, just before acquiring.
    fn clear_stale_and_claim(&self) {
        if self.left_stale() {
            let _ = std::fs::remove_file(&self.lock);
        }
        // A dead writer's identity record would outrank this writer's `pending`.
        let _ = std::fs::remove_file(&self.held);
        write_record(&self.record, PENDING);
    }

    /// Records the lock just acquired as ours: the identity first, then `pending`
    /// goes, so a kill between the two leaves the identity to be read.
    fn record(&self) {
        if let Some(id) = self.identity() {
            write_record(&self.held, &id);
            let _ = std::fs::remove_file(&self.record);
        }
    }
}

/// Writes a record through a temporary file renamed into place (a kill mid-write
/// must not leave it empty). Best effort: without the record a stale lock is only
/// waited for, as before.
fn write_record(path: &std::path::Path, content: &str) {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    if std::fs::write(&tmp, content).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

impl Drop for LockOwner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.held);
        let _ = std::fs::remove_file(&self.record);
    }
}

/// The branch HEAD points to (possibly unborn).
fn head_branch(repo: &gix::Repository) -> Result<gix::refs::FullName, StoreError> {
    repo.head_name()
        .git(|| "cannot read HEAD".to_owned())?
        .ok_or(StoreError::DetachedHead)
}

/// The commit `branch` points to right now, if it exists.
fn branch_tip(
    repo: &gix::Repository,
    branch: &gix::refs::FullName,
) -> Result<Option<ObjectId>, StoreError> {
    let reference = repo
        .try_find_reference(branch.as_ref())
        .git(|| format!("cannot read {}", branch.as_bstr()))?;
    match reference {
        None => Ok(None),
        Some(r) => Ok(Some(
            r.into_fully_peeled_id()
                .git(|| format!("cannot peel {}", branch.as_bstr()))?
                .detach(),
        )),
    }
}

/// `user.name`/`user.email` from the repository's `.git/config` if both are set, else `gitloom <gitloom@localhost>`.
fn signature(repo: &gix::Repository, time: Option<jiff::Timestamp>) -> gix::actor::Signature {
    // Only the repository's own config counts: a store's history should not depend on
    // whoever's global identity happens to be on the machine.
    let config = repo.config_snapshot();
    let local = |key: &str| {
        config
            .plumbing()
            .string_filter(key, |meta| meta.source == gix::config::Source::Local)
    };
    let (name, email) = match (local("user.name"), local("user.email")) {
        (Some(n), Some(e)) if !n.is_empty() && !e.is_empty() => (n, e),
        _ => ("gitloom".into(), "gitloom@localhost".into()),
    };
    let t = time.unwrap_or_else(jiff::Timestamp::now);
    gix::actor::Signature {
        name,
        email,
        time: gix::date::Time::new(t.as_second(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(dir: &std::path::Path) -> LockOwner {
        LockOwner::new(dir.join("index-lock.owner"), dir.join("index.lock"))
    }

    fn exists(dir: &std::path::Path, name: &str) -> bool {
        dir.join(name).exists()
    }

    #[test]
    fn a_lock_its_dead_writer_recorded_is_cleared_and_anothers_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        // A writer that took the lock and recorded it, then died (no drop).
        let dead = owner(d);
        dead.clear_stale_and_claim();
        std::fs::write(d.join("index.lock"), "").expect("lock");
        dead.record();
        assert!(exists(d, "index-lock.held") && !exists(d, "index-lock.owner"));
        std::mem::forget(dead);
        let next = owner(d);
        next.clear_stale_and_claim();
        assert!(!exists(d, "index.lock"), "its own lock is stale");
        assert!(
            !exists(d, "index-lock.held"),
            "the dead writer's record went"
        );
        drop(next);
        assert!(!exists(d, "index-lock.owner"));

        // A lock some other process holds (another file than the one recorded).
        let dead = owner(d);
        dead.clear_stale_and_claim();
        std::fs::write(d.join("index.lock"), "").expect("lock");
        dead.record();
        std::mem::forget(dead);
        // Moved aside, not removed, so the new lock cannot reuse its inode.
        std::fs::rename(d.join("index.lock"), d.join("aside")).expect("mv");
        std::fs::write(d.join("index.lock"), "git's").expect("git's lock");
        let next = owner(d);
        next.clear_stale_and_claim();
        assert!(
            exists(d, "index.lock"),
            "a lock we did not record is waited for"
        );
    }

    #[test]
    fn a_writer_killed_while_acquiring_or_recording_leaves_a_stale_lock_seen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        // Killed after `pending`, with the lock just taken.
        let dead = owner(d);
        dead.clear_stale_and_claim();
        std::fs::write(d.join("index.lock"), "").expect("lock");
        std::mem::forget(dead);
        owner(d).clear_stale_and_claim();
        assert!(!exists(d, "index.lock"));
        // Killed between writing the identity and removing `pending`.
        let dead = owner(d);
        dead.clear_stale_and_claim();
        std::fs::write(d.join("index.lock"), "").expect("lock");
        let id = dead.identity().expect("identity");
        write_record(&dead.held, &id);
        std::mem::forget(dead);
        owner(d).clear_stale_and_claim();
        assert!(!exists(d, "index.lock"));
        // A record in the one-file form earlier writers left.
        std::fs::write(d.join("index.lock"), "").expect("lock");
        let old = owner(d);
        let id = old.identity().expect("identity");
        std::fs::write(d.join("index-lock.owner"), &id).expect("record");
        std::mem::forget(old);
        owner(d).clear_stale_and_claim();
        assert!(!exists(d, "index.lock"));
    }
}
