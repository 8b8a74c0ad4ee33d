//! A second thread for the read path: one job at a time is handed to it, and whoever
//! gets to the job first runs it, the worker or the caller.
//!
//! The semantic arms' scan reads only the arena and the query's vector, so it can run
//! beside the lexical arm, which reads the index on the caller's thread. A thread
//! spawned per retrieve measured worse than none on a busy 2-core machine: a new
//! thread waits for a core, and the caller then waits for it (BENCHMARKS.md,
//! session 27). So the worker is started once per engine, and a job it has not begun
//! when the caller is ready for its result is taken back and run by the caller: the
//! caller never waits for a thread that has not started, only for one that is
//! running its job. Results do not depend on who ran the job. (The scan's job is the
//! worker's share of a `gitloom_embed::ScanJob`: the caller, done with the lexical arm,
//! does the pieces still left itself, then joins; see `arms.rs`.)

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

type Task = Box<dyn FnOnce() + Send>;

/// The engine's worker thread, started by the first job handed to it.
#[derive(Default)]
pub(crate) struct Worker {
    /// `None` when the thread could not be started: jobs then run on the caller.
    tasks: OnceLock<Option<Sender<Task>>>,
}

/// A job handed to the [`Worker`]; [`Job::join`] gives its result.
pub(crate) struct Job<T>(Arc<Shared<T>>);

struct Shared<T> {
    state: Mutex<State<T>>,
    done: Condvar,
}

enum State<T> {
    /// Not begun: whoever takes it runs it.
    Queued(Box<dyn FnOnce() -> T + Send>),
    /// Taken (by the worker, or by the caller, which then does not look again).
    Running,
    /// Run by the worker; a panic is kept to be raised on the caller's thread.
    Done(std::thread::Result<T>),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Worker {
    /// Hands `f` to the worker thread; the caller gets its result from the job.
    pub(crate) fn submit<T, F>(&self, f: F) -> Job<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::Queued(Box::new(f))),
            done: Condvar::new(),
        });
        let tasks = self.tasks.get_or_init(|| {
            let (tx, rx) = channel::<Task>();
            std::thread::Builder::new()
                .name("gitloom-read".into())
                .spawn(move || {
                    // Ends when the engine (and with it the sender) is dropped.
                    while let Ok(task) = rx.recv() {
                        task();
                    }
                })
                .map_err(|e| tracing::warn!("no worker thread for the read path: {e}"))
                .ok()
                .map(|_| tx)
        });
        if let Some(tx) = tasks {
            let theirs = shared.clone();
            let task: Task = Box::new(move || theirs.run_if_queued());
            // A worker that has gone away leaves the job queued: the caller runs it.
            let _ = tx.send(task);
        }
        Job(shared)
    }
}

impl<T> Shared<T> {
    /// The worker's side: run the job unless the caller has taken it.
    fn run_if_queued(&self) {
        let f = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut *state, State::Running) {
                State::Queued(f) => f,
                other => {
                    *state = other;
                    return;
                }
            }
        };
        let result = catch_unwind(AssertUnwindSafe(f));
        *lock(&self.state) = State::Done(result);
        self.done.notify_all();
    }
}

impl<T> Job<T> {
    /// The job's result: run here if the worker has not begun it, else waited for. A
    /// panic in the job is raised here, as if the caller had run it.
    pub(crate) fn join(self) -> T {
        let mut state = lock(&self.0.state);
        loop {
            match std::mem::replace(&mut *state, State::Running) {
                State::Queued(f) => {
                    drop(state);
                    return f();
                }
                State::Done(Ok(v)) => return v,
                State::Done(Err(panic)) => resume_unwind(panic),
                State::Running => {
                    state = self.0.done.wait(state).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_gives_its_result_whoever_runs_it() {
        let worker = Worker::default();
        for i in 0..200u64 {
            let job = worker.submit(move || (0..=i).sum::<u64>());
            if i % 3 == 0 {
                std::thread::yield_now();
            }
            assert_eq!(job.join(), i * (i + 1) / 2);
        }
        // Several jobs queued at once, joined out of order.
        let jobs: Vec<Job<u64>> = (0..20u64).map(|i| worker.submit(move || i * 2)).collect();
        for (i, job) in jobs.into_iter().enumerate().rev() {
            assert_eq!(job.join(), i as u64 * 2);
        }
    }

    #[test]
    fn a_panic_in_a_job_reaches_the_caller() {
        let worker = Worker::default();
        for _ in 0..20 {
            // The job says when it has begun, so this is the worker's panic, kept and
            // raised here, not the caller's own.
            let (began, begun) = std::sync::mpsc::channel();
            let job = worker.submit(move || -> u8 {
                let _ = began.send(());
                panic!("scan failed")
            });
            begun.recv().expect("the worker began the job");
            let caught = catch_unwind(AssertUnwindSafe(|| job.join()));
            assert!(caught.is_err());
        }
        // The worker still runs jobs after one panicked.
        assert_eq!(worker.submit(|| 7u8).join(), 7);
    }
}
