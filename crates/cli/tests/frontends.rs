//! The `gitloom` binary's front-ends as a user runs them: `gitloom mcp` driven by a
//! real MCP client (rmcp) over the child's stdio; `gitloom admin` and `gitloom serve`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_gitloom");

fn args(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("arguments must be an object"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_stdio_against_the_binary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let status = Command::new(BIN)
        .args(["--embedder", "none", "init"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .status()
        .expect("init");
    assert!(status.success());
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["--embedder", "none", "--repo"])
        .arg(dir.path())
        .arg("mcp");
    let client =
        ().serve(TokioChildProcess::new(cmd).expect("spawn gitloom mcp"))
            .await
            .expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "retrieve"));
    assert_eq!(tools.len(), gitloom_toolkit::ops().len());

    let r = client
        .call_tool(
            CallToolRequestParams::new("remember").with_arguments(args(json!({
                "title": "Cat", "topic": "home", "body": "The cat is called Miso.",
                "cue": ["what is the cat called"]
            }))),
        )
        .await
        .expect("remember");
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = client
        .call_tool(
            CallToolRequestParams::new("retrieve")
                .with_arguments(args(json!({"query": "what is the cat called"}))),
        )
        .await
        .expect("retrieve");
    let s = r.structured_content.expect("structured content");
    assert_eq!(s["hits"][0]["path"], "facts/home/cat.md", "{s}");
    let r = client
        .call_tool(
            CallToolRequestParams::new("get").with_arguments(args(json!({"path": "/etc/passwd"}))),
        )
        .await
        .expect("get returns");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        r.structured_content.expect("structured")["code"],
        "invalid_path"
    );
    client.cancel().await.expect("close");
    // The write went to git like any other.
    let out = Command::new("git")
        .args(["ls-tree", "-r", "--name-only", "HEAD"])
        .current_dir(dir.path())
        .output()
        .expect("git log");
    assert!(String::from_utf8_lossy(&out.stdout).contains("facts/home/cat.md"));
}

/// `gitloom serve` on a free loopback port over `data` (no embedder), with `env`
/// set: the child and the base URL its first stderr line announces.
fn spawn_serve(data: &std::path::Path, env: &[(&str, &str)]) -> (std::process::Child, String) {
    let mut child = Command::new(BIN)
        .args([
            "--embedder",
            "none",
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--data",
        ])
        .arg(data)
        .envs(env.iter().copied())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut line = String::new();
    BufReader::new(stderr)
        .read_line(&mut line)
        .expect("listening line");
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (child, base)
}

