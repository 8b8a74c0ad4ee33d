//! Linear layers in 8-bit integers: weights quantised once per output (symmetric, i8),
//! activations per token row (asymmetric, u8), products summed exactly in i32.
//!
//! Integer sums are exact, so every kernel below gives the same i32 for the same
//! inputs, and a vector does not depend on the CPU that computed it: AVX-512 VNNI
//! (`vpdpbusd`, 64 multiply-adds of u8 × i8 an instruction) where the CPU has it, a
//! portable loop elsewhere.

use super::ops::gelu;

/// Columns of a packed block: four registers of 16 i32 sums.
const BLOCK: usize = 64;

/// Token rows quantised and multiplied at a time (a multiple of the kernel's four).
const ROWS: usize = 64;

/// One linear layer's weights in i8, packed for the kernel.
#[derive(Debug, Clone)]
pub(crate) struct QLinear {
    /// `outputs / BLOCK` blocks; in each, per group of four inputs, 64 columns × 4 i8.
    packed: Vec<i8>,
    /// Per output: the weight scale (`w ≈ scale · q`).
    scale: Vec<f32>,
    /// Per output: the sum of its quantised weights (for the activations' zero point).
    colsum: Vec<i32>,
    inputs: usize,
    outputs: usize,
}

/// Scratch of one thread: the quantised activations and the i32 sums.
#[derive(Debug, Default)]
pub(crate) struct QScratch {
    a: Vec<u8>,
    a_scale: Vec<f32>,
    a_zero: Vec<i32>,
    acc: Vec<i32>,
}

impl QLinear {
    /// Quantises `w` (`[outputs × inputs]`, row-major). `None` when the shape does not
    /// pack (inputs a multiple of 4, outputs of 64).
    pub(crate) fn new(w: &[f32], inputs: usize, outputs: usize) -> Option<QLinear> {
        if !inputs.is_multiple_of(4)
            || !outputs.is_multiple_of(BLOCK)
            || w.len() != inputs * outputs
        {
            return None;
        }
        let mut q = vec![0i8; w.len()];
        let mut scale = vec![0f32; outputs];
        let mut colsum = vec![0i32; outputs];
        for ((row, qrow), (s, sum)) in w
            .chunks_exact(inputs)
            .zip(q.chunks_exact_mut(inputs))
            .zip(scale.iter_mut().zip(colsum.iter_mut()))
        {
            *s = weight_row(row, qrow);
            *sum = qrow.iter().map(|&v| i32::from(v)).sum();
        }
        // Per block of 64 outputs, per group of four inputs, each output's four bytes.
        let mut packed = vec![0i8; q.len()];
        let mut at = packed.chunks_exact_mut(4);
        for nb in (0..outputs).step_by(BLOCK) {
            for k4 in (0..inputs).step_by(4) {
                for c in nb..nb + BLOCK {
                    if let Some(dst) = at.next() {
                        dst.copy_from_slice(&q[c * inputs + k4..c * inputs + k4 + 4]);
                    }
                }
            }
        }
        Some(QLinear {
            packed,
            scale,
            colsum,
            inputs,
            outputs,
        })
    }

    /// `out[m × outputs] = a[m × inputs] · wᵀ + bias`, in integers, then `then` on
    /// the outputs.
    pub(crate) fn forward(
        &self,
        a: &[f32],
        bias: &[f32],
        out: &mut [f32],
        s: &mut QScratch,
        then: Then,
    ) {
        #[cfg(target_arch = "x86_64")]
        if vnni::available() {
            #[allow(unsafe_code)]
            // SAFETY: the CPU has the features `vnni::forward` is compiled for (checked
            // just above); it touches memory only through the slices it is given.
            unsafe {
                vnni::forward(self, a, bias, out, s, then);
            }
            return;
        }
        self.stages(a, bias, out, s, then, quantise_row, portable);
    }

