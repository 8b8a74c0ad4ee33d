//! The server under abuse: revoked keys and deleted accounts, jobs without end,
//! oversized and hostile input on every route, symlinks placed in a store by hand,
//! and metering that must count every request across a restart and a second node.
//!
//! Every reply of this suite is recorded: none may be a 5xx, and no error message
//! may name the server's data directory.

mod common;

use std::sync::Mutex;

use common::*;
use serde_json::{Value, json};

/// Every reply of a test, checked at its end.
#[derive(Default)]
struct Seen(Mutex<Vec<(String, Reply)>>);

impl Seen {
    fn note(&self, what: impl Into<String>, r: Reply) -> Reply {
        self.0.lock().expect("seen").push((what.into(), r.clone()));
        r
    }

    /// No 5xx, every error is the API's JSON error with a code, and no message
    /// names the data directory (or any absolute path below it).
    fn check(&self, s: &TestServer) {
        let data = s.data.path().to_string_lossy().into_owned();
        for (what, (status, body, build)) in self.0.lock().expect("seen").iter() {
            assert!(*status < 500, "{what}: {status} {body}");
            assert!(build.is_some(), "{what}: no build header");
            if *status >= 400 {
                let code = body["error"]["code"].as_str();
                assert!(code.is_some_and(|c| !c.is_empty()), "{what}: {body}");
                let message = body["error"]["message"].as_str().unwrap_or_default();
                assert!(!message.is_empty(), "{what}: {body}");
                assert!(
                    !message.contains(&data),
                    "{what} leaks the data dir: {message}"
                );
                assert!(
                    !message.contains("/accounts/"),
                    "{what} leaks a path: {message}"
                );
            }
        }
    }
}

fn code(r: &Reply) -> (u16, Option<&str>) {
    (r.0, r.1["error"]["code"].as_str())
}

fn namespace(s: &TestServer, key: &str, name: &str) {
    let (st, body, _) = post(Some(key), &s.url("/v1/namespaces"), &json!({"name": name}));
    assert_eq!(st, 201, "{body}");
}

fn write(s: &TestServer, key: &str, ns: &str, path: &str, body: &str) -> Reply {
    post(
        Some(key),
        &s.url(&format!("/v1/namespaces/{ns}/memories")),
        &json!({"path": path, "content": memory("T", body)}),
    )
}

#[test]
fn a_revoked_key_and_a_deleted_account_get_401_on_the_next_request() {
    let s = start();
    let seen = Seen::default();
    let admin = s.admin();
    let first = admin.create_account("carol").expect("account");
    let second = admin.create_key("carol").expect("key");
    namespace(&s, &first.api_key, "notes");
    let r = seen.note(
        "write",
        write(
            &s,
            &first.api_key,
            "notes",
            "facts/old.md",
            "carol's old secret",
        ),
    );
    assert_eq!(r.0, 200, "{}", r.1);
    // Keys are listed by id, never shown.
    let listing = serde_json::to_string(&admin.list_keys("carol").expect("list")).expect("json");
    assert!(listing.contains(&first.key_id) && !listing.contains(&first.api_key));

    admin.revoke_key("carol", &first.key_id).expect("revoke");
    let r = seen.note(
        "revoked",
        get(Some(&first.api_key), &s.url("/v1/namespaces")),
    );
    assert_eq!(code(&r), (401, Some("unauthorized")), "{}", r.1);
    let r = seen.note(
        "other key",
        get(Some(&second.api_key), &s.url("/v1/namespaces")),
    );
    assert_eq!(r.0, 200, "{}", r.1);

    // Delete the account (its data too), as `gitloom admin delete-account` does.
    let stones = admin
        .delete_account("carol", gitloom_server::DataFate::Deleting)
        .expect("delete");
    let r = seen.note(
        "deleted",
        get(Some(&second.api_key), &s.url("/v1/namespaces/notes/log")),
    );
    assert_eq!(code(&r), (401, Some("unauthorized")), "{}", r.1);
    for t in &stones {
        gitloom_server::namespaces::purge_tenant(Some(s.data.path()), None, &t.tenant)
            .expect("purge");
        admin.mark_deleted(&t.tenant).expect("mark");
    }
    assert!(!s.data.path().join("accounts/carol").exists());

    // A new carol starts empty, and stays so when she makes a namespace of the
    // same name.
    let again = admin.create_account("carol").expect("again");
    let r = seen.note("list", get(Some(&again.api_key), &s.url("/v1/namespaces")));
    assert_eq!(r.1["result"]["namespaces"], json!([]), "{}", r.1);
    namespace(&s, &again.api_key, "notes");
    let r = seen.note(
        "old memory",
        get(
            Some(&again.api_key),
            &s.url("/v1/namespaces/notes/memories/facts/old.md"),
        ),
    );
    assert_eq!(code(&r), (404, Some("not_found")), "{}", r.1);
    let r = seen.note(
        "retrieve",
        get(
            Some(&again.api_key),
            &s.url("/v1/namespaces/notes/retrieve?q=carol%27s%20old%20secret"),
        ),
    );
    assert_eq!(r.1["result"]["hits"], json!([]), "{}", r.1);
    seen.check(&s);
}

