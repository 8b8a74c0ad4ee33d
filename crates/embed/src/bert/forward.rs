//! One forward pass of the encoder over a batch of token sequences.
//!
//! The batch's tokens are stacked into one `tokens × hidden` matrix, so every linear
//! layer is one matrix product over the real tokens of all texts (no padding);
//! attention runs per text, at its own length. The output is each text's mean over
//! its tokens, L2-normalised (sentence-transformers' pooling for MiniLM).

use multiversion::multiversion;

use super::Precision;
use super::ops::{add_norm, attention, gelu, linear, norm};
use super::quant::{QScratch, Then};
use super::weights::{BertWeights, Linear, Norm};
use crate::embedder::normalise;

/// Scratch buffers of one thread, grown to the largest batch seen and reused.
#[derive(Debug, Default)]
pub(crate) struct Workspace {
    x: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    ctx: Vec<f32>,
    tmp: Vec<f32>,
    inter: Vec<f32>,
    scores: Vec<f32>,
    quant: QScratch,
}

/// `buf` at length `n`. Not cleared: every consumer overwrites all of it (the linear
/// layers start from the bias, attention writes every head's columns).
fn sized(buf: &mut Vec<f32>, n: usize) -> &mut [f32] {
    buf.truncate(n);
    buf.resize(n, 0.0);
    buf
}

impl BertWeights {
    /// Mean-pooled, L2-normalised vectors of `seqs` (token ids with the special tokens
    /// in place), the linear layers at `precision`. Every id must be below the
    /// vocabulary size and every sequence at most `max_position_embeddings` long; an
    /// empty sequence gives a zero vector.
    pub(crate) fn embed_batch(
        &self,
        seqs: &[&[u32]],
        precision: Precision,
        ws: &mut Workspace,
    ) -> Result<Vec<Vec<f32>>, String> {
        let c = &self.config;
        let h = c.hidden_size;
        for s in seqs {
            if s.len() > c.max_position_embeddings {
                return Err(format!(
                    "a sequence of {} tokens is longer than the model's {} positions",
                    s.len(),
                    c.max_position_embeddings
                ));
            }
            if let Some(id) = s.iter().find(|&&id| id as usize >= c.vocab_size) {
                return Err(format!(
                    "token id {id} is outside the vocabulary of {}",
                    c.vocab_size
                ));
            }
        }
        let tokens: usize = seqs.iter().map(|s| s.len()).sum();
        if tokens == 0 {
            return Ok(vec![vec![0.0; h]; seqs.len()]);
        }
        Ok(encode(self, seqs, tokens, precision, ws))
    }
}

