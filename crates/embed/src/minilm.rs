//! all-MiniLM-L6-v2 run locally by the encoder in [`crate::bert`], mean pooling over
//! the text's tokens and L2 normalisation, as sentence-transformers does for this model.
//!
//! The weights are memory-mapped, not read: a process that embeds one query touches
//! the rows of its tokens in the embedding table and the layers, not the whole 90 MB.
//! They load lazily, once per process, on the first `embed` call. Bulk embedding sorts
//! texts by token count, cuts them into batches of about [`BATCH_TOKENS`] tokens and runs
//! the batches on every core (each thread with its own scratch buffers).
//!
//! Texts to be stored (cues, bodies) run their linear layers in 8-bit integers where
//! the CPU has AVX-512 VNNI ([`Precision::fastest`]; the model id then ends in
//! `/int8`), in f32 elsewhere; a query runs in f32 ([`Embedder::embed_query`]): one
//! short text, where quantising the weights (~12 ms once per process) would cost a
//! one-shot `retrieve` more than it saves.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{BertWeights, Precision, Workspace};
use crate::install::{MANIFEST, MINILM_FILES, MINILM_MODEL_ID};
use crate::{EmbedError, Embedder};

/// The model's window (sentence-transformers' `max_seq_length`), special tokens included.
const MAX_TOKENS: usize = 256;
const DIM: usize = 384;
/// Tokens per forward pass at most: texts of similar length are grouped until their
/// tokens reach this (large enough for the matrix products to run at full speed, small
/// enough for a batch's activations to stay in cache).
pub(crate) const BATCH_TOKENS: usize = 4096;
/// And at least, when a job is cut finer to keep every core busy (batches this small
/// cost no more CPU per text than full ones: BENCHMARKS.md, "Session 36").
const MIN_BATCH_TOKENS: usize = 256;
/// Batches per thread a job is cut into, at least, so that the threads, each taking
/// the next batch, finish close together.
const BATCHES_PER_THREAD: usize = 4;
/// Below this many tokens a job runs on the calling thread (a query, a few cues); a
/// token costs ~21 MFLOP, so 512 of them are ~0.1 s of one core, far more than
/// starting a thread.
const PARALLEL_MIN_TOKENS: usize = 512;

/// all-MiniLM-L6-v2 (384 dimensions, 256-token window), loaded lazily from an install
/// directory (see [`crate::install`]).
pub struct MiniLm {
    dir: PathBuf,
    /// The install's id (its manifest's), naming the f32 network.
    base_id: String,
    /// The id of the vectors [`Embedder::embed`] gives: `base_id`, with `/int8` for
    /// [`Precision::Int8`].
    model_id: String,
    precision: Precision,
    /// Threads for a large job; 0: every core.
    threads: usize,
    state: OnceLock<Result<Loaded, String>>,
}

struct Loaded {
    weights: BertWeights,
    tokenizer: Tokenizer,
    load_time: Duration,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("dir", &self.dir)
            .field("model_id", &self.model_id)
            .field("precision", &self.precision)
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
    /// the weights are mapped on the first [`Embedder::embed`] (or [`MiniLm::preload`]).
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
            base_id: model_id.clone(),
            model_id,
            precision: Precision::F32,
            threads: 0,
            state: OnceLock::new(),
        }
        .with_precision(Precision::fastest()))
    }

    /// Embeds stored texts at `precision` ([`Precision::fastest`] unless said), and
    /// names the vectors after it.
    pub fn with_precision(mut self, precision: Precision) -> MiniLm {
        self.precision = precision;
        self.model_id = self.id_at(precision);
        self
    }

    /// Runs large jobs on at most `threads` threads (0: one per core, the default).
    pub fn with_threads(mut self, threads: usize) -> MiniLm {
        self.threads = threads;
        self
    }

    /// The id of this install's vectors at `precision` (whatever this one embeds at).
    pub(crate) fn id_at(&self, precision: Precision) -> String {
        match precision {
            Precision::F32 => self.base_id.clone(),
            Precision::Int8 => format!("{}/int8", self.base_id),
        }
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

    /// Whether the weights are read in place from the mapped file (true but on a
    /// big-endian machine or for a file whose data is not 4-byte aligned, where they
    /// are copied once). Loads the model if needed.
    pub fn weights_mapped(&self) -> Result<bool, EmbedError> {
        Ok(self.loaded()?.weights.is_mapped())
    }

    /// How many tokens the model sees of `texts` (special tokens included, each text
    /// truncated to the window).
    pub fn count_tokens(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        Ok(self.tokenize(texts)?.iter().map(Vec::len).sum())
    }

    /// The tokenizer (loads the model if needed).
    pub(crate) fn tokenizer(&self) -> Result<&Tokenizer, EmbedError> {
        Ok(&self.loaded()?.tokenizer)
    }

    /// Embeds sequences of token ids (special tokens already in place) at `precision`:
    /// mean-pooled, L2-normalised, in input order. Sequences are sorted by length and
    /// grouped into batches of about `batch_tokens` tokens; a large job runs on every core.
    pub(crate) fn embed_ids(
        &self,
        seqs: &[Vec<u32>],
        batch_tokens: usize,
        precision: Precision,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let l = self.loaded()?;
        let total: usize = seqs.iter().map(Vec::len).sum();
        let cores = self.thread_count();
        let threads_wanted = if total < PARALLEL_MIN_TOKENS {
            1
        } else {
            cores
        };
        let batches = length_batches(seqs, batch_size(total, threads_wanted, batch_tokens));
        let threads = threads_wanted.min(batches.len());
        let next = AtomicUsize::new(0);
        // Each worker takes the next batch (longest first, so the cores finish together).
        let work = || -> Part {
            let mut ws = Workspace::default();
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(batch) = batches.get(i) else {
                    return Ok(done);
                };
                let refs: Vec<&[u32]> = batch.iter().map(|&j| seqs[j].as_slice()).collect();
                let vecs = l.weights.embed_batch(&refs, precision, &mut ws)?;
                done.extend(batch.iter().copied().zip(vecs));
            }
        };
        let parts: Vec<Part> = if threads <= 1 {
            vec![work()]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err("an embedding thread panicked".into()))
                    })
                    .collect()
            })
        };
        let mut out = vec![Vec::new(); seqs.len()];
        for part in parts {
            for (i, v) in part.map_err(|e| EmbedError::model(&self.model_id, e))? {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn thread_count(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// Token ids of `texts` (special tokens added, truncated to the window), on every
    /// core for a large job.
    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let tok = self.tokenizer()?;
        let one = |t: &&str| {
            tok.encode_fast(*t, true)
                .map(|e| e.get_ids().to_vec())
                .map_err(|e| format!("tokenize: {e}"))
        };
        let threads = self.thread_count();
        let parts: Vec<Result<Vec<Vec<u32>>, String>> = if texts.len() < 512 || threads < 2 {
            vec![texts.iter().map(one).collect()]
        } else {
            let per = texts.len().div_ceil(threads);
            std::thread::scope(|s| {
                let handles: Vec<_> = texts
                    .chunks(per)
                    .map(|part| s.spawn(move || part.iter().map(one).collect()))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err("a tokenizer thread panicked".into()))
                    })
                    .collect()
            })
        };
        let mut out = Vec::with_capacity(texts.len());
        for p in parts {
            out.extend(p.map_err(|e| EmbedError::model(&self.model_id, e))?);
        }
        Ok(out)
    }
}

