//! A client for any OpenAI-compatible chat-completions endpoint:
//! `POST {url}/v1/chat/completions` with `response_format: json_schema`.
//!
//! Blocking (ureq on rustls) so a server can call it from a blocking thread. Retries
//! 429, 5xx and connection failures with exponential backoff (honouring
//! `Retry-After` in seconds), a timeout once; output that is not JSON, or not what
//! the caller's check accepts, is retried too and then reported — never returned as
//! if valid.
//!
//! Replies are streamed (`stream: true`, server-sent events) so a caller sees a slow
//! model at work ([`ChatClient::complete_with`] reports the characters received),
//! rather than a silent request that might be dead; a server that answers with one
//! JSON body instead is read as such.

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::CortexError;

/// The default budget of one request: a 0.5B model on two CPU threads takes minutes
/// over one session (the 120 s this used to be cut every such extraction short).
pub const DEFAULT_TIMEOUT_SECS: u64 = 900;

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
    /// Retries after the first attempt, for transport failures and for bad output. A
    /// timed-out request is retried at most once: the same prompt takes as long again.
    pub max_retries: u32,
    /// First backoff, doubled per attempt, capped at 30 s.
    pub backoff: Duration,
    /// Ask for a streamed reply (server-sent events), so progress can be reported.
    pub stream: bool,
    /// Cap on the reply's tokens (`max_tokens`), so a small model that never closes
    /// its JSON ends instead of running to the timeout; `None` leaves it to the server.
    pub max_tokens: Option<u32>,
}

