//! One per-kind scan ([`Arena::scan_per_kind`]) cut into pieces that several threads
//! can take in turn, for the same answer bit for bit.
//!
//! Why: the engine starts the scan on its worker thread ([`ScanJob::help`]) while the
//! caller's thread runs the lexical arm; once that arm is done the caller would only
//! wait for the scan. With a [`ScanJob`] it takes the pieces still left instead and
//! puts the answer together ([`ScanJob::finish`]). Nothing here starts a thread: the
//! caller decides who helps.
//!
//! The work is the int8 pass, in pieces of consecutive rows claimed through an atomic
//! counter. A piece scores its rows (each score an exact integer dot product × the
//! row's scale, so a row's score does not depend on the piece or the thread) and turns
//! them into the selection's keys ([`crate::arena::rank_key`]: the score, ties to the
//! earlier row), which join each kind's best `top_k` so far (one short lock per piece).
//! Keys are distinct, so the best of all rows is the same whatever the order the pieces
//! were done in. Once a kind holds a full `top_k`, its worst kept key is a bound the
//! kind's final worst is at least as good as: a piece drops the keys under it before
//! taking the lock, so most pieces hand over a few keys, not their rows'. Whoever does
//! the last piece turns each kind's keys into its hits.
//!
//! No `unsafe` is needed. A thread only ever waits for a piece another thread has
//! claimed (or for the lock it holds), i.e. for a thread that is running; if that
//! thread panics, the job is marked abandoned and the waiter stops waiting
//! ([`ScanJob::finish`] gives `None`) instead of hanging.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

use crate::arena::{Arena, Prepared, ScanHit, best_keys, int8_scores, rank_key, score_half};

/// Int8 bytes read by one piece of the pass at most (512 KiB: 1,365 rows of MiniLM's
/// 384 components, some tens of microseconds).
const PASS_BYTES: usize = 512 << 10;

/// The pass is cut into at least this many pieces when the rows allow, so that a
/// thread arriving part-way through still finds some to take...
const MIN_PIECES: usize = 16;

/// ... but no piece is smaller than this many rows (a piece has a fixed cost: a claim,
/// its keys, a slot).
const MIN_PASS_ROWS: usize = 64;

/// A per-kind scan of one arena for one query, done by whichever threads call
/// [`ScanJob::help`] and [`ScanJob::finish`]; made by [`Arena::scan_job`]. The answer
/// is [`Arena::scan_per_kind`]'s, bit for bit, however the pieces were shared.
pub struct ScanJob {
    /// A clone of the arena (its rows are shared, not copied).
    arena: Arena,
    top_k: usize,
    /// `None`: nothing to scan (an empty arena, a zero query, or one of the wrong
    /// dimension); the job is then done from the start.
    prepared: Option<Prepared>,
    pass_rows: usize,
    /// Pieces of the pass.
    passes: usize,
    /// Per kind present in the pieces done, its best keys so far (at most `top_k`).
    best: Mutex<BTreeMap<u8, Vec<u64>>>,
    next_pass: AtomicUsize,
    passes_done: AtomicUsize,
    /// Per kind, a key every one of the kind's final candidates is at least (its worst
    /// in `best` once that is full).
    bounds: Vec<AtomicU64>,
    /// Each kind's hits, best first, once the last piece is done.
    hits: OnceLock<BTreeMap<u8, Vec<ScanHit>>>,
    /// A thread panicked in a piece: what it claimed will never be done.
    abandoned: AtomicBool,
    wake: Mutex<()>,
    changed: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The next unclaimed piece of `n`, if any.
fn claim(next: &AtomicUsize, n: usize) -> Option<usize> {
    let i = next.fetch_add(1, Ordering::Relaxed);
    (i < n).then_some(i)
}

/// Rows per piece of the pass over `rows` rows of `dim` components.
fn pass_rows(rows: usize, dim: usize) -> usize {
    let most = (PASS_BYTES / dim.max(1)).max(MIN_PASS_ROWS);
    rows.div_ceil(MIN_PIECES).clamp(MIN_PASS_ROWS, most)
}

impl Arena {
    /// [`Arena::scan_per_kind`] as a [`ScanJob`] that several threads can share.
    pub fn scan_job(&self, query: &[f32], top_k: usize) -> ScanJob {
        let prepared = self.prepare(query);
        let rows = if prepared.is_some() { self.len() } else { 0 };
        let pass_rows = pass_rows(rows, self.dim());
        let job = ScanJob {
            arena: self.clone(),
            top_k,
            prepared,
            pass_rows,
            passes: rows.div_ceil(pass_rows),
            best: Mutex::new(BTreeMap::new()),
            next_pass: AtomicUsize::new(0),
            passes_done: AtomicUsize::new(0),
            bounds: (0..256).map(|_| AtomicU64::new(0)).collect(),
            hits: OnceLock::new(),
            abandoned: AtomicBool::new(false),
            wake: Mutex::new(()),
            changed: Condvar::new(),
        };
        if job.passes == 0 {
            let _ = job.hits.set(BTreeMap::new());
        }
        job
    }
}

/// On a panic in a thread doing the job's pieces, marks the job abandoned and wakes
/// whoever waits for them.
struct AbandonOnPanic<'a>(&'a ScanJob);