#[test]
fn admin_then_serve() {
    let data = tempfile::tempdir().expect("tempdir");
    let out = Command::new(BIN)
        .args(["admin", "--data"])
        .arg(data.path())
        .args(["create-account", "acme", "--json"])
        .output()
        .expect("admin");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["account"], "acme");
    let key = v["api_key"].as_str().expect("key").to_owned();
    assert!(key.starts_with("glk_") && key.len() > 40);
    // The key is stored hashed, never in clear.
    let stored = std::fs::read_to_string(data.path().join("accounts.json")).expect("accounts");
    assert!(!stored.contains(&key));
    let again = Command::new(BIN)
        .args(["admin", "--data"])
        .arg(data.path())
        .args(["create-account", "acme", "--json"])
        .output()
        .expect("admin");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let out = Command::new(BIN)
        .args(["admin", "--data"])
        .arg(data.path())
        .args(["create-key", "acme", "--json"])
        .output()
        .expect("admin");
    let second: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_ne!(second["api_key"], v["api_key"]);

    let (mut child, base) = spawn_serve(data.path(), &[]);
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .new_agent();
    let mut r = agent
        .get(&format!("{base}/v1/namespaces"))
        .header(
            "Authorization",
            &format!("Bearer {}", second["api_key"].as_str().unwrap_or_default()),
        )
        .call()
        .expect("request");
    let status = r.status().as_u16();
    let body: Value =
        serde_json::from_str(&r.body_mut().read_to_string().expect("body")).expect("json");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["namespaces"], json!([]));

    // Keys are listed by id, never shown; a revoked key is refused by the running
    // server on its next request; usage counts what the server did.
    let admin = |args: &[&str]| -> Value {
        let out = Command::new(BIN)
            .args(["--json", "admin", "--data"])
            .arg(data.path())
            .args(args)
            .output()
            .expect("admin");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let listed = admin(&["list-keys", "acme"]);
    assert_eq!(
        listed[0]["keys"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
    assert!(!listed.to_string().contains(&key), "{listed}");
    let status_with = |k: &str| {
        agent
            .get(&format!("{base}/v1/namespaces"))
            .header("Authorization", &format!("Bearer {k}"))
            .call()
            .expect("request")
            .status()
            .as_u16()
    };
    let second_key = second["api_key"].as_str().unwrap_or_default().to_owned();
    admin(&["revoke-key", "acme", v["key_id"].as_str().expect("key id")]);
    assert_eq!(status_with(&key), 401);
    assert_eq!(status_with(&second_key), 200);
    let _ = child.kill();
    let _ = child.wait();
    let usage = admin(&["usage", "acme"]);
    assert_eq!(
        usage["account_requests"]["requests"]["list_namespaces"], 2,
        "{usage}"
    );
    // Delete the account: the data goes, and a new account of the name gets a new place.
    let deleted = admin(&["delete-account", "acme"]);
    assert_eq!(deleted["data"], "deleted", "{deleted}");
    assert!(!data.path().join("accounts/acme").exists());
    admin(&["create-account", "acme"]);
    let listed = admin(&["list-keys"]);
    assert_eq!(listed[0]["tenant"], "acme.1", "{listed}");
}

/// A chat-completions endpoint on loopback that answers every request with `reply`
/// as the message content and reports 150 tokens used (the OpenAI wire format).
fn metered_chat_model(reply: &'static str) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut stream) = conn else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let out = json!({
                "id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
                out.len()
            );
        }
    });
    url
}

#[test]
fn serve_meters_the_tokens_its_model_reports() {
    let model = metered_chat_model(
        r#"{"answer": "At Orbital AI.", "cited": ["facts/work/orbital-ai.md"]}"#,
    );
    let data = tempfile::tempdir().expect("tempdir");
    let out = Command::new(BIN)
        .args(["--json", "admin", "--data"])
        .arg(data.path())
        .args(["create-account", "acme"])
        .output()
        .expect("admin");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let key = v["api_key"].as_str().expect("key").to_owned();
    let (mut child, base) = spawn_serve(
        data.path(),
        &[
            ("GITLOOM_LLM_URL", model.as_str()),
            ("GITLOOM_LLM_KEY_ENV", "GITLOOM_TEST_KEY_UNSET"),
        ],
    );
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let call = |method: &str, path: &str, body: Option<Value>| -> (u16, Value) {
        let url = format!("{base}{path}");
        let auth = format!("Bearer {key}");
        let mut r = match body {
            Some(b) => agent
                .post(&url)
                .header("Authorization", &auth)
                .header("Content-Type", "application/json")
                .send(b.to_string())
                .expect("request"),
            None => {
                assert_eq!(method, "GET");
                agent
                    .get(&url)
                    .header("Authorization", &auth)
                    .call()
                    .expect("request")
            }
        };
        let status = r.status().as_u16();
        let text = r.body_mut().read_to_string().expect("body");
        (status, serde_json::from_str(&text).expect("json"))
    };
    let (st, body) = call("POST", "/v1/namespaces", Some(json!({"name": "notes"})));
    assert_eq!(st, 201, "{body}");
    let (st, body) = call(
        "POST",
        "/v1/namespaces/notes/ops/write",
        Some(json!({"path": "facts/work/orbital-ai.md",
            "content": "---\ntitle: Works at Orbital AI\ncues: [where do I work]\n---\nUser is an ML engineer at Orbital AI.\n"})),
    );
    assert_eq!(st, 200, "{body}");
    let (st, body) = call(
        "POST",
        "/v1/namespaces/notes/ops/answer",
        Some(json!({"question": "where do I work"})),
    );
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["result"]["text"], "At Orbital AI.", "{body}");
    let (st, usage) = call("GET", "/v1/usage", None);
    assert_eq!(st, 200, "{usage}");
    assert_eq!(
        usage["result"]["namespaces"]["notes"]["model_tokens"], 150,
        "{usage}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