impl ChatConfig {
    /// Defaults: [`DEFAULT_TIMEOUT_SECS`], 3 retries from 1 s, streamed, 4,096 tokens.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> ChatConfig {
        ChatConfig {
            url: url.into(),
            model: model.into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_retries: 3,
            backoff: Duration::from_secs(1),
            stream: true,
            max_tokens: Some(4096),
        }
    }

    /// True when the endpoint is on this machine (a local model server), where one
    /// request at a time is the sensible default: a CPU-served model answers
    /// concurrent requests no faster, and queued ones only run into their timeouts.
    pub fn is_local(&self) -> bool {
        let rest = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, r)| r);
        let host = rest.split('/').next().unwrap_or_default();
        let host = if let Some(v6) = host.strip_prefix('[') {
            v6.split(']').next().unwrap_or_default()
        } else {
            host.rsplit_once(':').map_or(host, |(h, _)| h)
        };
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
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
    /// Tokens the server said it used (`usage.total_tokens`), over every reply.
    tokens: AtomicU64,
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
    /// The request ran out of time: retried at most once.
    Timeout(String),
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
            tokens: AtomicU64::new(0),
        })
    }

    /// Tokens (prompt and completion) the server reported for every reply this
    /// client has received, retried and rejected ones included: what a metered
    /// endpoint bills. Servers that report no `usage` add nothing.
    pub fn tokens_used(&self) -> u64 {
        self.tokens.load(Ordering::Relaxed)
    }

    fn count(&self, usage: &Value) {
        let total = usage["total_tokens"].as_u64().or_else(|| {
            let prompt = usage["prompt_tokens"].as_u64()?;
            Some(prompt + usage["completion_tokens"].as_u64().unwrap_or(0))
        });
        if let Some(n) = total {
            self.tokens.fetch_add(n, Ordering::Relaxed);
        }
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
        self.complete_with(messages, schema, &|_| {})
    }

    /// [`ChatClient::complete`], calling `received` with the characters of the reply
    /// received so far as a streamed reply comes in.
    pub fn complete_with(
        &self,
        messages: &[ChatMessage],
        schema: Option<(&str, &Value)>,
        received: &dyn Fn(usize),
    ) -> Result<String, CortexError> {
        self.answer(messages, schema, received).map(|a| a.text)
    }

    fn answer(
        &self,
        messages: &[ChatMessage],
        schema: Option<(&str, &Value)>,
        received: &dyn Fn(usize),
    ) -> Result<Answer, CortexError> {
        let mut body = json!({
            "model": self.config.model,
            "temperature": 0,
            "messages": messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect::<Vec<_>>(),
        });
        if let Some((name, schema)) = schema {
            body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}});
        }
        if self.config.stream {
            body["stream"] = json!(true);
            // The usage of a streamed reply comes in a last chunk, when asked for.
            body["stream_options"] = json!({"include_usage": true});
        }
        if let Some(n) = self.config.max_tokens {
            body["max_tokens"] = json!(n);
        }
        let body = body.to_string();
        let key = self
            .config
            .api_key_env
            .as_deref()
            .and_then(|n| std::env::var(n).ok())
            .filter(|k| !k.is_empty());
        let mut attempt = 0;
        let mut timeouts = 0;
        loop {
            let failure = match self.request(&body, key.as_deref(), received) {
                Ok(t) => return Ok(t),
                Err(Failure::Fatal(m)) => return Err(self.err(m)),
                Err(Failure::Timeout(m)) => {
                    timeouts += 1;
                    if timeouts > 1 {
                        return Err(self.err(format!(
                            "{m} (timed out twice; the budget is {} s per request, \
                             --llm-timeout or GITLOOM_LLM_TIMEOUT raises it)",
                            self.config.timeout.as_secs()
                        )));
                    }
                    (m, None)
                }
                Err(Failure::Retry(m, after)) => (m, after),
            };
            let (m, after) = failure;
            if attempt >= self.config.max_retries {
                return Err(self.err(format!("{m} (gave up after {} attempts)", attempt + 1)));
            }
            tracing::warn!(endpoint = %self.endpoint, attempt, "chat request failed, retrying: {m}");
            self.wait(attempt, after);
            attempt += 1;
        }
    }

    /// [`ChatClient::complete`] with structured output parsed into `T` and checked by
    /// `check`; output that fails either is asked for again, up to `max_retries`
    /// times, then reported as [`CortexError::BadOutput`]. A reply the server cut at
    /// `max_tokens` is reported at once: asked again at temperature 0 the model says
    /// the same and is cut at the same place (a small model that repeats itself did
    /// this four times per session, minutes each).
    pub fn complete_json<T: DeserializeOwned>(
        &self,
        messages: &[ChatMessage],
        name: &str,
        schema: &Value,
        check: impl Fn(&T) -> Result<(), String>,
    ) -> Result<T, CortexError> {
        self.complete_json_with(messages, name, schema, check, &|_| {})
    }

    /// [`ChatClient::complete_json`] reporting the characters received (see
    /// [`ChatClient::complete_with`]).
    pub fn complete_json_with<T: DeserializeOwned>(
        &self,
        messages: &[ChatMessage],
        name: &str,
        schema: &Value,
        check: impl Fn(&T) -> Result<(), String>,
        received: &dyn Fn(usize),
    ) -> Result<T, CortexError> {
        let mut last = String::new();
        for attempt in 0..=self.config.max_retries {
            let answer = self.answer(messages, Some((name, schema)), received)?;
            let parsed = serde_json::from_str::<T>(strip_fence(&answer.text))
                .map_err(|e| format!("not the JSON asked for: {e}"));
            match parsed.and_then(|v| check(&v).map(|()| v)) {
                Ok(v) => return Ok(v),
                Err(e) if answer.cut => {
                    return Err(CortexError::BadOutput {
                        what: name.to_owned(),
                        message: format!(
                            "{e}: the reply was cut at max_tokens ({}), not asked again \
                             (the same request is cut the same way)",
                            self.config
                                .max_tokens
                                .map_or_else(|| "the server's".to_owned(), |n| n.to_string())
                        ),
                    });
                }
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

    fn request(
        &self,
        body: &str,
        key: Option<&str>,
        received: &dyn Fn(usize),
    ) -> Result<Answer, Failure> {
        let mut req = self
            .agent
            .post(&self.endpoint)
            .header("Content-Type", "application/json");
        if let Some(k) = key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let transport = |what: &str, e: ureq::Error| match e {
            ureq::Error::Timeout(_) => Failure::Timeout(format!("{what}: {e}")),
            ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Protocol(_)
            | ureq::Error::BodyStalled => Failure::Retry(format!("{what}: {e}"), None),
            e => Failure::Fatal(format!("{what}: {e}")),
        };
        let mut resp = req.send(body).map_err(|e| transport("request failed", e))?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let streamed = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if streamed && status < 400 {
            let reader = resp.body_mut().with_config().limit(64 << 20).reader();
            return read_events(BufReader::new(reader), received, &|u| self.count(u)).map_err(
                |e| match e {
                    Streamed::Transport(e) => transport("reading the streamed response failed", e),
                    Streamed::Bad(m) => Failure::Retry(m, None),
                    Streamed::Refused(m) => {
                        Failure::Fatal(format!("the model refused: {}", snippet(&m)))
                    }
                },
            );
        }
        let text = resp
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|e| transport("reading the response failed", e))?;
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
        self.count(&v["usage"]);
        let choice = &v["choices"][0]["message"];
        if let Some(refusal) = choice["refusal"].as_str().filter(|r| !r.is_empty()) {
            return Err(Failure::Fatal(format!(
                "the model refused: {}",
                snippet(refusal)
            )));
        }
        let content = choice["content"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                Failure::Retry(
                    format!("no choices[0].message.content in {}", snippet(&text)),
                    None,
                )
            })?;
        received(content.chars().count());
        Ok(Answer {
            text: content,
            cut: v["choices"][0]["finish_reason"] == "length",
        })
    }
}

