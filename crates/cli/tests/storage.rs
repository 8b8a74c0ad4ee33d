//! `gitloom --storage s3://…` against a real S3 server (SeaweedFS `weed mini` in CI):
//! several `gitloom` processes with separate caches play the API nodes.
//!
//! Needs GITLOOM_TEST_S3 (endpoint, e.g. http://127.0.0.1:8333),
//! GITLOOM_TEST_S3_BUCKET (default gitloom-test) and AWS_ACCESS_KEY_ID /
//! AWS_SECRET_ACCESS_KEY; each test prints why and skips when they are absent.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

struct S3 {
    endpoint: String,
    url: String,
}

/// The server and a fresh prefix for one test, or `None` (with the reason printed).
fn s3(test: &str) -> Option<S3> {
    let Ok(endpoint) = std::env::var("GITLOOM_TEST_S3") else {
        eprintln!("{test}: skipped: GITLOOM_TEST_S3 is not set (no S3 server to test against)");
        return None;
    };
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        eprintln!("{test}: skipped: AWS_ACCESS_KEY_ID is not set");
        return None;
    }
    let bucket =
        std::env::var("GITLOOM_TEST_S3_BUCKET").unwrap_or_else(|_| "gitloom-test".to_owned());
    let url = format!("s3://{bucket}/cli-{test}-{:016x}", fastrand_u64());
    Some(S3 { endpoint, url })
}

/// A unique-enough prefix per run without another dependency.
fn fastrand_u64() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    t ^ (u64::from(std::process::id()) << 32)
}

/// One "node": a `gitloom` process whose cache lives in `cache`.
fn node(s3: &S3, cache: &Path, args: &[&str]) -> Command {
    node_in(s3, cache, "team", args)
}