#[test]
fn a_deleted_account_kept_under_a_tombstone_is_never_seen_by_its_successor() {
    let s = start();
    let seen = Seen::default();
    let admin = s.admin();
    let old = admin.create_account("dave").expect("account");
    namespace(&s, &old.api_key, "notes");
    let r = seen.note(
        "write",
        write(&s, &old.api_key, "notes", "facts/pin.md", "the pin is 4711"),
    );
    assert_eq!(r.0, 200, "{}", r.1);
    // The server holds the namespace open while the account goes.
    admin
        .delete_account("dave", gitloom_server::DataFate::Kept)
        .expect("delete");
    let r = seen.note(
        "gone",
        get(Some(&old.api_key), &s.url("/v1/namespaces/notes/log")),
    );
    assert_eq!(r.0, 401);
    // The data is still there, for the operator.
    assert!(
        s.data
            .path()
            .join("accounts/dave/ns/notes/facts/pin.md")
            .is_file()
    );
    let new = admin.create_account("dave").expect("again");
    let r = seen.note("list", get(Some(&new.api_key), &s.url("/v1/namespaces")));
    assert_eq!(r.1["result"]["namespaces"], json!([]), "{}", r.1);
    let r = seen.note(
        "old ns",
        get(Some(&new.api_key), &s.url("/v1/namespaces/notes/log")),
    );
    assert_eq!(code(&r), (404, Some("namespace_not_found")), "{}", r.1);
    namespace(&s, &new.api_key, "notes");
    let r = seen.note(
        "old pin",
        get(
            Some(&new.api_key),
            &s.url("/v1/namespaces/notes/memories/facts/pin.md"),
        ),
    );
    assert_eq!(code(&r), (404, Some("not_found")), "{}", r.1);
    // A job of the old account is not the new one's either.
    seen.check(&s);
}

/// A conversation of `sessions` sessions with `per` one-line messages each.
fn conversation(sessions: usize, per: usize) -> Value {
    let sessions: Vec<Value> = (0..sessions)
        .map(|i| {
            let messages: Vec<Value> = (0..per)
                .map(|m| json!({"role": "user", "content": format!("I moved to city number {i} in week {m} and liked the park there.")}))
                .collect();
            json!({"id": format!("s{i:04}"), "date": "2026-03-02", "messages": messages})
        })
        .collect();
    json!({"sessions": sessions})
}

