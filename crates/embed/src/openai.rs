//! A client for any OpenAI-compatible embeddings endpoint:
//! `POST {url}/v1/embeddings {"model": …, "input": [...]}` →
//! `{"data": [{"embedding": [...], "index": i}, …]}`.
//!
//! Batches inputs, retries 429, 5xx, timeouts and connection failures with exponential
//! backoff (honouring a `Retry-After` in seconds), and rejects vectors of the wrong
//! dimension (they are an error, never stored). Blocking, rustls, no OpenSSL.

use std::time::Duration;

use crate::embedder::normalise;
use crate::{EmbedError, Embedder};

/// How to reach an endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL, e.g. `https://api.openai.com` (a trailing `/v1` is accepted too).
    pub url: String,
    /// Model name sent in the request, e.g. `text-embedding-3-small`.
    pub model: String,
    /// Dimension every returned vector must have.
    pub dim: usize,
    /// Name of the environment variable holding the API key (sent as a Bearer token);
    /// `None`, or an unset variable, sends no `Authorization` header.
    pub api_key_env: Option<String>,
    /// Inputs per request.
    pub batch_size: usize,
    /// Timeout of one request, connection to last byte.
    pub timeout: Duration,
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    /// First backoff; doubled after each failed attempt, capped at 30 s.
    pub backoff: Duration,
}

impl OpenAiConfig {
    /// Defaults: batches of 64, 30 s timeout, 4 retries from 500 ms.
    pub fn new(url: impl Into<String>, model: impl Into<String>, dim: usize) -> OpenAiConfig {
        OpenAiConfig {
            url: url.into(),
            model: model.into(),
            dim,
            api_key_env: None,
            batch_size: 64,
            timeout: Duration::from_secs(30),
            max_retries: 4,
            backoff: Duration::from_millis(500),
        }
    }
}

/// Embeds through an OpenAI-compatible endpoint. Model id `openai:{model}@{host}/{dim}`.
pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    endpoint: String,
    model_id: String,
    agent: ureq::Agent,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("endpoint", &self.endpoint)
            .field("model_id", &self.model_id)
            .finish()
    }
}

enum Failure {
    /// Worth another attempt (429, 5xx, timeout, connection trouble).
    Retry(String, Option<Duration>),
    Fatal(EmbedError),
}

impl OpenAiEmbedder {
    /// A client for `config` (no request is made until [`Embedder::embed`]).
    pub fn new(config: OpenAiConfig) -> Result<OpenAiEmbedder, EmbedError> {
        let base = config.url.trim_end_matches('/');
        let endpoint = if base.ends_with("/v1") {
            format!("{base}/embeddings")
        } else {
            format!("{base}/v1/embeddings")
        };
        let host = host_of(base).ok_or_else(|| EmbedError::Http {
            url: config.url.clone(),
            message: "not an http(s) URL".into(),
        })?;
        if config.dim == 0 || config.batch_size == 0 {
            return Err(EmbedError::Http {
                url: config.url.clone(),
                message: "dimension and batch size must be positive".into(),
            });
        }
        let model_id = format!("openai:{}@{host}/{}", config.model, config.dim);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(OpenAiEmbedder {
            config,
            endpoint,
            model_id,
            agent,
        })
    }

