//! Per-key rate limit: a token bucket per API key (refilled continuously, `burst`
//! deep). Hand-written because the keyed limiters available (`governor` via
//! `tower_governor`) key on the peer address, and ours keys on the authenticated key;
//! the bucket itself is a few lines.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    /// Sustained requests per second per key.
    pub per_second: f64,
    /// Requests a key may make at once after being idle.
    pub burst: f64,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit {
            per_second: 200.0,
            burst: 400.0,
        }
    }
}

#[derive(Debug)]
pub struct Limiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl Limiter {
    pub fn new(limit: RateLimit) -> Limiter {
        Limiter {
            limit,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `key`; `Err(seconds)` to wait when there is none.
    pub fn check(&self, key: &str) -> Result<(), f64> {
        let now = Instant::now();
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let (tokens, last) = b.entry(key.to_owned()).or_insert((self.limit.burst, now));
        let refill = now.duration_since(*last).as_secs_f64() * self.limit.per_second;
        *tokens = (*tokens + refill).min(self.limit.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err((1.0 - *tokens) / self.limit.per_second)
        }
    }
}
