//! A real store (git + SQLite) with a small history, served by the web view on
//! 127.0.0.1, and a blocking HTTP client that keeps 4xx/5xx as answers.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};
use gitloom_model::StorePath;

pub struct Served {
    pub base: String,
    pub dir: tempfile::TempDir,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn engine(dir: &Path) -> Engine {
    Engine::init_with(
        dir,
        EngineOptions {
            embedder: EmbedderChoice::None,
            ..Default::default()
        },
    )
    .expect("init store")
}

fn ts(s: &str) -> jiff::Timestamp {
    s.parse().expect("timestamp")
}

/// One commit of whole files at a time.
pub fn commit(engine: &Engine, message: &str, time: &str, files: &[(&str, &str)]) -> String {
    let files = files
        .iter()
        .map(|(p, c)| {
            (
                StorePath::parse(p).expect("store path"),
                Some(c.as_bytes().to_vec()),
            )
        })
        .collect();
    engine
        .write_batch(files, message.to_owned(), Some(ts(time)))
        .expect("write")
        .commit
        .expect("a commit")
}

pub const ACME: &str = "---\ntitle: Works at Acme Robotics\ncues: [where do I work]\nentities: [\"Acme Robotics (org)\"]\n---\nPerception engineer at Acme Robotics.\n";
pub const LENA: &str = "---\ntitle: Lena Fischer\nentities: [{name: Lena Fischer, kind: person, role: manager}]\n---\nManager on the inference team. Before: [[Works at Acme Robotics]].\n";
pub const TRANSCRIPT: &str = "# Session s1\n\ndate: 2026-02-10\n\n## m0 user\n\nI start at Orbital AI on Monday.\n\n## m1 assistant\n\nCongratulations!\n";
pub const ORBITAL_V1: &str = "---\ntitle: Works at Orbital AI\ncues: [where do I work, who is my employer]\nentities: [\"Orbital AI (org)\"]\nrelated: [\"previous-employer: facts/work/acme.md\"]\nsupersedes: facts/work/acme.md\nsource: sessions/2026-02-10/s1.md#m0\ncreated: 2026-02-10T09:00:00Z\n---\nML engineer at Orbital AI.\n";
pub const ORBITAL_V2: &str = "---\ntitle: Works at Orbital AI\ncues: [where do I work, who is my employer]\nentities: [\"Orbital AI (org)\"]\nrelated: [\"previous-employer: facts/work/acme.md\"]\nsupersedes: facts/work/acme.md\nsource: sessions/2026-02-10/s1.md#m0\ncreated: 2026-02-10T09:00:00Z\n---\nML engineer at Orbital AI, on the inference team.\n";
pub const NOVA: &str = "---\ntitle: Works at Nova Labs\ncues: [where do I work]\nsupersedes: facts/work/orbital.md\n---\nResearch engineer at Nova Labs.\n";
/// Every way a memory could try to run something in the viewer's browser.
pub const EVIL: &str = "---\ntitle: \"Evil <script>window.__pwned = 1</script> title\"\ntags: [\"<img src=x onerror=window.__pwned=2>\"]\ncues: [\"\\\"><script>window.__pwned=3</script>\"]\nentities: [\"<b onmouseover=alert(1)>Mallory</b> (person)\"]\nrelated: [\"javascript:window.__pwned=4\"]\n---\n<script>window.__pwned = 5</script>\n\n<img src=x onerror=\"window.__pwned = 6\">\n\n[click me](javascript:window.__pwned=7) [also](  JaVaScRiPt:window.__pwned=8) ![pic](javascript:window.__pwned=9)\n\n<a href=\"javascript:window.__pwned=10\">raw link</a> <iframe src=\"data:text/html,<script>parent.__pwned=11</script>\"></iframe>\n";

/// The four commits of the test store, oldest first.
pub struct History {
    pub first: String,
    pub second: String,
    pub third: String,
    pub fourth: String,
}

/// A store with a small, known history:
/// 1. acme + lena (2026-01-10)
/// 2. the session transcript and orbital, which supersedes acme (2026-02-10)
/// 3. orbital edited; nova supersedes orbital (2026-03-10)
/// 4. a hostile memory (2026-04-10)
pub fn build_store(dir: &Path) -> (Engine, History) {
    let e = engine(dir);
    let first = commit(
        &e,
        "remember: acme and lena",
        "2026-01-10T09:00:00Z",
        &[("facts/work/acme.md", ACME), ("facts/people/lena.md", LENA)],
    );
    let second = commit(
        &e,
        "ingest: s1 (+1 ~0)",
        "2026-02-10T09:00:00Z",
        &[
            ("sessions/2026-02-10/s1.md", TRANSCRIPT),
            ("facts/work/orbital.md", ORBITAL_V1),
        ],
    );
    let third = commit(
        &e,
        "remember: orbital team; nova",
        "2026-03-10T09:00:00Z",
        &[
            ("facts/work/orbital.md", ORBITAL_V2),
            ("facts/work/nova.md", NOVA),
        ],
    );
    let fourth = commit(
        &e,
        "remember: evil",
        "2026-04-10T09:00:00Z",
        &[("facts/misc/evil.md", EVIL)],
    );
    (
        e,
        History {
            first,
            second,
            third,
            fourth,
        },
    )
}

/// Serves `router` on 127.0.0.1 (an ephemeral port) until dropped.
pub fn serve(router: axum::Router, dir: tempfile::TempDir) -> Served {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
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
            axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
                .expect("serve");
        });
    });
    let addr = addr_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("server started");
    Served {
        base: format!("http://{addr}"),
        dir,
        shutdown: Some(tx),
        thread: Some(thread),
    }
}

