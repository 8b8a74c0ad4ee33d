//! One contiguous arena of vectors for one-pass scoring (improvement plan R15).
//!
//! Every row is stored twice, each in one contiguous buffer with no per-row
//! allocation: int8 (symmetric, per-row scale `max|x| / 127`) for the scan, and f32 for
//! rescoring. [`Arena::scan`] computes an int8 dot product of the (int8-quantised)
//! query with every row in one pass (on AVX-512 VNNI or AVX2 when the CPU has it: the
//! integer dot products are exact, so every kernel gives the same scores), selects the
//! best [`OVERSAMPLE`] `× top_k` candidates, rescores those with f32 cosine (four rows
//! at a time, each summed in one fixed order, so the same bits on every CPU) and
//! returns the best `top_k`. Rows carry the caller's `key` (e.g. a node id) and `kind`
//! (e.g. cue = 0, body = 1) so cues and bodies are scored in the same traversal
//! ([`Arena::scan_per_kind`]).
//!
//! Error of the int8 estimate: with `x = s_x·q_x + e_x`, `|e_x| ≤ s_x / 2` per
//! component, `|x·y − x̂·ŷ| ≤ (s_x/2)·‖y‖₁ + (s_y/2)·‖x̂‖₁` — for unit vectors of dimension
//! 384 typically below 0.01 in cosine, which is why the candidates are rescored in f32.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};
use std::ops::Range;
use std::sync::Arc;

use crate::EmbedError;
use crate::mapped::MappedFile;

/// How many int8 candidates are rescored per result wanted. With MiniLM's vectors of
/// real texts (30,000 and 87,000 rows, 300 queries; BENCHMARKS.md "Session 43") the
/// int8 estimate's best 250 held all of the exact best 200 for every query, so twice
/// `top_k` leaves a margin; 4 read twice the scattered f32 rows for the same answers.
pub const OVERSAMPLE: usize = 2;

/// One result of a scan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanHit {
    /// Row in the arena (push order).
    pub row: usize,
    /// The caller's key given to [`Arena::push`].
    pub key: u32,
    /// The caller's kind given to [`Arena::push`].
    pub kind: u8,
    /// f32 cosine of the query and the row.
    pub cosine: f32,
}

/// Contiguous int8 + f32 rows of one dimension, owned or read in place from a mapped
/// arena file ([`crate::StoredArena`]).
#[derive(Debug, Clone, Default)]
pub struct Arena {
    dim: usize,
    rows: Rows,
}

/// The row data. Per row: key, kind, int8 components, quantisation scale × 1/‖row‖
/// (turns an int8 dot into a cosine estimate), f32 components, 1/‖row‖ (0 for a zero
/// row). Both variants are shared, so a clone of an arena costs a reference count (a
/// [`crate::ScanJob`] holds one, to be run on other threads); rows pushed to a shared
/// owned arena are pushed to a copy.
#[derive(Clone)]
enum Rows {
    Owned(Arc<Owned>),
    Mapped(Arc<Mapped>),
}

impl Default for Rows {
    fn default() -> Rows {
        Rows::Owned(Arc::default())
    }
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rows::Owned(o) => write!(f, "Owned({} rows)", o.keys.len()),
            Rows::Mapped(m) => write!(f, "Mapped({:?})", m.file),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Owned {
    keys: Vec<u32>,
    kinds: Vec<u8>,
    quant: Vec<i8>,
    qscale: Vec<f32>,
    floats: Vec<f32>,
    inv_norm: Vec<f32>,
}

/// Byte ranges of each section in a mapped arena file (checked to cast when opened).
#[derive(Debug)]
pub(crate) struct Mapped {
    pub(crate) file: Arc<MappedFile>,
    pub(crate) keys: Range<usize>,
    pub(crate) kinds: Range<usize>,
    pub(crate) quant: Range<usize>,
    pub(crate) qscale: Range<usize>,
    pub(crate) floats: Range<usize>,
    pub(crate) inv_norm: Range<usize>,
}

impl Mapped {
    fn cast<T: bytemuck::Pod>(&self, r: &Range<usize>) -> &[T] {
        // Every range was cast once when the file was opened (`arena_file.rs`), so
        // this cannot fail; an empty slice would make the arena read as empty.
        bytemuck::try_cast_slice(&self.file.bytes()[r.clone()]).unwrap_or(&[])
    }
}

/// Cosine similarity (0 when either vector is zero or the lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (na, nb) = (dot_f32(a, a).sqrt(), dot_f32(b, b).sqrt());
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot_f32(a, b) / (na * nb)
}

fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, ra) = a.as_chunks::<8>();
    let (cb, rb) = b.as_chunks::<8>();
    for (x, y) in ca.iter().zip(cb) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// [`dot_f32`] of `a` with four rows at once, each row's sum made in the same order as
/// [`dot_f32`] makes it (so the same bits): the four sums' chains of adds overlap
/// instead of each waiting on its own, and four scattered rows are read together.
fn dot_f32_x4(a: &[f32], rows: [&[f32]; 4]) -> [f32; 4] {
    let mut acc = [[0f32; 8]; 4];
    let (ca, ra) = a.as_chunks::<8>();
    let split = rows.map(|r| r.as_chunks::<8>());
    for (i, x) in ca.iter().enumerate() {
        for (acc, (cr, _)) in acc.iter_mut().zip(&split) {
            let Some(y) = cr.get(i) else { continue };
            for j in 0..8 {
                acc[j] += x[j] * y[j];
            }
        }
    }
    let mut out = [0f32; 4];
    for ((o, acc), (_, rr)) in out.iter_mut().zip(&acc).zip(&split) {
        let mut s: f32 = acc.iter().sum();
        for (x, y) in ra.iter().zip(*rr) {
            s += x * y;
        }
        *o = s;
    }
    out
}

fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let (ca, ra) = a.as_chunks::<16>();
    let (cb, rb) = b.as_chunks::<16>();
    for (x, y) in ca.iter().zip(cb) {
        // i8 × i8 fits in i16 (|p| ≤ 127²): an i16 multiply vectorises on plain SSE2
        // (which has no 32-bit lane multiply), then widens into i32 lanes.
        for j in 0..16 {
            acc[j] += i32::from(i16::from(x[j]) * i16::from(y[j]));
        }
    }
    let mut s: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += i32::from(*x) * i32::from(*y);
    }
    s
}

/// The int8 estimate (dot × the row's scale) of the query against every row, appended
/// to `out` in row order. Integer dot products are exact, so every kernel gives the same
/// scores; the widest one this CPU runs is used.
pub(crate) fn int8_scores(q: &[i8], quant: &[i8], qscale: &[f32], out: &mut Vec<f32>) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx512_vnni() {
        // SAFETY: the only precondition of `vnni::int8_scores` is that the CPU has the
        // features it is compiled for, checked just above.
        #[allow(unsafe_code)]
        unsafe {
            vnni::int8_scores(q, quant, qscale, out)
        };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the only precondition of `avx2::int8_scores` is that the CPU
        // supports AVX2, checked just above.
        #[allow(unsafe_code)]
        unsafe {
            avx2::int8_scores(q, quant, qscale, out)
        };
        return;
    }
    let dim = q.len().max(1);
    out.extend(
        quant
            .chunks_exact(dim)
            .zip(qscale)
            .map(|(r, s)| dot_i8(q, r) as f32 * s),
    );
}

/// The int8 pass on AVX2: rows widened to i16 and multiplied pairwise into i32 lanes
/// (`vpmaddwd`), which the compiler does not choose by itself for [`dot_i8`] (it widens
/// to i32 and uses `vpmulld`, no faster than SSE2).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_add_epi32, _mm256_cvtepi8_epi16, _mm256_madd_epi16,
        _mm256_setzero_si256,
    };

    #[target_feature(enable = "avx2")]
    pub(super) fn int8_scores(q: &[i8], quant: &[i8], qscale: &[f32], out: &mut Vec<f32>) {
        let dim = q.len().max(1);
        let (q16, q_tail) = q.as_chunks::<16>();
        let q16: Vec<__m256i> = q16
            .iter()
            .map(|c| _mm256_cvtepi8_epi16(bytemuck::cast::<[i8; 16], __m128i>(*c)))
            .collect();
        for (r, s) in quant.chunks_exact(dim).zip(qscale) {
            let (chunks, tail) = r.as_chunks::<16>();
            let (mut a, mut b) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            let mut pairs = chunks.chunks_exact(2);
            let mut qs = q16.chunks_exact(2);
            for (c, qq) in (&mut pairs).zip(&mut qs) {
                let w0 = _mm256_cvtepi8_epi16(bytemuck::cast::<[i8; 16], __m128i>(c[0]));
                let w1 = _mm256_cvtepi8_epi16(bytemuck::cast::<[i8; 16], __m128i>(c[1]));
                a = _mm256_add_epi32(a, _mm256_madd_epi16(w0, qq[0]));
                b = _mm256_add_epi32(b, _mm256_madd_epi16(w1, qq[1]));
            }
            for (c, qq) in pairs.remainder().iter().zip(qs.remainder()) {
                let w = _mm256_cvtepi8_epi16(bytemuck::cast::<[i8; 16], __m128i>(*c));
                a = _mm256_add_epi32(a, _mm256_madd_epi16(w, *qq));
            }
            let lanes: [i32; 8] = bytemuck::cast(_mm256_add_epi32(a, b));
            let mut dot: i32 = lanes.iter().sum();
            for (x, y) in tail.iter().zip(q_tail) {
                dot += i32::from(*x) * i32::from(*y);
            }
            out.push(dot as f32 * s);
        }
    }
}

