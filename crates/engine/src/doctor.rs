//! `gitloom doctor`: is the store intact and does the index say what git says?
//!
//! Checks, each reported with what to do about it:
//! - the repository: `git fsck` (the `git` binary; gix has no full fsck);
//! - the index against a fresh rebuild of HEAD into a temporary file: same rows in
//!   every table (nodes, sections, FTS content, links, entities, …), plus SQLite's
//!   and FTS5's own integrity checks;
//! - files in git that fail to parse (never indexed, never dropped);
//! - dangling links (allowed by design, they heal when the target appears: a warning);
//! - the vector cache's coverage of what the index would embed (a warning).

use std::time::Instant;

use gitloom_index::{Index, snapshot_diff};
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::gc::git_output;

/// How bad a problem is: errors make `ok` false; warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorProblem {
    /// Which check found it: `fsck`, `index`, `parse`, `dangling_link`, `vectors`.
    pub check: &'static str,
    pub severity: Severity,
    /// The memory concerned, if one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub message: String,
    /// What to do about it.
    pub fix: String,
}

/// What `doctor` found. `ok` is false when any problem is an error.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub ok: bool,
    pub problems: Vec<DoctorProblem>,
    /// The commit checked.
    pub commit: String,
    pub files_indexed: usize,
    pub ms: f64,
}

impl Engine {
    /// Runs every check; see the module docs.
    pub fn doctor(&self) -> Result<DoctorReport> {
        let started = Instant::now();
        let mut problems = Vec::new();
        self.check_fsck(&mut problems);
        self.ensure_synced()?;
        let head = self.store.head()?;
        let mut files_indexed = 0;
        if let Some(head) = head {
            let tmp = tempfile::tempdir().map_err(|source| EngineError::Io {
                what: "cannot create a temporary directory for the rebuild",
                path: std::env::temp_dir(),
                source,
            })?;
            let (mut fresh, _) = Index::open(&tmp.path().join("rebuild.db"))?;
            // A damaged object store can make the rebuild itself fail: that is a
            // finding (fsck names the objects), not a reason to stop checking.
            let rebuilt = self.sync_index_to(&mut fresh, head, true, false, Instant::now());
            let index = self.index();
            let have = index.snapshot()?;
            files_indexed = have.get("files").map_or(0, Vec::len);
            let diffs = match rebuilt {
                Ok(_) => snapshot_diff(&have, &fresh.snapshot()?, 3),
                Err(e) => {
                    problems.push(DoctorProblem {
                        check: "index",
                        severity: Severity::Error,
                        path: None,
                        message: format!("cannot rebuild the index from {head}: {e}"),
                        fix: "repair the object store first (see the fsck finding)".into(),
                    });
                    Vec::new()
                }
            };
            for diff in diffs {
                problems.push(DoctorProblem {
                    check: "index",
                    severity: Severity::Error,
                    path: None,
                    message: format!("the index differs from a fresh rebuild of {head}: {diff}"),
                    fix: "run `gitloom rebuild` (the index is derived; nothing is lost)".into(),
                });
            }
            for finding in index.integrity()? {
                problems.push(DoctorProblem {
                    check: "index",
                    severity: Severity::Error,
                    path: None,
                    message: format!("SQLite integrity check: {finding}"),
                    fix: "run `gitloom rebuild`".into(),
                });
            }
            for p in index.problems()? {
                problems.push(DoctorProblem {
                    check: "parse",
                    severity: Severity::Error,
                    path: Some(p.path.clone()),
                    message: p.message,
                    fix: format!(
                        "fix the file (`gitloom get {}` shows it) and write it back, or `gitloom forget {}`",
                        p.path, p.path
                    ),
                });
            }
            // `supersedes` names what a memory replaced; consolidation and by-hand
            // supersession remove the old file, which stays in history.
            for l in index
                .dangling_links()?
                .into_iter()
                .filter(|l| l.kind != "supersedes")
            {
                problems.push(DoctorProblem {
                    check: "dangling_link",
                    severity: Severity::Warning,
                    path: Some(l.src.clone()),
                    message: format!("{} link to {:?} resolves to no memory", l.kind, l.target),
                    fix: format!(
                        "write the missing memory (the link heals on the next sync) or correct the link in {}",
                        l.src
                    ),
                });
            }
            if let Some(sem) = &self.semantic {
                let (total, missing) = sem.coverage(&index)?;
                if missing > 0 {
                    problems.push(DoctorProblem {
                        check: "vectors",
                        severity: Severity::Warning,
                        path: None,
                        message: format!(
                            "the vector cache lacks {missing} of {total} texts for model {}",
                            sem.model_id()
                        ),
                        fix: "run `gitloom embed` (otherwise the next query embeds them)".into(),
                    });
                }
            }
        }
        Ok(DoctorReport {
            ok: !problems.iter().any(|p| p.severity == Severity::Error),
            problems,
            commit: head.map(|h| h.to_string()).unwrap_or_default(),
            files_indexed,
            ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }

    fn check_fsck(&self, problems: &mut Vec<DoctorProblem>) {
        let out = match git_output(
            self.store.root(),
            &["fsck", "--no-dangling", "--no-progress", "--strict"],
        ) {
            Ok(o) => o,
            Err(e) => {
                problems.push(DoctorProblem {
                    check: "fsck",
                    severity: Severity::Warning,
                    path: None,
                    message: format!("repository not checked: {e}"),
                    fix: "install git to let doctor check the object store".into(),
                });
                return;
            }
        };
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if out.status.success() && lines.is_empty() {
            return;
        }
        let mut message = format!(
            "git fsck ({}) reported {} line(s):",
            out.status,
            lines.len()
        );
        for l in lines.iter().take(20) {
            message.push_str("\n    ");
            message.push_str(l);
        }
        problems.push(DoctorProblem {
            check: "fsck",
            severity: Severity::Error,
            path: None,
            message,
            fix: "the git object store is damaged: restore the named objects from a clone or backup (`git fsck --full` lists them); the index can be rebuilt afterwards".into(),
        });
    }
}
