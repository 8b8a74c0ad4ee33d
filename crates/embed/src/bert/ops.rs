//! The encoder's operations on row-major f32 matrices held in plain slices.
//!
//! Matrix products go to gemm's f32 kernels ([`matmul`]: AVX-512, AVX2/FMA or scalar,
//! whichever the CPU has, chosen at run time), through [`Mat`] views whose every index is
//! checked against their slice before the call; the element-wise parts are plain loops
//! the compiler vectorises. The shapes are fixed by the checked weights and the batch, so
//! a shape mismatch here is a bug, not an input error: it panics.

/// Where a matrix's elements lie in a slice: element `(i, j)` of a `rows × cols`
/// matrix is at `i * row_stride + j * col_stride`.
#[derive(Clone, Copy)]
struct Layout {
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl Layout {
    /// Panics when an element lies at or past `len`.
    fn within(
        len: usize,
        (rows, cols): (usize, usize),
        (row_stride, col_stride): (usize, usize),
    ) -> Layout {
        let extent = if rows == 0 || cols == 0 {
            0
        } else {
            (rows - 1) * row_stride + (cols - 1) * col_stride + 1
        };
        assert!(extent <= len, "matrix view past its slice");
        Layout {
            rows,
            cols,
            row_stride,
            col_stride,
        }
    }
}

/// A strided view of a matrix in a slice, every element checked to lie inside it.
#[derive(Clone, Copy)]
pub(crate) struct Mat<'a> {
    data: &'a [f32],
    at: Layout,
}

/// The same, writable.
pub(crate) struct MatMut<'a> {
    data: &'a mut [f32],
    at: Layout,
}

impl<'a> Mat<'a> {
    /// Panics when the view reaches past `data`.
    pub(crate) fn new(data: &'a [f32], dims: (usize, usize), strides: (usize, usize)) -> Mat<'a> {
        let at = Layout::within(data.len(), dims, strides);
        Mat { data, at }
    }

    /// Row-major and contiguous.
    pub(crate) fn rows(data: &'a [f32], rows: usize, cols: usize) -> Mat<'a> {
        Mat::new(data, (rows, cols), (cols, 1))
    }

    /// The transpose (no copy).
    pub(crate) fn t(self) -> Mat<'a> {
        let Layout {
            rows,
            cols,
            row_stride,
            col_stride,
        } = self.at;
        Mat {
            data: self.data,
            at: Layout {
                rows: cols,
                cols: rows,
                row_stride: col_stride,
                col_stride: row_stride,
            },
        }
    }
}

impl<'a> MatMut<'a> {
    /// Panics when the view reaches past `data`.
    pub(crate) fn new(
        data: &'a mut [f32],
        dims: (usize, usize),
        strides: (usize, usize),
    ) -> MatMut<'a> {
        let at = Layout::within(data.len(), dims, strides);
        MatMut { data, at }
    }
}

/// `dst = keep · dst + scale · lhs · rhs` (`keep` 0: `dst` is not read, so it may hold
/// anything).
pub(crate) fn matmul(dst: MatMut<'_>, keep: f32, lhs: Mat<'_>, rhs: Mat<'_>, scale: f32) {
    let (m, k, n) = (lhs.at.rows, lhs.at.cols, rhs.at.cols);
    assert!(
        rhs.at.rows == k && dst.at.rows == m && dst.at.cols == n,
        "matmul: shapes ({m}×{k}) · ({}×{n}) → ({}×{})",
        rhs.at.rows,
        dst.at.rows,
        dst.at.cols
    );
    if m == 0 || n == 0 {
        return;
    }
    let stride = |s: usize| isize::try_from(s).expect("matmul: stride fits isize");
    let gemm = gemm_f32::gemm::f32::get_gemm_fn();
    // SAFETY: `Layout::within` (through `Mat::new` and `MatMut::new`) checked that every index (i, j) < (rows,
    // cols) of each view, at its strides, lies inside its slice, and the shapes agree
    // (asserted above), so gemm reads `lhs` and `rhs` and writes `dst` only inside those
    // slices. `dst` is a unique borrow, so it aliases neither input. `read_dst` is false
    // when `keep` is 0, so an uninitialised value is never read (the slice is
    // initialised memory anyway). No conjugation (real numbers); one thread.
    #[allow(unsafe_code)]
    unsafe {
        gemm(
            m,
            n,
            k,
            dst.data.as_mut_ptr(),
            stride(dst.at.col_stride),
            stride(dst.at.row_stride),
            keep != 0.0,
            lhs.data.as_ptr(),
            stride(lhs.at.col_stride),
            stride(lhs.at.row_stride),
            rhs.data.as_ptr(),
            stride(rhs.at.col_stride),
            stride(rhs.at.row_stride),
            keep,
            scale,
            false,
            false,
            false,
            gemm_common::Parallelism::None,
        );
    }
}

