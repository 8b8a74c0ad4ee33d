//! The README runs: every shell block marked ` ```sh runnable ` is executed, in
//! order, in one bash session, the way a reader would type them into a terminal:
//!
//! - `HOME` is a fresh temporary directory (so `~/memory` is new), the working
//!   directory is the checkout (with `../shared` beside it), `gitloom` on `PATH` is
//!   this build, and retrieval runs on the lexical arm (`GITLOOM_EMBEDDER=none`);
//! - each `localhost:PORT` / `127.0.0.1:PORT` the blocks name is mapped to a free
//!   port, so a block can say `8080` and run beside anything already on 8080;
//! - a block marked ` ```sh runnable background ` (a server) is started in the
//!   background and the next block runs once its port accepts connections; every
//!   process the session started is ended with it (one process group);
//! - `curl` fails on an HTTP error status (`--fail-with-body`), so an example that
//!   gets a 4xx fails here — `curl -d` without a JSON content type would (415).
//!
//! Under CI (`CI` set) missing shared data fails the test; elsewhere it is skipped.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_gitloom");

/// A fenced block of README.md.
#[derive(Debug, Clone)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    info: Vec<String>,
    text: String,
}

impl Block {
    fn is_shell(&self) -> bool {
        matches!(
            self.info.first().map(String::as_str),
            Some("sh" | "bash" | "shell")
        )
    }
    fn runnable(&self) -> bool {
        self.is_shell() && self.info.iter().any(|w| w == "runnable")
    }
    fn background(&self) -> bool {
        self.info.iter().any(|w| w == "background")
    }
}