    /// Quantise the rows (each by `quantise`, [`quantise_row`]), sum the products with
    /// `kernel`, scale back and add the bias, then `then`; [`ROWS`] rows at a time, so
    /// the scratch stays small (and in cache) whatever the batch: a batch of 4,096
    /// tokens would otherwise hold 25 MB of i32 sums, and the activation that follows
    /// would read its 25 MB of outputs back from memory.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn stages(
        &self,
        a: &[f32],
        bias: &[f32],
        out: &mut [f32],
        s: &mut QScratch,
        then: Then,
        quantise: impl Fn(&[f32], &mut [u8]) -> (f32, i32),
        kernel: impl Fn(&[u8], usize, usize, &[i8], usize, &mut [i32]),
    ) {
        let (k, n) = (self.inputs, self.outputs);
        for (a, out) in a.chunks(ROWS * k).zip(out.chunks_mut(ROWS * n)) {
            let m = a.len() / k;
            quantise_rows(a, k, s, &quantise);
            s.acc.clear();
            s.acc.resize(m * n, 0);
            kernel(&s.a, m, k, &self.packed, n, &mut s.acc);
            for ((o, acc), (&sa, &z)) in out
                .chunks_exact_mut(n)
                .zip(s.acc.chunks_exact(n))
                .zip(s.a_scale.iter().zip(&s.a_zero))
            {
                for ((((o, &acc), &b), &ws), &cs) in o
                    .iter_mut()
                    .zip(acc)
                    .zip(bias)
                    .zip(&self.scale)
                    .zip(&self.colsum)
                {
                    *o = b + sa * ws * (acc - z * cs) as f32;
                }
            }
            if then == Then::Gelu {
                gelu(out);
            }
        }
    }
}

/// What a linear layer does to its outputs once they are summed, while they are
/// still in cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Then {
    Nothing,
    /// The exact GELU ([`gelu`]), element by element: the same floats as a pass of
    /// its own over the whole output.
    Gelu,
}

/// One output's weights as i8 into `out`, returning their scale (symmetric: the
/// greatest magnitude is ±127), on the VNNI build's instructions where the CPU has
/// them (once per layer and process: ~40 ms for MiniLM one element at a time).
fn weight_row(row: &[f32], out: &mut [i8]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if vnni::available() {
        #[allow(unsafe_code)]
        // SAFETY: the CPU has the features `vnni::weight_row` is compiled for (checked
        // just above); it touches memory only through the slices it is given.
        return unsafe { vnni::weight_row(row, out) };
    }
    let max = row
        .iter()
        .fold(0f32, |m, x| if x.abs() > m { x.abs() } else { m });
    let s = weight_scale(max);
    weight_bytes(row, 1.0 / s, out);
    s
}

/// The scale of a row whose greatest magnitude is `max`.
#[inline(always)]
fn weight_scale(max: f32) -> f32 {
    if max > 0.0 { max / 127.0 } else { 1.0 }
}

/// `x · inv` rounded half away from zero (by adding ±½ and truncating: `round` is a
/// library call), clamped to ±127 (a NaN gives 0).
#[inline(always)]
fn weight_bytes(row: &[f32], inv: f32, out: &mut [i8]) {
    for (o, x) in out.iter_mut().zip(row) {
        let y = x * inv;
        *o = (y + 0.5f32.copysign(y)).clamp(-127.0, 127.0) as i8;
    }
}

/// Each row of `a` (`m × k`) as u8 with its own scale and zero point, by `quantise`.
#[inline(always)]
fn quantise_rows(
    a: &[f32],
    k: usize,
    s: &mut QScratch,
    quantise: impl Fn(&[f32], &mut [u8]) -> (f32, i32),
) {
    let m = a.len() / k;
    s.a.clear();
    s.a.resize(m * k, 0);
    s.a_scale.clear();
    s.a_zero.clear();
    for (row, out) in a.chunks_exact(k).zip(s.a.chunks_exact_mut(k)) {
        let (sc, z) = quantise(row, out);
        s.a_scale.push(sc);
        s.a_zero.push(z);
    }
}

/// One row as u8 into `out`, with its scale and zero point: the range of the row and
/// 0 spread over 0..=255, each value rounded half up by adding one half and truncating
/// (the values are never negative by then; `round` is a library call).
#[inline(always)]
fn quantise_row(row: &[f32], out: &mut [u8]) -> (f32, i32) {
    let (lo, hi) = range(row);
    let (sc, z) = scale_and_zero(lo, hi);
    convert_row(row, 1.0 / sc, z, out);
    (sc, z as i32)
}