/// The int8 pass on AVX-512 VNNI: `vpdpbusd` multiplies 64 unsigned bytes by 64
/// signed ones and adds them four by four into i32 lanes, one instruction where AVX2
/// takes six. Its first operand is unsigned, so each row byte `r` is read as `r + 128`
/// (its sign bit flipped) and `128 · Σq` is taken off the sum afterwards: the products
/// are at most 255 · 127 and the sums stay far inside i32, so the dot is exact and the
/// scores are the other kernels' bit for bit. Rows go four at a time: one row's chain
/// of `vpdpbusd` waits on the instruction's latency, four keep the unit busy, and
/// their horizontal sums are taken together (100k rows, top 10: 4.6 → 2.1–3.3 ms;
/// BENCHMARKS.md, "Session 45").
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod vnni {
    use std::arch::x86_64::{
        __m512i, _mm_add_epi32, _mm256_add_epi32, _mm256_castsi256_si128, _mm256_extracti128_si256,
        _mm256_hadd_epi32, _mm512_add_epi32, _mm512_castsi512_si256, _mm512_dpbusd_epi32,
        _mm512_extracti64x4_epi64, _mm512_loadu_si512, _mm512_reduce_add_epi32, _mm512_set1_epi8,
        _mm512_setzero_si512, _mm512_xor_si512,
    };

    /// `unsafe` to call: the CPU must have the features [`crate::cpu::avx512_vnni`]
    /// checks.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn int8_scores(q: &[i8], quant: &[i8], qscale: &[f32], out: &mut Vec<f32>) {
        let dim = q.len().max(1);
        let query = Query::new(q);
        let rows = qscale.len().min(quant.len() / dim);
        out.reserve(rows);
        let (fours, rest) = qscale[..rows].as_chunks::<4>();
        for (i, s) in fours.iter().enumerate() {
            let at = |j: usize| &quant[(4 * i + j) * dim..(4 * i + j + 1) * dim];
            let dots = query.dot4([at(0), at(1), at(2), at(3)]);
            for (d, s) in dots.iter().zip(s) {
                out.push(*d as f32 * s);
            }
        }
        let done = 4 * fours.len();
        for (r, s) in quant[done * dim..rows * dim].chunks_exact(dim).zip(rest) {
            out.push(query.dot(r) as f32 * s);
        }
    }

    /// The query in 64-byte registers, its tail, and the offset its sum makes.
    struct Query<'q> {
        chunks: Vec<__m512i>,
        tail: &'q [i8],
        offset: i32,
    }

    impl<'q> Query<'q> {
        #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
        fn new(q: &'q [i8]) -> Query<'q> {
            let (q64, tail) = q.as_chunks::<64>();
            let mut chunks = Vec::with_capacity(q64.len());
            for c in q64 {
                // SAFETY: 64 readable bytes; the load has no alignment requirement.
                chunks.push(unsafe { _mm512_loadu_si512(c.as_ptr().cast()) });
            }
            let offset = 128 * q64.iter().flatten().map(|&x| i32::from(x)).sum::<i32>();
            Query {
                chunks,
                tail,
                offset,
            }
        }

        /// The exact dots of the query and four rows of the query's length: four
        /// independent chains of `vpdpbusd` (one row's two chains wait on the
        /// instruction's latency), and the four sums reduced together.
        #[inline]
        #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
        fn dot4(&self, rows: [&[i8]; 4]) -> [i32; 4] {
            let flip = _mm512_set1_epi8(i8::MIN);
            let mut acc = [_mm512_setzero_si512(); 4];
            for (c, qq) in self.chunks.iter().enumerate() {
                for (a, r) in acc.iter_mut().zip(rows) {
                    // SAFETY: chunk `c` of the row is 64 readable bytes (the row has
                    // the query's length); no alignment requirement.
                    let w = unsafe { _mm512_loadu_si512(r[c * 64..].as_ptr().cast()) };
                    *a = _mm512_dpbusd_epi32(*a, _mm512_xor_si512(w, flip), *qq);
                }
            }
            // 16 lanes → 8 per row, then pairwise sums across rows (`vphaddd` works
            // within 128-bit halves), then the two halves: [r0, r1, r2, r3].
            let half = |a: __m512i| {
                _mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64::<1>(a))
            };
            let h01 = _mm256_hadd_epi32(half(acc[0]), half(acc[1]));
            let h23 = _mm256_hadd_epi32(half(acc[2]), half(acc[3]));
            let h = _mm256_hadd_epi32(h01, h23);
            let sums = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
            let mut dots: [i32; 4] = bytemuck::cast(sums);
            let tail = self.chunks.len() * 64;
            for (d, r) in dots.iter_mut().zip(rows) {
                *d -= self.offset;
                for (x, y) in r[tail..].iter().zip(self.tail) {
                    *d += i32::from(*x) * i32::from(*y);
                }
            }
            dots
        }

        /// The exact dot of the query and one row of the query's length.
        #[inline]
        #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
        fn dot(&self, r: &[i8]) -> i32 {
            let flip = _mm512_set1_epi8(i8::MIN);
            let (chunks, tail) = r.as_chunks::<64>();
            let (mut a, mut b) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            let mut pairs = chunks.chunks_exact(2);
            let mut qs = self.chunks.chunks_exact(2);
            for (c, qq) in (&mut pairs).zip(&mut qs) {
                // SAFETY: 64 readable bytes each; no alignment requirement.
                let (w0, w1) = unsafe {
                    (
                        _mm512_loadu_si512(c[0].as_ptr().cast()),
                        _mm512_loadu_si512(c[1].as_ptr().cast()),
                    )
                };
                a = _mm512_dpbusd_epi32(a, _mm512_xor_si512(w0, flip), qq[0]);
                b = _mm512_dpbusd_epi32(b, _mm512_xor_si512(w1, flip), qq[1]);
            }
            for (c, qq) in pairs.remainder().iter().zip(qs.remainder()) {
                // SAFETY: as above.
                let w = unsafe { _mm512_loadu_si512(c.as_ptr().cast()) };
                a = _mm512_dpbusd_epi32(a, _mm512_xor_si512(w, flip), *qq);
            }
            let mut dot = _mm512_reduce_add_epi32(_mm512_add_epi32(a, b)) - self.offset;
            for (x, y) in tail.iter().zip(self.tail) {
                dot += i32::from(*x) * i32::from(*y);
            }
            dot
        }
    }
}

