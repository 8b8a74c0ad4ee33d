//! One contiguous arena of vectors for one-pass scoring (improvement plan R15).
//!
//! Every row is stored once, in one contiguous buffer with no per-row allocation, in
//! int8 (symmetric, per-row scale `max|x| / 127`, the scale kept divided by the row's
//! norm). [`Arena::scan`] computes an int8 dot product of the (int8-quantised) query
//! with every row in one pass (on AVX-512 VNNI or AVX2 when the CPU has it: the
//! integer dot products are exact, so every kernel gives the same scores, on every
//! CPU) and returns the best `top_k` by that estimate of the cosine. Rows carry the
//! caller's `key` (e.g. a node id) and `kind` (e.g. cue = 0, body = 1) so cues and
//! bodies are scored in the same traversal ([`Arena::scan_per_kind`]).
//!
//! Error of the int8 estimate: with `x = s_x·q_x + e_x`, `|e_x| ≤ s_x / 2` per
//! component, `|x·y − x̂·ŷ| ≤ (s_x/2)·‖y‖₁ + (s_y/2)·‖x̂‖₁` — for unit vectors of dimension
//! 384 typically a few thousandths in cosine. The f32 vectors stay where they were
//! made (the engine's `vectors.db`); the arena is an index of them. Until session 55 it
//! also held every row in f32 and rescored the int8 pass's best candidates with them:
//! four times the bytes, a second round of scattered reads on every query, and no
//! measurable difference in what the read path answers (BENCHMARKS.md, "Session 55").

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use crate::EmbedError;
use crate::mapped::MappedFile;

/// One result of a scan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanHit {
    /// Row in the arena (push order).
    pub row: usize,
    /// The caller's key given to [`Arena::push`].
    pub key: u32,
    /// The caller's kind given to [`Arena::push`].
    pub kind: u8,
    /// The int8 estimate of the cosine of the query and the row.
    pub cosine: f32,
}

/// Contiguous int8 rows of one dimension, owned or read in place from a mapped arena
/// file ([`crate::StoredArena`]).
#[derive(Debug, Clone, Default)]
pub struct Arena {
    dim: usize,
    rows: Rows,
}

/// The row data. Per row: key, kind, int8 components, quantisation scale × 1/‖row‖
/// (turns an int8 dot into a cosine estimate; 0 for a zero row). Both variants are
/// shared, so a clone of an arena costs a reference count (a [`crate::ScanJob`] holds
/// one, to be run on other threads); rows pushed to a shared owned arena are pushed to
/// a copy.
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
}

