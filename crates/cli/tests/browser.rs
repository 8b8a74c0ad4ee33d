//! The web view in a real browser: headless Chromium driven over WebDriver
//! (chromedriver, both from Debian's `chromium` and `chromium-driver`), against the
//! real binary — `gitloom ui` on a store, and `gitloom serve` behind a sign-in.
//!
//! Exercised: the topic tree, a memory with its history diff and supersession
//! chain, search with explain (a hit and an abstention), the timeline, `?at=` time
//! travel through the "As of" form, a hostile memory that must not run, the keyboard
//! alone (skip link, `/`, `j`, Enter, `a`, `l`), and a phone-sized window.
//!
//! Under CI (`CI` set) a missing browser fails the test; elsewhere it is skipped
//! with a message. Screenshots land in `target/browser-screenshots/`; with
//! `GITLOOM_UPDATE_SCREENSHOTS=1` the main pages are also written to `docs/` (and
//! the store then uses the installed embedding model, as a user's would).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_gitloom");

/// Chromium and its driver, or `None` (skip) when they are not installed here.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let pick = |var: &str, candidates: &[&str]| -> Option<PathBuf> {
        if let Some(p) = std::env::var_os(var) {
            return Some(PathBuf::from(p));
        }
        candidates.iter().map(PathBuf::from).find(|p| p.exists())
    };
    let chromium = pick(
        "GITLOOM_CHROMIUM",
        &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
    );
    let driver = pick("GITLOOM_CHROMEDRIVER", &["/usr/bin/chromedriver"]);
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "headless Chromium and chromedriver are required under CI: apt-get install -y chromium chromium-driver"
            );
            eprintln!(
                "skipped: no Chromium/chromedriver (apt-get install chromium chromium-driver, or set GITLOOM_CHROMIUM and GITLOOM_CHROMEDRIVER)"
            );
            None
        }
    }
}