/// The test store behind `gitloom ui`'s source.
pub fn served_store() -> (Served, History) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, history) = build_store(dir.path());
    let source = gitloom_web::LocalSource::new(gitloom_remote::Storage::Local(Box::new(engine)));
    (serve(gitloom_web::router(source), dir), history)
}

pub struct Page {
    pub status: u16,
    pub headers: ureq::http::HeaderMap,
    pub body: String,
}

pub fn get(url: &str) -> Page {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut r = agent.get(url).call().expect("request sent");
    Page {
        status: r.status().as_u16(),
        headers: r.headers().clone(),
        body: r.body_mut().read_to_string().expect("body"),
    }
}

/// The page's text with tags and runs of whitespace collapsed, for phrase checks.
pub fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// One start tag of a page: its name and attributes (name, value), as a browser
/// would read them. Text is escaped by the pages, so every raw `<` opens a tag and
/// every raw `>` closes one (attribute values escape `>` too).
#[derive(Debug)]
pub struct Tag {
    pub name: String,
    pub attrs: Vec<(String, String)>,
}

pub fn tags(html: &str) -> Vec<Tag> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('>') else { break };
        let inner = &after[..close];
        rest = &after[close + 1..];
        if inner.starts_with('/') || inner.starts_with('!') {
            continue;
        }
        let (name, mut attrs_text) =
            inner.split_at(inner.find(char::is_whitespace).unwrap_or(inner.len()));
        let mut attrs = Vec::new();
        loop {
            attrs_text = attrs_text.trim_start();
            if attrs_text.is_empty() {
                break;
            }
            let end = attrs_text
                .find(|c: char| c == '=' || c.is_whitespace())
                .unwrap_or(attrs_text.len());
            let key = attrs_text[..end].trim_end_matches('/').to_ascii_lowercase();
            attrs_text = &attrs_text[end..];
            let mut value = String::new();
            if let Some(v) = attrs_text.strip_prefix('=') {
                let (val, tail) = match v.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        let body = &v[1..];
                        let stop = body.find(q).unwrap_or(body.len());
                        (&body[..stop], &body[(stop + 1).min(body.len())..])
                    }
                    _ => {
                        let stop = v.find(char::is_whitespace).unwrap_or(v.len());
                        (&v[..stop], &v[stop..])
                    }
                };
                value = val.to_owned();
                attrs_text = tail;
            }
            if !key.is_empty() {
                attrs.push((key, value));
            }
        }
        out.push(Tag {
            name: name.to_ascii_lowercase(),
            attrs,
        });
    }
    out
}

/// Panics if the page has markup that could run or load anything but its own
/// script and stylesheet: a foreign element, an event handler, a script URL.
pub fn assert_inert(html: &str) {
    for tag in tags(html) {
        let script_ok = tag.name == "script"
            && tag
                .attrs
                .iter()
                .any(|(k, v)| k == "src" && v.starts_with("/ui/static/app.js"));
        assert!(
            !matches!(
                tag.name.as_str(),
                "img" | "iframe" | "object" | "embed" | "svg" | "math" | "style" | "base" | "frame"
            ) && (tag.name != "script" || script_ok),
            "element <{}> on the page: {tag:?}",
            tag.name
        );
        for (k, v) in &tag.attrs {
            assert!(
                !k.starts_with("on"),
                "event handler {k}={v:?} on <{}>",
                tag.name
            );
            if matches!(k.as_str(), "href" | "src" | "action" | "formaction") {
                let v: String = v
                    .chars()
                    .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
                    .collect::<String>()
                    .to_ascii_lowercase();
                assert!(
                    !v.starts_with("javascript:")
                        && !v.starts_with("data:")
                        && !v.starts_with("vbscript:"),
                    "{k}={v:?} on <{}>",
                    tag.name
                );
            }
        }
    }
}