/// Byte ranges of each section in a mapped arena file (checked to cast when opened).
#[derive(Debug)]
pub(crate) struct Mapped {
    pub(crate) file: Arc<MappedFile>,
    pub(crate) keys: Range<usize>,
    pub(crate) kinds: Range<usize>,
    pub(crate) quant: Range<usize>,
    pub(crate) qscale: Range<usize>,
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

/// The score of a [`rank_key`], bit for bit ([`score_half`] inverted).
fn key_score(key: u64) -> f32 {
    let half = (key >> 32) as u32;
    f32::from_bits(if half >> 31 == 1 {
        half & !(1 << 31)
    } else {
        !half
    })
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

    /// A row as stored: its int8 components and its scale (× 1/‖row‖).
    pub fn row(&self, row: usize) -> Option<(&[i8], f32)> {
        let quant = self.quant().get(row * self.dim..(row + 1) * self.dim)?;
        Some((quant, *self.qscale().get(row)?))
    }

    /// Bytes held by the rows (int8 components and per-row data).
    pub fn bytes(&self) -> usize {
        self.quant().len() + self.len() * (4 + 1 + 4)
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

    /// The int8 estimate of the cosine of `query` and `row`: what the scan ranks by and
    /// returns (0 for a row out of range or a query it cannot scan).
    pub fn approx_cosine(&self, query: &[f32], row: usize) -> f32 {
        self.score_rows(query, &[row])
            .first()
            .map_or(0.0, |h| h.cosine)
    }

    /// The best `top_k` rows by the int8 estimate of their cosine, best first. Ties go
    /// to the earlier row. A query of the wrong dimension, or a zero query, matches
    /// nothing.
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
        self.hits_of(best_keys(keys, top_k), q.to_cosine)
    }

    /// Like [`Arena::scan`], but the best `top_k` of each kind present, from the same
    /// single pass (cues and bodies scored together, ranked apart).
    pub fn scan_per_kind(&self, query: &[f32], top_k: usize) -> BTreeMap<u8, Vec<ScanHit>> {
        let mut out = BTreeMap::new();
        let Some(q) = self.prepare(query) else {
            return out;
        };
        let mut scores = Vec::with_capacity(self.len());
        int8_scores(&q.quant, self.quant(), self.qscale(), &mut scores);
        // The best `top_k` of each kind by int8 score, ties to the earlier row: each
        // candidate as one integer key, compared as a whole.
        let mut per_kind: Vec<Vec<u64>> = (0..256).map(|_| Vec::new()).collect();
        for (row, (&score, &kind)) in scores.iter().zip(self.kinds()).enumerate() {
            per_kind[kind as usize].push(rank_key(score, row));
        }
        for (kind, keys) in per_kind.into_iter().enumerate() {
            if keys.is_empty() {
                continue;
            }
            out.insert(
                kind as u8,
                self.hits_of(best_keys(keys, top_k), q.to_cosine),
            );
        }
        out
    }

    /// The scan's cosines of the query and the given rows, in the order given (rows
    /// past the end are skipped): for scoring candidates another arm found that a
    /// scan's head did not reach. Each is the value a scan would give the row.
    pub fn score_rows(&self, query: &[f32], rows: &[usize]) -> Vec<ScanHit> {
        let Some(q) = self.prepare(query) else {
            return Vec::new();
        };
        let d = self.dim;
        let mut out = Vec::with_capacity(rows.len());
        let mut scores = Vec::with_capacity(rows.len());
        let rows: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&row| row < self.len())
            .collect();
        // Consecutive rows (a file's cues and chunks) go through the kernel together.
        for run in rows.chunk_by(|a, b| b.checked_sub(*a) == Some(1)) {
            let (first, last) = (run[0], run[run.len() - 1]);
            scores.clear();
            int8_scores(
                &q.quant,
                &self.quant()[first * d..(last + 1) * d],
                &self.qscale()[first..=last],
                &mut scores,
            );
            out.extend(
                run.iter()
                    .zip(&scores)
                    .map(|(&row, &score)| self.hit(row, score, q.to_cosine)),
            );
        }
        out
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
        let scale = quantise(query, &mut quant);
        Some(Prepared {
            quant,
            to_cosine: scale / n,
        })
    }

    /// The hits of `keys` (a selection of [`rank_key`]s), best first.
    pub(crate) fn hits_of(&self, mut keys: Vec<u64>, to_cosine: f32) -> Vec<ScanHit> {
        keys.sort_unstable_by(|a, b| b.cmp(a));
        keys.into_iter()
            .map(|k| self.hit(key_row(k), key_score(k), to_cosine))
            .collect()
    }

    /// A row's hit from its int8 score (`dot × the row's scale`); the row must be in range.
    fn hit(&self, row: usize, score: f32, to_cosine: f32) -> ScanHit {
        ScanHit {
            row,
            key: self.keys()[row],
            kind: self.kinds()[row],
            cosine: score * to_cosine,
        }
    }
}

/// A query made ready to scan: int8-quantised, and the factor that turns a row's int8
/// score into the cosine estimate (the query's scale over its norm).
pub(crate) struct Prepared {
    pub(crate) quant: Vec<i8>,
    pub(crate) to_cosine: f32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    /// A candidate ordered by score, ties broken towards the lower row: the order
    /// [`rank_key`] must keep.
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
            assert_eq!(key_score(rank_key(a, i)).to_bits(), a.to_bits());
        }
    }
}
