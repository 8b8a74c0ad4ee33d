//! `gitloom gc`: expire incidents past `expires_at`/`ttl` and repack the object store.
//!
//! Both run under the store's write lock ([`gitloom_store::Store::lock_writes`]):
//! what expires is decided from HEAD *after* the lock is taken and committed before
//! it is released, so a concurrent write (say, one extending an incident's TTL)
//! lands either wholly before the sweep (and is seen by it) or wholly after. The
//! repack also runs under the lock, so no gitloom commit is half-written while
//! `git repack -d`/`git prune` decide what is reachable.
//!
//! gix cannot repack or prune, so those two steps shell out to the `git` binary;
//! without `git` on PATH they fail with a clear error (expiry needs no `git`).

use std::path::Path;
use std::process::Command;

use gitloom_model::{Memory, StorePath, Tier, When};
use gitloom_store::{Batch, WriteLock};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::sync::SyncReport;

/// Repack after this many commits since the last repack (`gitloom gc` with no flag).
pub const DEFAULT_REPACK_EVERY: usize = 200;

/// Where the last repack is remembered (inside `.gitloom/`; losing it only means
/// the next `gc` repacks).
const STATE_FILE: &str = "gc.json";

/// When to repack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Repack {
    /// When at least `repack_every` commits were made since the last repack.
    #[default]
    Auto,
    Always,
    Never,
}

/// How to run `gc`.
#[derive(Debug, Clone)]
pub struct GcOptions {
    /// The time incidents are judged against; now if `None`.
    pub now: Option<jiff::Timestamp>,
    /// Report what would expire and whether a repack is due; change nothing.
    pub dry_run: bool,
    pub repack: Repack,
    pub repack_every: usize,
    /// `git prune --expire` argument: unreachable loose objects older than this go.
    /// The default grace keeps objects a concurrent non-gitloom git process may be
    /// about to reference.
    pub prune_expire: String,
}

impl Default for GcOptions {
    fn default() -> Self {
        GcOptions {
            now: None,
            dry_run: false,
            repack: Repack::Auto,
            repack_every: DEFAULT_REPACK_EVERY,
            prune_expire: "2.weeks.ago".into(),
        }
    }
}

/// One incident that was (or would be) expired.
#[derive(Debug, Clone, Serialize)]
pub struct Expired {
    pub path: String,
    /// When it expired (RFC 3339).
    pub at: String,
    /// `expires_at` or `ttl`.
    pub by: &'static str,
}

/// Object-store figures from `git count-objects -v`.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct ObjectCounts {
    pub loose: u64,
    pub loose_kib: u64,
    pub packs: u64,
    pub pack_kib: u64,
}

/// What a repack did.
#[derive(Debug, Clone, Serialize)]
pub struct RepackReport {
    pub before: ObjectCounts,
    pub after: ObjectCounts,
    pub ms: f64,
}

/// What `gc` did.
#[derive(Debug, Clone, Serialize)]
pub struct GcReport {
    pub dry_run: bool,
    pub expired: Vec<Expired>,
    /// Incidents gc could not judge (unparseable file or `ttl`); never deleted.
    pub skipped: Vec<String>,
    /// The `gc:` commit, if anything expired.
    pub commit: Option<String>,
    pub commits_since_repack: usize,
    pub repack_due: bool,
    pub repack: Option<RepackReport>,
    pub sync: Option<SyncReport>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct GcState {
    last_repack_commit: Option<String>,
}

/// Parses a `ttl:` value: a number with an optional unit `s`, `m`, `h`, `d` (the
/// default), `w` or `y` (365 days): `30d`, `12h`, `2w`, `30`.
pub fn parse_ttl(s: &str) -> Result<jiff::SignedDuration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: i64 = num
        .parse()
        .map_err(|_| format!("ttl {s:?} is not a number with a unit (30d, 12h, 2w)"))?;
    let secs = match unit.trim() {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "" | "d" => 86_400,
        "w" => 7 * 86_400,
        "y" => 365 * 86_400,
        other => {
            return Err(format!(
                "ttl {s:?}: unknown unit {other:?} (use s, m, h, d, w or y)"
            ));
        }
    };
    n.checked_mul(secs)
        .map(jiff::SignedDuration::from_secs)
        .ok_or_else(|| format!("ttl {s:?} is too large"))
}

