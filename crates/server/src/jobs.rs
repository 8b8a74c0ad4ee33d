//! Asynchronous jobs: a closure run on a blocking thread whose JSON result (or error)
//! is kept for polling (`GET /v1/jobs/{id}`) and which can be cancelled
//! (`DELETE /v1/jobs/{id}`). Generic over what the closure does: any op runs as a
//! job, ingestion always does.
//!
//! **Bounded.** A tenant may have [`JobLimits::running`] jobs running at once (more
//! are refused with `too_many_jobs`, not queued without end). A finished job's
//! result is kept as serialised JSON (a fraction of a `serde_json::Value`'s size)
//! for [`JobLimits::ttl`], and of each tenant's finished jobs only the newest
//! [`JobLimits::kept`], within [`JobLimits::kept_bytes`], are kept; older ones are
//! forgotten first. So a key that starts jobs without end costs a bounded amount
//! of memory, whatever the jobs return.
//!
//! Jobs live in memory: a restart forgets them (the work they committed stays in git).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::value::RawValue;

/// What a finished job failed with.
#[derive(Debug, Clone, Serialize)]
pub struct JobError {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    /// Asked to stop; it stops at its next safe point (between two sessions).
    Cancelling,
    Succeeded,
    Failed,
    /// Stopped early on request: its result says what was done before it stopped.
    Cancelled,
}

/// How many jobs a tenant may have, and for how long results are kept.
#[derive(Debug, Clone, Copy)]
pub struct JobLimits {
    /// Jobs of one tenant running at once.
    pub running: usize,
    /// How long a finished job's result is kept.
    pub ttl: Duration,
    /// Finished jobs kept per tenant (the newest).
    pub kept: usize,
    /// Bytes of finished results kept per tenant (the newest job is kept whatever
    /// its size).
    pub kept_bytes: usize,
    /// Conversation messages one tenant may have in running ingest jobs.
    pub pending_messages: usize,
}

impl Default for JobLimits {
    fn default() -> Self {
        JobLimits {
            running: 4,
            ttl: Duration::from_secs(3600),
            kept: 100,
            kept_bytes: 32 * 1024 * 1024,
            pending_messages: 10_000,
        }
    }
}

/// A job as `GET /v1/jobs/{id}` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub id: String,
    pub namespace: String,
    pub kind: String,
    pub status: JobStatus,
    pub created: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JobError>,
    /// True when `DELETE` can stop it before it finishes.
    pub cancellable: bool,
}

/// Why a job could not be started, found or cancelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobsError {
    #[error(
        "this account has {running} jobs running; at most {limit} may run at once (retry when one finishes)"
    )]
    TooMany { running: usize, limit: usize },
    #[error(
        "this account has {pending} messages being ingested; with these {asked} it would pass the {limit} allowed at once (retry when a job finishes)"
    )]
    Quota {
        pending: usize,
        asked: usize,
        limit: usize,
    },
    #[error("no job {0:?} (finished jobs are kept for a while, then forgotten)")]
    NotFound(String),
    #[error("job {id:?} ({kind}) cannot be stopped once started; it finishes on its own")]
    NotCancellable { id: String, kind: String },
}

impl JobsError {
    pub fn code(&self) -> &'static str {
        match self {
            JobsError::TooMany { .. } => "too_many_jobs",
            JobsError::Quota { .. } => "quota_exceeded",
            JobsError::NotFound(_) => "job_not_found",
            JobsError::NotCancellable { .. } => "job_not_cancellable",
        }
    }
}

struct Entry {
    tenant: String,
    job: Job,
    cancel: Option<Arc<AtomicBool>>,
    finished_at: Option<Instant>,
    bytes: usize,
}

#[derive(Default)]
struct State {
    jobs: HashMap<String, Entry>,
    /// Per tenant, its finished jobs oldest first (for expiry and the caps).
    finished: BTreeMap<String, VecDeque<String>>,
    running: BTreeMap<String, usize>,
    /// Per tenant, messages in its running ingest jobs.
    pending: BTreeMap<String, usize>,
}