/// The fenced blocks of a markdown text (fences at the start of a line; a block
/// ends at the next fence of at least its opening length).
fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, usize, Vec<String>, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        match &mut open {
            None if ticks >= 3 => {
                let info = line[ticks..]
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
                open = Some((i + 1, ticks, info, String::new()));
            }
            Some((start, n, info, text)) if ticks >= *n && line.trim() == "`".repeat(ticks) => {
                out.push(Block {
                    line: *start,
                    info: std::mem::take(info),
                    text: std::mem::take(text),
                });
                open = None;
            }
            Some((_, _, _, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    out
}

/// Every `localhost:PORT` or `127.0.0.1:PORT` in the blocks, each with a free port.
fn port_map(blocks: &[&Block]) -> BTreeMap<u16, u16> {
    let mut map = BTreeMap::new();
    for b in blocks {
        for host in ["localhost:", "127.0.0.1:"] {
            for (at, _) in b.text.match_indices(host) {
                let digits: String = b.text[at + host.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(port) = digits.parse::<u16>() {
                    map.entry(port).or_insert_with(free_port);
                }
            }
        }
    }
    map
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn with_ports(text: &str, ports: &BTreeMap<u16, u16>) -> String {
    let mut out = text.to_owned();
    for (from, to) in ports {
        for host in ["localhost:", "127.0.0.1:"] {
            out = out.replace(&format!("{host}{from}"), &format!("{host}{to}"));
        }
    }
    out
}

/// The port a background block listens on (`--addr HOST:PORT`).
fn listen_port(text: &str) -> Option<u16> {
    let at = text.find("--addr")?;
    let addr = text[at + "--addr".len()..].split_whitespace().next()?;
    addr.rsplit(':').next()?.parse().ok()
}

/// The whole session as one bash script. Each block is announced on stderr with its
/// README line, so a failure names the block that failed.
fn script(blocks: &[&Block], ports: &BTreeMap<u16, u16>) -> String {
    let mut s = String::from(
        r#"set -euo pipefail
curl() { command curl --fail-with-body --silent --show-error "$@"; echo; }
wait_port() {
  for _ in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on port $1 after 60 s" >&2; return 1
}
"#,
    );
    for (i, b) in blocks.iter().enumerate() {
        let text = with_ports(&b.text, ports);
        let _ = writeln!(s, "echo '::block {i} README.md:{}' >&2", b.line);
        if b.background() {
            let port = listen_port(&text).unwrap_or_else(|| {
                panic!(
                    "README.md:{}: a background block names --addr HOST:PORT",
                    b.line
                )
            });
            let _ = writeln!(s, "{{\n{text}}} > \"$HOME/background-{i}.log\" 2>&1 &");
            let _ = writeln!(s, "wait_port {port}");
        } else {
            s.push_str(&text);
        }
    }
    s.push_str("echo '::done' >&2\n");
    s
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared_present(root: &Path) -> bool {
    let present = root.join("../shared/data/probe").is_dir();
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "../shared/data is missing beside the checkout; the README's examples use it"
        );
        eprintln!("skipped: ../shared/data is not beside the checkout");
    }
    present
}

#[test]
fn readme_fences_are_read_as_a_reader_sees_them() {
    let md = "text\n```sh runnable\necho a\n```\n````markdown\n```sh\nnot a fence end\n```\n````\n```sh\nmanual\n```\n";
    let b = blocks(md);
    assert_eq!(b.len(), 3);
    assert!(b[0].runnable() && b[0].text == "echo a\n" && b[0].line == 2);
    assert!(!b[1].is_shell() && b[1].text.contains("```sh"));
    assert!(b[2].is_shell() && !b[2].runnable());
    let ports = port_map(&[
        &b[0],
        &Block {
            line: 1,
            info: vec![],
            text: "curl localhost:8080/x 127.0.0.1:8080".into(),
        },
    ]);
    assert_eq!(ports.len(), 1);
    let moved = with_ports("curl localhost:8080/x", &ports);
    assert!(!moved.contains(":8080/"), "{moved}");
    assert_eq!(
        listen_port("gitloom serve --addr 127.0.0.1:8080 --data d"),
        Some(8080)
    );
}

#[test]
fn every_runnable_readme_block_runs() {
    let root = repo_root();
    if !shared_present(&root) {
        return;
    }
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let all = blocks(&readme);
    let runnable: Vec<&Block> = all.iter().filter(|b| b.runnable()).collect();
    // The sections promise runnable examples: using a store, ingesting, serving
    // (accounts, server, curl), the web view, the Python client, evaluation.
    assert!(
        runnable.len() >= 8,
        "only {} runnable blocks in README.md",
        runnable.len()
    );
    assert!(
        runnable
            .iter()
            .any(|b| b.background() && b.text.contains("gitloom serve")),
        "the server block is runnable"
    );
    let ports = port_map(&runnable);
    let before = checkout_status(&root);
    let home = tempfile::tempdir().expect("home");
    let bin_dir = Path::new(BIN).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(script(&runnable, &ports))
        .current_dir(&root)
        .env("HOME", home.path())
        .env("PATH", path)
        .env("GITLOOM_EMBEDDER", "none")
        .env_remove("GITLOOM_REPO")
        .env_remove("GITLOOM_DATA")
        .env_remove("GITLOOM_STORAGE")
        .env_remove("GITLOOM_NAMESPACE")
        .env_remove("GITLOOM_LLM_URL")
        .env_remove("GITLOOM_URL")
        .env_remove("GITLOOM_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so the servers the blocks start end with it.
        .process_group(0);
    let child = cmd.spawn().expect("bash runs");
    let group = child.id();
    let out = child.wait_with_output().expect("the session ends");
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !stderr.contains("::done") {
        let failed = stderr
            .lines()
            .rfind(|l| l.starts_with("::block"))
            .unwrap_or("(before the first block)");
        let logs: String = std::fs::read_dir(home.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("background-"))
            .map(|e| {
                format!(
                    "--- {}:\n{}",
                    e.file_name().to_string_lossy(),
                    std::fs::read_to_string(e.path()).unwrap_or_default()
                )
            })
            .collect();
        panic!(
            "README block failed: {failed}\n--- stderr (tail):\n{}\n--- stdout (tail):\n{}\n{logs}",
            tail(&stderr, 40),
            tail(&stdout, 40)
        );
    }
    assert_eq!(
        checkout_status(&root),
        before,
        "the README's commands wrote into the checkout; they should write under ~"
    );
    // What the examples promise, checked on their output.
    assert!(
        stdout.contains("\"created\":true"),
        "the namespace was created: {}",
        tail(&stdout, 20)
    );
    assert!(
        stdout.contains("\"status\":\"running\"") || stdout.contains("\"status\":\"succeeded\""),
        "the job"
    );
    assert!(
        stdout.contains("recalled facts/chat/"),
        "the Python agent loop recalled a memory"
    );
}

/// The curl the README's session uses fails on a 4xx: the form body `curl -d` sends
/// without a content type is refused (415), so the README must name the type.
#[test]
fn curl_in_the_readme_session_fails_on_an_http_error() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("data");
    let out = Command::new(BIN)
        .args([
            "admin",
            "--data",
            data.to_str().expect("path"),
            "create-account",
            "acme",
            "--json",
        ])
        .output()
        .expect("admin");
    assert!(out.status.success());
    let key: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let key = key["api_key"].as_str().expect("key").to_owned();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let serve = format!("{} serve --addr {addr} --data {}", BIN, data.display());
    let blocks = [
        Block {
            line: 1,
            info: vec!["sh".into(), "runnable".into(), "background".into()],
            text: format!("{serve}\n"),
        },
        Block {
            line: 2,
            info: vec!["sh".into(), "runnable".into()],
            text: format!(
                "curl -H 'Authorization: Bearer {key}' -d '{{\"name\":\"notes\"}}' localhost:{port}/v1/namespaces\n"
            ),
        },
    ];
    let refs: Vec<&Block> = blocks.iter().collect();
    let child = Command::new("bash")
        .arg("-c")
        .arg(script(&refs, &BTreeMap::new()))
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("bash");
    let group = child.id();
    let out = child.wait_with_output().expect("ends");
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{group}")])
        .status();
    assert!(!out.status.success(), "a 415 must fail the block");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        all.contains("415") || all.contains("unsupported_media_type"),
        "{all}"
    );
}

/// `git status --porcelain` of the checkout (files the session must not leave).
fn checkout_status(root: &Path) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "--untracked-files=all"])
        .output()
        .expect("git status");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
