//! A BERT encoder for inference on the CPU, written for the one model gitloom ships
//! (all-MiniLM-L6-v2: 6 layers, 384 wide, 12 heads), reading its weights straight out of
//! a memory-mapped safetensors file.
//!
//! Why by hand rather than through candle (which gitloom used before): candle copies
//! every weight into its own tensors on load (90 MB per process start, most of a cold
//! query's time), pads every sequence of a batch to the longest, and embedded well
//! under half as many texts per CPU-second as this does (BENCHMARKS.md, "Speed"),
//! most of the difference being time outside the matrix products. An encoder is six repetitions of a few matrix products, a softmax, a
//! layer norm and a GELU: the matrix products go to gemm's f32 kernels (AVX-512 or
//! AVX2/FMA, chosen at run time); what is written here is the arrangement, so
//! that a batch is one set of products over the real tokens of all its texts (no
//! padding, no mask) and attention is computed per text at its own length.
//!
//! - [`weights`]: the safetensors header, checked shapes, views into the mapped file;
//! - [`ops`]: linear layers, layer norm, GELU, softmax;
//! - [`quant`]: linear layers in 8-bit integers (AVX-512 VNNI where the CPU has it);
//! - [`forward`]: one forward pass over a batch of token sequences, mean-pooled.

pub(crate) mod forward;
pub(crate) mod ops;
pub(crate) mod quant;
pub(crate) mod weights;

pub(crate) use forward::Workspace;

/// The arithmetic of the linear layers, about 85 % of an encoder's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout (gemm's kernels): the network as published.
    F32,
    /// Linear layers in 8-bit integers: weights per output row, activations per token,
    /// sums exact in i32, so the vectors do not depend on the CPU. Vectors are within
    /// about 0.001 of f32's in cosine (BENCHMARKS.md, "Session 38"); bulk embedding
    /// takes about 0.6 of the time on AVX-512 VNNI, and 5× as long without it.
    Int8,
}

impl Precision {
    /// What MiniLM embeds stored texts at by default: [`Precision::Int8`] where the CPU
    /// has AVX-512 VNNI, else [`Precision::F32`] (the model id says which, so a vector
    /// cache or arena never mixes the two).
    pub fn fastest() -> Precision {
        if quant::fast() {
            Precision::Int8
        } else {
            Precision::F32
        }
    }
}
pub(crate) use weights::BertWeights;
