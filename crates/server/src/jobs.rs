//! Asynchronous jobs: a closure run on a blocking thread whose JSON result (or error)
//! is kept for polling (`GET /v1/jobs/{id}`). Generic over what the closure does: any
//! write op runs as a job today, and ingestion will (TODO(merge) in `http.rs`).
//!
//! Jobs live in memory: a restart forgets them (the work they committed stays in git).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

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
    Succeeded,
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub id: String,
    #[serde(skip)]
    pub account: String,
    pub namespace: String,
    pub kind: String,
    pub status: JobStatus,
    pub created: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JobError>,
}

#[derive(Debug, Default)]
pub struct Jobs {
    map: Mutex<HashMap<String, Job>>,
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

fn job_id() -> String {
    let mut b = [0u8; 12];
    // Ids need only be unique and unguessable enough not to collide; if the OS has no
    // randomness to give, fall back to a non-cryptographic source (ids are also
    // checked against the account, so guessing one reveals nothing).
    if getrandom::fill(&mut b).is_err() {
        b.iter_mut().for_each(|x| *x = fastrand::u8(..));
    }
    format!(
        "job_{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    )
}

impl Jobs {
    /// Starts `work` on a blocking thread and returns the job as it is now.
    pub fn spawn<F>(self: &Arc<Self>, account: &str, namespace: &str, kind: &str, work: F) -> Job
    where
        F: FnOnce() -> Result<Value, JobError> + Send + 'static,
    {
        let job = Job {
            id: job_id(),
            account: account.to_owned(),
            namespace: namespace.to_owned(),
            kind: kind.to_owned(),
            status: JobStatus::Running,
            created: now(),
            finished: None,
            result: None,
            error: None,
        };
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(job.id.clone(), job.clone());
        let jobs = self.clone();
        let id = job.id.clone();
        tokio::task::spawn_blocking(move || {
            // A panic inside the work must still finish the job, as failed.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| {
                    Err(JobError {
                        code: "internal".into(),
                        message: "the job panicked".into(),
                    })
                });
            let mut map = jobs.map.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(j) = map.get_mut(&id) {
                j.finished = Some(now());
                match outcome {
                    Ok(v) => {
                        j.status = JobStatus::Succeeded;
                        j.result = Some(v);
                    }
                    Err(e) => {
                        j.status = JobStatus::Failed;
                        j.error = Some(e);
                    }
                }
            }
        });
        job
    }

    /// The job, if it exists and belongs to `account`.
    pub fn get(&self, account: &str, id: &str) -> Option<Job> {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .filter(|j| j.account == account)
            .cloned()
    }
}
