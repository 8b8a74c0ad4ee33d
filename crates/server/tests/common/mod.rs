//! A real server on 127.0.0.1 (ephemeral port) over a temporary data directory, and
//! a small blocking HTTP client (ureq) that does not treat 4xx as errors.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use gitloom_engine::{EmbedderChoice, EngineOptions};
use gitloom_server::{Accounts, ServerConfig};
use serde_json::Value;

pub struct TestServer {
    pub base: String,
    pub data: DataDir,
    config: ServerConfig,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The server's data directory: its own (removed with it), or another server's.
pub enum DataDir {
    Owned(tempfile::TempDir),
    Shared(std::path::PathBuf),
}

impl DataDir {
    pub fn path(&self) -> &std::path::Path {
        match self {
            DataDir::Owned(t) => t.path(),
            DataDir::Shared(p) => p,
        }
    }
}

pub fn start() -> TestServer {
    start_with(|_| {})
}

pub fn start_with(tweak: impl FnOnce(&mut ServerConfig)) -> TestServer {
    let data = tempfile::tempdir().expect("tempdir");
    let mut config = ServerConfig::new(
        data.path(),
        EngineOptions {
            embedder: EmbedderChoice::None,
            ..EngineOptions::default()
        },
    );
    tweak(&mut config);
    launch(config, DataDir::Owned(data))
}

fn launch(config: ServerConfig, data: DataDir) -> TestServer {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let run = config.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            addr_tx
                .send(listener.local_addr().expect("addr"))
                .expect("send addr");
            gitloom_server::serve(listener, run, async {
                let _ = rx.await;
            })
            .await
            .expect("serve");
        });
    });
    let addr = addr_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("server started");
    TestServer {
        base: format!("http://{addr}"),
        data,
        config,
        shutdown: Some(tx),
        thread: Some(thread),
    }
}

impl TestServer {
    /// Stops this server (gracefully, as a restart would) and starts a new one on
    /// the same data directory and configuration.
    pub fn restart(mut self) -> TestServer {
        self.stop();
        let data = std::mem::replace(&mut self.data, DataDir::Shared(Default::default()));
        launch(self.config.clone(), data)
    }

    /// A second server (another node) on the same data directory.
    pub fn another_node(&self) -> TestServer {
        launch(
            self.config.clone(),
            DataDir::Shared(self.data.path().to_path_buf()),
        )
    }

    fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// The accounts of the data directory, as `gitloom admin` opens them.
    pub fn admin(&self) -> Accounts {
        Accounts::open(self.data.path()).expect("accounts")
    }
}

impl TestServer {
    /// An account and its key, made the way `gitloom admin` makes them.
    pub fn account(&self, name: &str) -> String {
        Accounts::open(self.data.path())
            .expect("accounts")
            .create_account(name)
            .expect("create account")
            .api_key
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent()
}

/// (status, JSON body, build header).
pub type Reply = (u16, Value, Option<String>);

fn reply(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Reply {
    let mut r = r.expect("request sent");
    let status = r.status().as_u16();
    let build = r
        .headers()
        .get("x-gitloom-build")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = r.body_mut().read_to_string().expect("body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body, build)
}

pub fn get(key: Option<&str>, url: &str) -> Reply {
    let mut req = agent().get(url);
    if let Some(k) = key {
        req = req.header("Authorization", &format!("Bearer {k}"));
    }
    reply(req.call())
}

pub fn post(key: Option<&str>, url: &str, body: &Value) -> Reply {
    post_raw(key, url, &body.to_string())
}

pub fn post_raw(key: Option<&str>, url: &str, body: &str) -> Reply {
    let mut req = agent().post(url).header("content-type", "application/json");
    if let Some(k) = key {
        req = req.header("Authorization", &format!("Bearer {k}"));
    }
    reply(req.send(body))
}

pub fn delete(key: Option<&str>, url: &str) -> Reply {
    let mut req = agent().delete(url);
    if let Some(k) = key {
        req = req.header("Authorization", &format!("Bearer {k}"));
    }
    reply(req.call())
}

/// Polls a job until it finishes (deadline 20 s); returns its final JSON.
pub fn wait_job(server: &TestServer, key: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body, _) = get(Some(key), &server.url(&format!("/v1/jobs/{id}")));
        assert_eq!(status, 200, "{body}");
        if !matches!(
            body["result"]["status"].as_str(),
            Some("running" | "cancelling")
        ) {
            return body;
        }
        assert!(Instant::now() < deadline, "job {id} still running: {body}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn memory(title: &str, body: &str) -> String {
    format!("---\ntitle: {title}\n---\n{body}\n")
}