/// `out[m × n] = a[m × k] · wᵀ + bias`, with `w` `[n × k]` row-major (PyTorch's
/// `Linear` layout) and `n = bias.len()`.
pub(crate) fn linear(a: &[f32], k: usize, w: &[f32], bias: &[f32], out: &mut [f32]) {
    let n = bias.len();
    let m = a.len() / k;
    for row in out.chunks_exact_mut(n) {
        row.copy_from_slice(bias);
    }
    let a = Mat::rows(a, m, k);
    let w = Mat::rows(w, n, k);
    matmul(MatMut::new(out, (m, n), (n, 1)), 1.0, a, w.t(), 1.0);
}

/// Self-attention of one text: `q`, `k`, `v` and `ctx` are its `len × width` rows
/// (`width = heads × head_dim`); each head attends over the text's own tokens (no
/// padding, so no mask). `scores` is scratch space.
#[inline(always)]
pub(crate) fn attention(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    width: usize,
    heads: usize,
    scores: &mut Vec<f32>,
    ctx: &mut [f32],
) {
    let len = q.len() / width;
    let dh = width / heads;
    let scale = 1.0 / (dh as f32).sqrt();
    // Not cleared: the product below overwrites it (keep = 0 never reads the output).
    scores.truncate(len * len);
    scores.resize(len * len, 0.0);
    for h in 0..heads {
        let (qh, kh, vh) = (
            head_view(q, h, len, dh, width),
            head_view(k, h, len, dh, width),
            head_view(v, h, len, dh, width),
        );
        matmul(
            MatMut::new(&mut scores[..], (len, len), (len, 1)),
            0.0,
            qh,
            kh.t(),
            scale,
        );
        for row in scores.chunks_exact_mut(len) {
            softmax(row);
        }
        let s = Mat::rows(&scores[..], len, len);
        let out = MatMut::new(&mut ctx[h * dh..], (len, dh), (width, 1));
        matmul(out, 0.0, s, vh, 1.0);
    }
}

/// Head `h`'s `len × dh` columns of a `len × width` matrix.
#[inline(always)]
fn head_view(m: &[f32], h: usize, len: usize, dh: usize, width: usize) -> Mat<'_> {
    Mat::new(&m[h * dh..], (len, dh), (width, 1))
}

/// In place: `x = layer_norm(x + residual) · weight + bias`, row by row.
#[inline(always)]
pub(crate) fn add_norm(x: &mut [f32], residual: &[f32], weight: &[f32], bias: &[f32], eps: f32) {
    let n = weight.len();
    for (row, res) in x.chunks_exact_mut(n).zip(residual.chunks_exact(n)) {
        for (a, b) in row.iter_mut().zip(res) {
            *a += b;
        }
        norm_row(row, weight, bias, eps);
    }
}

/// In place: `x = layer_norm(x) · weight + bias`, row by row.
#[inline(always)]
pub(crate) fn norm(x: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(weight.len()) {
        norm_row(row, weight, bias, eps);
    }
}

