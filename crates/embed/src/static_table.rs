//! A model2vec-style static embedding table distilled from MiniLM.
//!
//! Distillation embeds every vocabulary token as a one-token input (`[CLS] t [SEP]`)
//! with MiniLM, subtracts the mean token vector (the direction all tokens share, which
//! otherwise packs every text into one narrow cosine band), L2-normalises it and scales
//! it by a smooth-inverse-frequency weight
//! `a / (a + p(t))` with `a = 1e-4` and a Zipf estimate `p(t) ∝ 1/rank(t)`, taking the
//! vocabulary id as the rank (the BERT vocabulary is roughly frequency-ordered), as
//! model2vec does; no PCA. Special and `[unused…]` tokens get zero rows. Embedding a
//! text is then a tokenizer pass and a sum of rows, L2-normalised: hundreds of
//! thousands of short texts per second, at a quality well below MiniLM.
//!
//! Files in the table directory: `table.bin` (magic `GLSTATIC1\n`, u32 LE dimension,
//! u32 LE rows, then rows × dimension f32 LE), `tokenizer.json`, `manifest.json`.

use std::path::{Path, PathBuf};

use tokenizers::Tokenizer;

use crate::embedder::normalise;
use crate::{EmbedError, Embedder, MiniLm};

const MAGIC: &[u8; 10] = b"GLSTATIC1\n";
const TABLE: &str = "table.bin";
const TOKENIZER: &str = "tokenizer.json";
const MANIFEST: &str = "manifest.json";
/// SIF coefficient (model2vec's default).
const SIF_A: f64 = 1e-4;
/// One-token inputs per call of the encoder while distilling (between progress reports;
/// each call is cut into batches and spread over the cores).
const DISTILL_GROUP: usize = 8192;

/// A static embedding table: one vector per vocabulary token, mean-pooled per text.
pub struct StaticTable {
    model_id: String,
    dim: usize,
    rows: usize,
    table: Vec<f32>,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for StaticTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticTable")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("rows", &self.rows)
            .finish()
    }
}

impl StaticTable {
    /// Distils the whole vocabulary of `minilm` into `out_dir` and returns the table.
    pub fn distill(minilm: &MiniLm, out_dir: &Path) -> Result<StaticTable, EmbedError> {
        Self::distill_with(minilm, out_dir, None, None)
    }