/// Symmetric int8 quantisation into `out`; returns the scale (0 for a zero vector).
fn quantise(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
    let inv = if scale > 0.0 { 1.0 / scale } else { 0.0 };
    out.extend(
        v.iter()
            .map(|x| (x * inv).round().clamp(-127.0, 127.0) as i8),
    );
    scale
}

/// A candidate as one integer that orders as [`Cand`] does: the score's bits in
/// `f32::total_cmp` order above the row's complement (the earlier row is greater).
/// (Rows are below 2³²: an arena's keys are `u32`, and 2³² rows would be terabytes.)
pub(crate) fn rank_key(score: f32, row: usize) -> u64 {
    (u64::from(score_half(score)) << 32) | u64::from(!(row as u32))
}

/// The upper half of a [`rank_key`]: the score's bits in `f32::total_cmp` order.
#[inline]
pub(crate) fn score_half(score: f32) -> u32 {
    let bits = score.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | (1 << 31)
    }
}

/// The rows of the `cap` greatest keys, in row order (neighbouring rows are then read
/// together by the rescoring).
pub(crate) fn best_rows(keys: Vec<u64>, cap: usize) -> Vec<usize> {
    let mut rows: Vec<usize> = best_keys(keys, cap).into_iter().map(key_row).collect();
    rows.sort_unstable();
    rows
}

/// The `cap` greatest keys, in no particular order. Keys are distinct (each holds its
/// row), so the best `cap` of a union of parts are the best `cap` of the parts' own
/// best `cap`s, whatever the parts and their order.
pub(crate) fn best_keys(mut keys: Vec<u64>, cap: usize) -> Vec<u64> {
    if cap == 0 {
        return Vec::new();
    }
    if keys.len() > cap {
        keys.select_nth_unstable_by(cap - 1, |a, b| b.cmp(a));
        keys.truncate(cap);
    }
    keys
}