/// The forward pass of checked sequences (`tokens` of them in all), compiled once per
/// instruction set below and picked at run time: the norms, GELU, softmax and
/// embedding sums are element-wise f32 loops the compiler widens to the CPU's
/// registers, and every helper they call is `#[inline(always)]` so it is compiled with
/// the same features. Rust never fuses a multiply and an add on its own (`mul_add` is
/// not used) and no reduction here is reordered, so every build gives the same floats
/// bit for bit; only the speed differs (the matrix products dispatch for themselves).
#[multiversion(targets("x86_64+avx512f+avx512bw", "x86_64+avx2"))]
fn encode(
    weights: &BertWeights,
    seqs: &[&[u32]],
    tokens: usize,
    precision: Precision,
    ws: &mut Workspace,
) -> Vec<Vec<f32>> {
    let c = &weights.config;
    let h = c.hidden_size;
    let w = weights.data();
    let eps = c.layer_norm_eps as f32;
    let x = sized(&mut ws.x, tokens * h);
    weights.embed_tokens(w, seqs, x);
    norm(
        x,
        &w[weights.embed_norm.weight.clone()],
        &w[weights.embed_norm.bias.clone()],
        eps,
    );
    let int8 = precision == Precision::Int8;
    // A macro, not a closure: a closure the compiler leaves uninlined is compiled once,
    // for the baseline instruction set, whichever build calls it (the residual norm,
    // once a closure, ran in SSE registers in every build: 6 % of an import).
    macro_rules! lin {
        ($l:expr, $a:expr, $out:expr, $then:expr) => {{
            let l: &Linear = $l;
            let out = sized($out, tokens * l.outputs);
            layer_forward(w, l, int8, $a, out, &mut ws.quant, $then);
        }};
    }
    for layer in &weights.layers {
        lin!(&layer.query, &ws.x, &mut ws.q, Then::Nothing);
        lin!(&layer.key, &ws.x, &mut ws.k, Then::Nothing);
        lin!(&layer.value, &ws.x, &mut ws.v, Then::Nothing);
        let ctx = sized(&mut ws.ctx, tokens * h);
        let mut at = 0;
        for s in seqs {
            let r = at * h..(at + s.len()) * h;
            attention(
                &ws.q[r.clone()],
                &ws.k[r.clone()],
                &ws.v[r.clone()],
                h,
                c.num_attention_heads,
                &mut ws.scores,
                &mut ctx[r],
            );
            at += s.len();
        }
        let (attn_out, inter, out) = (&layer.attn_out, &layer.intermediate, &layer.output);
        lin!(attn_out, &ws.ctx, &mut ws.tmp, Then::Nothing);
        residual_norm(w, &mut ws.x, &ws.tmp, &layer.attn_norm, eps);
        lin!(inter, &ws.x, &mut ws.inter, Then::Gelu);
        lin!(out, &ws.inter, &mut ws.tmp, Then::Nothing);
        residual_norm(w, &mut ws.x, &ws.tmp, &layer.out_norm, eps);
    }
    pool(&ws.x, seqs, h)
}

/// One linear layer: in i8 at that precision when its shape packs, else in f32;
/// `then` runs on the outputs (on the int8 path block by block as they are summed).
#[inline(always)]
fn layer_forward(
    w: &[f32],
    l: &Linear,
    int8: bool,
    a: &[f32],
    out: &mut [f32],
    qs: &mut QScratch,
    then: Then,
) {
    let bias = &w[l.bias.clone()];
    match int8.then(|| l.int8(w)).flatten() {
        Some(q) => q.forward(a, bias, out, qs, then),
        None => {
            linear(a, l.inputs, &w[l.weight.clone()], bias, out);
            if then == Then::Gelu {
                gelu(out);
            }
        }
    }
}

/// `x = norm(x + residual)` with one of the layer's norms.
#[inline(always)]
fn residual_norm(w: &[f32], x: &mut [f32], residual: &[f32], n: &Norm, eps: f32) {
    add_norm(x, residual, &w[n.weight.clone()], &w[n.bias.clone()], eps);
}

impl BertWeights {
    /// Word + position + token-type (0) embedding of every token, stacked.
    #[inline(always)]
    fn embed_tokens(&self, w: &[f32], seqs: &[&[u32]], x: &mut [f32]) {
        let h = self.config.hidden_size;
        let (word, pos) = (&w[self.word.clone()], &w[self.position.clone()]);
        let typ = &w[self.token_type.start..self.token_type.start + h];
        let mut rows = x.chunks_exact_mut(h);
        for s in seqs {
            for (p, &id) in s.iter().enumerate() {
                let Some(row) = rows.next() else { return };
                let (wr, pr) = (id as usize * h, p * h);
                for (j, out) in row.iter_mut().enumerate() {
                    *out = word[wr + j] + pos[pr + j] + typ[j];
                }
            }
        }
    }
}

/// Mean over each text's rows, L2-normalised.
#[inline(always)]
fn pool(x: &[f32], seqs: &[&[u32]], h: usize) -> Vec<Vec<f32>> {
    let mut out = Vec::with_capacity(seqs.len());
    let mut at = 0;
    for s in seqs {
        let mut v = vec![0f32; h];
        for row in x[at * h..(at + s.len()) * h].chunks_exact(h) {
            for (a, b) in v.iter_mut().zip(row) {
                *a += b;
            }
        }
        if !s.is_empty() {
            let inv = 1.0 / s.len() as f32;
            v.iter_mut().for_each(|a| *a *= inv);
        }
        normalise(&mut v);
        out.push(v);
        at += s.len();
    }
    out
}
