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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gitloom"));
    cmd.arg("--storage")
        .arg(&s3.url)
        .args(["--namespace", "team", "--embedder", "none"])
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
    let remote = cache.join("gitloom").join("remote");
    let location = std::fs::read_dir(&remote)
        .expect("cache has remote/")
        .map(|e| e.expect("entry").path())
        .find(|p| p.is_dir())
        .expect("one location");
    location.join("team").join("mirror.git")
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