/// The row of a [`rank_key`].
fn key_row(key: u64) -> usize {
    (!(key as u32)) as usize
}

/// A heap entry ordered by score, ties broken towards the lower row.
#[derive(Clone, Copy)]
struct Cand {
    score: f32,
    row: usize,
}

impl PartialEq for Cand {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cand {
    fn cmp(&self, o: &Self) -> Ordering {
        self.score
            .total_cmp(&o.score)
            .then_with(|| o.row.cmp(&self.row))
    }
}

/// Keeps the `cap` best candidates.
struct TopK {
    cap: usize,
    heap: BinaryHeap<Reverse<Cand>>,
}

impl TopK {
    fn new(cap: usize) -> TopK {
        TopK {
            cap,
            heap: BinaryHeap::with_capacity(cap + 1),
        }
    }

    #[inline]
    fn offer(&mut self, score: f32, row: usize) {
        if self.cap == 0 {
            return;
        }
        let c = Cand { score, row };
        if self.heap.len() < self.cap {
            self.heap.push(Reverse(c));
        } else if let Some(mut min) = self.heap.peek_mut()
            && c > min.0
        {
            *min = Reverse(c);
        }
    }

    fn rows(self) -> Vec<usize> {
        self.heap.into_iter().map(|Reverse(c)| c.row).collect()
    }
}

impl Arena {
    /// An empty arena for vectors of `dim` components.
    pub fn new(dim: usize) -> Arena {
        Arena {
            dim,
            ..Arena::default()
        }
    }

    /// An empty arena with room for `rows` vectors.
    pub fn with_capacity(dim: usize, rows: usize) -> Arena {
        Arena {
            dim,
            rows: Rows::Owned(Arc::new(Owned {
                keys: Vec::with_capacity(rows),
                kinds: Vec::with_capacity(rows),
                quant: Vec::with_capacity(rows * dim),
                qscale: Vec::with_capacity(rows),
                floats: Vec::with_capacity(rows * dim),
                inv_norm: Vec::with_capacity(rows),
            })),
        }
    }

    /// An arena over a mapped file's sections (`arena_file.rs` checks them).
    pub(crate) fn mapped(dim: usize, m: Mapped) -> Arena {
        Arena {
            dim,
            rows: Rows::Mapped(Arc::new(m)),
        }
    }

    /// The rows for appending; a mapped arena, or owned rows another clone shares, are
    /// copied first.
    fn owned_mut(&mut self) -> &mut Owned {
        if let Rows::Mapped(_) = self.rows {
            let o = Owned {
                keys: self.keys().to_vec(),
                kinds: self.kinds().to_vec(),
                quant: self.quant().to_vec(),
                qscale: self.qscale().to_vec(),
                floats: self.floats().to_vec(),
                inv_norm: self.inv_norm().to_vec(),
            };
            self.rows = Rows::Owned(Arc::new(o));
        }
        match &mut self.rows {
            Rows::Owned(o) => Arc::make_mut(o),
            Rows::Mapped(_) => unreachable!("converted above"),
        }
    }

    pub(crate) fn keys(&self) -> &[u32] {
        match &self.rows {
            Rows::Owned(o) => &o.keys,
            Rows::Mapped(m) => m.cast(&m.keys),
        }
    }

    pub(crate) fn kinds(&self) -> &[u8] {
        match &self.rows {
            Rows::Owned(o) => &o.kinds,
            Rows::Mapped(m) => m.cast(&m.kinds),
        }
    }

    pub(crate) fn quant(&self) -> &[i8] {
        match &self.rows {
            Rows::Owned(o) => &o.quant,
            Rows::Mapped(m) => m.cast(&m.quant),
        }
    }

    pub(crate) fn qscale(&self) -> &[f32] {
        match &self.rows {
            Rows::Owned(o) => &o.qscale,
            Rows::Mapped(m) => m.cast(&m.qscale),
        }
    }

    pub(crate) fn floats(&self) -> &[f32] {
        match &self.rows {
            Rows::Owned(o) => &o.floats,
            Rows::Mapped(m) => m.cast(&m.floats),
        }
    }