#[inline(always)]
fn norm_row(row: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let n = row.len() as f32;
    let mean = row.iter().sum::<f32>() / n;
    let var = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, w), b) in row.iter_mut().zip(weight).zip(bias) {
        *x = (*x - mean) * inv * w + b;
    }
}

/// In place: the exact (erf) GELU, `x · (1 + erf(x / √2)) / 2`.
#[inline(always)]
pub(crate) fn gelu(x: &mut [f32]) {
    for v in x {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// In place: softmax of one row.
#[inline(always)]
fn softmax(row: &mut [f32]) {
    let max = max(row);
    for x in row.iter_mut() {
        *x = exp_nonpositive(*x - max);
    }
    let inv = 1.0 / sum(row);
    for x in row {
        *x *= inv;
    }
}

/// The greatest of `v` (−∞ for none; a NaN is never taken), sixteen lanes at a time:
/// `f32::max` folded one element after the other is a chain the compiler keeps scalar,
/// and the greatest value is the same whatever the order it is found in.
#[inline(always)]
fn max(v: &[f32]) -> f32 {
    let pick = |m: f32, x: f32| if x > m { x } else { m };
    let mut acc = [f32::NEG_INFINITY; 16];
    let (chunks, rest) = v.as_chunks::<16>();
    for c in chunks {
        for j in 0..16 {
            acc[j] = pick(acc[j], c[j]);
        }
    }
    acc.iter()
        .chain(rest)
        .fold(f32::NEG_INFINITY, |m, &x| pick(m, x))
}

/// Sum with eight accumulators (a single running sum is a dependency chain the
/// compiler may not reorder).
#[inline(always)]
fn sum(v: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (chunks, rest) = v.as_chunks::<8>();
    for c in chunks {
        for j in 0..8 {
            acc[j] += c[j];
        }
    }
    acc.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

/// e^x for x ≤ 0 (softmax's inputs once the row's maximum is subtracted), to about
/// 1e-7 relative: x = n·ln 2 + r with n an integer and |r| ≤ ½ ln 2 (ln 2 in two parts,
/// so r keeps its precision), e^r by its Taylor polynomial to degree 7, 2^n put into
/// the exponent bits. Written out because `f32::exp` is a library call per element that
/// does not vectorise; attention's softmax takes one per pair of tokens, per head and
/// layer.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    // Below -87, e^x is under f32's smallest normal; 0 is what the softmax needs.
    let xc = x.max(-87.0);
    // Round to nearest by adding and subtracting 1.5 × 2^23 (plain SSE2 arithmetic).
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let n = (xc * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    if x < -87.0 { 0.0 } else { p * scale }
}

/// erf in f32 by a rational approximation on [-4, 4] (odd degree-13 numerator, even
/// degree-8 denominator; beyond ±4 erf is ±1 in f32). The coefficients are the ones
/// Eigen and XLA use for float erf; the maximum error is a few ulp. Written out
/// because the standard library has no erf and a scalar library call per element
/// (1,536 of them per token and layer) does not vectorise; this loop does. Plain
/// `a * b + c`, not `mul_add`: without FMA enabled at compile time `mul_add` is a
/// call into a software fused multiply-add, which took a quarter of the forward pass.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = x2 * p - 2.101_024e-6;
    p = x2 * p - 5.692_506_4e-5;
    p = x2 * p - 7.349_906e-4;
    p = x2 * p - 2.954_600_1e-3;
    p = x2 * p - 1.609_603_3e-2;
    p *= x;
    let mut q = x2 * -1.456_607_2e-5 - 2.133_740_6e-4;
    q = x2 * q - 1.682_827e-3;
    q = x2 * q - 7.373_329e-3;
    q = x2 * q - 1.426_474e-2;
    p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        // erf(0), erf(0.5), erf(1), erf(2), erf(3.5), large, negative.
        let cases = [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (3.5, 0.999_999_3),
            (10.0, 1.0),
            (-1.0, -0.842_700_8),
        ];
        for (x, want) in cases {
            assert!(
                (erf(x) - want).abs() < 1e-6,
                "erf({x}) = {} want {want}",
                erf(x)
            );
        }
    }

    #[test]
    fn exp_matches_the_library_exp() {
        let mut worst = 0f32;
        let mut x = -100.0f32;
        while x <= 0.0 {
            let (a, b) = (exp_nonpositive(x), x.exp());
            if b > 1e-37 {
                worst = worst.max((a - b).abs() / b);
            } else {
                assert!(a < 1e-36, "exp({x}) = {a}");
            }
            x += 0.0137;
        }
        assert!(worst < 1e-6, "relative error {worst}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-1000.0), 0.0);
        assert_eq!(sum(&[1.0; 19]), 19.0);
    }

    #[test]
    fn linear_is_a_times_w_transposed_plus_bias() {
        // a: 2×3, w: 2×3 (two outputs), bias 2.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let w = [1.0, 0.0, -1.0, 0.5, 0.5, 0.5];
        let mut out = [0.0; 4];
        linear(&a, 3, &w, &[10.0, 20.0], &mut out);
        assert_eq!(out, [8.0, 23.0, 8.0, 27.5]);
    }

    /// `matmul` against the definition, on the views the encoder uses: contiguous,
    /// transposed, a head's columns of a wider matrix (written in place, its
    /// neighbours left alone), and an output kept and added to.
    #[test]
    fn matmul_equals_the_definition_on_strided_views() {
        let (m, k, n, width) = (7, 5, 6, 11);
        let a: Vec<f32> = (0..m * width).map(|i| (i % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..n * width).map(|i| (i % 7) as f32 * 0.5 - 1.0).collect();
        // lhs: columns 3..3+k of an m × width matrix; rhs: the transpose of columns
        // 2..2+k of an n × width one; dst: columns 4..4+n of an m × width one.
        let lhs = Mat::new(&a[3..], (m, k), (width, 1));
        let rhs = Mat::new(&b[2..], (n, k), (width, 1)).t();
        let mut out = vec![100.0f32; m * width];
        matmul(
            MatMut::new(&mut out[4..], (m, n), (width, 1)),
            1.0,
            lhs,
            rhs,
            0.5,
        );
        for i in 0..m {
            for j in 0..width {
                let want = if (4..4 + n).contains(&j) {
                    let jj = j - 4;
                    let dot: f32 = (0..k)
                        .map(|p| a[i * width + 3 + p] * b[jj * width + 2 + p])
                        .sum();
                    100.0 + 0.5 * dot
                } else {
                    100.0
                };
                assert!(
                    (out[i * width + j] - want).abs() < 1e-4,
                    "({i}, {j}): {} vs {want}",
                    out[i * width + j]
                );
            }
        }
        // keep = 0: whatever the output held is not read.
        let mut out = vec![f32::NAN; m * n];
        matmul(MatMut::new(&mut out, (m, n), (n, 1)), 0.0, lhs, rhs, 1.0);
        assert!(out.iter().all(|x| x.is_finite()), "{out:?}");
    }

    #[test]
    #[should_panic(expected = "matrix view past its slice")]
    fn a_view_past_its_slice_is_refused() {
        let data = [0f32; 10];
        let _ = Mat::new(&data, (3, 4), (4, 1));
    }

    #[test]
    fn softmax_and_norm_behave() {
        let mut r = [1.0, 2.0, 3.0];
        softmax(&mut r);
        assert!((r.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(r[2] > r[1] && r[1] > r[0]);
        let mut x = [1.0, 2.0, 3.0, 4.0];
        norm(&mut x, &[1.0; 4], &[0.0; 4], 1e-12);
        let mean: f32 = x.iter().sum::<f32>() / 4.0;
        let var: f32 = x.iter().map(|v| v * v).sum::<f32>() / 4.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-4, "{x:?}");
    }
}