fn shared_data() -> Option<PathBuf> {
    let shared = std::env::var_os("GITLOOM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let data = shared.join("data/probe");
    if data.is_dir() {
        return Some(data);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the probe data is missing ({}); CI must have ../shared/data beside the checkout",
        data.display()
    );
    eprintln!(
        "skipped: the probe data is not at {} (set GITLOOM_SHARED)",
        data.display()
    );
    None
}

fn updating_screenshots() -> bool {
    std::env::var_os("GITLOOM_UPDATE_SCREENSHOTS").is_some()
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn gitloom(args: &[&str], stdin: Option<&str>) -> String {
    let embedder = if updating_screenshots() {
        "default"
    } else {
        "none"
    };
    let mut child = Command::new(BIN)
        .args(args)
        .env("GITLOOM_EMBEDDER", embedder)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gitloom runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("gitloom finishes");
    assert!(
        out.status.success(),
        "gitloom {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Starts a long-running `gitloom` command and returns it with the address it
/// printed on stderr (`… http://127.0.0.1:PORT …`).
fn start_gitloom(args: &[&str]) -> (Proc, String) {
    let embedder = if updating_screenshots() {
        "default"
    } else {
        "none"
    };
    let mut child = Command::new(BIN)
        .args(args)
        .env("GITLOOM_EMBEDDER", embedder)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gitloom starts");
    let stderr = child.stderr.take().expect("stderr");
    let proc = Proc(child);
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("gitloom {args:?} exited before listening"))
            .expect("stderr line");
        if let Some(at) = line.find("http://") {
            let url = &line[at..];
            let end = url[7..].find(['/', ' ']).map_or(url.len(), |e| e + 7);
            break url[..end].to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (proc, addr)
}

const EMPLOYER_V1: &str = "---\ntitle: Works at Lumen Dynamics\ncues: [where do I work]\nentities: [\"Lumen Dynamics (org)\"]\n---\nSoftware engineer at Lumen Dynamics, on the robotics team.\n";
const EMPLOYER_V2: &str = "---\ntitle: Works at Lumen Dynamics\ncues: [where do I work]\nentities: [\"Lumen Dynamics (org)\"]\n---\nStaff engineer at Lumen Dynamics, leading the robotics team.\n";
const NEW_EMPLOYER: &str = "---\ntitle: Works at Quill Systems\ncues: [where do I work]\nentities: [\"Quill Systems (org)\"]\nsupersedes: facts/work/lumen.md\nrelated: [\"previous-employer: facts/work/lumen.md\"]\n---\nPrincipal engineer at Quill Systems since this autumn.\n";
const EVIL: &str = "---\ntitle: \"Hostile <script>window.__pwned = 1</script> memory\"\ntags: [\"<img src=x onerror=window.__pwned=2>\"]\n---\n<script>window.__pwned = 3</script>\n\n<img src=x onerror=\"window.__pwned = 4\">\n\n[click](javascript:window.__pwned=5) and <a href=\"javascript:window.__pwned=6\">this</a>\n";

/// A store with the probe memories and sessions (ingested offline), then four
/// commits of our own: an employer, an edit of it, its successor, a hostile memory.
fn build_store(dir: &Path, probe: &Path) -> PathBuf {
    let store = dir.join("store");
    let s = store.to_str().expect("UTF-8 path");
    gitloom(&["--repo", s, "init"], None);
    let memories = probe.join("memories");
    gitloom(
        &["--repo", s, "import", memories.to_str().expect("path")],
        None,
    );
    let sessions = probe.join("sessions.json");
    gitloom(
        &["--repo", s, "ingest", sessions.to_str().expect("path")],
        None,
    );
    gitloom(
        &["--repo", s, "write", "facts/work/lumen.md"],
        Some(EMPLOYER_V1),
    );
    gitloom(
        &["--repo", s, "write", "facts/work/lumen.md"],
        Some(EMPLOYER_V2),
    );
    gitloom(
        &["--repo", s, "write", "facts/work/quill.md"],
        Some(NEW_EMPLOYER),
    );
    gitloom(&["--repo", s, "write", "facts/misc/hostile.md"], Some(EVIL));
    store
}

/// Chromium under chromedriver, closed when dropped.
struct Browser {
    client: Client,
    _driver: Proc,
    _profile: tempfile::TempDir,
    shots: PathBuf,
}

async fn launch(chromium: &Path, driver: &Path) -> Browser {
    let port = free_port();
    let log = std::env::temp_dir().join(format!("gitloom-chromedriver-{port}.log"));
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .arg(format!("--log-path={}", log.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let driver_proc = Proc(child);
    wait_for_port(port, "chromedriver");
    let profile = tempfile::tempdir().expect("profile dir");
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            // The machine's closed network otherwise floods Chromium with refused
            // connections (updates, sync, QUIC probes).
            "args": [
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                format!("--user-data-dir={}", profile.path().display()),
                "--window-size=1280,900",
            ]
        }),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a WebDriver session");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    Browser {
        client,
        _driver: driver_proc,
        _profile: profile,
        shots,
    }
}

impl Browser {
    async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script {script:?}: {e}"))
    }

    async fn text(&self, css: &str) -> String {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .text()
            .await
            .expect("text")
    }

    async fn page_kind(&self) -> String {
        self.js("const m = document.querySelector('main'); return m ? m.dataset.page : null")
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits until the page at `main[data-page=kind]` whose address contains
    /// `needle` has loaded (after a key press started a navigation).
    async fn wait_page(&self, kind: &str, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let url = self.client.current_url().await.expect("url").to_string();
            let ready = self.js("return document.readyState").await;
            if url.contains(needle) && ready == "complete" && self.page_kind().await == kind {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no {kind} page at an address with {needle:?} (now at {url})"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Presses keys on whatever has the focus, as a keyboard would (WebDriver key
    /// actions: each character down, then up).
    async fn keys(&self, keys: &str) {
        let mut seq = KeyActions::new("keyboard".into());
        for ch in keys.chars() {
            seq = seq
                .then(KeyAction::Down { value: ch })
                .then(KeyAction::Up { value: ch });
        }
        self.client.perform_actions(seq).await.expect("keys");
    }

    async fn focused(&self) -> Value {
        self.js("const e = document.activeElement; return {tag: e.tagName, id: e.id, text: e.textContent.trim().slice(0, 80), cls: e.className}").await
    }

    /// A screenshot of the window, scrolled to the top or to the element `at`, with
    /// no focus ring.
    async fn screenshot(&self, name: &str, at: Option<&str>) {
        self.client
            .execute(
                "if (document.activeElement) document.activeElement.blur();
                 const e = arguments[0] ? document.querySelector(arguments[0]) : null;
                 if (e) e.scrollIntoView({block: 'start'}); else window.scrollTo(0, 0);",
                vec![json!(at)],
            )
            .await
            .expect("scroll");
        let png = self.client.screenshot().await.expect("screenshot");
        std::fs::write(self.shots.join(format!("{name}.png")), &png).expect("write screenshot");
        if updating_screenshots() {
            let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
            std::fs::write(docs.join(format!("web-{name}.png")), &png)
                .expect("write docs screenshot");
        }
    }

    /// No element sticks out sideways: the page fits the window's width. Else the
    /// elements that stick out, for the failure message.
    async fn too_wide(&self) -> Option<Value> {
        let fits = self
            .js("return document.documentElement.scrollWidth <= window.innerWidth + 1")
            .await;
        if fits == json!(true) {
            return None;
        }
        Some(self.js("return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1).slice(-5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right) + ': ' + e.textContent.slice(0, 60))").await)
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn the_local_web_view_in_a_real_browser() {
    let Some((chromium, driver)) = browser() else {
        return;
    };
    let Some(probe) = shared_data() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let store = build_store(dir.path(), &probe);
    let (_ui, base) = start_gitloom(&[
        "--repo",
        store.to_str().expect("path"),
        "ui",
        "--addr",
        "127.0.0.1:0",
    ]);
    runtime().block_on(async {
        let b = launch(&chromium, &driver).await;
        local_pages(&b, &base).await;
        b.client.clone().close().await.expect("close the browser");
    });
}

async fn local_pages(b: &Browser, base: &str) {
    let c = &b.client;

    // --- The topic tree, reached from the root.
    c.goto(&format!("{base}/")).await.expect("goto");
    b.wait_page("tree", "/ui/n/local/").await;
    assert_eq!(b.text("main h1").await, "Topics");
    let lede = b.text("main .lede").await;
    assert!(
        lede.contains("memories") && lede.contains("session transcripts"),
        "{lede}"
    );
    let facts = b.text("nav.tree > ul > li:first-child > a").await;
    assert!(facts.starts_with("facts"), "{facts}");
    // Keyboard only: the first Tab stop is the skip link, and it leads to the content.
    b.keys(&Key::Tab.to_string()).await;
    let f = b.focused().await;
    assert_eq!(f["text"], "Skip to content", "{f}");
    // A topic, opened with Enter on its link.
    c.find(Locator::Css(r#"nav.tree a[href*="topic=facts%2Fwork"]"#))
        .await
        .expect("facts/work in the tree")
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    b.wait_page("tree", "topic=facts%2Fwork").await;
    let files = b.text("section.files").await;
    assert!(
        files.contains("Works at Lumen Dynamics") && files.contains("Works at Quill Systems"),
        "{files}"
    );
    b.screenshot("tree", None).await;

    // --- `j` selects the first item, Enter opens it (keyboard only).
    c.goto(&format!("{base}/ui/n/local/?topic=facts/work"))
        .await
        .expect("goto");
    b.keys("j").await;
    let f = b.focused().await;
    assert!(
        f["cls"].as_str().is_some_and(|c| c.contains("item")),
        "j focuses an item: {f}"
    );
    b.keys(&Key::Enter.to_string()).await;
    b.wait_page("memory", "/ui/n/local/m/facts/work/").await;

    // --- A memory with its history diff and supersession chain.
    c.goto(&format!("{base}/ui/n/local/m/facts/work/lumen.md"))
        .await
        .expect("goto");
    b.wait_page("memory", "lumen.md").await;
    assert_eq!(b.text("main h1").await, "Works at Lumen Dynamics");
    assert!(
        b.text("article.body").await.contains("Staff engineer"),
        "the current body"
    );
    let chain = b.text("section.chain").await;
    assert!(
        chain.contains("newer 1") && chain.contains("Works at Quill Systems"),
        "{chain}"
    );
    let links = b.text("section.linksec").await;
    // (Labels are shown in capitals by the stylesheet; WebDriver reads rendered text.)
    assert!(
        links
            .to_lowercase()
            .contains("related previous-employer works at quill systems"),
        "incoming related link: {links}"
    );
    let versions = c
        .find_all(Locator::Css("ol.versions > li"))
        .await
        .expect("versions");
    assert_eq!(versions.len(), 2, "two commits changed it");
    let newest_diff = b.text("ol.versions > li:first-child pre.diff").await;
    assert!(
        newest_diff.contains("-Software engineer at Lumen Dynamics"),
        "{newest_diff}"
    );
    assert!(
        newest_diff.contains("+Staff engineer at Lumen Dynamics"),
        "{newest_diff}"
    );
    // The older version's diff is folded; Enter on its summary opens it.
    let older = c
        .find(Locator::Css("ol.versions > li:nth-child(2) pre.diff"))
        .await
        .expect("older diff");
    assert!(
        !older.is_displayed().await.expect("displayed?"),
        "folded at first"
    );
    c.find(Locator::Css("ol.versions > li:nth-child(2) summary"))
        .await
        .expect("summary")
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    assert!(
        older.is_displayed().await.expect("displayed?"),
        "opened by the keyboard"
    );
    assert!(
        older
            .text()
            .await
            .expect("text")
            .contains("+Software engineer"),
        "the first version, all added"
    );
    b.screenshot("memory", None).await;
    b.screenshot("history", Some("section.history")).await;

    // --- Time travel through the "As of" form, reached with `a`.
    b.keys("a").await;
    assert_eq!(b.focused().await["id"], "at");
    b.keys(&format!("HEAD~3{}", Key::Enter)).await;
    b.wait_page("memory", "at=HEAD").await;
    let banner = b.text("div.past").await;
    assert!(
        banner.contains("Showing the store as of HEAD~3") && banner.contains("Back to now"),
        "{banner}"
    );
    assert!(
        b.text("article.body")
            .await
            .contains("Software engineer at Lumen"),
        "the first version"
    );
    assert!(
        !b.text("section.chain").await.contains("Quill"),
        "not superseded yet"
    );
    assert_eq!(
        c.find_all(Locator::Css("ol.versions > li"))
            .await
            .expect("versions")
            .len(),
        1,
        "history as of then"
    );
    // Links on a past page stay in the past: the tree at HEAD~3 has no Quill yet.
    c.find(Locator::Css(r#"nav.crumbs a[href*="topic=facts%2Fwork"]"#))
        .await
        .expect("breadcrumb")
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    b.wait_page("tree", "at=HEAD").await;
    let files = b.text("section.files").await;
    assert!(
        files.contains("Works at Lumen Dynamics") && !files.contains("Quill"),
        "{files}"
    );
    b.screenshot("at", None).await;

    // --- Search with explain: `/` focuses the box, Enter asks.
    c.goto(&format!("{base}/ui/n/local/")).await.expect("goto");
    b.keys("/").await;
    assert_eq!(b.focused().await["id"], "q");
    b.keys(&format!("where do I work at Quill Systems{}", Key::Enter))
        .await;
    b.wait_page("search", "search?q=").await;
    let results = b.text("section.results").await;
    assert!(results.contains("Works at Quill Systems"), "{results}");
    assert!(
        results.contains("Arms that found it") && results.contains("raw score"),
        "{results}"
    );
    assert!(
        results.contains("Why it is here") && results.contains("bar"),
        "{results}"
    );
    let explain = c
        .find(Locator::Css("details.explain"))
        .await
        .expect("explain");
    explain
        .find(Locator::Css("summary"))
        .await
        .expect("summary")
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("open explain");
    assert!(explain.text().await.expect("text").contains("candidate(s)"));
    b.screenshot("search", Some("section.results")).await;
    // An abstention says why.
    c.goto(&format!(
        "{base}/ui/n/local/search?q=what+is+the+airspeed+velocity+of+an+unladen+swallow"
    ))
    .await
    .expect("goto");
    let results = b.text("section.results").await;
    assert!(
        results.contains("No answer: abstained") && results.contains("Why it abstained"),
        "{results}"
    );
    // No memory holds a word of it (words alone here): the reason says so.
    assert!(results.contains("no arm found a candidate"), "{results}");

    // --- The timeline (`l`), newest first, each commit with what it touched.
    b.keys("l").await;
    b.wait_page("timeline", "/timeline").await;
    let first = b.text("ol.timeline > li:first-child").await;
    assert!(first.contains("remember: facts/misc/hostile.md"), "{first}");
    let ingest_lines = b
        .js("return [...document.querySelectorAll('ol.timeline > li')].filter(l => l.textContent.includes('ingest:')).length")
        .await;
    assert!(
        ingest_lines.as_u64().is_some_and(|n| n >= 10),
        "one line per ingested session: {ingest_lines}"
    );
    b.screenshot("timeline", None).await;
    if updating_screenshots() {
        // For the docs: an ingested memory with the transcript it came from.
        let href = b
            .js("const l = [...document.querySelectorAll('ol.timeline > li')].find(l => l.textContent.includes('s-0730-new-job')); const a = l && l.querySelector('ul.touched li.added a'); return a ? a.href : null")
            .await;
        if let Some(href) = href.as_str() {
            c.goto(href).await.expect("goto");
            b.screenshot("ingested", Some("section.sources")).await;
        }
    }

    // --- A hostile memory is shown, not run.
    c.goto(&format!("{base}/ui/n/local/m/facts/misc/hostile.md"))
        .await
        .expect("goto");
    b.wait_page("memory", "hostile.md").await;
    assert!(
        b.text("main h1")
            .await
            .contains("<script>window.__pwned = 1</script>")
    );
    let inert = b
        .js("return {pwned: window.__pwned === undefined ? null : window.__pwned, foreign: document.querySelectorAll('main img, main iframe, main script, [onerror], a[href^=\"javascript\"]').length}")
        .await;
    assert_eq!(
        inert,
        json!({"pwned": null, "foreign": 0}),
        "nothing ran or was injected"
    );

    // --- A phone-sized window: one column, nothing wider than the screen.
    c.set_window_size(390, 844).await.expect("resize");
    for (path, name) in [
        ("/ui/n/local/m/facts/work/lumen.md", Some("phone")),
        ("/ui/n/local/?topic=facts/work", None),
        ("/ui/n/local/search?q=where+do+I+work", None),
        ("/ui/n/local/timeline", None),
    ] {
        c.goto(&format!("{base}{path}")).await.expect("goto");
        if let Some(wide) = b.too_wide().await {
            panic!("{path} is wider than a phone: {wide}");
        }
        if let Some(name) = name {
            b.screenshot(name, None).await;
        }
    }
}

#[test]
fn the_served_web_view_signs_in_with_an_api_key() {
    let Some((chromium, driver)) = browser() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let data_s = data.to_str().expect("path");
    let created: Value = serde_json::from_str(&gitloom(
        &[
            "admin",
            "--data",
            data_s,
            "create-account",
            "acme",
            "--json",
        ],
        None,
    ))
    .expect("account JSON");
    let key = created["api_key"].as_str().expect("api_key").to_owned();
    let (_serve, base) = start_gitloom(&["serve", "--addr", "127.0.0.1:0", "--data", data_s]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let post = |path: &str, body: Value| {
        let r = agent
            .post(&format!("{base}{path}"))
            .header("Authorization", &format!("Bearer {key}"))
            .header("content-type", "application/json")
            .send(&body.to_string())
            .expect("request");
        assert!(r.status().is_success(), "{path}: {}", r.status());
    };
    post("/v1/namespaces", json!({"name": "notes"}));
    post(
        "/v1/namespaces/notes/memories",
        json!({"title": "Cat", "topic": "pets", "body": "The cat is Miso."}),
    );
    runtime().block_on(async {
        let b = launch(&chromium, &driver).await;
        let c = &b.client;
        c.goto(&format!("{base}/ui/n/notes/?topic=facts/pets"))
            .await
            .expect("goto");
        // No key yet: the sign-in form, with the key field focused.
        assert_eq!(b.focused().await["id"], "key");
        b.keys("glk_not-a-key").await;
        b.keys(&Key::Enter.to_string()).await;
        let problem = c
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css("main .problem"))
            .await
            .expect("the sign-in page again, with the problem")
            .text()
            .await
            .expect("text");
        assert!(problem.contains("not valid"), "{problem}");
        c.find(Locator::Css("#key"))
            .await
            .expect("key field")
            .send_keys(&format!("{key}{}", Key::Enter))
            .await
            .expect("type key");
        // Back to the page asked for, signed in.
        b.wait_page("tree", "/ui/n/notes/?topic=facts").await;
        assert!(b.text("section.files").await.contains("Cat"));
        let http_only = b.js("return document.cookie.includes('gitloom_key')").await;
        assert_eq!(
            http_only,
            json!(false),
            "the key's cookie is out of scripts' reach"
        );
        // The store list shows the account's namespaces.
        c.goto(&format!("{base}/ui/")).await.expect("goto");
        assert!(b.text("main").await.contains("notes"));
        // Signing out forgets the key.
        c.find(Locator::Css("form.signout button"))
            .await
            .expect("sign out")
            .send_keys(&Key::Enter.to_string())
            .await
            .expect("enter");
        let deadline = Instant::now() + Duration::from_secs(20);
        while b.js("return !!document.getElementById('key')").await != json!(true) {
            assert!(
                Instant::now() < deadline,
                "the sign-in form after signing out"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        c.goto(&format!("{base}/ui/n/notes/")).await.expect("goto");
        assert!(
            b.js("return !!document.getElementById('key')").await == json!(true),
            "signed out"
        );
        b.client.clone().close().await.expect("close the browser");
    });
}