/// The scale and zero point (a whole number, as f32) of a row from `lo ≤ 0 ≤ hi`.
#[inline(always)]
fn scale_and_zero(lo: f32, hi: f32) -> (f32, f32) {
    let sc = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
    let z = ((-lo / sc) + 0.5).clamp(0.0, 255.0) as i32 as f32;
    (sc, z)
}

/// One row's values as u8: `x · inv + z + 0.5`, clamped to 0..=255 and truncated (a
/// NaN gives 0). The compiler does this one element at a time (`as u8` from f32 is a
/// saturating conversion it does not vectorise); the VNNI build has its own.
#[inline(always)]
fn convert_row(row: &[f32], inv: f32, z: f32, out: &mut [u8]) {
    for (o, &x) in out.iter_mut().zip(row) {
        *o = (x * inv + z + 0.5).clamp(0.0, 255.0) as u8;
    }
}

/// The least and greatest of `row` and 0, eight lanes at a time.
#[inline(always)]
fn range(row: &[f32]) -> (f32, f32) {
    let (mut lo, mut hi) = ([0f32; 8], [0f32; 8]);
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for i in 0..8 {
            lo[i] = if c[i] < lo[i] { c[i] } else { lo[i] };
            hi[i] = if c[i] > hi[i] { c[i] } else { hi[i] };
        }
    }
    let mut l = lo.iter().fold(0f32, |a, &b| if b < a { b } else { a });
    let mut h = hi.iter().fold(0f32, |a, &b| if b > a { b } else { a });
    for &x in chunks.remainder() {
        l = if x < l { x } else { l };
        h = if x > h { x } else { h };
    }
    (l, h)
}

/// Whether this CPU runs the int8 layers on their fast kernel (AVX-512 VNNI). The
/// portable loop gives the same sums about 9× slower than gemm's f32 kernels, so where
/// this is false MiniLM embeds in f32 ([`super::Precision::fastest`]).
pub(crate) fn fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        vnni::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `acc[m × n] = a[m × k] (u8) · packed (i8)ᵀ`, exact, on whichever kernel this CPU runs.
#[cfg(test)]
fn products(a: &[u8], m: usize, k: usize, packed: &[i8], n: usize, acc: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if vnni::available() {
        #[allow(unsafe_code)]
        // SAFETY: as in `QLinear::forward`.
        unsafe {
            vnni::products(a, m, k, packed, n, acc);
        }
        return;
    }
    portable(a, m, k, packed, n, acc);
}

/// The same sums as the VNNI kernel, one multiply-add at a time.
#[inline(always)]
fn portable(a: &[u8], m: usize, k: usize, packed: &[i8], n: usize, acc: &mut [i32]) {
    for nb in (0..n).step_by(BLOCK) {
        let block = &packed[nb * k..(nb + BLOCK) * k];
        for r in 0..m {
            let row = &a[r * k..(r + 1) * k];
            let out = &mut acc[r * n + nb..r * n + nb + BLOCK];
            for (k4, w) in block.chunks_exact(BLOCK * 4).enumerate() {
                let x = &row[k4 * 4..k4 * 4 + 4];
                for (c, o) in out.iter_mut().enumerate() {
                    let wc = &w[c * 4..c * 4 + 4];
                    *o += (0..4)
                        .map(|t| i32::from(x[t]) * i32::from(wc[t]))
                        .sum::<i32>();
                }
            }
        }
    }
}