/// A reply's text, and whether the server cut it at `max_tokens`
/// (`finish_reason: "length"`).
struct Answer {
    text: String,
    cut: bool,
}

enum Streamed {
    Transport(ureq::Error),
    Bad(String),
    Refused(String),
}

/// Reads a chat-completions event stream (`data: {chunk}` lines, `data: [DONE]` at
/// the end) into the reply's text, reporting its length as it grows.
/// The usage chunk, when the server sends one, goes to `usage`.
fn read_events(
    reader: impl BufRead,
    received: &dyn Fn(usize),
    usage: &dyn Fn(&Value),
) -> Result<Answer, Streamed> {
    let mut content = String::new();
    let mut refusal = String::new();
    let mut chars = 0;
    let mut done = false;
    let mut cut = false;
    for line in reader.lines() {
        let line = line.map_err(|e| match ureq::Error::from(e) {
            ureq::Error::Io(io) => match io.get_ref().and_then(|r| r.downcast_ref::<ureq::Error>())
            {
                Some(ureq::Error::Timeout(t)) => Streamed::Transport(ureq::Error::Timeout(*t)),
                _ => Streamed::Transport(ureq::Error::Io(io)),
            },
            e => Streamed::Transport(e),
        })?;
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            Streamed::Bad(format!(
                "a streamed chunk is not JSON ({e}): {}",
                snippet(data)
            ))
        })?;
        if let Some(err) = v.get("error") {
            return Err(Streamed::Bad(format!(
                "the server reported: {}",
                snippet(&err.to_string())
            )));
        }
        if v["usage"].is_object() {
            usage(&v["usage"]);
        }
        let delta = &v["choices"][0]["delta"];
        if let Some(t) = delta["content"].as_str() {
            content.push_str(t);
            chars += t.chars().count();
            received(chars);
        }
        if let Some(r) = delta["refusal"].as_str() {
            refusal.push_str(r);
        }
        if let Some(f) = v["choices"][0]["finish_reason"].as_str() {
            done = true;
            cut = f == "length";
        }
    }
    if !refusal.is_empty() {
        return Err(Streamed::Refused(refusal));
    }
    if !done {
        return Err(Streamed::Bad(
            "the streamed response ended before the model finished".into(),
        ));
    }
    Ok(Answer { text: content, cut })
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
