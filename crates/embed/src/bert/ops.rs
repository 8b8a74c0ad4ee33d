//! The encoder's operations on row-major f32 matrices held in plain slices.
//!
//! Matrix products go to `ndarray::linalg::general_mat_mul` (matrixmultiply's kernels,
//! AVX-512 or AVX2/FMA, whichever the CPU has, chosen at run time; the workspace turns
//! the AVX-512 feature on, which ndarray leaves off); the element-wise parts are plain loops the
//! compiler vectorises. The shapes are fixed by the checked weights and the batch, so a
//! shape mismatch here is a bug, not an input error: they are `expect`ed.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, ShapeBuilder};

/// `out[m × n] = a[m × k] · wᵀ + bias`, with `w` `[n × k]` row-major (PyTorch's
/// `Linear` layout) and `n = bias.len()`.
pub(crate) fn linear(a: &[f32], k: usize, w: &[f32], bias: &[f32], out: &mut [f32]) {
    let n = bias.len();
    let m = a.len() / k;
    for row in out.chunks_exact_mut(n) {
        row.copy_from_slice(bias);
    }
    let a = ArrayView2::from_shape((m, k), a).expect("linear: input shape");
    let w = ArrayView2::from_shape((n, k), w).expect("linear: weight shape");
    let mut c = ArrayViewMut2::from_shape((m, n), out).expect("linear: output shape");
    general_mat_mul(1.0, &a, &w.t(), 1.0, &mut c);
}

/// Self-attention of one text: `q`, `k`, `v` and `ctx` are its `len × width` rows
/// (`width = heads × head_dim`); each head attends over the text's own tokens (no
/// padding, so no mask). `scores` is scratch space.
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
    // Not cleared: the product below overwrites it (beta = 0 never reads the output).
    scores.truncate(len * len);
    scores.resize(len * len, 0.0);
    for h in 0..heads {
        let (qh, kh, vh) = (
            head_view(q, h, len, dh, width),
            head_view(k, h, len, dh, width),
            head_view(v, h, len, dh, width),
        );
        let mut s =
            ArrayViewMut2::from_shape((len, len), &mut scores[..]).expect("attention: scores");
        general_mat_mul(scale, &qh, &kh.t(), 0.0, &mut s);
        for row in scores.chunks_exact_mut(len) {
            softmax(row);
        }
        let s = ArrayView2::from_shape((len, len), &scores[..]).expect("attention: scores");
        let mut out = ArrayViewMut2::from_shape((len, dh).strides((width, 1)), &mut ctx[h * dh..])
            .expect("attention: context view");
        general_mat_mul(1.0, &s, &vh, 0.0, &mut out);
    }
}

/// Head `h`'s `len × dh` columns of a `len × width` matrix.
fn head_view(m: &[f32], h: usize, len: usize, dh: usize, width: usize) -> ArrayView2<'_, f32> {
    ArrayView2::from_shape((len, dh).strides((width, 1)), &m[h * dh..])
        .expect("attention: head view")
}

/// In place: `x = layer_norm(x + residual) · weight + bias`, row by row.
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
pub(crate) fn norm(x: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(weight.len()) {
        norm_row(row, weight, bias, eps);
    }
}

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
pub(crate) fn gelu(x: &mut [f32]) {
    for v in x {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// In place: softmax of one row.
fn softmax(row: &mut [f32]) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    for x in row.iter_mut() {
        *x = exp_nonpositive(*x - max);
    }
    let inv = 1.0 / sum(row);
    for x in row {
        *x *= inv;
    }
}

/// Sum with eight accumulators (a single running sum is a dependency chain the
/// compiler may not reorder).
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
#[inline]
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
#[inline]
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