/// One worker's vectors, by input index.
type Part = Result<Vec<(usize, Vec<f32>)>, String>;

/// Indexes of `seqs` grouped into batches of similar length holding about
/// `batch_tokens` tokens each (at least one sequence), longest batch first.
/// The tokens per batch for a job of `total` tokens on `threads` threads: at most
/// `max`, and small enough to give every thread [`BATCHES_PER_THREAD`] batches (a job
/// of three full batches on two cores left one core idle for a third of it), but not
/// below [`MIN_BATCH_TOKENS`].
fn batch_size(total: usize, threads: usize, max: usize) -> usize {
    if threads <= 1 {
        return max;
    }
    max.min(
        total
            .div_ceil(threads * BATCHES_PER_THREAD)
            .max(MIN_BATCH_TOKENS),
    )
}

fn length_batches(seqs: &[Vec<u32>], batch_tokens: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..seqs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(seqs[i].len()));
    let mut batches = Vec::new();
    let mut cur = Vec::new();
    let mut tokens = 0;
    for i in order {
        let n = seqs[i].len();
        if !cur.is_empty() && tokens + n > batch_tokens.max(1) {
            batches.push(std::mem::take(&mut cur));
            tokens = 0;
        }
        cur.push(i);
        tokens += n;
    }
    if !cur.is_empty() {
        batches.push(cur);
    }
    batches
}

fn load_model(dir: &Path) -> Result<Loaded, String> {
    let start = Instant::now();
    let tok_path = dir.join("tokenizer.json");
    let mut tokenizer = crate::wordpiece::open(&tok_path)?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..TruncationParams::default()
        }))
        .map_err(|e| format!("{}: truncation: {e}", tok_path.display()))?;
    tokenizer.with_padding(None);
    let weights = BertWeights::open(&dir.join("config.json"), &dir.join("model.safetensors"))
        .map_err(|e| e.to_string())?;
    if weights.config.hidden_size != DIM {
        return Err(format!(
            "{}: hidden_size {} (MiniLM-L6 has {DIM})",
            dir.join("config.json").display(),
            weights.config.hidden_size
        ));
    }
    Ok(Loaded {
        weights,
        tokenizer,
        load_time: start.elapsed(),
    })
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
        let seqs = self.tokenize(texts)?;
        self.embed_ids(&seqs, BATCH_TOKENS, self.precision)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let seqs = self.tokenize(&[text])?;
        let mut v = self.embed_ids(&seqs, BATCH_TOKENS, Precision::F32)?;
        v.pop()
            .ok_or_else(|| EmbedError::model(&self.model_id, "no vector for the query"))
    }

    fn max_tokens(&self) -> usize {
        MAX_TOKENS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_cut_so_every_core_gets_work() {
        // One thread: the largest batches.
        assert_eq!(batch_size(100_000, 1, BATCH_TOKENS), BATCH_TOKENS);
        // Three full batches' worth on two cores: eight batches, not three.
        assert_eq!(batch_size(3 * 4096, 2, BATCH_TOKENS), 1536);
        // A large job: full batches, already many per core.
        assert_eq!(batch_size(1_000_000, 2, BATCH_TOKENS), BATCH_TOKENS);
        // A small one: never below the smallest batch.
        assert_eq!(batch_size(600, 2, BATCH_TOKENS), MIN_BATCH_TOKENS);
        let seqs: Vec<Vec<u32>> = (0..10).map(|i| vec![1; 100 + i]).collect();
        let batches = length_batches(&seqs, batch_size(1045, 2, BATCH_TOKENS));
        assert_eq!(batches.len(), 5, "{batches:?}");
        // Longest first, every text once.
        assert_eq!(batches[0][0], 9);
        let mut all: Vec<usize> = batches.concat();
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
    }
}