pub struct Jobs {
    limits: JobLimits,
    state: Mutex<State>,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs::new(JobLimits::default())
    }
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

fn job_id() -> String {
    let mut b = [0u8; 12];
    // Ids need only be unique and unguessable enough not to collide; if the OS has no
    // randomness to give, fall back to a non-cryptographic source (ids are also
    // checked against the tenant, so guessing one reveals nothing).
    if getrandom::fill(&mut b).is_err() {
        b.iter_mut().for_each(|x| *x = fastrand::u8(..));
    }
    format!(
        "job_{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    )
}

/// What a job's work returns: its JSON result, or an error; and whether it stopped
/// early because it was cancelled.
pub struct Outcome {
    pub result: Result<serde_json::Value, JobError>,
    pub cancelled: bool,
}

impl State {
    /// Forgets what expired or is over the tenant's caps.
    fn trim(&mut self, tenant: &str, limits: &JobLimits) {
        let Some(queue) = self.finished.get_mut(tenant) else {
            return;
        };
        let mut bytes: usize = queue
            .iter()
            .filter_map(|id| self.jobs.get(id))
            .map(|e| e.bytes)
            .sum();
        while let Some(oldest) = queue.front() {
            let expired = self
                .jobs
                .get(oldest)
                .and_then(|e| e.finished_at)
                .is_none_or(|at| at.elapsed() >= limits.ttl);
            let over = queue.len() > limits.kept || (bytes > limits.kept_bytes && queue.len() > 1);
            if !(expired || over) {
                break;
            }
            if let Some(id) = queue.pop_front()
                && let Some(e) = self.jobs.remove(&id)
            {
                bytes = bytes.saturating_sub(e.bytes);
            }
        }
        if queue.is_empty() {
            self.finished.remove(tenant);
        }
    }
}

impl Jobs {
    pub fn new(limits: JobLimits) -> Jobs {
        Jobs {
            limits,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts `work` on a blocking thread and returns the job as it is now. A
    /// cancellable job's work gets the flag `DELETE` sets. `messages`: how many
    /// conversation messages it ingests (0 for other work).
    pub fn spawn<F>(
        self: &Arc<Self>,
        tenant: &str,
        namespace: &str,
        kind: &str,
        cancellable: bool,
        messages: usize,
        work: F,
    ) -> Result<Job, JobsError>
    where
        F: FnOnce(Option<Arc<AtomicBool>>) -> Outcome + Send + 'static,
    {
        let job = Job {
            id: job_id(),
            namespace: namespace.to_owned(),
            kind: kind.to_owned(),
            status: JobStatus::Running,
            created: now(),
            finished: None,
            result: None,
            error: None,
            cancellable,
        };
        let cancel = cancellable.then(|| Arc::new(AtomicBool::new(false)));
        {
            let mut st = self.state();
            st.trim(tenant, &self.limits);
            let running = st.running.get(tenant).copied().unwrap_or(0);
            if running >= self.limits.running {
                return Err(JobsError::TooMany {
                    running,
                    limit: self.limits.running,
                });
            }
            let pending = st.pending.get(tenant).copied().unwrap_or(0);
            if messages > 0 && pending + messages > self.limits.pending_messages {
                return Err(JobsError::Quota {
                    pending,
                    asked: messages,
                    limit: self.limits.pending_messages,
                });
            }
            *st.running.entry(tenant.to_owned()).or_default() += 1;
            if messages > 0 {
                *st.pending.entry(tenant.to_owned()).or_default() += messages;
            }
            st.jobs.insert(
                job.id.clone(),
                Entry {
                    tenant: tenant.to_owned(),
                    job: job.clone(),
                    cancel: cancel.clone(),
                    finished_at: None,
                    bytes: 0,
                },
            );
        }
        let jobs = self.clone();
        let id = job.id.clone();
        let tenant = tenant.to_owned();
        tokio::task::spawn_blocking(move || {
            // A panic inside the work must still finish the job, as failed.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(cancel)))
                .unwrap_or_else(|_| Outcome {
                    result: Err(JobError {
                        code: "internal".into(),
                        message: "the job panicked".into(),
                    }),
                    cancelled: false,
                });
            jobs.finish(&tenant, &id, messages, outcome);
        });
        Ok(job)
    }

    fn finish(&self, tenant: &str, id: &str, messages: usize, outcome: Outcome) {
        let (result, error) = match outcome.result {
            Ok(v) => match serde_json::value::to_raw_value(&v) {
                Ok(raw) => (Some(raw), None),
                Err(e) => (
                    None,
                    Some(JobError {
                        code: "internal".into(),
                        message: format!("the result would not serialise: {e}"),
                    }),
                ),
            },
            Err(e) => (None, Some(e)),
        };
        let mut st = self.state();
        if let Some(n) = st.running.get_mut(tenant) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                st.running.remove(tenant);
            }
        }
        if let Some(n) = st.pending.get_mut(tenant) {
            *n = n.saturating_sub(messages);
            if *n == 0 {
                st.pending.remove(tenant);
            }
        }
        let Some(entry) = st.jobs.get_mut(id) else {
            // Forgotten while running (its tenant was deleted).
            return;
        };
        entry.finished_at = Some(Instant::now());
        entry.bytes = result.as_ref().map_or(0, |r| r.get().len())
            + error.as_ref().map_or(0, |e| e.message.len());
        let j = &mut entry.job;
        j.finished = Some(now());
        j.status = match (&error, outcome.cancelled) {
            (Some(_), _) => JobStatus::Failed,
            (None, true) => JobStatus::Cancelled,
            (None, false) => JobStatus::Succeeded,
        };
        j.result = result;
        j.error = error;
        st.finished
            .entry(tenant.to_owned())
            .or_default()
            .push_back(id.to_owned());
        st.trim(tenant, &self.limits);
    }

    /// The job, if it exists and belongs to `tenant`.
    pub fn get(&self, tenant: &str, id: &str) -> Result<Job, JobsError> {
        let mut st = self.state();
        st.trim(tenant, &self.limits);
        st.jobs
            .get(id)
            .filter(|e| e.tenant == tenant)
            .map(|e| e.job.clone())
            .ok_or_else(|| JobsError::NotFound(id.to_owned()))
    }

    /// Cancels a running job (it stops at its next safe point and is then
    /// `cancelled`), or forgets a finished one. Returns the job as it is now.
    pub fn cancel(&self, tenant: &str, id: &str) -> Result<Job, JobsError> {
        let mut st = self.state();
        let entry = st
            .jobs
            .get_mut(id)
            .filter(|e| e.tenant == tenant)
            .ok_or_else(|| JobsError::NotFound(id.to_owned()))?;
        match entry.job.status {
            JobStatus::Running | JobStatus::Cancelling => {
                let Some(flag) = &entry.cancel else {
                    return Err(JobsError::NotCancellable {
                        id: id.to_owned(),
                        kind: entry.job.kind.clone(),
                    });
                };
                flag.store(true, Ordering::Relaxed);
                entry.job.status = JobStatus::Cancelling;
                Ok(entry.job.clone())
            }
            _ => {
                let job = entry.job.clone();
                st.jobs.remove(id);
                if let Some(q) = st.finished.get_mut(tenant) {
                    q.retain(|x| x != id);
                }
                Ok(job)
            }
        }
    }

    /// Forgets every job of a tenant (its account was deleted); running ones are
    /// asked to stop.
    pub fn forget_tenant(&self, tenant: &str) {
        let mut st = self.state();
        for e in st.jobs.values().filter(|e| e.tenant == tenant) {
            if let Some(flag) = &e.cancel {
                flag.store(true, Ordering::Relaxed);
            }
        }
        st.jobs.retain(|_, e| e.tenant != tenant);
        st.finished.remove(tenant);
    }

    /// Jobs of `tenant` running now.
    pub fn running(&self, tenant: &str) -> usize {
        self.state().running.get(tenant).copied().unwrap_or(0)
    }
}
