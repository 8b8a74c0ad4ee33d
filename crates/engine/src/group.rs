//! Group commit: writes to one engine that arrive while a commit is being made are
//! committed together, as one commit and one index sync, by whichever of their
//! threads gets there first.
//!
//! A write costs a commit (blobs, trees, the ref's compare-and-swap, the work tree
//! and git index), an index sync and the embedding of what it changed; under
//! concurrent writers most of that is per commit, not per write, so N writers that
//! queue behind one commit share the next instead of waiting for N. Nothing waits
//! on purpose: a lone writer commits at once; a group forms only from writes that
//! arrived while the previous commit was running.
//!
//! Acknowledgement is unchanged: a write returns once the commit holding it has
//! moved the branch and the index is synced to it (or with its own error: the
//! store judges each batch of a group on its own, so one refused batch fails alone).
//! A group takes batches with disjoint paths only (a later write to the same path
//! waits for the next commit, keeping writes to one path in order) and only "now"
//! batches: one dated otherwise (an ingested session's commit carries its date)
//! commits alone.

use std::sync::{Arc, Condvar, Mutex};

use gitloom_store::{Batch, StoreError};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::write::WriteOutcome;

/// Most batches one commit takes.
const MAX_GROUP: usize = 64;

/// A batch may share a commit dated now if its own time is within this of now.
const NOW_SLACK_SECONDS: i64 = 5;

/// One write waiting for its commit.
struct Ticket {
    batch: Batch,
    paths: Vec<String>,
    outcome: Mutex<Option<Result<WriteOutcome>>>,
}

impl Ticket {
    fn take(&self) -> Option<Result<WriteOutcome>> {
        self.outcome
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn set(&self, r: Result<WriteOutcome>) {
        *self.outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
    }
}

#[derive(Default)]
struct State {
    /// A thread is committing a group.
    busy: bool,
    waiting: Vec<Arc<Ticket>>,
}

/// The writes of one engine waiting to be committed.
#[derive(Default)]
pub(crate) struct CommitQueue {
    state: Mutex<State>,
    done: Condvar,
}

/// True when a batch may share a commit made now with others.
fn groupable(batch: &Batch) -> bool {
    !batch.allow_dirty_overwrite
        && batch.time.is_none_or(|t| {
            (jiff::Timestamp::now().as_second() - t.as_second()).abs() <= NOW_SLACK_SECONDS
        })
}

/// Takes, in arrival order, the waiting tickets whose paths are disjoint from those
/// taken before them (a ticket that overlaps stays for the next commit, and so does
/// every later one naming its paths, keeping one path's writes in order).
fn take_group(waiting: &mut Vec<Arc<Ticket>>) -> Vec<Arc<Ticket>> {
    let mut taken = Vec::new();
    let mut claimed = std::collections::BTreeSet::new();
    let mut kept = Vec::new();
    for t in waiting.drain(..) {
        let free = t.paths.iter().all(|p| !claimed.contains(p));
        claimed.extend(t.paths.iter().cloned());
        if free && taken.len() < MAX_GROUP {
            taken.push(t);
        } else {
            kept.push(t);
        }
    }
    *waiting = kept;
    taken
}

/// The message of a group's commit: the first summaries on the first line, every
/// write's message below.
fn group_message(tickets: &[Arc<Ticket>]) -> String {
    let summaries: Vec<&str> = tickets
        .iter()
        .map(|t| t.batch.message.lines().next().unwrap_or_default())
        .collect();
    let head = if summaries.len() <= 3 {
        summaries.join("; ")
    } else {
        format!(
            "{}; {} (+{} more)",
            summaries[0],
            summaries[1],
            summaries.len() - 2
        )
    };
    let mut message = format!("{head}\n\n{} writes in one commit:\n", summaries.len());
    for s in &summaries {
        message.push_str("- ");
        message.push_str(s);
        message.push('\n');
    }
    message
}

/// Gives every ticket of a group still without an outcome an error, and frees the
/// queue, whatever happened to the thread committing it (a panic included): no
/// writer is left waiting for a commit that will never come.
struct Release<'a> {
    queue: &'a CommitQueue,
    group: &'a [Arc<Ticket>],
}