/// A node working on `namespace`.
fn node_in(s3: &S3, cache: &Path, namespace: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gitloom"));
    cmd.arg("--storage")
        .arg(&s3.url)
        .args(["--namespace", namespace, "--embedder", "none"])
        .args(args)
        .env_remove("GITLOOM_REPO")
        .env_remove("GITLOOM_STORAGE")
        .env("XDG_CACHE_HOME", cache)
        .env("AWS_ENDPOINT_URL", &s3.endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env(
            "AWS_REGION",
            std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned()),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn spawn(s3: &S3, cache: &Path, args: &[&str], stdin: &[u8]) -> Child {
    let mut child = node(s3, cache, args).spawn().expect("gitloom runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 stdout")
}

fn run(s3: &S3, cache: &Path, args: &[&str], stdin: &[u8]) -> String {
    let out = spawn(s3, cache, args, stdin)
        .wait_with_output()
        .expect("gitloom finishes");
    ok(out, &format!("gitloom {args:?}"))
}

fn json(s3: &S3, cache: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&run(s3, cache, &all, b"")).expect("JSON on stdout")
}

fn memory(title: &str, body: &str) -> String {
    format!("---\ntitle: {title}\n---\n{body}\n")
}

fn log_commits(s3: &S3, cache: &Path) -> Vec<String> {
    json(s3, cache, &["log"])
        .as_array()
        .expect("log is a list")
        .iter()
        .map(|e| e["commit"].as_str().expect("commit").to_owned())
        .collect()
}

/// The bare mirror a node keeps for namespace `team`.
fn mirror_of(cache: &Path) -> PathBuf {
    mirror_of_ns(cache, "team")
}

fn mirror_of_ns(cache: &Path, namespace: &str) -> PathBuf {
    let remote = cache.join("gitloom").join("remote");
    let location = std::fs::read_dir(&remote)
        .expect("cache has remote/")
        .map(|e| e.expect("entry").path())
        .find(|p| p.is_dir())
        .expect("one location");
    location.join(namespace).join("mirror.git")
}

fn fsck(git_dir: &Path) {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["fsck", "--full", "--strict", "--no-dangling"])
        .output()
        .expect("git fsck runs");
    assert!(
        out.status.success(),
        "git fsck: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn three_nodes_read_each_others_writes_on_the_next_command() {
    let Some(s3) = s3("three-nodes") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let [n1, n2, n3] = ["n1", "n2", "n3"].map(|n| dir.path().join(n));

    let out = run(
        &s3,
        &n1,
        &["--json", "write", "facts/work/orbital.md"],
        memory("Works at Orbital AI", "ML engineer on the inference team.").as_bytes(),
    );
    let written: Value = serde_json::from_str(&out).expect("json");
    let commit = written["commit"].as_str().expect("a commit").to_owned();

    // The very next command on another node sees it.
    let got = json(&s3, &n2, &["get", "facts/work/orbital.md"]);
    assert_eq!(got["commit"], Value::String(commit.clone()));
    assert!(
        got["content"]
            .as_str()
            .is_some_and(|c| c.contains("inference team"))
    );

    run(
        &s3,
        &n2,
        &[
            "remember",
            "--title",
            "Allergic to peanuts",
            "--tier",
            "facts",
            "--topic",
            "health",
            "--body",
            "Severe peanut allergy; carries an EpiPen.",
        ],
        b"",
    );
    let r = json(&s3, &n3, &["retrieve", "peanut allergy"]);
    let hits = r["hits"].as_array().expect("hits");
    assert!(
        hits.iter()
            .any(|h| h["path"].as_str().is_some_and(|p| p.contains("peanuts"))),
        "{r:#}"
    );
    let stats = json(&s3, &n1, &["stats"]);
    assert_eq!(stats["files"], Value::from(2), "{stats:#}");
    let topics = json(&s3, &n1, &["topics"]);
    assert!(topics.to_string().contains("health"), "{topics:#}");
    let log3 = log_commits(&s3, &n3);
    assert!(log3.contains(&commit));
    assert_eq!(log_commits(&s3, &n1), log3, "n1 sees n2's remember too");
    fsck(&mirror_of(&n3));
}

#[test]
fn eight_concurrent_writers_across_three_nodes_lose_nothing() {
    let Some(s3) = s3("eight-writers") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("n{i}"))).collect();
    // Warm every node first so the writes race on the head, not on cold starts.
    for n in &nodes {
        json(&s3, n, &["log"]);
    }
    let children: Vec<(usize, Child)> = (0..8)
        .map(|i| {
            let content = memory(
                &format!("Fact {i}"),
                &format!("Concurrent fact number {i}."),
            );
            (
                i,
                spawn(
                    &s3,
                    &nodes[i % 3],
                    &["--json", "write", &format!("facts/w{i}.md")],
                    content.as_bytes(),
                ),
            )
        })
        .collect();
    let mut acked = Vec::new();
    for (i, child) in children {
        let out = ok(
            child.wait_with_output().expect("finishes"),
            &format!("writer {i}"),
        );
        let v: Value = serde_json::from_str(&out).expect("json");
        acked.push(
            v["commit"]
                .as_str()
                .expect("acknowledged commit")
                .to_owned(),
        );
    }
    let fresh = dir.path().join("fresh");
    let history = log_commits(&s3, &fresh);
    for c in &acked {
        assert!(history.contains(c), "acknowledged {c} missing from history");
    }
    for i in 0..8 {
        let got = json(&s3, &fresh, &["get", &format!("facts/w{i}.md")]);
        assert!(
            got["content"]
                .as_str()
                .is_some_and(|c| c.contains(&format!("number {i}.")))
        );
    }
    fsck(&mirror_of(&fresh));
}

/// Polls `f` until it holds or the deadline passes.
fn wait_for(what: &str, deadline: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    eprintln!("gave up waiting for {what}");
    false
}