    pub(crate) fn inv_norm(&self) -> &[f32] {
        match &self.rows {
            Rows::Owned(o) => &o.inv_norm,
            Rows::Mapped(m) => m.cast(&m.inv_norm),
        }
    }

    /// Whether the rows are read in place from a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.rows, Rows::Mapped(_))
    }

    /// Appends a vector (any length-normalisation; cosine is computed) and returns its row.
    /// A vector of another dimension or with NaN/infinity is refused.
    pub fn push(&mut self, key: u32, kind: u8, v: &[f32]) -> Result<usize, EmbedError> {
        if v.len() != self.dim {
            return Err(EmbedError::Dimension {
                model: "arena".into(),
                expected: self.dim,
                actual: v.len(),
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(EmbedError::model("arena", "vector holds NaN or infinity"));
        }
        let norm = dot_f32(v, v).sqrt();
        let inv = if norm > 0.0 { 1.0 / norm } else { 0.0 };
        let o = self.owned_mut();
        let scale = quantise(v, &mut o.quant);
        o.qscale.push(scale * inv);
        o.inv_norm.push(inv);
        o.floats.extend_from_slice(v);
        o.keys.push(key);
        o.kinds.push(kind);
        Ok(o.keys.len() - 1)
    }

    /// Appends row `row` of `other` (same dimension) under a new key, bit for bit: what
    /// [`Arena::push`] of the same vector would store, without quantising it again.
    pub fn push_row_of(
        &mut self,
        other: &Arena,
        row: usize,
        key: u32,
    ) -> Result<usize, EmbedError> {
        if other.dim != self.dim || row >= other.len() {
            return Err(EmbedError::Dimension {
                model: "arena".into(),
                expected: self.dim,
                actual: other.dim,
            });
        }
        let d = self.dim;
        let o = self.owned_mut();
        o.keys.push(key);
        o.kinds.push(other.kinds()[row]);
        o.quant
            .extend_from_slice(&other.quant()[row * d..(row + 1) * d]);
        o.qscale.push(other.qscale()[row]);
        o.floats
            .extend_from_slice(&other.floats()[row * d..(row + 1) * d]);
        o.inv_norm.push(other.inv_norm()[row]);
        Ok(o.keys.len() - 1)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.keys().len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.keys().is_empty()
    }

    /// Dimension of every row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Key and kind of a row.
    pub fn meta(&self, row: usize) -> Option<(u32, u8)> {
        Some((*self.keys().get(row)?, *self.kinds().get(row)?))
    }

    /// The f32 vector of a row.
    pub fn row(&self, row: usize) -> Option<&[f32]> {
        self.floats().get(row * self.dim..(row + 1) * self.dim)
    }

    /// Bytes held by the rows (int8 + f32 + per-row data).
    pub fn bytes(&self) -> usize {
        self.quant().len() + self.floats().len() * 4 + self.len() * (4 + 1 + 4 + 4)
    }

    fn query_ok(&self, query: &[f32]) -> bool {
        if query.len() != self.dim {
            tracing::warn!(
                expected = self.dim,
                actual = query.len(),
                "arena scan with a query of the wrong dimension: no hits"
            );
            return false;
        }
        query.iter().all(|x| x.is_finite())
    }

    /// The int8 estimate of the cosine of `query` and `row` (what the scan ranks by).
    pub fn approx_cosine(&self, query: &[f32], row: usize) -> f32 {
        if !self.query_ok(query) || row >= self.len() {
            return 0.0;
        }
        let mut q = Vec::with_capacity(self.dim);
        let qs = quantise(query, &mut q);
        let qn = dot_f32(query, query).sqrt();
        if qn == 0.0 {
            return 0.0;
        }
        let r = &self.quant()[row * self.dim..(row + 1) * self.dim];
        dot_i8(&q, r) as f32 * self.qscale()[row] * qs / qn
    }

    /// The best `top_k` rows by cosine: int8 pass over all rows, f32 rescoring of the
    /// best `OVERSAMPLE × top_k`. Ties go to the earlier row. A query of the wrong dimension,
    /// or a zero query, matches nothing.
    pub fn scan(&self, query: &[f32], top_k: usize) -> Vec<ScanHit> {
        let Some(q) = self.prepare(query) else {
            return Vec::new();
        };
        let mut scores = Vec::with_capacity(self.len());
        int8_scores(&q.quant, self.quant(), self.qscale(), &mut scores);
        let keys = scores
            .iter()
            .enumerate()
            .map(|(row, &score)| rank_key(score, row))
            .collect();
        let rows = best_rows(keys, top_k.saturating_mul(OVERSAMPLE));
        self.rescore(query, q.inv_norm, rows, top_k)
    }

    /// Like [`Arena::scan`], but the best `top_k` of each kind present, from the same
    /// single pass (cues and bodies scored together, ranked apart).
    pub fn scan_per_kind(&self, query: &[f32], top_k: usize) -> BTreeMap<u8, Vec<ScanHit>> {
        let mut out = BTreeMap::new();
        let Some(q) = self.prepare(query) else {
            return out;
        };
        let cap = top_k.saturating_mul(OVERSAMPLE);
        let mut scores = Vec::with_capacity(self.len());
        int8_scores(&q.quant, self.quant(), self.qscale(), &mut scores);
        // The best `cap` of each kind by int8 score, ties to the earlier row: each
        // candidate as one integer key, compared as a whole.
        let mut per_kind: Vec<Vec<u64>> = (0..256).map(|_| Vec::new()).collect();
        for (row, (&score, &kind)) in scores.iter().zip(self.kinds()).enumerate() {
            per_kind[kind as usize].push(rank_key(score, row));
        }
        for (kind, keys) in per_kind.into_iter().enumerate() {
            if keys.is_empty() {
                continue;
            }
            let rows = best_rows(keys, cap);
            out.insert(kind as u8, self.rescore(query, q.inv_norm, rows, top_k));
        }
        out
    }

    /// Exact f32 cosines of the query and the given rows, in the order given (rows
    /// past the end are skipped): for scoring candidates another arm found that a
    /// scan's head did not reach.
    pub fn score_rows(&self, query: &[f32], rows: &[usize]) -> Vec<ScanHit> {
        let Some(q) = self.prepare(query) else {
            return Vec::new();
        };
        let rows: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&row| row < self.len())
            .collect();
        self.exact_hits(query, q.inv_norm, &rows)
    }

    /// Exact f32 cosine over every row (no quantisation): the reference the int8 scan
    /// is measured against.
    pub fn scan_exact_f32(&self, query: &[f32], top_k: usize) -> Vec<ScanHit> {
        let Some(q) = self.prepare(query) else {
            return Vec::new();
        };
        let mut top = TopK::new(top_k);
        let inv_norm = self.inv_norm();
        for (row, r) in self.floats().chunks_exact(self.dim.max(1)).enumerate() {
            top.offer(dot_f32(query, r) * inv_norm[row], row);
        }
        self.rescore(query, q.inv_norm, top.rows(), top_k)
    }

    pub(crate) fn prepare(&self, query: &[f32]) -> Option<Prepared> {
        if !self.query_ok(query) || self.is_empty() {
            return None;
        }
        let n = dot_f32(query, query).sqrt();
        if n == 0.0 {
            return None;
        }
        let mut quant = Vec::with_capacity(self.dim);
        quantise(query, &mut quant);
        Some(Prepared {
            quant,
            inv_norm: 1.0 / n,
        })
    }

    fn rescore(&self, query: &[f32], q_inv: f32, rows: Vec<usize>, top_k: usize) -> Vec<ScanHit> {
        best_hits(self.exact_hits(query, q_inv, &rows), top_k)
    }

    /// [`Arena::exact_hit`] of each of `rows` (all in range), in the order given, four
    /// rows a step.
    pub(crate) fn exact_hits(&self, query: &[f32], q_inv: f32, rows: &[usize]) -> Vec<ScanHit> {
        let mut out = Vec::with_capacity(rows.len());
        let (fours, rest) = rows.as_chunks::<4>();
        let d = self.dim;
        let floats = self.floats();
        for four in fours {
            let dots = dot_f32_x4(query, four.map(|row| &floats[row * d..(row + 1) * d]));
            for (&row, dot) in four.iter().zip(dots) {
                out.push(self.hit_of(row, dot, q_inv));
            }
        }
        out.extend(rest.iter().map(|&row| self.exact_hit(query, q_inv, row)));
        out
    }

    /// A row's hit from its f32 dot with the query.
    fn hit_of(&self, row: usize, dot: f32, q_inv: f32) -> ScanHit {
        ScanHit {
            row,
            key: self.keys()[row],
            kind: self.kinds()[row],
            cosine: dot * self.inv_norm()[row] * q_inv,
        }
    }

    /// The exact f32 cosine of the query (of inverse norm `q_inv`) and one row, which
    /// must be in range: what every exact score of the arena is made of.
    pub(crate) fn exact_hit(&self, query: &[f32], q_inv: f32, row: usize) -> ScanHit {
        let r = &self.floats()[row * self.dim..(row + 1) * self.dim];
        self.hit_of(row, dot_f32(query, r), q_inv)
    }
}

/// The best `top_k` of rescored hits, best first, ties to the earlier row.
pub(crate) fn best_hits(mut hits: Vec<ScanHit>, top_k: usize) -> Vec<ScanHit> {
    hits.sort_by(|a, b| b.cosine.total_cmp(&a.cosine).then(a.row.cmp(&b.row)));
    hits.truncate(top_k);
    hits
}

/// A query made ready to scan: int8-quantised, and its inverse norm.
pub(crate) struct Prepared {
    pub(crate) quant: Vec<i8>,
    pub(crate) inv_norm: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every int8 kernel this CPU can run gives the portable kernel's scores, bit for
    /// bit, at MiniLM's dimension and at dimensions that leave a tail.
    #[test]
    fn int8_kernels_agree() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as i64
        };
        for dim in [1usize, 15, 16, 17, 31, 48, 100, 384, 385] {
            let rows = 37;
            let q: Vec<i8> = (0..dim).map(|_| (next() % 255 - 127) as i8).collect();
            let mut quant: Vec<i8> = (0..rows * dim)
                .map(|_| (next() % 255 - 127) as i8)
                .collect();
            // Extremes: ±127 in every component of two rows.
            quant[..dim].iter_mut().for_each(|x| *x = 127);
            quant[dim..2 * dim].iter_mut().for_each(|x| *x = -127);
            let qscale: Vec<f32> = (0..rows).map(|i| 0.001 * (i as f32 + 1.0)).collect();
            let plain: Vec<f32> = quant
                .chunks_exact(dim)
                .zip(&qscale)
                .map(|(r, s)| dot_i8(&q, r) as f32 * s)
                .collect();
            let mut got = Vec::new();
            int8_scores(&q, &quant, &qscale, &mut got);
            assert_eq!(got, plain, "dim {dim}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut avx = Vec::new();
                // SAFETY: AVX2 is present (checked above).
                #[allow(unsafe_code)]
                unsafe {
                    avx2::int8_scores(&q, &quant, &qscale, &mut avx)
                };
                assert_eq!(avx, plain, "dim {dim} (AVX2)");
            }
            #[cfg(target_arch = "x86_64")]
            if crate::cpu::avx512_vnni() {
                let mut v = Vec::new();
                // SAFETY: the CPU has the features (checked above).
                #[allow(unsafe_code)]
                unsafe {
                    vnni::int8_scores(&q, &quant, &qscale, &mut v)
                };
                assert_eq!(v, plain, "dim {dim} (AVX-512 VNNI)");
            }
        }
    }

    /// Four rows' dots at once are each row's own dot, bit for bit, also where the
    /// dimension leaves a tail.
    #[test]
    fn four_dots_at_once_are_each_rows_dot() {
        let mut x = 0.37f32;
        let mut next = move || {
            x = (x * 3.7 + 0.11).fract();
            x - 0.5
        };
        for dim in [1usize, 7, 8, 9, 384, 389] {
            let q: Vec<f32> = (0..dim).map(|_| next()).collect();
            let rows: Vec<Vec<f32>> = (0..4).map(|_| (0..dim).map(|_| next()).collect()).collect();
            let four = dot_f32_x4(&q, [&rows[0], &rows[1], &rows[2], &rows[3]]);
            for (r, got) in rows.iter().zip(four) {
                assert_eq!(got.to_bits(), dot_f32(&q, r).to_bits(), "dim {dim}");
            }
        }
    }

    /// The selection's integer keys order candidates as the heap's `Cand` does.
    #[test]
    fn rank_keys_order_as_candidates_do() {
        let xs = [
            f32::NEG_INFINITY,
            -1.0,
            -0.5,
            -0.0,
            0.0,
            1e-30,
            0.25,
            0.25,
            1.0,
            f32::INFINITY,
        ];
        for (i, &a) in xs.iter().enumerate() {
            for (j, &b) in xs.iter().enumerate() {
                let (ca, cb) = (Cand { score: a, row: i }, Cand { score: b, row: j });
                assert_eq!(rank_key(a, i).cmp(&rank_key(b, j)), ca.cmp(&cb), "{a} {b}");
            }
            assert_eq!(key_row(rank_key(a, i)), i);
        }
    }
}