fn instant(w: When) -> jiff::Timestamp {
    jiff::Timestamp::from_second(w.unix_seconds()).unwrap_or(jiff::Timestamp::MAX)
}

/// When an incident expires: `expires_at`, else `ttl` counted from `created` (or
/// `valid_from`). `Ok(None)`: it never does.
pub fn expiry(m: &Memory) -> Result<Option<(jiff::Timestamp, &'static str)>, String> {
    let f = &m.front;
    if let Some(at) = f.expires_at {
        return Ok(Some((instant(at), "expires_at")));
    }
    let Some(ttl) = f.ttl.as_deref() else {
        return Ok(None);
    };
    let ttl = parse_ttl(ttl)?;
    let base = f
        .created
        .or(f.valid_from)
        .ok_or_else(|| "has a ttl but no created or valid_from date to count it from".to_owned())?;
    Ok(Some((
        instant(base)
            .checked_add(ttl)
            .unwrap_or(jiff::Timestamp::MAX),
        "ttl",
    )))
}

impl Engine {
    /// Expires incidents and repacks on the cadence of `opts`; see the module docs.
    pub fn gc(&self, opts: &GcOptions) -> Result<GcReport> {
        let lock = self.store.lock_writes()?;
        let recovered = self.store.recover_worktree_locked(&lock)?;
        if !recovered.is_empty() {
            self.warn(format!(
                "finished refreshing {} work-tree file(s) an interrupted write left stale",
                recovered.len()
            ));
        }
        let now = opts.now.unwrap_or_else(jiff::Timestamp::now);
        let mut expired = Vec::new();
        let mut paths = Vec::new();
        let mut skipped = Vec::new();
        if let Some(head) = self.store.head()? {
            let tree = self.store.tree_of(head)?;
            for e in self.store.walk(tree)? {
                let Ok(path) = StorePath::parse(&e.path) else {
                    continue;
                };
                if path.tier() != Some(Tier::Incidents) || !path.is_memory() {
                    continue;
                }
                let bytes = self.store.read_blob(e.blob)?;
                let memory = match Memory::parse(path.as_str(), &bytes) {
                    Ok(m) => m,
                    Err(err) => {
                        skipped.push(err.to_string());
                        continue;
                    }
                };
                match expiry(&memory) {
                    Ok(Some((at, by))) if at <= now => {
                        expired.push(Expired {
                            path: path.to_string(),
                            at: at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                            by,
                        });
                        paths.push(path);
                    }
                    Ok(_) => {}
                    Err(msg) => skipped.push(format!("{path}: {msg}")),
                }
            }
        }
        let mut commit = None;
        if !opts.dry_run && !paths.is_empty() {
            let mut message = format!("gc: expire {} incident(s)\n\n", paths.len());
            for e in &expired {
                message.push_str(&format!("- {} ({} {})\n", e.path, e.by, e.at));
            }
            let batch = Batch {
                changes: paths.into_iter().map(|p| (p, None)).collect(),
                message,
                time: None,
                allow_dirty_overwrite: false,
                base: None,
            };
            commit = self
                .store
                .commit_locked(&lock, &batch)?
                .map(|o| o.commit.to_string());
        }

        let state_path = self.store.gitloom_dir().join(STATE_FILE);
        let state: GcState = std::fs::read(&state_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let commits_since_repack =
            self.commits_since(state.last_repack_commit.as_deref(), opts.repack_every)?;
        let repack_due = match opts.repack {
            Repack::Always => true,
            Repack::Never => false,
            Repack::Auto => commits_since_repack >= opts.repack_every,
        };
        let mut repack = None;
        if repack_due && !opts.dry_run {
            repack = Some(self.repack_locked(&lock, &opts.prune_expire)?);
            let state = GcState {
                last_repack_commit: self.store.head()?.map(|h| h.to_string()),
            };
            let bytes = serde_json::to_vec_pretty(&state).expect("a small struct serialises");
            // Losing this file only makes the next gc repack early, so a failed
            // write is a warning, not an error.
            if let Err(e) = std::fs::write(&state_path, bytes) {
                self.warn(format!(
                    "cannot record the repack in {}: {e}",
                    state_path.display()
                ));
            }
        }
        drop(lock);
        let sync = if commit.is_some() {
            Some(self.sync()?)
        } else {
            None
        };
        Ok(GcReport {
            dry_run: opts.dry_run,
            expired,
            skipped,
            commit,
            commits_since_repack,
            repack_due,
            repack,
            sync,
        })
    }

    /// Commits on HEAD's first-parent line since `marker` (capped at `cap`: we only
    /// need to know whether the cadence is reached). No marker: the cap.
    fn commits_since(&self, marker: Option<&str>, cap: usize) -> Result<usize> {
        let Some(marker) = marker else {
            return Ok(cap);
        };
        let Ok(marker) = marker.parse::<gitloom_store::ObjectId>() else {
            return Ok(cap);
        };
        let log = self.store.log(None, Some(cap))?;
        Ok(log
            .iter()
            .position(|c| c.id == marker)
            .unwrap_or(log.len().max(cap)))
    }

    fn repack_locked(&self, _lock: &WriteLock, prune_expire: &str) -> Result<RepackReport> {
        let started = std::time::Instant::now();
        let root = self.store.root();
        let before = count_objects(root)?;
        run_git(root, &["repack", "-a", "-d", "-q"])?;
        run_git(root, &["prune", &format!("--expire={prune_expire}")])?;
        // The packs changed under this process's object store.
        self.store.reload_objects()?;
        let after = count_objects(root)?;
        Ok(RepackReport {
            before,
            after,
            ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// Runs `git -C root args…`, returning stdout; a missing `git` or a failure is an
/// error naming the command and what git said.
pub(crate) fn run_git(root: &Path, args: &[&str]) -> Result<String> {
    let out = git_output(root, args)?;
    if !out.status.success() {
        return Err(EngineError::Usage(format!(
            "`git {}` in {} failed ({}): {}",
            args.join(" "),
            root.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(crate) fn git_output(root: &Path, args: &[&str]) -> Result<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| {
            EngineError::Usage(format!(
                "cannot run `git {}` ({e}); this step needs the git binary on PATH (gix cannot repack, prune or fsck)",
                args.join(" ")
            ))
        })
}

fn count_objects(root: &Path) -> Result<ObjectCounts> {
    let text = run_git(root, &["count-objects", "-v"])?;
    let mut c = ObjectCounts::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v: u64 = v.trim().parse().unwrap_or_default();
        match k.trim() {
            "count" => c.loose = v,
            "size" => c.loose_kib = v,
            "packs" => c.packs = v,
            "size-pack" => c.pack_kib = v,
            _ => {}
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_units() {
        assert_eq!(parse_ttl("30d").map(|d| d.as_secs()), Ok(30 * 86_400));
        assert_eq!(parse_ttl("30").map(|d| d.as_secs()), Ok(30 * 86_400));
        assert_eq!(parse_ttl("12h").map(|d| d.as_secs()), Ok(12 * 3600));
        assert_eq!(parse_ttl("2w").map(|d| d.as_secs()), Ok(14 * 86_400));
        assert!(parse_ttl("soon").is_err());
        assert!(parse_ttl("3 fortnights").is_err());
        assert!(parse_ttl("99999999999999999y").is_err());
    }
}