#[test]
fn jobs_are_bounded_cancellable_and_checked_before_they_start() {
    let s = start_with(|c| {
        c.jobs = gitloom_server::JobLimits {
            running: 1,
            kept: 5,
            pending_messages: 1_500,
            ..gitloom_server::JobLimits::default()
        };
        c.limits = gitloom_server::Limits {
            ingest_messages: 1_200,
            ingest_message_bytes: 1_000,
        };
    });
    let seen = Seen::default();
    let key = s.account("erin");
    namespace(&s, &key, "chat");
    let url = s.url("/v1/namespaces/chat/ingest");

    // Too big for one request, or one message too long: refused before any job.
    let r = seen.note("too many", post(Some(&key), &url, &conversation(2, 700)));
    assert_eq!(code(&r), (413, Some("too_large")), "{}", r.1);
    assert!(
        r.1["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("1400 messages"),
        "{}",
        r.1
    );
    let long = json!({"sessions": [{"id": "x", "date": "2026-03-02", "messages": [{"role": "user", "content": "a".repeat(2_000)}]}]});
    let r = seen.note("too long", post(Some(&key), &url, &long));
    assert_eq!(code(&r), (413, Some("too_large")), "{}", r.1);
    let r = seen.note(
        "bad date",
        post(
            Some(&key),
            &url,
            &json!({"sessions": [{"id": "x", "date": "someday", "messages": []}]}),
        ),
    );
    assert_eq!(code(&r), (400, Some("invalid_params")), "{}", r.1);
    let r = seen.note(
        "not an op",
        post(
            Some(&key),
            &s.url("/v1/namespaces/chat/jobs"),
            &json!({"op": "nope"}),
        ),
    );
    assert_eq!(code(&r), (404, Some("unknown_op")), "{}", r.1);
    // Over HTTP a long op runs only as a job.
    let r = seen.note(
        "ingest as op",
        post(
            Some(&key),
            &s.url("/v1/namespaces/chat/ops/ingest"),
            &conversation(1, 1),
        ),
    );
    assert_eq!(code(&r), (400, Some("use_a_job")), "{}", r.1);

    // A long ingest, then a second while it runs: one job at a time for this key,
    // and the pending messages stay within the account's quota.
    let r = seen.note("long ingest", post(Some(&key), &url, &conversation(300, 4)));
    assert_eq!(r.0, 202, "{}", r.1);
    let id = r.1["result"]["id"].as_str().expect("id").to_owned();
    assert_eq!(r.1["result"]["cancellable"], true);
    let r = seen.note("second", post(Some(&key), &url, &conversation(1, 1)));
    assert_eq!(code(&r), (429, Some("too_many_jobs")), "{}", r.1);
    // Writes to the namespace are not held up behind the ingest.
    let r = seen.note(
        "write beside",
        write(
            &s,
            &key,
            "chat",
            "facts/beside.md",
            "written while ingesting",
        ),
    );
    assert_eq!(r.0, 200, "{}", r.1);

    // Cancel it: it stops between sessions, saying what it did.
    let r = seen.note(
        "cancel",
        delete(Some(&key), &s.url(&format!("/v1/jobs/{id}"))),
    );
    assert_eq!(r.0, 202, "{}", r.1);
    assert_eq!(r.1["result"]["status"], "cancelling", "{}", r.1);
    let done = wait_job(&s, &key, &id);
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
    let report = &done["result"]["result"];
    assert_eq!(report["cancelled"], true, "{done}");
    assert!(
        report["commits"].as_u64().is_some_and(|c| c < 300),
        "{done}"
    );
    // A finished job can be deleted (its result is forgotten).
    let r = seen.note(
        "forget",
        delete(Some(&key), &s.url(&format!("/v1/jobs/{id}"))),
    );
    assert_eq!(r.0, 200, "{}", r.1);
    let r = seen.note(
        "forgotten",
        get(Some(&key), &s.url(&format!("/v1/jobs/{id}"))),
    );
    assert_eq!(code(&r), (404, Some("job_not_found")), "{}", r.1);
    let other = s.account("frank");
    let r = seen.note(
        "not yours",
        delete(Some(&other), &s.url("/v1/jobs/job_000")),
    );
    assert_eq!(code(&r), (404, Some("job_not_found")), "{}", r.1);

    // The quota counts messages of running jobs: 1,000 fit, 1,000 more do not.
    let r = seen.note("quota 1", post(Some(&key), &url, &conversation(250, 4)));
    assert_eq!(r.0, 202, "{}", r.1);
    let first = r.1["result"]["id"].as_str().expect("id").to_owned();
    let r = seen.note(
        "cancel quota 1",
        delete(Some(&key), &s.url(&format!("/v1/jobs/{first}"))),
    );
    assert_eq!(r.0, 202, "{}", r.1);
    wait_job(&s, &key, &first);

    // Only the newest finished jobs are kept: after 8 jobs, 5 are left.
    let mut ids = Vec::new();
    for _ in 0..8 {
        let r = seen.note(
            "log job",
            post(
                Some(&key),
                &s.url("/v1/namespaces/chat/jobs"),
                &json!({"op": "log"}),
            ),
        );
        assert_eq!(r.0, 202, "{}", r.1);
        let id = r.1["result"]["id"].as_str().expect("id").to_owned();
        assert_eq!(r.1["result"]["cancellable"], false);
        wait_job(&s, &key, &id);
        ids.push(id);
    }
    let kept: Vec<bool> = ids
        .iter()
        .map(|id| {
            seen.note("poll", get(Some(&key), &s.url(&format!("/v1/jobs/{id}"))))
                .0
                == 200
        })
        .collect();
    assert_eq!(kept, [false, false, false, true, true, true, true, true]);
    seen.check(&s);
}

#[test]
fn a_job_over_the_account_quota_is_refused() {
    let s = start_with(|c| {
        c.jobs = gitloom_server::JobLimits {
            running: 4,
            pending_messages: 1_500,
            ..gitloom_server::JobLimits::default()
        };
    });
    let seen = Seen::default();
    let key = s.account("gina");
    namespace(&s, &key, "chat");
    let url = s.url("/v1/namespaces/chat/ingest");
    let r = seen.note("first", post(Some(&key), &url, &conversation(250, 4)));
    assert_eq!(r.0, 202, "{}", r.1);
    let id = r.1["result"]["id"].as_str().expect("id").to_owned();
    let r = seen.note("over", post(Some(&key), &url, &conversation(250, 4)));
    assert_eq!(code(&r), (429, Some("quota_exceeded")), "{}", r.1);
    assert!(
        r.1["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("1500"),
        "{}",
        r.1
    );
    seen.note(
        "cancel",
        delete(Some(&key), &s.url(&format!("/v1/jobs/{id}"))),
    );
    wait_job(&s, &key, &id);
    seen.check(&s);
}

#[test]
fn hostile_names_and_sizes_are_4xx_naming_the_input() {
    let s = start();
    let seen = Seen::default();
    let key = s.account("hal");
    namespace(&s, &key, "notes");
    let r = seen.note(
        "seed",
        write(&s, &key, "notes", "facts/work/employer.md", "Acme"),
    );
    assert_eq!(r.0, 200, "{}", r.1);
    let r = seen.note(
        "seed 2",
        write(&s, &key, "notes", "facts/work/cocoa.md", "beans"),
    );
    assert_eq!(r.0, 200, "{}", r.1);
    let long = format!("facts/work/{}.md", "n".repeat(300));
    let cases: Vec<(&str, String, (u16, &str))> = vec![
        (
            ".git component",
            "facts/.git/config.md".into(),
            (400, "invalid_path"),
        ),
        (
            ".GIT component",
            "facts/.GIT/config.md".into(),
            (400, "invalid_path"),
        ),
        ("name over 255 bytes", long.clone(), (400, "invalid_path")),
        (
            "case-only collision",
            "facts/work/Employer.md".into(),
            (409, "path_collision"),
        ),
        (
            "look-alike",
            "facts/work/\u{441}\u{43e}\u{441}\u{43e}\u{430}.md".into(),
            (409, "path_collision"),
        ),
        (
            "mixed scripts",
            "facts/work/\u{435}mployer.md".into(),
            (400, "invalid_path"),
        ),
        (
            "bidi control",
            "facts/work/evil\u{202e}dm.md".into(),
            (400, "invalid_path"),
        ),
        (
            "zero-width",
            "facts/work/emp\u{200b}loyer.md".into(),
            (400, "invalid_path"),
        ),
        (
            "not NFC",
            "facts/work/cafe\u{301}.md".into(),
            (400, "invalid_path"),
        ),
        (
            "windows device",
            "facts/aux/x.md".into(),
            (400, "invalid_path"),
        ),
        (
            "outside the areas",
            "notes/x.md".into(),
            (400, "invalid_path"),
        ),
        (
            "traversal",
            "facts/../../x.md".into(),
            (400, "invalid_path"),
        ),
    ];
    for (what, path, (status, expected)) in &cases {
        let r = seen.note(*what, write(&s, &key, "notes", path, "x"));
        assert_eq!(code(&r), (*status, Some(*expected)), "{what}: {}", r.1);
        // The message names the caller's path (or the part of it at fault).
        let message = r.1["error"]["message"].as_str().unwrap_or_default();
        let shown: String = path.chars().take(30).collect();
        assert!(
            message.contains(&shown) || message.contains("facts/"),
            "{what}: {message}"
        );
        // The same through a job: refused before the 202.
        let r = seen.note(
            format!("job {what}"),
            post(
                Some(&key),
                &s.url("/v1/namespaces/notes/jobs"),
                &json!({"op": "write", "params": {"path": path, "content": memory("T", "x")}}),
            ),
        );
        if *status == 400 {
            assert_eq!(code(&r), (*status, Some(*expected)), "job {what}: {}", r.1);
        }
    }

    // 100,000 cues: refused on the parameters, naming them.
    let cues: Vec<String> = (0..100_000).map(|i| format!("q{i}")).collect();
    let r = seen.note(
        "100k cues",
        post(
            Some(&key),
            &s.url("/v1/namespaces/notes/memories"),
            &json!({"title": "Many", "cue": cues}),
        ),
    );
    assert_eq!(code(&r), (400, Some("invalid_request")), "{}", r.1);
    let message = r.1["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("cue has 100000 items"), "{message}");
    assert!(!message.contains("line"), "{message}");
    let r = seen.note(
        "long title",
        post(
            Some(&key),
            &s.url("/v1/namespaces/notes/memories"),
            &json!({"title": "t".repeat(5_000)}),
        ),
    );
    assert_eq!(code(&r), (400, Some("invalid_request")), "{}", r.1);
    // Nothing of it reached history.
    let r = seen.note("log", get(Some(&key), &s.url("/v1/namespaces/notes/log")));
    assert_eq!(r.1["result"].as_array().map(Vec::len), Some(3), "{}", r.1);
    seen.check(&s);
}

#[cfg(unix)]
#[test]
fn symlinks_placed_in_a_store_are_refused_on_every_write_route() {
    let s = start();
    let seen = Seen::default();
    let key = s.account("ivy");
    namespace(&s, &key, "notes");
    let r = seen.note("seed", write(&s, &key, "notes", "facts/keep/a.md", "kept"));
    assert_eq!(r.0, 200, "{}", r.1);
    let store = s.data.path().join("accounts/ivy/ns/notes");
    std::os::unix::fs::symlink("../.git", store.join("facts/ing")).expect("symlink");
    std::os::unix::fs::symlink("keep", store.join("facts/alias")).expect("symlink");
    let r = seen.note(
        "write via .git link",
        write(&s, &key, "notes", "facts/ing/hooks/pre-commit.md", "evil"),
    );
    assert_eq!(code(&r), (400, Some("invalid_path")), "{}", r.1);
    assert!(
        r.1["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("symbolic link"),
        "{}",
        r.1
    );
    assert!(!store.join(".git/hooks/pre-commit.md").exists());
    let r = seen.note(
        "write via in-store link",
        write(&s, &key, "notes", "facts/alias/b.md", "b"),
    );
    assert_eq!(code(&r), (400, Some("invalid_path")), "{}", r.1);
    // remember derives its path from the topic: the same refusal.
    let r = seen.note(
        "remember",
        post(
            Some(&key),
            &s.url("/v1/namespaces/notes/memories"),
            &json!({"title": "Hook", "topic": "ing/hooks", "body": "x"}),
        ),
    );
    assert_eq!(code(&r), (400, Some("invalid_path")), "{}", r.1);
    let r = seen.note(
        "forget",
        post(
            Some(&key),
            &s.url("/v1/namespaces/notes/ops/forget"),
            &json!({"path": "facts/alias/a.md"}),
        ),
    );
    assert_eq!(code(&r), (400, Some("invalid_path")), "{}", r.1);
    assert!(store.join("facts/keep/a.md").is_file());
    seen.check(&s);
}

/// One raw request to /mcp.
fn mcp_raw(s: &TestServer, key: &str, content_type: Option<&str>, body: String) -> Reply {
    let mut req = agent()
        .post(&s.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("authorization", &format!("Bearer {key}"))
        .header("x-gitloom-namespace", "notes");
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let mut r = req.send(body).expect("sent");
    let status = r.status().as_u16();
    let build = r
        .headers()
        .get("x-gitloom-build")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = r.body_mut().read_to_string().expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
        build,
    )
}

#[test]
fn mcp_takes_the_api_body_limit_and_answers_its_json_errors() {
    let s = start_with(|c| {
        c.mcp = true;
        c.max_body = 64 * 1024;
    });
    let seen = Seen::default();
    let key = s.account("jo");
    namespace(&s, &key, "notes");
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"pad": "x".repeat(100 * 1024)}});
    let r = seen.note(
        "big",
        mcp_raw(&s, &key, Some("application/json"), big.to_string()),
    );
    assert_eq!(code(&r), (413, Some("payload_too_large")), "{}", r.1);
    let r = seen.note(
        "malformed",
        mcp_raw(&s, &key, Some("application/json"), "{\"jsonrpc\": ".into()),
    );
    assert_eq!(code(&r), (400, Some("malformed_json")), "{}", r.1);
    let r = seen.note("no content type", mcp_raw(&s, &key, None, "{}".into()));
    assert_eq!(code(&r), (415, Some("unsupported_media_type")), "{}", r.1);
    // The same limit on the API itself.
    let r = seen.note(
        "api big",
        post(
            Some(&key),
            &s.url("/v1/namespaces/notes/memories"),
            &json!({"path": "facts/x.md", "content": "x".repeat(100 * 1024)}),
        ),
    );
    assert_eq!(code(&r), (413, Some("payload_too_large")), "{}", r.1);
    // A JSON-RPC message the MCP layer cannot take is still a JSON error.
    let r = seen.note(
        "not rpc",
        mcp_raw(&s, &key, Some("application/json"), "{\"hello\": 1}".into()),
    );
    assert!((400..500).contains(&r.0), "{r:?}");
    seen.check(&s);
}

/// Every route, called wrongly in every way a client can: each answer is a 4xx
/// with a stable code.
#[test]
fn every_route_answers_client_mistakes_with_4xx_codes() {
    let s = start_with(|c| c.mcp = true);
    let seen = Seen::default();
    let key = s.account("kim");
    namespace(&s, &key, "notes");
    let ns = |p: &str| s.url(&format!("/v1/namespaces/notes{p}"));
    let bad_ns = |p: &str| s.url(&format!("/v1/namespaces/No.Such{p}"));
    let missing = |p: &str| s.url(&format!("/v1/namespaces/missing{p}"));
    type Call<'a> = Box<dyn Fn() -> Reply + 'a>;
    let mut calls: Vec<(&str, Call<'_>, (u16, &str))> = Vec::new();
    let k = key.as_str();
    // Authentication, on every kind of route.
    for (route, url) in [
        ("GET /v1/namespaces", s.url("/v1/namespaces")),
        ("GET /v1/usage", s.url("/v1/usage")),
        ("GET /v1/jobs/{id}", s.url("/v1/jobs/job_x")),
        ("GET retrieve", ns("/retrieve?q=x")),
    ] {
        calls.push((
            route,
            Box::new(move || get(None, &url)),
            (401, "unauthorized"),
        ));
    }
    let u = s.url("/v1/namespaces");
    calls.push((
        "bad key",
        Box::new(move || get(Some("glk_bad"), &u)),
        (401, "unauthorized"),
    ));
    // Names and bodies.
    let u = s.url("/v1/namespaces");
    calls.push((
        "create: bad name",
        Box::new(move || post(Some(k), &u, &json!({"name": "A B"}))),
        (400, "invalid_name"),
    ));
    let u = s.url("/v1/namespaces");
    calls.push((
        "create: exists",
        Box::new(move || post(Some(k), &u, &json!({"name": "notes"}))),
        (409, "namespace_exists"),
    ));
    let u = s.url("/v1/namespaces");
    calls.push((
        "create: unknown field",
        Box::new(move || post(Some(k), &u, &json!({"name": "x", "extra": 1}))),
        (400, "invalid_params"),
    ));
    let u = s.url("/v1/namespaces");
    calls.push((
        "create: not JSON",
        Box::new(move || post_raw(Some(k), &u, "{")),
        (400, "malformed_json"),
    ));
    let u = bad_ns("");
    calls.push((
        "delete: bad name",
        Box::new(move || delete(Some(k), &u)),
        (400, "invalid_name"),
    ));
    let u = missing("");
    calls.push((
        "delete: missing",
        Box::new(move || delete(Some(k), &u)),
        (404, "namespace_not_found"),
    ));
    let u = missing("/memories");
    calls.push((
        "write: missing ns",
        Box::new(move || post(Some(k), &u, &json!({"path": "facts/x.md", "content": "x"}))),
        (404, "namespace_not_found"),
    ));
    let u = ns("/memories");
    calls.push((
        "write: bad memory",
        Box::new(move || {
            post(
                Some(k),
                &u,
                &json!({"path": "facts/x.md", "content": "no frontmatter"}),
            )
        }),
        (422, "invalid_memory"),
    ));
    let u = ns("/memories");
    calls.push((
        "remember: no title",
        Box::new(move || post(Some(k), &u, &json!({"body": "x"}))),
        (400, "invalid_params"),
    ));
    let u = ns("/memories/facts/none.md");
    calls.push((
        "get: missing",
        Box::new(move || get(Some(k), &u)),
        (404, "not_found"),
    ));
    let u = ns("/memories/facts/x.txt");
    calls.push((
        "get: not a store path",
        Box::new(move || get(Some(k), &u)),
        (400, "invalid_path"),
    ));
    let u = ns("/memories/facts/x.md?at=nonsense~~");
    calls.push((
        "get: bad revision",
        Box::new(move || get(Some(k), &u)),
        (400, "bad_revision"),
    ));
    let u = ns("/retrieve");
    calls.push((
        "retrieve: no q",
        Box::new(move || get(Some(k), &u)),
        (400, "invalid_params"),
    ));
    let u = ns("/retrieve?q=x&limit=-1");
    calls.push((
        "retrieve: bad limit",
        Box::new(move || get(Some(k), &u)),
        (400, "invalid_params"),
    ));
    let u = ns("/retrieve?q=x&tier=nope");
    calls.push((
        "retrieve: bad tier",
        Box::new(move || get(Some(k), &u)),
        (400, "invalid_params"),
    ));
    let u = ns("/log?limit=x");
    calls.push((
        "log: bad limit",
        Box::new(move || get(Some(k), &u)),
        (400, "invalid_params"),
    ));
    let u = ns("/tree?topic=../x");
    calls.push((
        "tree: bad topic",
        Box::new(move || get(Some(k), &u)),
        (400, "invalid_request"),
    ));
    let u = ns("/ops/nope");
    calls.push((
        "op: unknown",
        Box::new(move || post(Some(k), &u, &json!({}))),
        (404, "unknown_op"),
    ));
    let u = ns("/ops/get");
    calls.push((
        "op: bad params",
        Box::new(move || post(Some(k), &u, &json!({"path": 3}))),
        (400, "invalid_params"),
    ));
    let u = ns("/ops/semantic_search");
    calls.push((
        "op: no model",
        Box::new(move || post(Some(k), &u, &json!({"query": "x"}))),
        (400, "invalid_request"),
    ));
    let u = ns("/ops/gc");
    calls.push((
        "op: gc both",
        Box::new(move || post(Some(k), &u, &json!({"repack": true, "no_repack": true}))),
        (400, "invalid_params"),
    ));
    let u = ns("/jobs");
    calls.push((
        "job: bad body",
        Box::new(move || post(Some(k), &u, &json!({"params": {}}))),
        (400, "invalid_params"),
    ));
    let u = ns("/jobs");
    calls.push((
        "job: bad params",
        Box::new(move || post(Some(k), &u, &json!({"op": "get", "params": {"x": 1}}))),
        (400, "invalid_params"),
    ));
    let u = missing("/jobs");
    calls.push((
        "job: missing ns",
        Box::new(move || post(Some(k), &u, &json!({"op": "stats"}))),
        (404, "namespace_not_found"),
    ));
    let u = ns("/ingest");
    calls.push((
        "ingest: no sessions",
        Box::new(move || post(Some(k), &u, &json!({}))),
        (400, "invalid_params"),
    ));
    let u = s.url("/v1/jobs/job_none");
    calls.push((
        "job: unknown",
        Box::new(move || get(Some(k), &u)),
        (404, "job_not_found"),
    ));
    let u = s.url("/v1/jobs/job_none");
    calls.push((
        "cancel: unknown",
        Box::new(move || delete(Some(k), &u)),
        (404, "job_not_found"),
    ));
    let u = s.url("/v1/usage?storage=maybe");
    calls.push((
        "usage: bad query",
        Box::new(move || get(Some(k), &u)),
        (400, "invalid_params"),
    ));
    let u = s.url("/v1/nowhere");
    calls.push((
        "no route",
        Box::new(move || get(Some(k), &u)),
        (404, "no_such_route"),
    ));
    let u = s.url("/v1/usage");
    calls.push((
        "bad method",
        Box::new(move || post(Some(k), &u, &json!({}))),
        (405, "method_not_allowed"),
    ));
    for (what, call, (status, expected)) in &calls {
        let r = seen.note(*what, call());
        assert_eq!(code(&r), (*status, Some(*expected)), "{what}: {}", r.1);
    }
    seen.check(&s);
}

#[test]
fn usage_counts_every_request_across_a_restart_and_two_nodes() {
    let s = start();
    let key = s.account("lee");
    namespace(&s, &key, "notes");
    let n = 7;
    for i in 0..n {
        let r = write(&s, &key, "notes", &format!("facts/n{i}.md"), "x");
        assert_eq!(r.0, 200, "{}", r.1);
    }
    for _ in 0..n {
        assert_eq!(
            get(Some(&key), &s.url("/v1/namespaces/notes/retrieve?q=x")).0,
            200
        );
    }
    // A request to a namespace that does not exist is counted, but not under it.
    assert_eq!(get(Some(&key), &s.url("/v1/namespaces/ghost/log")).0, 404);
    let usage = |s: &TestServer| {
        let (st, body, _) = get(Some(&key), &s.url("/v1/usage"));
        assert_eq!(st, 200, "{body}");
        body["result"].clone()
    };
    let u = usage(&s);
    assert_eq!(u["namespaces"]["notes"]["requests"]["write"], n, "{u}");
    assert_eq!(u["namespaces"]["notes"]["requests"]["retrieve"], n, "{u}");
    assert_eq!(u["namespaces"]["notes"]["writes"], n, "{u}");
    assert!(
        u["namespaces"]["notes"]["storage_bytes"]
            .as_u64()
            .is_some_and(|b| b > 0),
        "{u}"
    );
    assert!(u["namespaces"].get("ghost").is_none(), "{u}");
    assert_eq!(u["account_requests"]["requests"]["log"], 1, "{u}");

    // Restart: nothing lost.
    let s = s.restart();
    let u = usage(&s);
    assert_eq!(u["namespaces"]["notes"]["requests"]["write"], n, "{u}");
    assert_eq!(u["namespaces"]["notes"]["writes"], n, "{u}");
    assert_eq!(u["account_requests"]["requests"]["usage"], 2, "{u}");

    // A second node on the same data: its requests and the first's add up.
    let other = s.another_node();
    for _ in 0..n {
        assert_eq!(
            get(Some(&key), &other.url("/v1/namespaces/notes/retrieve?q=y")).0,
            200
        );
    }
    // Its records are written within a second; poll until they are seen.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let u = usage(&s);
        if u["namespaces"]["notes"]["requests"]["retrieve"] == 2 * n {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{u}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // And the other node sees the first node's counts.
    let u = usage(&other);
    assert_eq!(
        u["namespaces"]["notes"]["requests"]["retrieve"],
        2 * n,
        "{u}"
    );
    assert_eq!(u["namespaces"]["notes"]["requests"]["write"], n, "{u}");
}
