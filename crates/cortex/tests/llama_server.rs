//! The model path against a real model server: llama.cpp's `llama-server` serving
//! SmolLM2-135M-Instruct on 127.0.0.1, both built and fetched by
//! `scripts/build_llama_server.sh` (pinned, checksum-verified, cached outside the repo).
//!
//! Off the default CI path (the build alone takes about 15 minutes on two cores):
//! it runs when `GITLOOM_TEST_LLAMA_SERVER` names the `llama-server` binary and
//! `GITLOOM_TEST_LLAMA_MODEL` the GGUF file:
//!
//! ```text
//! eval "$(bash scripts/build_llama_server.sh --env)"
//! cargo test -p gitloom-cortex --test llama_server -- --nocapture
//! ```
//!
//! What it checks does not hang on how good a 135M model is: the request carries the
//! JSON schema, which llama.cpp turns into a grammar, so the streamed reply parses and
//! passes the checks and the session becomes memories that cite it; and a session
//! whose extraction failed because the server was down is extracted by the next run,
//! once the server is up. (How good the facts are is measured, not tested:
//! BENCHMARKS.md, `gitloom eval probe --via ingest --llm-url`.)

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gitloom_cortex::llm::{ChatClient, ChatConfig};
use gitloom_cortex::{IngestOptions, ModelExtractor, ingest, parse_sessions};
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};

const SESSIONS: &str = r#"[
 {"id": "s1", "date": "2026-03-02", "messages": [
   {"role": "user", "content": "I work at Globex as a data analyst. My sister Ana lives in Lisbon."},
   {"role": "assistant", "content": "Noted."}]}
]"#;

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Starts `llama-server` on `port` and waits (bounded) until `/health` answers.
fn start(bin: &Path, model: &Path, port: u16, log: &Path) -> Server {
    let out = std::fs::File::create(log).expect("log file");
    let child = Command::new(bin)
        .args(["-m"])
        .arg(model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        // One thread: with two, ggml's OpenMP threads spin at every barrier (hundreds a
        // token), and on a machine whose two cores are also building, a spinning thread
        // holds the core its partner needs: 2-10 tokens/s instead of 21-29 (BENCHMARKS.md).
        .args(["-t", "1", "-np", "1", "-c", "8192"])
        .stdout(Stdio::null())
        .stderr(out)
        .spawn()
        .expect("llama-server starts");
    let url = format!("http://127.0.0.1:{port}");
    let server = Server { child, url };
    let deadline = Instant::now() + Duration::from_secs(180);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .http_status_as_error(false)
        .build()
        .into();
    loop {
        if let Ok(mut r) = agent.get(&format!("{}/health", server.url)).call()
            && r.status() == 200
            && r.body_mut()
                .read_to_string()
                .is_ok_and(|b| b.contains("ok"))
        {
            return server;
        }
        assert!(
            Instant::now() < deadline,
            "llama-server did not come up in 180 s; see {}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn config(url: &str) -> ChatConfig {
    let mut c = ChatConfig::new(url, "smollm2-135m-instruct");
    c.api_key_env = None;
    // Two CPU threads on a shared machine: generous, and bounded output so a small
    // model that repeats itself ends.
    c.timeout = Duration::from_secs(900);
    c.max_tokens = Some(1536);
    c.max_retries = 1;
    c.backoff = Duration::from_millis(200);
    c
}

fn paths() -> Option<(PathBuf, PathBuf)> {
    let bin = std::env::var_os("GITLOOM_TEST_LLAMA_SERVER").map(PathBuf::from);
    let model = std::env::var_os("GITLOOM_TEST_LLAMA_MODEL").map(PathBuf::from);
    match (bin, model) {
        (Some(b), Some(m)) => {
            assert!(
                b.is_file(),
                "GITLOOM_TEST_LLAMA_SERVER: {} is not a file",
                b.display()
            );
            assert!(
                m.is_file(),
                "GITLOOM_TEST_LLAMA_MODEL: {} is not a file",
                m.display()
            );
            Some((b, m))
        }
        _ => {
            eprintln!(
                "skipped: set GITLOOM_TEST_LLAMA_SERVER and GITLOOM_TEST_LLAMA_MODEL (scripts/build_llama_server.sh --env)"
            );
            None
        }
    }
}

#[test]
fn a_real_model_server_extracts_and_a_failed_session_is_extracted_by_the_next_run() {
    let Some((bin, model)) = paths() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(
        &tmp.path().join("store"),
        EngineOptions {
            embedder: EmbedderChoice::None,
            ..Default::default()
        },
    )
    .expect("store");
    let sessions = parse_sessions(SESSIONS).expect("sessions");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let head0 = engine.store().head().expect("head");

    // 1. The server is not up yet: the session fails and nothing is written.
    let down = ModelExtractor::new(ChatClient::new(config(&url)).expect("client"));
    let first = ingest(
        &engine,
        &sessions,
        &down,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("a failed extraction is reported, not an error of the run");
    assert_eq!((first.failed, first.commits), (1, 0), "{first:#?}");
    assert_eq!(engine.store().head().expect("head"), head0);

    // 2. The server is up: the same command extracts the session.
    let log = tmp.path().join("llama-server.log");
    let server = start(&bin, &model, port, &log);
    let extractor = ModelExtractor::new(ChatClient::new(config(&server.url)).expect("client"));
    let started = Instant::now();
    let received = std::sync::atomic::AtomicUsize::new(0);
    let second = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions {
            concurrency: 1,
            ..Default::default()
        },
        &|p| {
            received.fetch_max(p.received, std::sync::atomic::Ordering::Relaxed);
        },
    )
    .expect("second run");
    eprintln!(
        "llama-server run: {:.0} s, {} characters streamed, report: failed {} commits {} facts {} errors {:?}",
        started.elapsed().as_secs_f64(),
        received.load(std::sync::atomic::Ordering::Relaxed),
        second.failed,
        second.commits,
        second.facts,
        second.sessions[0].errors
    );
    assert!(
        !second.sessions[0].skipped,
        "not taken for already ingested"
    );
    // The schema is a grammar to llama.cpp: even a 135M model answers within it, so
    // the output passes the checks and the session is extracted.
    assert_eq!((second.failed, second.commits), (0, 1), "{second:#?}");
    assert!(
        engine.get("sessions/2026-03-02/s1.md", None).is_ok(),
        "the transcript is stored"
    );
    for p in &second.sessions[0].paths {
        let c = engine.get(p, None).expect("written").content;
        assert!(
            c.contains("sessions/2026-03-02/s1.md"),
            "{p} cites nothing:\n{c}"
        );
    }
    assert!(
        received.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "the reply was streamed and its progress reported"
    );
    // Extracted now: a third run skips it.
    let third = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("third run");
    assert!(third.sessions[0].skipped, "{third:#?}");
    drop(server);
}