/// The AVX-512 VNNI build of the stages: `unsafe` to call (the CPU must have the
/// features, which [`vnni::available`] checks) and inside (raw pointer reads of the
/// bounds asserted on entry).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod vnni {
    use std::arch::x86_64::*;

    use super::{BLOCK, QLinear, QScratch, Then};

    /// Whether this CPU runs [`forward`].
    pub(super) fn available() -> bool {
        crate::cpu::avx512_vnni()
    }

    /// [`QLinear::forward`]'s stages compiled for AVX-512: the same element-wise
    /// operations in the same order as the portable build (no fused multiply-add), so
    /// the same floats.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn forward(
        q: &QLinear,
        a: &[f32],
        bias: &[f32],
        out: &mut [f32],
        s: &mut QScratch,
        then: Then,
    ) {
        q.stages(
            a,
            bias,
            out,
            s,
            then,
            // SAFETY (both): this function runs only where the features are (its caller
            // checks).
            |row, o| unsafe { quantise_row(row, o) },
            |a, m, k, p, n, acc| unsafe { products(a, m, k, p, n, acc) },
        );
    }

    /// [`super::weight_row`] sixteen lanes at a time: the greatest magnitude by
    /// `max_ps(|x|, m)` (`|x| > m ? |x| : m`, the portable selection), then each value
    /// as the portable code computes it; the clamps take the bound first
    /// (`max_ps(lo, t)` is `lo > t ? lo : t`), so a NaN passes through them and its
    /// truncation (`0x80000000`, low byte 0) gives 0, as `as i8` does.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn weight_row(row: &[f32], out: &mut [i8]) -> f32 {
        let n = row.len().min(out.len());
        let mut m = _mm512_setzero_ps();
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: i + 16 ≤ n, so the 16 floats read are inside `row`.
            let x = unsafe { _mm512_loadu_ps(row.as_ptr().add(i)) };
            m = _mm512_max_ps(_mm512_abs_ps(x), m);
            i += 16;
        }
        let mut lanes = [0f32; 16];
        // SAFETY: the array holds the 16 floats stored.
        unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), m) };
        let max = lanes
            .iter()
            .chain(&row[i..n])
            .fold(0f32, |m, x| if x.abs() > m { x.abs() } else { m });
        let s = super::weight_scale(max);
        let inv = 1.0 / s;
        let (vi, sign) = (_mm512_set1_ps(inv), _mm512_set1_epi32(i32::MIN));
        let (half, lo, hi) = (
            _mm512_set1_epi32(0.5f32.to_bits() as i32),
            _mm512_set1_ps(-127.0),
            _mm512_set1_ps(127.0),
        );
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: i + 16 ≤ n, so the 16 floats read and 16 bytes written are inside
            // `row` and `out`.
            unsafe {
                let y = _mm512_mul_ps(_mm512_loadu_ps(row.as_ptr().add(i)), vi);
                // ±½ with y's sign: ½'s bits with y's sign bit.
                let h = _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(y), sign), half);
                let t = _mm512_add_ps(y, _mm512_castsi512_ps(h));
                let t = _mm512_min_ps(hi, _mm512_max_ps(lo, t));
                let b = _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t));
                _mm_storeu_si128(out.as_mut_ptr().add(i).cast(), b);
            }
            i += 16;
        }
        super::weight_bytes(&row[i..n], inv, &mut out[i..n]);
        s
    }

    /// [`super::quantise_row`] on sixteen lanes: the same selections and operations.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn quantise_row(row: &[f32], out: &mut [u8]) -> (f32, i32) {
        // SAFETY (both): the features are this function's own.
        let (lo, hi) = unsafe { range(row) };
        let (sc, z) = super::scale_and_zero(lo, hi);
        unsafe { convert_row(row, 1.0 / sc, z, out) };
        (sc, z as i32)
    }

    /// [`super::range`] sixteen lanes at a time: `min_ps(x, lo)` is `x < lo ? x : lo`
    /// and `max_ps(x, hi)` is `x > hi ? x : hi`, the portable selections, so a NaN or a
    /// negative zero is never taken in either, and the least and greatest are the same
    /// values whatever the order.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn range(row: &[f32]) -> (f32, f32) {
        let (mut lo, mut hi) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        let mut i = 0;
        while i + 16 <= row.len() {
            // SAFETY: i + 16 ≤ len, so the 16 floats read are inside `row`.
            let x = unsafe { _mm512_loadu_ps(row.as_ptr().add(i)) };
            lo = _mm512_min_ps(x, lo);
            hi = _mm512_max_ps(x, hi);
            i += 16;
        }
        let (mut l16, mut h16) = ([0f32; 16], [0f32; 16]);
        // SAFETY: each array holds the 16 floats stored.
        unsafe {
            _mm512_storeu_ps(l16.as_mut_ptr(), lo);
            _mm512_storeu_ps(h16.as_mut_ptr(), hi);
        }
        let (l, h) = super::range(&row[i..]);
        let l = l16.iter().fold(l, |a, &b| if b < a { b } else { a });
        let h = h16.iter().fold(h, |a, &b| if b > a { b } else { a });
        (l, h)
    }

    /// [`super::convert_row`] sixteen values at a time, the same operations in the same
    /// order: `max` before `min` sends a NaN to 0 as the portable clamp and cast do, and
    /// the truncating conversions (`vcvttps2dq`, then `vpmovdb` keeping the low byte) of
    /// a value already in 0..=255 give its `as u8`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn convert_row(row: &[f32], inv: f32, z: f32, out: &mut [u8]) {
        let n = row.len().min(out.len());
        let (vi, vz, half) = (_mm512_set1_ps(inv), _mm512_set1_ps(z), _mm512_set1_ps(0.5));
        let (lo, hi) = (_mm512_setzero_ps(), _mm512_set1_ps(255.0));
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: i + 16 ≤ n, so the 16 floats read and 16 bytes written are inside
            // `row` and `out`.
            unsafe {
                let x = _mm512_loadu_ps(row.as_ptr().add(i));
                let y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(x, vi), vz), half);
                let y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
                let b = _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(y));
                _mm_storeu_si128(out.as_mut_ptr().add(i).cast(), b);
            }
            i += 16;
        }
        super::convert_row(&row[i..n], inv, z, &mut out[i..n]);
    }

    /// Four rows at a time (16 accumulators: 4 rows × 64 columns), then one at a time.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn products(
        a: &[u8],
        m: usize,
        k: usize,
        packed: &[i8],
        n: usize,
        acc: &mut [i32],
    ) {
        assert!(a.len() >= m * k && packed.len() >= n * k && acc.len() >= m * n);
        assert!(k.is_multiple_of(4) && n.is_multiple_of(BLOCK));
        let k4n = k / 4;
        for nb in (0..n).step_by(BLOCK) {
            let wb = packed[nb * k..].as_ptr();
            let mut r = 0;
            while r + 4 <= m {
                let mut c = [_mm512_setzero_si512(); 16];
                // SAFETY (whole block): rows r..r+4 < m, k4 < k/4, so every read is
                // inside `a` (m·k bytes) and `packed` (n·k bytes); stores inside `acc`.
                unsafe {
                    let a0 = a.as_ptr().add(r * k);
                    for kk in 0..k4n {
                        let wp = wb.add(kk * BLOCK * 4);
                        let w0 = _mm512_loadu_si512(wp.cast());
                        let w1 = _mm512_loadu_si512(wp.add(64).cast());
                        let w2 = _mm512_loadu_si512(wp.add(128).cast());
                        let w3 = _mm512_loadu_si512(wp.add(192).cast());
                        for rr in 0..4 {
                            let x = _mm512_set1_epi32(
                                a0.add(rr * k + kk * 4).cast::<i32>().read_unaligned(),
                            );
                            c[rr * 4] = _mm512_dpbusd_epi32(c[rr * 4], x, w0);
                            c[rr * 4 + 1] = _mm512_dpbusd_epi32(c[rr * 4 + 1], x, w1);
                            c[rr * 4 + 2] = _mm512_dpbusd_epi32(c[rr * 4 + 2], x, w2);
                            c[rr * 4 + 3] = _mm512_dpbusd_epi32(c[rr * 4 + 3], x, w3);
                        }
                    }
                    for rr in 0..4 {
                        for j in 0..4 {
                            _mm512_storeu_si512(
                                acc.as_mut_ptr().add((r + rr) * n + nb + j * 16).cast(),
                                c[rr * 4 + j],
                            );
                        }
                    }
                }
                r += 4;
            }
            while r < m {
                let mut c = [_mm512_setzero_si512(); 4];
                // SAFETY: row r < m, as above.
                unsafe {
                    let a0 = a.as_ptr().add(r * k);
                    for kk in 0..k4n {
                        let wp = wb.add(kk * BLOCK * 4);
                        let x = _mm512_set1_epi32(a0.add(kk * 4).cast::<i32>().read_unaligned());
                        for (j, cj) in c.iter_mut().enumerate() {
                            *cj = _mm512_dpbusd_epi32(
                                *cj,
                                x,
                                _mm512_loadu_si512(wp.add(j * 64).cast()),
                            );
                        }
                    }
                    for (j, cj) in c.iter().enumerate() {
                        _mm512_storeu_si512(acc.as_mut_ptr().add(r * n + nb + j * 16).cast(), *cj);
                    }
                }
                r += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    }

    /// Shapes with a row tail (m not a multiple of 4), one block and several, and the
    /// encoder's widths.
    const SHAPES: [(usize, usize, usize); 5] = [
        (1, 4, 64),
        (5, 384, 128),
        (13, 1536, 64),
        (4, 8, 64),
        (7, 384, 1536),
    ];

    #[test]
    fn every_kernel_sums_the_definition_exactly() {
        let mut seed = 7;
        for (m, k, n) in SHAPES {
            let w: Vec<f32> = (0..n * k).map(|_| lcg(&mut seed)).collect();
            let a: Vec<u8> = (0..m * k)
                .map(|_| ((lcg(&mut seed) + 0.5) * 255.0) as u8)
                .collect();
            let q = QLinear::new(&w, k, n).expect("packs");
            // The definition, from the unpacked quantised weights.
            let wq: Vec<i8> = w
                .chunks_exact(k)
                .zip(&q.scale)
                .flat_map(|(row, s)| {
                    let inv = 1.0 / s;
                    row.iter().map(move |x| {
                        let y = x * inv;
                        (y + 0.5f32.copysign(y)).clamp(-127.0, 127.0) as i8
                    })
                })
                .collect();
            let want: Vec<i32> = (0..m * n)
                .map(|i| {
                    let (r, c) = (i / n, i % n);
                    (0..k)
                        .map(|t| i32::from(a[r * k + t]) * i32::from(wq[c * k + t]))
                        .sum()
                })
                .collect();
            let first_difference = |got: &[i32]| got.iter().zip(&want).position(|(g, w)| g != w);
            let mut got = vec![0i32; m * n];
            portable(&a, m, k, &q.packed, n, &mut got);
            assert_eq!(first_difference(&got), None, "portable {m}×{k}×{n}");
            let mut got = vec![0i32; m * n];
            products(&a, m, k, &q.packed, n, &mut got);
            assert_eq!(first_difference(&got), None, "dispatched {m}×{k}×{n}");
            for (c, row) in wq.chunks_exact(k).enumerate() {
                assert_eq!(q.colsum[c], row.iter().map(|&v| i32::from(v)).sum::<i32>());
            }
        }
    }

    #[test]
    fn an_int8_layer_is_close_to_the_f32_one_and_the_same_on_every_cpu() {
        let mut seed = 11;
        for (m, k, n) in SHAPES {
            let w: Vec<f32> = (0..n * k).map(|_| lcg(&mut seed) * 0.2).collect();
            // Skewed activations with an outlier, as after a GELU.
            let mut a: Vec<f32> = (0..m * k)
                .map(|_| (lcg(&mut seed) + 0.3).max(-0.17))
                .collect();
            a[0] = 6.0;
            let bias: Vec<f32> = (0..n).map(|_| lcg(&mut seed)).collect();
            let mut want = vec![0f32; m * n];
            crate::bert::ops::linear(&a, k, &w, &bias, &mut want);
            let q = QLinear::new(&w, k, n).expect("packs");
            let mut got = vec![0f32; m * n];
            let mut s = QScratch::default();
            q.forward(&a, &bias, &mut got, &mut s, Then::Nothing);
            for r in 0..m {
                let (g, e) = (&got[r * n..(r + 1) * n], &want[r * n..(r + 1) * n]);
                let err = g
                    .iter()
                    .zip(e)
                    .map(|(x, y)| (x - y).powi(2))
                    .sum::<f32>()
                    .sqrt();
                let norm = e.iter().map(|y| y * y).sum::<f32>().sqrt();
                assert!(
                    err <= 0.03 * norm,
                    "row {r} of {m}×{k}×{n}: error {err} of {norm}"
                );
            }
            // The portable stages give the same floats as the dispatched ones.
            let mut portable_out = vec![0f32; m * n];
            q.stages(
                &a,
                &bias,
                &mut portable_out,
                &mut s,
                Then::Nothing,
                quantise_row,
                portable,
            );
            assert_eq!(
                portable_out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{m}×{k}×{n}"
            );
            // The GELU run on each block as its sums come gives the floats of a pass of
            // its own over the whole output.
            let mut fused = vec![0f32; m * n];
            q.forward(&a, &bias, &mut fused, &mut s, Then::Gelu);
            crate::bert::ops::gelu(&mut got);
            assert_eq!(
                fused.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{m}×{k}×{n}, GELU"
            );
        }
    }

    /// The VNNI build's conversion against the portable one on the edges: ties, the
    /// clamps, a NaN, negative zero, and a tail shorter than a register.
    #[test]
    fn both_conversions_give_the_same_bytes() {
        #[cfg(target_arch = "x86_64")]
        if vnni::available() {
            let mut seed = 5;
            let mut row: Vec<f32> = (0..37).map(|_| lcg(&mut seed) * 600.0).collect();
            row[..8].copy_from_slice(&[f32::NAN, -0.0, 0.5, 1.5, 254.5, 255.5, -3.0, 1e9]);
            for (inv, z) in [(1.0, 0.0), (0.37, 12.0), (2.0, 255.0)] {
                let (mut want, mut got) = (vec![0u8; row.len()], vec![0u8; row.len()]);
                convert_row(&row, inv, z, &mut want);
                #[allow(unsafe_code)]
                // SAFETY: the CPU has the features (checked above).
                unsafe {
                    vnni::convert_row(&row, inv, z, &mut got);
                }
                assert_eq!(got, want, "inv {inv}, zero {z}");
            }
            // And the whole row: its range (the least and greatest met anywhere, in
            // the tail too) and so its scale and zero point.
            for len in [5, 16, 37, 384] {
                let mut row: Vec<f32> = (0..len).map(|_| lcg(&mut seed) * 8.0).collect();
                row[len - 1] = -9.5;
                row[len / 2] = f32::NAN;
                let (mut want, mut got) = (vec![0u8; len], vec![0u8; len]);
                let w = quantise_row(&row, &mut want);
                #[allow(unsafe_code)]
                // SAFETY: as above.
                let g = unsafe { vnni::quantise_row(&row, &mut got) };
                assert_eq!((g, got), (w, want), "length {len}");
            }
        }
    }

    /// The VNNI build's weight quantisation against the portable code: ties, both
    /// clamps, a NaN, negative zero, a row of zeros, short tails.
    #[test]
    fn both_weight_quantisations_give_the_same_bytes() {
        #[cfg(target_arch = "x86_64")]
        if vnni::available() {
            let mut seed = 3;
            for len in [0, 5, 16, 37, 384, 1536] {
                let mut row: Vec<f32> = (0..len).map(|_| lcg(&mut seed) * 0.3).collect();
                if len >= 8 {
                    let m = 0.15 / 127.0;
                    row[..8].copy_from_slice(&[
                        f32::NAN,
                        -0.0,
                        0.5 * m,
                        -0.5 * m,
                        1.5 * m,
                        126.5 * m,
                        -0.15,
                        0.15,
                    ]);
                }
                let (mut want, mut got) = (vec![0i8; len], vec![0i8; len]);
                let portable_scale = {
                    let max = row
                        .iter()
                        .fold(0f32, |m, x| if x.abs() > m { x.abs() } else { m });
                    let s = weight_scale(max);
                    weight_bytes(&row, 1.0 / s, &mut want);
                    s
                };
                #[allow(unsafe_code)]
                // SAFETY: the CPU has the features (checked above).
                let s = unsafe { vnni::weight_row(&row, &mut got) };
                assert_eq!(
                    (s.to_bits(), got),
                    (portable_scale.to_bits(), want),
                    "length {len}"
                );
            }
            let zeros = [0f32; 32];
            let mut got = [1i8; 32];
            #[allow(unsafe_code)]
            // SAFETY: as above.
            let s = unsafe { vnni::weight_row(&zeros, &mut got) };
            assert_eq!((s, got), (1.0, [0i8; 32]));
        }
    }

    #[test]
    fn a_shape_that_does_not_pack_is_refused() {
        assert!(QLinear::new(&[0.0; 6 * 64], 6, 64).is_none());
        assert!(QLinear::new(&[0.0; 8 * 32], 8, 32).is_none());
        assert!(QLinear::new(&[0.0; 8 * 64], 8, 64).is_some());
    }

    #[test]
    fn a_constant_row_quantises_without_dividing_by_zero() {
        let mut s = QScratch::default();
        quantise_rows(&[0.0; 8], 8, &mut s, quantise_row);
        assert_eq!((s.a_scale[0], s.a_zero[0]), (1.0, 0));
        assert!(s.a.iter().all(|&x| x == 0));
    }
}
