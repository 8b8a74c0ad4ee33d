//! Per-stage wall time of one retrieval, for `timings_ms`.

use std::collections::BTreeMap;
use std::time::Instant;

/// Times stages one after another: `start`, then `stop(name)`; or a stage timed
/// apart (`add`): the lexical and semantic arms may run at the same time, and then
/// their two figures overlap (their sum exceeds the wall time they took).
#[derive(Debug)]
pub(crate) struct Timings {
    pub(crate) map: BTreeMap<String, f64>,
    at: Instant,
}

impl Timings {
    pub fn new() -> Timings {
        Timings {
            map: BTreeMap::new(),
            at: Instant::now(),
        }
    }

    pub fn start(&mut self) {
        self.at = Instant::now();
    }

    /// Adds the time since `start` to `stage` (a stage run twice, as the arms are
    /// for a limit beyond their depth, counts both runs).
    pub fn stop(&mut self, stage: &str) {
        self.add(stage, ms(self.at));
    }

    /// Adds `ms` milliseconds to `stage`.
    pub fn add(&mut self, stage: &str, ms: f64) {
        *self.map.entry(stage.to_owned()).or_default() += ms;
    }

    /// Records the time since `since` under `stage`.
    pub fn since(&mut self, stage: &str, since: Instant) {
        self.map.insert(stage.to_owned(), ms(since));
    }
}

/// Milliseconds since `t`.
pub(crate) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
