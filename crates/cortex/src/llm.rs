//! A client for any OpenAI-compatible chat-completions endpoint:
//! `POST {url}/v1/chat/completions` with `response_format: json_schema`.
//!
//! Blocking (ureq on rustls) so a server can call it from a blocking thread. Retries
//! 429, 5xx, timeouts and connection failures with exponential backoff (honouring
//! `Retry-After` in seconds); output that is not JSON, or not what the caller's
//! check accepts, is retried too and then reported — never returned as if valid.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::CortexError;

/// How to reach a model.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// Base URL (`https://api.openai.com`, `http://127.0.0.1:8080`; a trailing `/v1` is fine).
    pub url: String,
    pub model: String,
    /// Environment variable holding the API key (sent as a Bearer token); unset → none.
    pub api_key_env: Option<String>,
    /// One request, connection to last byte.
    pub timeout: Duration,
    /// Retries after the first attempt, for transport failures and for bad output.
    pub max_retries: u32,
    /// First backoff, doubled per attempt, capped at 30 s.
    pub backoff: Duration,
}

impl ChatConfig {
    /// Defaults: 120 s timeout, 3 retries from 1 s.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> ChatConfig {
        ChatConfig {
            url: url.into(),
            model: model.into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            timeout: Duration::from_secs(120),
            max_retries: 3,
            backoff: Duration::from_secs(1),
        }
    }
}

/// One chat message.
#[derive(Debug, Clone)]
pub struct ChatMessage {
    pub role: &'static str,
    pub content: String,
}

impl ChatMessage {
    pub fn system(c: impl Into<String>) -> Self {
        ChatMessage {
            role: "system",
            content: c.into(),
        }
    }
    pub fn user(c: impl Into<String>) -> Self {
        ChatMessage {
            role: "user",
            content: c.into(),
        }
    }
}

/// The client. Cheap to share across threads.
pub struct ChatClient {
    config: ChatConfig,
    endpoint: String,
    agent: ureq::Agent,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("endpoint", &self.endpoint)
            .field("model", &self.config.model)
            .finish()
    }
}

enum Failure {
    Retry(String, Option<Duration>),
    Fatal(String),
}

impl ChatClient {
    pub fn new(config: ChatConfig) -> Result<ChatClient, CortexError> {
        let base = config.url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(CortexError::Llm {
                url: config.url.clone(),
                message: "not an http(s) URL".into(),
            });
        }
        let endpoint = if base.ends_with("/v1") {
            format!("{base}/chat/completions")
        } else {
            format!("{base}/v1/chat/completions")
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(ChatClient {
            config,
            endpoint,
            agent,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    fn err(&self, message: String) -> CortexError {
        CortexError::Llm {
            url: self.endpoint.clone(),
            message,
        }
    }

    fn wait(&self, attempt: u32, retry_after: Option<Duration>) {
        let backoff = self
            .config
            .backoff
            .saturating_mul(1 << attempt.min(16))
            .min(Duration::from_secs(30));
        std::thread::sleep(retry_after.map_or(backoff, |r| r.min(Duration::from_secs(60))));
    }

    /// Sends `messages` and returns the reply's text, retrying transport failures.
    /// With `schema` (`(name, JSON schema)`), asks for structured output.
    pub fn complete(
        &self,
        messages: &[ChatMessage],
        schema: Option<(&str, &Value)>,
    ) -> Result<String, CortexError> {
        let mut body = json!({
            "model": self.config.model,
            "temperature": 0,
            "messages": messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect::<Vec<_>>(),
        });
        if let Some((name, schema)) = schema {
            body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}});
        }
        let body = body.to_string();
        let key = self
            .config
            .api_key_env
            .as_deref()
            .and_then(|n| std::env::var(n).ok())
            .filter(|k| !k.is_empty());
        let mut attempt = 0;
        loop {
            match self.request(&body, key.as_deref()) {
                Ok(t) => return Ok(t),
                Err(Failure::Fatal(m)) => return Err(self.err(m)),
                Err(Failure::Retry(m, after)) => {
                    if attempt >= self.config.max_retries {
                        return Err(
                            self.err(format!("{m} (gave up after {} attempts)", attempt + 1))
                        );
                    }
                    tracing::warn!(endpoint = %self.endpoint, attempt, "chat request failed, retrying: {m}");
                    self.wait(attempt, after);
                    attempt += 1;
                }
            }
        }
    }

    /// [`ChatClient::complete`] with structured output parsed into `T` and checked by
    /// `check`; output that fails either is asked for again, up to `max_retries`
    /// times, then reported as [`CortexError::BadOutput`].
    pub fn complete_json<T: DeserializeOwned>(
        &self,
        messages: &[ChatMessage],
        name: &str,
        schema: &Value,
        check: impl Fn(&T) -> Result<(), String>,
    ) -> Result<T, CortexError> {
        let mut last = String::new();
        for attempt in 0..=self.config.max_retries {
            let text = self.complete(messages, Some((name, schema)))?;
            let parsed = serde_json::from_str::<T>(strip_fence(&text))
                .map_err(|e| format!("not the JSON asked for: {e}"));
            match parsed.and_then(|v| check(&v).map(|()| v)) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    tracing::warn!(endpoint = %self.endpoint, attempt, "model output rejected: {e}");
                    last = e;
                }
            }
        }
        Err(CortexError::BadOutput {
            what: name.to_owned(),
            message: format!("{last} (after {} attempts)", self.config.max_retries + 1),
        })
    }

    fn request(&self, body: &str, key: Option<&str>) -> Result<String, Failure> {
        let mut req = self
            .agent
            .post(&self.endpoint)
            .header("Content-Type", "application/json");
        if let Some(k) = key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let mut resp = req.send(body).map_err(|e| match e {
            ureq::Error::Timeout(_)
            | ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Protocol(_)
            | ureq::Error::BodyStalled => Failure::Retry(format!("request failed: {e}"), None),
            e => Failure::Fatal(format!("request failed: {e}")),
        })?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = resp
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::Timeout(_) | ureq::Error::Io(_) | ureq::Error::BodyStalled => {
                    Failure::Retry(format!("reading the response failed: {e}"), None)
                }
                e => Failure::Fatal(format!("reading the response failed: {e}")),
            })?;
        if status == 429 || status >= 500 {
            return Err(Failure::Retry(
                format!("HTTP {status}: {}", snippet(&text)),
                retry_after,
            ));
        }
        if status >= 400 {
            return Err(Failure::Fatal(format!("HTTP {status}: {}", snippet(&text))));
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            Failure::Retry(
                format!("response is not JSON ({e}): {}", snippet(&text)),
                None,
            )
        })?;
        let choice = &v["choices"][0]["message"];
        if let Some(refusal) = choice["refusal"].as_str().filter(|r| !r.is_empty()) {
            return Err(Failure::Fatal(format!(
                "the model refused: {}",
                snippet(refusal)
            )));
        }
        choice["content"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                Failure::Retry(
                    format!("no choices[0].message.content in {}", snippet(&text)),
                    None,
                )
            })
    }
}

fn snippet(s: &str) -> String {
    let s: String = s.chars().take(200).collect();
    s.replace('\n', " ")
}

/// Some servers wrap JSON in a Markdown fence even in JSON mode.
fn strip_fence(s: &str) -> &str {
    let t = s.trim();
    t.strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|r| r.strip_suffix("```"))
        .map_or(t, str::trim)
}