impl Drop for Release<'_> {
    fn drop(&mut self) {
        for t in self.group {
            let mut out = t.outcome.lock().unwrap_or_else(|p| p.into_inner());
            if out.is_none() {
                *out = Some(Err(EngineError::Usage(
                    "the commit holding this write failed before it finished; nothing of it may have been written"
                        .into(),
                )));
            }
        }
        let mut st = self.queue.state.lock().unwrap_or_else(|p| p.into_inner());
        st.busy = false;
        drop(st);
        self.queue.done.notify_all();
    }
}

/// The same failure for each write of a group that failed as a whole (store errors
/// are not `Clone`): the kinds a caller acts on keep their kind.
fn duplicate(e: &StoreError) -> StoreError {
    match e {
        StoreError::Conflict { retries, cause } => StoreError::Conflict {
            retries: *retries,
            cause: cause.clone(),
        },
        StoreError::Locked { path, cause } => StoreError::Locked {
            path: path.clone(),
            cause: cause.clone(),
        },
        other => StoreError::Git {
            context: "group commit".into(),
            cause: other.to_string(),
        },
    }
}

impl Engine {
    /// Commits a validated batch, alone or with the writes waiting beside it, and
    /// syncs the index; returns once the commit holding it is in the branch.
    pub(crate) fn commit_batch(&self, batch: Batch, paths: Vec<String>) -> Result<WriteOutcome> {
        if !groupable(&batch) {
            return self.commit_alone(batch, paths);
        }
        let queue = &self.commits;
        let ticket = Arc::new(Ticket {
            batch,
            paths,
            outcome: Mutex::new(None),
        });
        let mut st = queue.state.lock().unwrap_or_else(|p| p.into_inner());
        st.waiting.push(ticket.clone());
        loop {
            if let Some(r) = ticket.take() {
                return r;
            }
            if st.busy {
                st = queue.done.wait(st).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            st.busy = true;
            let group = take_group(&mut st.waiting);
            drop(st);
            {
                let _release = Release {
                    queue,
                    group: &group,
                };
                self.commit_tickets(&group);
            }
            st = queue.state.lock().unwrap_or_else(|p| p.into_inner());
        }
    }

    fn commit_alone(&self, batch: Batch, paths: Vec<String>) -> Result<WriteOutcome> {
        let outcome = self.store.commit(&batch)?;
        let sync = self.sync()?;
        Ok(WriteOutcome {
            commit: outcome.map(|o| o.commit.to_string()),
            paths,
            message: batch.message,
            sync,
        })
    }

    /// Commits a group (one batch: as itself) and hands each ticket its outcome.
    fn commit_tickets(&self, group: &[Arc<Ticket>]) {
        if let [one] = group {
            one.set(self.commit_alone(one.batch.clone(), one.paths.clone()));
            return;
        }
        let batches: Vec<Batch> = group.iter().map(|t| t.batch.clone()).collect();
        let out = match self
            .store
            .commit_group(&batches, &group_message(group), None)
        {
            Ok(o) => o,
            Err(e) => {
                for t in group {
                    t.set(Err(EngineError::Store(duplicate(&e))));
                }
                return;
            }
        };
        let commit = out.commit.as_ref().map(|c| c.commit.to_string());
        // One sync for the whole group; its report is every write's.
        let sync = match &commit {
            Some(_) => self.sync().map_err(|e| e.to_string()),
            None => Ok(Default::default()),
        };
        for (t, result) in group.iter().zip(out.results) {
            t.set(match (result, &sync) {
                (Err(e), _) => Err(e.into()),
                (Ok(_), Err(e)) => Err(EngineError::Store(StoreError::Git {
                    context: "committed, but the index sync after it failed".into(),
                    cause: e.clone(),
                })),
                (Ok(changed), Ok(sync)) => Ok(WriteOutcome {
                    commit: if changed.is_empty() {
                        None
                    } else {
                        commit.clone()
                    },
                    paths: t.paths.clone(),
                    message: t.batch.message.clone(),
                    sync: sync.clone(),
                }),
            });
        }
    }
}
