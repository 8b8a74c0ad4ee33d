//! The job table's caps on what it keeps, driven through its public API.

use std::sync::Arc;
use std::time::Duration;

use gitloom_server::JobLimits;
use gitloom_server::jobs::{JobStatus, Jobs, Outcome};

/// Runs a job whose result is a string of `bytes` characters and waits for it.
async fn finished(jobs: &Arc<Jobs>, tenant: &str, bytes: usize) -> String {
    let job = jobs
        .spawn(tenant, "notes", "log", false, 0, move |_| Outcome {
            result: Ok(serde_json::Value::String("x".repeat(bytes))),
            cancelled: false,
        })
        .expect("spawn");
    for _ in 0..500 {
        if jobs
            .get(tenant, &job.id)
            .is_ok_and(|j| j.status != JobStatus::Running)
        {
            return job.id;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("job {} did not finish", job.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_results_are_kept_within_the_byte_cap_and_the_newest_always() {
    let jobs = Arc::new(Jobs::new(JobLimits {
        kept: 100,
        kept_bytes: 1_000,
        ..JobLimits::default()
    }));
    // Three results of ~400 bytes: the oldest goes once the three pass 1,000.
    let a = finished(&jobs, "ana", 400).await;
    let b = finished(&jobs, "ana", 400).await;
    assert!(jobs.get("ana", &a).is_ok() && jobs.get("ana", &b).is_ok());
    let c = finished(&jobs, "ana", 400).await;
    assert!(jobs.get("ana", &a).is_err(), "the oldest is over the cap");
    assert!(jobs.get("ana", &b).is_ok() && jobs.get("ana", &c).is_ok());
    // A result larger than the whole cap is still kept while it is the newest,
    // and pushes out everything older.
    let big = finished(&jobs, "ana", 5_000).await;
    let got = jobs.get("ana", &big).expect("the newest is kept");
    assert_eq!(got.status, JobStatus::Succeeded);
    assert!(jobs.get("ana", &b).is_err() && jobs.get("ana", &c).is_err());
    // Caps are per tenant: another tenant's results are untouched.
    let other = finished(&jobs, "bo", 900).await;
    assert!(jobs.get("bo", &other).is_ok() && jobs.get("ana", &big).is_ok());
    // And a tenant never sees another's job.
    assert!(jobs.get("bo", &big).is_err());
}
