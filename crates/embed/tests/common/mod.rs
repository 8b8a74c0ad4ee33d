//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use gitloom_embed::{EmbedError, Embedder};

/// A deterministic embedder that counts how often it is called: the collaborator of
/// `embed_cached` under test (vectors derived from the text's bytes).
pub struct Counting {
    pub dim: usize,
    pub calls: AtomicUsize,
    pub texts: AtomicUsize,
}

impl Counting {
    pub fn new(dim: usize) -> Counting {
        Counting {
            dim,
            calls: AtomicUsize::new(0),
            texts: AtomicUsize::new(0),
        }
    }
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    pub fn texts(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        "counting@test/8"
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| vector_of(t, self.dim)).collect())
    }
    fn max_tokens(&self) -> usize {
        512
    }
}

/// The vector `Counting` gives a text.
pub fn vector_of(text: &str, dim: usize) -> Vec<f32> {
    let h = blake3::hash(text.as_bytes());
    let b = h.as_bytes();
    let mut v: Vec<f32> = (0..dim)
        .map(|i| b[i % 32] as f32 - 127.5 + i as f32)
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// A random unit vector (Gaussian components).
pub fn random_unit(rng: &mut fastrand::Rng, dim: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            let (u1, u2) = (rng.f32().max(1e-12), rng.f32());
            (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}