#[test]
fn a_writer_killed_mid_push_loses_no_acknowledged_write() {
    let Some(s3) = s3("killed-writer") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = dir.path().join("victim");
    let steady = dir.path().join("steady");
    json(&s3, &victim, &["log"]);
    json(&s3, &steady, &["log"]);
    let ref_file = mirror_of(&victim).join("refs").join("heads").join("main");
    let mut acked = Vec::new();
    let mut rounds_killed = 0;
    for round in 0..4 {
        // A batch big enough that packing and uploading it takes a moment.
        let src = dir.path().join(format!("batch{round}"));
        for i in 0..150 {
            let p = src.join("facts").join(format!("r{round}-{i}.md"));
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(
                &p,
                memory(
                    &format!("Round {round} item {i}"),
                    &"filler text ".repeat(40),
                ),
            )
            .expect("write");
        }
        let before = std::fs::read(&ref_file).unwrap_or_default();
        let mut child = spawn(&s3, &victim, &["import", src.to_str().expect("utf8")], b"");
        // Kill it once its local commit exists: it is now packing, uploading or
        // about to move the head — the window a crash must not corrupt.
        wait_for("the victim's local commit", Duration::from_secs(20), || {
            std::fs::read(&ref_file).unwrap_or_default() != before
                || child.try_wait().ok().flatten().is_some()
        });
        if child.try_wait().expect("try_wait").is_none() {
            rounds_killed += 1;
        }
        child.kill().ok();
        let status = child.wait().expect("reaped");
        // Meanwhile another node keeps writing; each of these is acknowledged.
        let content = memory(&format!("Steady {round}"), "steady writer");
        let out = run(
            &s3,
            &steady,
            &["--json", "write", &format!("facts/steady{round}.md")],
            content.as_bytes(),
        );
        let v: Value = serde_json::from_str(&out).expect("json");
        acked.push(v["commit"].as_str().expect("commit").to_owned());
        if status.success() {
            // The import finished before the kill: it was acknowledged, so it must stay.
            eprintln!("round {round}: the import finished before the kill");
        }
    }
    eprintln!("{rounds_killed} of 4 imports killed mid-flight");
    assert!(
        rounds_killed > 0,
        "no import was killed mid-flight; the test proved nothing"
    );

    // A brand-new node can open the namespace: the head names only stored packs.
    let fresh = dir.path().join("fresh");
    let history = log_commits(&s3, &fresh);
    for c in &acked {
        assert!(history.contains(c), "acknowledged {c} lost");
    }
    // Each killed import is all or nothing.
    let stats = json(&s3, &fresh, &["stats"]);
    let files = stats["files"].as_u64().expect("files");
    assert_eq!((files - 4) % 150, 0, "a partial import leaked: {stats:#}");
    fsck(&mirror_of(&fresh));
    // The victim's cache recovers: its next write lands on the real head.
    let content = memory("After the crash", "victim writes again");
    run(
        &s3,
        &victim,
        &["write", "facts/after.md"],
        content.as_bytes(),
    );
    let got = json(&s3, &fresh, &["get", "facts/after.md"]);
    assert!(
        got["content"]
            .as_str()
            .is_some_and(|c| c.contains("victim writes again"))
    );
    let victim_log = log_commits(&s3, &victim);
    let fresh_log = log_commits(&s3, &fresh);
    assert_eq!(
        victim_log, fresh_log,
        "the victim serves exactly the remote history"
    );
}

/// These need no server: they fail (or succeed) before any request.
fn offline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gitloom"))
        .args(args)
        .env_remove("GITLOOM_REPO")
        .env_remove("GITLOOM_NAMESPACE")
        .env("GITLOOM_STORAGE", "s3://no-such-bucket/prefix")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .output()
        .expect("gitloom runs")
}