    /// [`StaticTable::distill`] with a cap on how many vocabulary ids are embedded (the
    /// rest get zero rows: for tests) and a progress callback `(done, total)`.
    pub fn distill_with(
        minilm: &MiniLm,
        out_dir: &Path,
        limit: Option<usize>,
        progress: Option<&dyn Fn(usize, usize)>,
    ) -> Result<StaticTable, EmbedError> {
        let tokenizer = minilm.tokenizer()?;
        let rows = tokenizer.get_vocab_size(true);
        let dim = minilm.dim();
        // Distilled from the f32 network (below), and named after it.
        let model = &minilm.id_at(crate::Precision::F32);
        let special = |name: &str| {
            tokenizer
                .token_to_id(name)
                .ok_or_else(|| EmbedError::model(model, format!("tokenizer has no {name}")))
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        let skip = |tok: &str| tok.starts_with('[') && tok.ends_with(']');
        let ids: Vec<u32> = (0..rows as u32)
            .take(limit.unwrap_or(rows))
            .filter(|&id| tokenizer.id_to_token(id).is_some_and(|t| !skip(&t)))
            .collect();
        let harmonic: f64 = (1..=rows).map(|r| 1.0 / r as f64).sum();
        let mut table = vec![0f32; rows * dim];
        let mut done = 0;
        for group in ids.chunks(DISTILL_GROUP) {
            let seqs: Vec<Vec<u32>> = group.iter().map(|&t| vec![cls, t, sep]).collect();
            let vecs =
                minilm.embed_ids(&seqs, crate::minilm::BATCH_TOKENS, crate::Precision::F32)?;
            for (&t, v) in group.iter().zip(vecs) {
                table[t as usize * dim..(t as usize + 1) * dim].copy_from_slice(&v);
            }
            done += group.len();
            if let Some(f) = progress {
                f(done, ids.len());
            }
        }
        // Remove the direction every token shares (it packs all texts into one narrow
        // cosine band), re-normalise, then weight by SIF.
        let mut mean = vec![0f32; dim];
        for &t in &ids {
            for (m, x) in mean
                .iter_mut()
                .zip(&table[t as usize * dim..(t as usize + 1) * dim])
            {
                *m += x / ids.len() as f32;
            }
        }
        for &t in &ids {
            let p = 1.0 / ((t as f64 + 1.0) * harmonic);
            let w = (SIF_A / (SIF_A + p)) as f32;
            let row = &mut table[t as usize * dim..(t as usize + 1) * dim];
            for (o, m) in row.iter_mut().zip(&mean) {
                *o -= m;
            }
            normalise(row);
            row.iter_mut().for_each(|x| *x *= w);
        }
        let model_id = format!("static-{model}");
        std::fs::create_dir_all(out_dir)
            .map_err(EmbedError::io(out_dir, "create table directory"))?;
        let mut bytes = Vec::with_capacity(MAGIC.len() + 8 + table.len() * 4);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(dim as u32).to_le_bytes());
        bytes.extend_from_slice(&(rows as u32).to_le_bytes());
        for x in &table {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        write_atomic(&out_dir.join(TABLE), &bytes)?;
        let src_tok = minilm.dir().join(TOKENIZER);
        let tok_bytes = std::fs::read(&src_tok).map_err(EmbedError::io(&src_tok, "read"))?;
        write_atomic(&out_dir.join(TOKENIZER), &tok_bytes)?;
        let manifest = serde_json::json!({
            "model_id": model_id,
            "distilled_from": model,
            "dim": dim,
            "rows": rows,
            "embedded_tokens": ids.len(),
            "weighting": format!("mean-centred, sif a={SIF_A}, zipf by vocabulary id"),
        });
        let text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
        write_atomic(&out_dir.join(MANIFEST), text.as_bytes())?;
        Self::load(out_dir)
    }

    /// Loads a table written by [`StaticTable::distill`].
    pub fn load(dir: &Path) -> Result<StaticTable, EmbedError> {
        let mpath = dir.join(MANIFEST);
        let mbytes = std::fs::read(&mpath).map_err(EmbedError::io(&mpath, "read"))?;
        let manifest: serde_json::Value = serde_json::from_slice(&mbytes)
            .map_err(|e| EmbedError::invalid(&mpath, format!("not JSON: {e}")))?;
        let model_id = manifest
            .get("model_id")
            .and_then(|v| v.as_str())
            .ok_or_else(|| EmbedError::invalid(&mpath, "no model_id"))?
            .to_string();
        let tpath = dir.join(TABLE);
        let bytes = std::fs::read(&tpath).map_err(EmbedError::io(&tpath, "read"))?;
        let bad = |m: &str| EmbedError::invalid(&tpath, m.to_string());
        let head = bytes
            .get(..MAGIC.len() + 8)
            .ok_or_else(|| bad("truncated header"))?;
        if &head[..MAGIC.len()] != MAGIC {
            return Err(bad("not a gitloom static table (bad magic)"));
        }
        let u32_at =
            |o: usize| u32::from_le_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
        let dim = u32_at(MAGIC.len()) as usize;
        let rows = u32_at(MAGIC.len() + 4) as usize;
        let body = &bytes[MAGIC.len() + 8..];
        if dim == 0 || body.len() != rows * dim * 4 {
            return Err(bad("size does not match its header"));
        }
        let table: Vec<f32> = body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let tok_path = dir.join(TOKENIZER);
        let mut tokenizer = crate::wordpiece::open(&tok_path)
            .map_err(|e| EmbedError::invalid(&tok_path, format!("tokenizer: {e}")))?;
        tokenizer
            .with_truncation(None)
            .map_err(|e| EmbedError::invalid(&tok_path, format!("tokenizer: {e}")))?;
        tokenizer.with_padding(None);
        Ok(StaticTable {
            model_id,
            dim,
            rows,
            table,
            tokenizer,
        })
    }

    /// Where the default table lives: `model_dir()/static-minilm-l6-v2`.
    pub fn default_dir() -> PathBuf {
        crate::model_dir().join("static-minilm-l6-v2")
    }

    fn embed_serial(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts
            .iter()
            .map(|t| {
                let e = self
                    .tokenizer
                    .encode_fast(*t, false)
                    .map_err(|e| EmbedError::model(&self.model_id, format!("tokenize: {e}")))?;
                Ok(self.pool(e.get_ids()))
            })
            .collect()
    }

    fn pool(&self, ids: &[u32]) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        for &id in ids {
            let id = id as usize;
            if id < self.rows {
                for (o, x) in v
                    .iter_mut()
                    .zip(&self.table[id * self.dim..(id + 1) * self.dim])
                {
                    *o += x;
                }
            }
        }
        normalise(&mut v);
        v
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), EmbedError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(EmbedError::io(&tmp, "write"))?;
    std::fs::rename(&tmp, path).map_err(EmbedError::io(path, "rename into place"))
}

impl Embedder for StaticTable {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Tokenising dominates: big batches are split across the cores, each part
        // encoded text by text (cheaper than the tokenizer's own batch path here).
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if texts.len() < 256 || threads < 2 {
            return self.embed_serial(texts);
        }
        let per = texts.len().div_ceil(threads);
        let parts: Vec<Result<Vec<Vec<f32>>, EmbedError>> = std::thread::scope(|s| {
            let handles: Vec<_> = texts
                .chunks(per)
                .map(|part| s.spawn(move || self.embed_serial(part)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(EmbedError::model(
                            &self.model_id,
                            "tokenizer thread panicked",
                        ))
                    })
                })
                .collect()
        });
        let mut out = Vec::with_capacity(texts.len());
        for p in parts {
            out.extend(p?);
        }
        Ok(out)
    }

    fn max_tokens(&self) -> usize {
        1 << 20
    }
}