    /// The full URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = serde_json::json!({ "model": self.config.model, "input": texts }).to_string();
        let key = self
            .config
            .api_key_env
            .as_deref()
            .and_then(|n| std::env::var(n).ok())
            .filter(|k| !k.is_empty());
        let mut attempt = 0u32;
        loop {
            let failure = match self.request(&body, key.as_deref(), texts.len()) {
                Ok(v) => return Ok(v),
                Err(f) => f,
            };
            match failure {
                Failure::Fatal(e) => return Err(e),
                Failure::Retry(message, retry_after) => {
                    if attempt >= self.config.max_retries {
                        return Err(self.http_error(format!(
                            "{message} (gave up after {} attempts)",
                            attempt + 1
                        )));
                    }
                    let backoff = self
                        .config
                        .backoff
                        .saturating_mul(1 << attempt.min(16))
                        .min(Duration::from_secs(30));
                    let wait = retry_after.map_or(backoff, |r| r.min(Duration::from_secs(60)));
                    tracing::warn!(endpoint = %self.endpoint, attempt, ?wait, "embedding request failed, retrying: {message}");
                    std::thread::sleep(wait);
                    attempt += 1;
                }
            }
        }
    }

    fn http_error(&self, message: String) -> EmbedError {
        EmbedError::Http {
            url: self.endpoint.clone(),
            message,
        }
    }

    fn request(&self, body: &str, key: Option<&str>, n: usize) -> Result<Vec<Vec<f32>>, Failure> {
        let mut req = self
            .agent
            .post(&self.endpoint)
            .header("Content-Type", "application/json");
        if let Some(k) = key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let mut resp = match req.send(body) {
            Ok(r) => r,
            Err(e) => {
                return Err(match e {
                    ureq::Error::Timeout(_)
                    | ureq::Error::Io(_)
                    | ureq::Error::ConnectionFailed
                    | ureq::Error::HostNotFound
                    | ureq::Error::Protocol(_)
                    | ureq::Error::BodyStalled => {
                        Failure::Retry(format!("request failed: {e}"), None)
                    }
                    e => Failure::Fatal(self.http_error(format!("request failed: {e}"))),
                });
            }
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = match resp
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_string()
        {
            Ok(t) => t,
            Err(e) => {
                return Err(match e {
                    ureq::Error::Timeout(_) | ureq::Error::Io(_) | ureq::Error::BodyStalled => {
                        Failure::Retry(format!("reading the response failed: {e}"), None)
                    }
                    e => {
                        Failure::Fatal(self.http_error(format!("reading the response failed: {e}")))
                    }
                });
            }
        };
        if status == 429 || (500..=599).contains(&status) {
            return Err(Failure::Retry(
                format!("HTTP {status}: {}", snippet(&text)),
                retry_after,
            ));
        }
        if !(200..=299).contains(&status) {
            return Err(Failure::Fatal(
                self.http_error(format!("HTTP {status}: {}", snippet(&text))),
            ));
        }
        self.parse(&text, n).map_err(Failure::Fatal)
    }

    fn parse(&self, text: &str, n: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        #[derive(serde::Deserialize)]
        struct Item {
            embedding: Vec<f32>,
            index: Option<usize>,
        }
        #[derive(serde::Deserialize)]
        struct Reply {
            data: Vec<Item>,
        }
        let reply: Reply = serde_json::from_str(text).map_err(|e| {
            self.http_error(format!("unexpected response ({e}): {}", snippet(text)))
        })?;
        if reply.data.len() != n {
            return Err(self.http_error(format!(
                "asked for {n} embeddings, got {}",
                reply.data.len()
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
        for (pos, item) in reply.data.into_iter().enumerate() {
            let i = item.index.unwrap_or(pos);
            if item.embedding.len() != self.config.dim {
                return Err(EmbedError::Dimension {
                    model: self.model_id.clone(),
                    expected: self.config.dim,
                    actual: item.embedding.len(),
                });
            }
            if item.embedding.iter().any(|x| !x.is_finite()) {
                return Err(self.http_error("a vector holds NaN or infinity".into()));
            }
            let slot = out
                .get_mut(i)
                .ok_or_else(|| self.http_error(format!("index {i} out of range")))?;
            if slot.replace(item.embedding).is_some() {
                return Err(self.http_error(format!("index {i} returned twice")));
            }
        }
        out.into_iter()
            .map(|v| {
                let mut v = v.ok_or_else(|| self.http_error("an index is missing".into()))?;
                normalise(&mut v);
                Ok(v)
            })
            .collect()
    }
}

fn host_of(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split('/').next()?;
    let host = authority.rsplit('@').next()?;
    (!host.is_empty()).then(|| host.to_string())
}

fn snippet(text: &str) -> String {
    let t: String = text.chars().take(200).collect();
    t.replace('\n', " ")
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.config.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config.batch_size) {
            out.extend(self.embed_batch(batch)?);
        }
        Ok(out)
    }

    fn max_tokens(&self) -> usize {
        8191
    }
}
