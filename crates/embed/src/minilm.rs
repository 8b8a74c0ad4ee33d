//! all-MiniLM-L6-v2 run locally with candle (BERT), mean pooling over the attention
//! mask and L2 normalisation, as sentence-transformers does for this model.
//!
//! The weights are read into memory (`VarBuilder::from_buffered_safetensors`, about
//! 90 MB) rather than memory-mapped, so the crate needs no `unsafe`; this costs well
//! under a second and happens once per process, on the first `embed` call.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationParams};

use crate::embedder::normalise;
use crate::install::{MANIFEST, MINILM_FILES, MINILM_MODEL_ID};
use crate::{EmbedError, Embedder};

/// The model's window (sentence-transformers' `max_seq_length`), special tokens included.
const MAX_TOKENS: usize = 256;
const DIM: usize = 384;
/// Texts per forward pass (sorted by length first so padding stays small).
const BATCH: usize = 32;

/// all-MiniLM-L6-v2 (384 dimensions, 256-token window), loaded lazily from an install
/// directory (see [`crate::install`]).
pub struct MiniLm {
    dir: PathBuf,
    model_id: String,
    state: OnceLock<Result<Loaded, String>>,
}

struct Loaded {
    model: BertModel,
    tokenizer: Tokenizer,
    load_time: Duration,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("dir", &self.dir)
            .field("model_id", &self.model_id)
            .field("loaded", &self.state.get().is_some())
            .finish()
    }
}

impl MiniLm {
    /// Whether `dir` holds an install (the three model files).
    pub fn is_installed(dir: &Path) -> bool {
        MINILM_FILES.iter().all(|(n, _)| dir.join(n).is_file())
    }

    /// Prepares MiniLM from an install directory. Only checks that the files are there:
    /// the weights are read on the first [`Embedder::embed`] (or [`MiniLm::preload`]).
    pub fn load(dir: &Path) -> Result<MiniLm, EmbedError> {
        for (n, _) in MINILM_FILES {
            let p = dir.join(n);
            if !p.is_file() {
                return Err(EmbedError::invalid(
                    &p,
                    "missing: MiniLM is not installed here (run `gitloom model install`)",
                ));
            }
        }
        let model_id = std::fs::read(dir.join(MANIFEST))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v.get("model_id")?.as_str().map(str::to_string))
            .unwrap_or_else(|| MINILM_MODEL_ID.to_string());
        Ok(MiniLm {
            dir: dir.to_path_buf(),
            model_id,
            state: OnceLock::new(),
        })
    }

    /// The install directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Loads the weights now (if not yet done) and returns how long loading took.
    pub fn preload(&self) -> Result<Duration, EmbedError> {
        Ok(self.loaded()?.load_time)
    }

    fn loaded(&self) -> Result<&Loaded, EmbedError> {
        self.state
            .get_or_init(|| load_model(&self.dir))
            .as_ref()
            .map_err(|m| EmbedError::model(&self.model_id, m))
    }

    /// The tokenizer (loads the model if needed).
    pub(crate) fn tokenizer(&self) -> Result<&Tokenizer, EmbedError> {
        Ok(&self.loaded()?.tokenizer)
    }

    /// Embeds sequences of token ids (special tokens already in place), one forward pass
    /// per batch of `batch` sequences; mean-pooled, L2-normalised.
    pub(crate) fn embed_ids(
        &self,
        seqs: &[Vec<u32>],
        batch: usize,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let l = self.loaded()?;
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| seqs[i].len());
        let mut out = vec![Vec::new(); seqs.len()];
        for group in order.chunks(batch.max(1)) {
            let refs: Vec<&[u32]> = group.iter().map(|&i| seqs[i].as_slice()).collect();
            let vecs =
                forward(&l.model, &refs).map_err(|e| EmbedError::model(&self.model_id, e))?;
            for (&i, v) in group.iter().zip(vecs) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

fn load_model(dir: &Path) -> Result<Loaded, String> {
    let start = Instant::now();
    let cfg_path = dir.join("config.json");
    let cfg_bytes = std::fs::read(&cfg_path).map_err(|e| format!("{}: {e}", cfg_path.display()))?;
    let config: Config =
        serde_json::from_slice(&cfg_bytes).map_err(|e| format!("{}: {e}", cfg_path.display()))?;
    let tok_path = dir.join("tokenizer.json");
    let mut tokenizer =
        Tokenizer::from_file(&tok_path).map_err(|e| format!("{}: {e}", tok_path.display()))?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..TruncationParams::default()
        }))
        .map_err(|e| format!("{}: truncation: {e}", tok_path.display()))?;
    tokenizer.with_padding(None);
    let w_path = dir.join("model.safetensors");
    let weights = std::fs::read(&w_path).map_err(|e| format!("{}: {e}", w_path.display()))?;
    let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
        .map_err(|e| format!("{}: {e}", w_path.display()))?;
    let model = BertModel::load(vb, &config).map_err(|e| format!("{}: {e}", w_path.display()))?;
    Ok(Loaded {
        model,
        tokenizer,
        load_time: start.elapsed(),
    })
}

/// One forward pass over sequences padded to the longest; mean pooling over real tokens.
fn forward(model: &BertModel, seqs: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
    let b = seqs.len();
    let len = seqs.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
    let mut ids = vec![0u32; b * len];
    let mut mask = vec![0u32; b * len];
    for (r, s) in seqs.iter().enumerate() {
        ids[r * len..r * len + s.len()].copy_from_slice(s);
        mask[r * len..r * len + s.len()].fill(1);
    }
    let dev = Device::Cpu;
    let ids = Tensor::from_vec(ids, (b, len), &dev)?;
    let mask = Tensor::from_vec(mask, (b, len), &dev)?;
    let types = ids.zeros_like()?;
    let hidden = model.forward(&ids, &types, Some(&mask))?; // (b, len, dim)
    let maskf = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (b, len, 1)
    let summed = hidden.broadcast_mul(&maskf)?.sum(1)?; // (b, dim)
    let counts = maskf.sum(1)?.clamp(1e-9, f64::MAX)?; // (b, 1)
    let pooled = summed.broadcast_div(&counts)?;
    let mut rows = pooled.to_vec2::<f32>()?;
    for r in &mut rows {
        normalise(r);
    }
    Ok(rows)
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let l = self.loaded()?;
        let encodings = l
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::model(&self.model_id, format!("tokenize: {e}")))?;
        let seqs: Vec<Vec<u32>> = encodings.iter().map(|e| e.get_ids().to_vec()).collect();
        self.embed_ids(&seqs, BATCH)
    }

    fn max_tokens(&self) -> usize {
        MAX_TOKENS
    }
}