impl Drop for AbandonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abandoned.store(true, Ordering::SeqCst);
            self.0.wake_all();
        }
    }
}

impl ScanJob {
    /// Does the pieces of the pass no thread has claimed yet.
    pub fn help(&self) {
        let _guard = AbandonOnPanic(self);
        while let Some(i) = claim(&self.next_pass, self.passes) {
            self.run_pass(i);
        }
    }

    /// The answer: does the pieces left, then waits for those other threads are doing.
    /// `None` if a thread sharing the job panicked in a piece, which will then never
    /// be done (that thread's panic is the one to raise).
    pub fn finish(&self) -> Option<BTreeMap<u8, Vec<ScanHit>>> {
        self.help();
        if self.wait_for(|| self.hits.get().is_some()) {
            self.hits.get().cloned()
        } else {
            None
        }
    }

    /// Blocks until `ready` (checked under the lock that wakers take); false if the
    /// job was abandoned first.
    fn wait_for(&self, ready: impl Fn() -> bool) -> bool {
        if ready() {
            return true;
        }
        let mut guard = lock(&self.wake);
        loop {
            if ready() {
                return true;
            }
            if self.abandoned.load(Ordering::SeqCst) {
                return false;
            }
            guard = self.changed.wait(guard).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Wakes every waiter (after the state they wait on was changed).
    fn wake_all(&self) {
        drop(lock(&self.wake));
        self.changed.notify_all();
    }

    fn pass_range(&self, piece: usize) -> Range<usize> {
        let start = piece * self.pass_rows;
        start..(start + self.pass_rows).min(self.arena.len())
    }

    /// Piece `piece` of the pass; whoever does the last one makes the hits.
    fn run_pass(&self, piece: usize) {
        let rows = self.pass_range(piece);
        let mut scores = Vec::with_capacity(rows.len());
        self.pass_scores(rows.clone(), &mut scores);
        let keys = self.piece_keys(rows, &scores);
        self.keep_best(keys);
        if self.passes_done.fetch_add(1, Ordering::AcqRel) + 1 == self.passes {
            let _ = self.hits.set(self.assemble());
            self.wake_all();
        }
    }

    /// The int8 scores of `rows`, appended to `out` in row order: the whole pass's
    /// scores of those rows.
    fn pass_scores(&self, rows: Range<usize>, out: &mut Vec<f32>) {
        let Some(q) = &self.prepared else { return };
        let d = self.arena.dim();
        int8_scores(
            &q.quant,
            &self.arena.quant()[rows.start * d..rows.end * d],
            &self.arena.qscale()[rows],
            out,
        );
    }
    /// The keys of `rows` (scored `scores`) at or above their kind's bound, per kind
    /// present (a kind with none left still has its entry), in kind order.
    fn piece_keys(&self, rows: Range<usize>, scores: &[f32]) -> Vec<(u8, Vec<u64>)> {
        let kinds = &self.arena.kinds()[rows.clone()];
        let mut present = [false; 256];
        let mut keys: Vec<Vec<u64>> = (0..256).map(|_| Vec::new()).collect();
        if self.top_k == 0 {
            kinds.iter().for_each(|&k| present[usize::from(k)] = true);
        } else {
            // The bounds as the piece begins: any bound published is a valid one.
            let bounds: Vec<u64> = self
                .bounds
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect();
            for ((row, &score), &kind) in rows.zip(scores).zip(kinds) {
                let k = usize::from(kind);
                present[k] = true;
                // A key's upper half is its score's: a row whose score half is under
                // the bound's is under the bound whatever its row (most rows, once the
                // kind's best is full), so only the others get a whole key.
                if score_half(score) < (bounds[k] >> 32) as u32 {
                    continue;
                }
                let key = rank_key(score, row);
                if key >= bounds[k] {
                    keys[k].push(key);
                }
            }
        }
        keys.into_iter()
            .enumerate()
            .filter(|&(k, _)| present[k])
            .map(|(k, keys)| (k as u8, keys))
            .collect()
    }

    /// Joins a piece's keys to each kind's best so far, and raises the bound of each
    /// kind whose best is full to its worst kept key.
    fn keep_best(&self, keys: Vec<(u8, Vec<u64>)>) {
        let cap = self.top_k;
        let mut best = lock(&self.best);
        for (kind, keys) in keys {
            let kept = best.entry(kind).or_default();
            kept.extend(keys);
            if cap > 0 && kept.len() >= cap {
                *kept = best_keys(std::mem::take(kept), cap);
                if let Some(&worst) = kept.iter().min() {
                    self.bounds[usize::from(kind)].fetch_max(worst, Ordering::Relaxed);
                }
            }
        }
    }

    /// Each kind's hits: its best `top_k` keys over every piece, best first.
    fn assemble(&self) -> BTreeMap<u8, Vec<ScanHit>> {
        let to_cosine = self.prepared.as_ref().map_or(0.0, |q| q.to_cosine);
        std::mem::take(&mut *lock(&self.best))
            .into_iter()
            .map(|(kind, keys)| {
                let best = best_keys(keys, self.top_k);
                (kind, self.arena.hits_of(best, to_cosine))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl ScanJob {
        /// The same job cut into pieces of `rows` rows.
        fn with_pass_rows(mut self, rows: usize) -> ScanJob {
            if self.passes > 0 {
                self.pass_rows = rows;
                self.passes = self.arena.len().div_ceil(rows);
            }
            self
        }

        /// Does every piece of the pass in a random order, as if threads had claimed
        /// them in that order.
        fn run_shuffled(&self, rng: &mut fastrand::Rng) {
            let n = self.passes;
            self.next_pass.store(n, Ordering::SeqCst);
            for i in shuffled(n, rng) {
                self.run_pass(i);
            }
        }
    }

    fn arena(rows: usize, dim: usize, kinds: &[u8], rng: &mut fastrand::Rng) -> Arena {
        let mut a = Arena::new(dim);
        for r in 0..rows {
            let v: Vec<f32> = (0..dim).map(|_| rng.f32() * 2.0 - 1.0).collect();
            a.push(r as u32, kinds[r % kinds.len()], &v).expect("push");
        }
        a
    }

    /// An arena full of ties: a handful of distinct vectors, each pushed many times
    /// under every kind, and a zero row.
    fn tied(dim: usize, rng: &mut fastrand::Rng) -> Arena {
        let distinct: Vec<Vec<f32>> = (0..4)
            .map(|_| (0..dim).map(|_| rng.f32() - 0.5).collect())
            .collect();
        let mut a = Arena::new(dim);
        for r in 0..900 {
            let v = if r == 450 {
                vec![0.0; dim]
            } else {
                distinct[r % 3 + usize::from(r % 7 == 0)].clone()
            };
            a.push(r as u32, [0u8, 1, 7][r % 3], &v).expect("push");
        }
        a
    }

    fn shuffled(n: usize, rng: &mut fastrand::Rng) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        rng.shuffle(&mut v);
        v
    }

    /// The pieces' scores, one after another, are the whole pass's.
    #[test]
    fn the_pieces_scores_are_the_whole_pass() {
        let mut rng = fastrand::Rng::with_seed(3);
        for (rows, dim) in [(1000, 384), (333, 100), (5, 17)] {
            let a = arena(rows, dim, &[0, 1], &mut rng);
            let q: Vec<f32> = (0..dim).map(|_| rng.f32() - 0.5).collect();
            let prepared = a.prepare(&q).expect("a query");
            let mut whole = Vec::new();
            int8_scores(&prepared.quant, a.quant(), a.qscale(), &mut whole);
            for pass_rows in [1, 7, 64, 1000] {
                let mut job = a.scan_job(&q, 10);
                job.pass_rows = pass_rows;
                let mut pieces = Vec::new();
                for start in (0..rows).step_by(pass_rows) {
                    job.pass_scores(start..(start + pass_rows).min(rows), &mut pieces);
                }
                assert_eq!(pieces, whole, "{rows} rows of {dim}, pieces of {pass_rows}");
            }
        }
    }

    /// Pieces done in any order, of any size, give `scan_per_kind`'s answer: random
    /// and tied vectors, several kinds, `top_k` from 0 to more than the rows.
    #[test]
    fn pieces_in_any_order_answer_as_the_single_pass() {
        let mut rng = fastrand::Rng::with_seed(11);
        let arenas = [
            arena(2000, 384, &[0, 0, 0, 1], &mut rng),
            arena(700, 100, &[1, 0, 2, 255], &mut rng),
            tied(48, &mut rng),
        ];
        for a in &arenas {
            for _ in 0..3 {
                let q: Vec<f32> = (0..a.dim()).map(|_| rng.f32() - 0.5).collect();
                for top_k in [0, 1, 5, 50, 200, 5000] {
                    let want = a.scan_per_kind(&q, top_k);
                    for pass_rows in [1, 13, 64, 256, 100_000] {
                        let job = a.scan_job(&q, top_k).with_pass_rows(pass_rows);
                        job.run_shuffled(&mut rng);
                        assert_eq!(
                            job.finish(),
                            Some(want.clone()),
                            "{} rows, top {top_k}, pieces of {pass_rows}",
                            a.len()
                        );
                    }
                    // And with the default pieces, done by one thread.
                    assert_eq!(a.scan_job(&q, top_k).finish(), Some(want));
                }
            }
        }
    }

    /// Two threads sharing the job, one helping and one finishing (either the spawned
    /// one, as the engine's worker helps and its caller finishes), answer as the
    /// single pass.
    #[test]
    fn two_threads_sharing_a_job_answer_as_the_single_pass() {
        let mut rng = fastrand::Rng::with_seed(5);
        let a = arena(6000, 64, &[0, 1, 1], &mut rng);
        for round in 0..40 {
            let q: Vec<f32> = (0..64).map(|_| rng.f32() - 0.5).collect();
            let want = a.scan_per_kind(&q, 50);
            let job = a.scan_job(&q, 50);
            let got = std::thread::scope(|s| {
                if round % 2 == 0 {
                    let finisher = s.spawn(|| job.finish());
                    job.help();
                    finisher.join().expect("no panic")
                } else {
                    let helper = s.spawn(|| job.help());
                    let got = job.finish();
                    helper.join().expect("no panic");
                    got
                }
            });
            assert_eq!(got, Some(want), "round {round}");
        }
    }

    /// Nothing to scan: an empty arena, a zero query, a query of the wrong dimension.
    #[test]
    fn a_job_with_nothing_to_scan_is_done_at_once() {
        let mut rng = fastrand::Rng::with_seed(7);
        let a = arena(10, 8, &[0, 1], &mut rng);
        for q in [vec![0.0; 8], vec![1.0; 3]] {
            let job = a.scan_job(&q, 5);
            job.help();
            assert_eq!(job.finish(), Some(BTreeMap::new()));
        }
        let empty = Arena::new(8).scan_job(&[1.0; 8], 5);
        assert_eq!(empty.finish(), Some(BTreeMap::new()));
    }

    /// A thread that panics in a piece leaves the job abandoned: the other stops
    /// waiting (its `finish` gives `None`) instead of hanging.
    #[test]
    fn a_panic_in_a_piece_does_not_leave_the_other_thread_waiting() {
        let mut rng = fastrand::Rng::with_seed(9);
        let a = arena(500, 16, &[0, 1], &mut rng);
        let job = a.scan_job(&[0.5; 16], 5);
        // A thread claims a piece and panics before it is done.
        let claimed = std::thread::scope(|s| {
            s.spawn(|| {
                let _guard = AbandonOnPanic(&job);
                let _piece = claim(&job.next_pass, job.passes);
                panic!("piece failed");
            })
            .join()
        });
        assert!(claimed.is_err());
        job.help();
        assert_eq!(job.finish(), None);
    }
}
