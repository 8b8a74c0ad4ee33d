//! Packs of git objects, made and installed by the `git` binary.
//!
//! Why `git` and not gix: gix 0.90 reads packs but has no pack *writer* for a set of
//! objects chosen by reachability (`git pack-objects --revs`), nor an `index-pack`
//! equivalent that installs an arbitrary pack into a repository. `git` is on every
//! machine that runs gitloom's tests and deployments; each call here is one
//! process over a pipe, and failures name the command and git's own message.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use gitloom_store::ObjectId;

use crate::error::{RemoteError, Result};

/// A pack of every object reachable from `tip` and not from `base` (every object
/// reachable from `tip` if `base` is `None`). Self-contained (not thin): deltas only
/// against objects inside the pack, so it can be installed on its own.
pub(crate) fn create(git_dir: &Path, tip: ObjectId, base: Option<ObjectId>) -> Result<Vec<u8>> {
    let mut revs = format!("{tip}\n");
    if let Some(b) = base {
        revs.push_str(&format!("^{b}\n"));
    }
    run_git(
        git_dir,
        &["pack-objects", "--revs", "--stdout", "-q"],
        revs.as_bytes(),
    )
}

/// Adds the objects of `pack` to the repository. Always as a pack with an index:
/// `index-pack` makes both visible only once complete, so a process killed midway
/// leaves no commit without its trees (`unpack-objects` writes objects one by one).
/// [`maybe_repack`] keeps their number down.
pub(crate) fn install(git_dir: &Path, pack: &[u8]) -> Result<()> {
    run_git(git_dir, &["index-pack", "--stdin", "--strict"], pack)?;
    Ok(())
}

/// The content address of a pack.
pub(crate) fn name_of(pack: &[u8]) -> String {
    blake3::hash(pack).to_hex().to_string()
}

fn run_git(git_dir: &Path, args: &[&str], stdin: &[u8]) -> Result<Vec<u8>> {
    let command = format!("git {}", args.join(" "));
    let fail = |reason: String| RemoteError::Git {
        command: command.clone(),
        reason,
    };
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(args)
        // Only this repository's objects matter; a user's config must not change
        // what gets packed (e.g. a pack.* setting) or prompt for anything.
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run git: {e}")))?;
    let mut input = child.stdin.take().expect("stdin was piped");
    // Feed stdin from a thread so a large pack cannot deadlock against a full stdout pipe.
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || input.write_all(&data));
    let out = child
        .wait_with_output()
        .map_err(|e| fail(format!("cannot wait for git: {e}")))?;
    let fed = feeder
        .join()
        .map_err(|_| fail("stdin feeder panicked".into()))?;
    if !out.status.success() {
        return Err(fail(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    fed.map_err(|e| fail(format!("cannot write to git: {e}")))?;
    Ok(out.stdout)
}

/// Consolidates the mirror's packs once there are more than `max` of them (`git
/// repack` writes the new pack before deleting the old ones, so a crash loses nothing).
/// Unreachable objects are kept: packs are installed before the branch moves to
/// the commit they complete.
pub(crate) fn maybe_repack(git_dir: &Path, max: usize) -> Result<()> {
    let dir = git_dir.join("objects").join("pack");
    let count = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
            .count(),
        Err(_) => 0,
    };
    if count > max {
        run_git(
            git_dir,
            &["repack", "-a", "-d", "-q", "--keep-unreachable"],
            b"",
        )?;
    }
    Ok(())
}