#[test]
fn bad_storage_settings_are_refused_by_name_and_storeless_commands_ignore_them() {
    let out = offline(&["--namespace", "a/b", "log"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad namespace name \"a/b\""), "{err}");

    let out = offline(&["--storage", "gs://bucket/p", "log"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only s3://bucket/prefix"), "{err}");

    let out = offline(&["init"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs no init"));

    // GITLOOM_STORAGE set globally must not break commands that have no store.
    let out = offline(&["--json", "model", "status"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- `gitloom serve --storage`: stateless API nodes over one bucket ----

/// One `gitloom serve --storage` process; killed when dropped.
struct ServeNode {
    child: Child,
    base: String,
}

impl Drop for ServeNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a node with its own data (cache) directory and waits for its address.
fn serve_node(s3: &S3, data: &Path) -> ServeNode {
    use std::io::BufRead;
    let data_arg = data.to_str().expect("UTF-8 temp path");
    let mut child = node(
        s3,
        data,
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--data",
            data_arg,
            "--rate",
            "10000",
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .spawn()
    .expect("gitloom serve runs");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let base = loop {
        let line = lines
            .next()
            .expect("serve printed its address before exiting")
            .expect("stderr is UTF-8");
        if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            break url.to_owned();
        }
    };
    // Keep draining stderr so the node never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines.by_ref() {});
    ServeNode { child, base }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .new_agent()
}

/// One request; the status and the JSON body.
fn http(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    key: &str,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    let auth = format!("Bearer {key}");
    let response = match (method, body) {
        ("GET", _) => agent.get(url).header("Authorization", &auth).call(),
        ("DELETE", _) => agent.delete(url).header("Authorization", &auth).call(),
        (_, Some(b)) => agent
            .post(url)
            .header("Authorization", &auth)
            .header("Content-Type", "application/json")
            .send(b.to_string()),
        (_, None) => agent.post(url).header("Authorization", &auth).send_empty(),
    };
    let mut r = response.map_err(|e| e.to_string())?;
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().map_err(|e| e.to_string())?;
    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, v))
}

fn expect(r: Result<(u16, Value), String>, status: u16, what: &str) -> Value {
    let (got, body) = r.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got, status, "{what}: {body:#}");
    body
}

/// `gitloom --storage … admin create-account|create-key NAME`: the key.
fn admin(s3: &S3, cache: &Path, command: &str, account: &str) -> String {
    let v = json(s3, cache, &["admin", command, account]);
    v["api_key"].as_str().expect("an api key").to_owned()
}

fn write_body(path: &str, title: &str, body: &str) -> Value {
    serde_json::json!({"path": path, "content": memory(title, body)})
}

/// A node that has never seen the account's namespace: its log, and its mirror
/// checked by `git fsck`.
fn cold_log(s3: &S3, cache: &Path, account: &str, namespace: &str) -> Vec<String> {
    let url = format!("{}/accounts/{account}", s3.url);
    let at = S3 {
        endpoint: s3.endpoint.clone(),
        url,
    };
    let out = node_in(&at, cache, namespace, &["--json", "log"])
        .output()
        .expect("gitloom runs");
    let v: Value = serde_json::from_str(&ok(out, "cold log")).expect("json log");
    fsck(&mirror_of_ns(cache, namespace));
    v.as_array()
        .expect("a list")
        .iter()
        .map(|e| e["summary"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A fresh prefix with account `acme` (its key) and `n` serve nodes over it, whose
/// data directories are `dir/node<i>`.
struct Cluster {
    s3: S3,
    dir: tempfile::TempDir,
    key: String,
    nodes: Vec<ServeNode>,
}

fn cluster(test: &str, n: usize) -> Option<Cluster> {
    let s3 = s3(test)?;
    let dir = tempfile::tempdir().expect("tempdir");
    let key = admin(&s3, &dir.path().join("admin"), "create-account", "acme");
    let nodes = (0..n)
        .map(|i| serve_node(&s3, &dir.path().join(format!("node{i}"))))
        .collect();
    Some(Cluster {
        s3,
        dir,
        key,
        nodes,
    })
}

#[test]
fn serve_nodes_over_one_bucket_share_accounts_namespaces_and_writes() {
    let Some(Cluster {
        s3,
        dir,
        key,
        nodes,
    }) = cluster("serve-nodes", 3)
    else {
        return;
    };
    let (a, b, c) = (&nodes[0].base, &nodes[1].base, &nodes[2].base);
    let agent = agent();
    let create = serde_json::json!({"name": "notes"});

    expect(
        http(
            &agent,
            "POST",
            &format!("{a}/v1/namespaces"),
            &key,
            Some(&create),
        ),
        201,
        "create on a",
    );
    let again = expect(
        http(
            &agent,
            "POST",
            &format!("{b}/v1/namespaces"),
            &key,
            Some(&create),
        ),
        409,
        "create again on b",
    );
    assert_eq!(again["error"]["code"], "namespace_exists", "{again:#}");
    let listed = expect(
        http(&agent, "GET", &format!("{c}/v1/namespaces"), &key, None),
        200,
        "list on c",
    );
    assert_eq!(listed["result"]["namespaces"], serde_json::json!(["notes"]));

    // A write through one node is read through the others on their very next request.
    let body = write_body(
        "facts/work/orbital.md",
        "Works at Orbital AI",
        "ML engineer on inference.",
    );
    expect(
        http(
            &agent,
            "POST",
            &format!("{a}/v1/namespaces/notes/memories"),
            &key,
            Some(&body),
        ),
        200,
        "write on a",
    );
    let got = expect(
        http(
            &agent,
            "GET",
            &format!("{b}/v1/namespaces/notes/memories/facts/work/orbital.md"),
            &key,
            None,
        ),
        200,
        "get on b",
    );
    assert!(
        got.to_string().contains("ML engineer on inference"),
        "{got:#}"
    );
    let body = write_body(
        "facts/health/peanuts.md",
        "Allergic to peanuts",
        "Severe peanut allergy; carries an EpiPen.",
    );
    expect(
        http(
            &agent,
            "POST",
            &format!("{c}/v1/namespaces/notes/memories"),
            &key,
            Some(&body),
        ),
        200,
        "write on c",
    );
    let hits = expect(
        http(
            &agent,
            "GET",
            &format!("{a}/v1/namespaces/notes/retrieve?q=peanut%20allergy"),
            &key,
            None,
        ),
        200,
        "retrieve on a",
    );
    assert!(
        hits.to_string().contains("facts/health/peanuts.md"),
        "{hits:#}"
    );
    // Ops and jobs run through the same path.
    let stats = expect(
        http(
            &agent,
            "POST",
            &format!("{b}/v1/namespaces/notes/ops/stats"),
            &key,
            Some(&serde_json::json!({})),
        ),
        200,
        "stats on b",
    );
    assert_eq!(stats["result"]["files"], 2, "{stats:#}");

    // A key made after the nodes started is known to all of them.
    let second = admin(&s3, &dir.path().join("admin"), "create-key", "acme");
    for n in [a, b, c] {
        let url = format!("{n}/v1/namespaces");
        assert!(
            wait_for("the new key", Duration::from_secs(10), || {
                matches!(http(&agent, "GET", &url, &second, None), Ok((200, _)))
            }),
            "{n} never accepted the new key"
        );
    }
    // Another account sees none of it.
    let other = admin(&s3, &dir.path().join("admin"), "create-account", "other");
    let url = format!("{b}/v1/namespaces");
    assert!(wait_for("the other key", Duration::from_secs(10), || {
        matches!(http(&agent, "GET", &url, &other, None), Ok((200, _)))
    }));
    let none = expect(
        http(
            &agent,
            "GET",
            &format!("{b}/v1/namespaces/notes/memories/facts/work/orbital.md"),
            &other,
            None,
        ),
        404,
        "another account",
    );
    assert_eq!(none["error"]["code"], "namespace_not_found", "{none:#}");

    // Deleted through one node: gone on the others' next request, and a write there
    // does not bring it back.
    let (status, _) = http(
        &agent,
        "DELETE",
        &format!("{c}/v1/namespaces/notes"),
        &key,
        None,
    )
    .expect("delete on c");
    assert!((200..300).contains(&status), "delete: {status}");
    let gone = expect(
        http(
            &agent,
            "GET",
            &format!("{a}/v1/namespaces/notes/memories/facts/work/orbital.md"),
            &key,
            None,
        ),
        404,
        "get on a after delete",
    );
    assert_eq!(gone["error"]["code"], "namespace_not_found", "{gone:#}");
    let body = write_body("facts/x.md", "X", "x");
    expect(
        http(
            &agent,
            "POST",
            &format!("{b}/v1/namespaces/notes/memories"),
            &key,
            Some(&body),
        ),
        404,
        "write on b after delete",
    );
    let listed = expect(
        http(&agent, "GET", &format!("{a}/v1/namespaces"), &key, None),
        200,
        "list after delete",
    );
    assert_eq!(listed["result"]["namespaces"], serde_json::json!([]));
}

#[test]
fn eight_writers_across_three_serve_nodes_lose_nothing() {
    let Some(Cluster {
        s3,
        dir,
        key,
        nodes,
    }) = cluster("serve-eight", 3)
    else {
        return;
    };
    let agent = agent();
    expect(
        http(
            &agent,
            "POST",
            &format!("{}/v1/namespaces", nodes[0].base),
            &key,
            Some(&serde_json::json!({"name": "shared"})),
        ),
        201,
        "create",
    );
    const WRITERS: usize = 8;
    const WRITES: usize = 6;
    let acked: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let base = nodes[w % nodes.len()].base.clone();
                let (key, agent) = (&key, &agent);
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..WRITES {
                        let path = format!("facts/w{w}/note{i}.md");
                        let body = write_body(
                            &path,
                            &format!("Writer {w} note {i}"),
                            &format!("Body {w}-{i}."),
                        );
                        let v = expect(
                            http(
                                agent,
                                "POST",
                                &format!("{base}/v1/namespaces/shared/memories"),
                                key,
                                Some(&body),
                            ),
                            200,
                            &path,
                        );
                        assert!(v["result"]["commit"].is_string(), "{v:#}");
                        mine.push(path);
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("writer thread"))
            .collect()
    });
    assert_eq!(acked.len(), WRITERS * WRITES);
    // Every acknowledged write is there, read through every node.
    for (i, path) in acked.iter().enumerate() {
        let base = &nodes[i % nodes.len()].base;
        expect(
            http(
                &agent,
                "GET",
                &format!("{base}/v1/namespaces/shared/memories/{path}"),
                &key,
                None,
            ),
            200,
            path,
        );
    }
    // And in the history a node that never saw the namespace fetches; fsck is clean.
    let log = cold_log(&s3, &dir.path().join("fresh"), "acme", "shared");
    assert!(log.len() > WRITERS * WRITES, "{} commits", log.len());
}

#[test]
fn a_serve_node_killed_mid_write_loses_no_acknowledged_write() {
    let Some(Cluster {
        s3,
        dir,
        key,
        mut nodes,
    }) = cluster("serve-killed", 2)
    else {
        return;
    };
    let victim_dir = dir.path().join("node0");
    let steady = nodes.pop().expect("two nodes");
    let mut victim = nodes.pop().expect("two nodes");
    let agent = agent();
    expect(
        http(
            &agent,
            "POST",
            &format!("{}/v1/namespaces", steady.base),
            &key,
            Some(&serde_json::json!({"name": "kill"})),
        ),
        201,
        "create",
    );
    let acked = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        let (base, key, agent, acked) = (victim.base.clone(), &key, &agent, &acked);
        let writer = scope.spawn(move || {
            for i in 0..10_000 {
                let path = format!("facts/k/note{i}.md");
                let body = write_body(&path, &format!("Note {i}"), &format!("Body {i}."));
                match http(
                    agent,
                    "POST",
                    &format!("{base}/v1/namespaces/kill/memories"),
                    key,
                    Some(&body),
                ) {
                    Ok((200, _)) => acked.lock().expect("lock").push(path),
                    // The node died: whatever was in flight was never acknowledged.
                    _ => return,
                }
            }
        });
        assert!(
            wait_for("a few acknowledged writes", Duration::from_secs(60), || {
                acked.lock().expect("lock").len() >= 4
            }),
            "no write was acknowledged"
        );
        // Mid-stream: the next write is in flight somewhere between commit and head.
        victim.child.kill().expect("SIGKILL the node");
        let _ = victim.child.wait();
        writer.join().expect("writer thread");
    });
    let acked = acked.into_inner().expect("lock");
    // Every acknowledged write is readable through the surviving node...
    for path in &acked {
        expect(
            http(
                &agent,
                "GET",
                &format!("{}/v1/namespaces/kill/memories/{path}", steady.base),
                &key,
                None,
            ),
            200,
            path,
        );
    }
    // ...which can still write (the head names only packs that exist)...
    let body = write_body("facts/k/after.md", "After", "Written after the kill.");
    expect(
        http(
            &agent,
            "POST",
            &format!("{}/v1/namespaces/kill/memories", steady.base),
            &key,
            Some(&body),
        ),
        200,
        "write after the kill",
    );
    // ...and the victim restarted on its old cache serves the head, not its own
    // half-published state.
    let restarted = serve_node(&s3, &victim_dir);
    expect(
        http(
            &agent,
            "GET",
            &format!(
                "{}/v1/namespaces/kill/memories/facts/k/after.md",
                restarted.base
            ),
            &key,
            None,
        ),
        200,
        "restarted node reads the head",
    );
    let log = cold_log(&s3, &dir.path().join("fresh"), "acme", "kill");
    assert!(
        log.len() > acked.len(),
        "{} commits for {} writes",
        log.len(),
        acked.len()
    );
}

#[test]
fn ingest_and_maintenance_run_through_storage_and_other_nodes_see_them() {
    let Some(s3) = s3("maint") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let [n1, n2] = ["n1", "n2"].map(|n| dir.path().join(n));
    let chat = br#"{"date": "2026-07-30", "messages": [
        {"role": "user", "content": "I accepted an offer from Orbital AI this morning. I start Monday 3 August. My manager is Lena Fischer."},
        {"role": "assistant", "content": "Congratulations!"}]}"#;
    let report: Value =
        serde_json::from_str(&run(&s3, &n1, &["--json", "ingest", "-"], chat)).expect("json");
    assert_eq!(report["commits"], 1, "{report:#}");
    // Another node answers from it on its next command.
    let r = json(&s3, &n2, &["retrieve", "where do i work"]);
    assert!(r.to_string().contains("Orbital AI"), "{r:#}");
    // Ingesting the same session again through the other node changes nothing.
    let before = log_commits(&s3, &n2);
    let again = run(&s3, &n2, &["ingest", "-"], chat);
    assert!(again.contains("already ingested"), "{again}");
    assert_eq!(log_commits(&s3, &n1), before);

    let gc = json(&s3, &n2, &["gc", "--repack"]);
    assert!(gc["expired"].is_array(), "{gc:#}");
    let doctor = json(&s3, &n1, &["doctor"]);
    assert_eq!(doctor["ok"], true, "{doctor:#}");
    let plan = json(&s3, &n1, &["consolidate", "--dry-run"]);
    assert_eq!(plan["dry_run"], true, "{plan:#}");
    assert_eq!(log_commits(&s3, &n2), before, "a dry run commits nothing");
    fsck(&mirror_of(&n2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_storage_writes_where_other_nodes_read() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    let Some(s3) = s3("mcp") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let [n1, n2] = ["n1", "n2"].map(|n| dir.path().join(n));
    let cmd = tokio::process::Command::from(node(&s3, &n1, &["mcp"]));
    let client =
        ().serve(rmcp::transport::TokioChildProcess::new(cmd).expect("spawn gitloom mcp"))
            .await
            .expect("initialize");
    let args = serde_json::json!({
        "title": "Cat", "topic": "home", "body": "The cat is called Miso.",
        "cue": ["what is the cat called"]
    });
    let r = client
        .call_tool(
            CallToolRequestParams::new("remember")
                .with_arguments(args.as_object().expect("object").clone()),
        )
        .await
        .expect("remember");
    assert_eq!(r.is_error, Some(false), "{r:?}");
    client.cancel().await.expect("close");
    // Acknowledged means published: a node that never saw the namespace reads it.
    let got = json(&s3, &n2, &["get", "facts/home/cat.md"]);
    assert!(
        got["content"].as_str().is_some_and(|c| c.contains("Miso")),
        "{got:#}"
    );
}

/// Accounts in object storage: a key revoked or an account deleted with `gitloom
/// admin` is refused by every node on its next request; an account made again
/// under the name starts empty; usage is counted over both nodes and survives a
/// node killed and restarted.
#[test]
fn serve_nodes_refuse_a_revoked_key_at_once_and_count_usage_together() {
    let Some(Cluster {
        s3,
        dir,
        key,
        mut nodes,
    }) = cluster("serve-revoke", 2)
    else {
        return;
    };
    let admin_cache = dir.path().join("admin");
    let agent = agent();
    let second = json(&s3, &admin_cache, &["admin", "create-key", "acme"]);
    let second_key = second["api_key"].as_str().expect("key").to_owned();
    let listed = json(&s3, &admin_cache, &["admin", "list-keys", "acme"]);
    let first_id = listed[0]["keys"][0]["id"].as_str().expect("id").to_owned();
    assert!(!listed.to_string().contains(&key), "{listed}");

    let (a, b) = (nodes[0].base.clone(), nodes[1].base.clone());
    expect(
        http(
            &agent,
            "POST",
            &format!("{a}/v1/namespaces"),
            &key,
            Some(&serde_json::json!({"name": "notes"})),
        ),
        201,
        "create",
    );
    let n = 6;
    for i in 0..n {
        let node = if i % 2 == 0 { &a } else { &b };
        expect(
            http(
                &agent,
                "POST",
                &format!("{node}/v1/namespaces/notes/memories"),
                &key,
                Some(&write_body(&format!("facts/n{i}.md"), "N", "x")),
            ),
            200,
            "write",
        );
    }
    // Both nodes' counts, summed, once each node's record is written (within a
    // second of the request).
    let usage_on = |node: &str, want: u64| {
        wait_for("usage", Duration::from_secs(30), || {
            let u = expect(
                http(
                    &agent,
                    "GET",
                    &format!("{node}/v1/usage"),
                    &second_key,
                    None,
                ),
                200,
                "usage",
            );
            u["result"]["namespaces"]["notes"]["requests"]["write"] == want
                && u["result"]["namespaces"]["notes"]["writes"] == want
        })
    };
    assert!(usage_on(&a, n), "usage on a");
    assert!(usage_on(&b, n), "usage on b");

    // A node killed (no flush) and started again on its data directory loses no count.
    drop(nodes.remove(0));
    let restarted = serve_node(&s3, &dir.path().join("node0"));
    let a = restarted.base.clone();
    assert!(usage_on(&a, n), "usage after a restart");

    // Revoke the first key: refused by both nodes on the very next request.
    json(
        &s3,
        &admin_cache,
        &["admin", "revoke-key", "acme", &first_id],
    );
    for node in [&a, &b] {
        let r = expect(
            http(&agent, "GET", &format!("{node}/v1/namespaces"), &key, None),
            401,
            "revoked",
        );
        assert_eq!(r["error"]["code"], "unauthorized", "{r:#}");
        expect(
            http(
                &agent,
                "GET",
                &format!("{node}/v1/namespaces"),
                &second_key,
                None,
            ),
            200,
            "other key",
        );
    }

    // Delete the account: its last key is refused at once, its data is gone from
    // the bucket, and a new account of the name starts empty.
    let deleted = json(&s3, &admin_cache, &["admin", "delete-account", "acme"]);
    assert_eq!(deleted["data"], "deleted", "{deleted}");
    for node in [&a, &b] {
        expect(
            http(
                &agent,
                "GET",
                &format!("{node}/v1/namespaces/notes/log"),
                &second_key,
                None,
            ),
            401,
            "deleted",
        );
    }
    let again = json(&s3, &admin_cache, &["admin", "create-account", "acme"]);
    let new_key = again["api_key"].as_str().expect("key").to_owned();
    for node in [&a, &b] {
        let listed = expect(
            http(
                &agent,
                "GET",
                &format!("{node}/v1/namespaces"),
                &new_key,
                None,
            ),
            200,
            "list",
        );
        assert_eq!(
            listed["result"]["namespaces"],
            serde_json::json!([]),
            "{listed:#}"
        );
        expect(
            http(
                &agent,
                "GET",
                &format!("{node}/v1/namespaces/notes/log"),
                &new_key,
                None,
            ),
            404,
            "old namespace",
        );
    }
    let usage = expect(
        http(&agent, "GET", &format!("{b}/v1/usage"), &new_key, None),
        200,
        "usage",
    );
    assert!(
        usage["result"]["namespaces"].get("notes").is_none(),
        "{usage:#}"
    );
    drop(restarted);
}
