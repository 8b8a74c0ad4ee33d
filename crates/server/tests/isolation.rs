//! Adversarial isolation: every hostile request gets the right 4xx and touches
//! nothing (the data directory is byte-for-byte the same afterwards, but for what
//! the legitimate requests wrote).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::json;

/// Every file below `dir` with its length and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            let meta = e.metadata().expect("metadata");
            if meta.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("below").display().to_string();
                // SQLite's shared-memory index is touched by reads; it is not data.
                if rel.ends_with("-shm") {
                    continue;
                }
                out.insert(rel, (meta.len(), meta.modified().expect("mtime")));
            }
        }
    }
    out
}

#[test]
fn hostile_requests_get_4xx_and_touch_nothing() {
    let s = start_with(|c| c.max_body = 64 * 1024);
    let alice = s.account("alice");
    let mallory = s.account("mallory");
    let (st, _, _) = post(
        Some(&alice),
        &s.url("/v1/namespaces"),
        &json!({"name": "secret"}),
    );
    assert_eq!(st, 201);
    let (st, _, _) = post(
        Some(&alice),
        &s.url("/v1/namespaces/secret/memories"),
        &json!({"path": "facts/pin.md", "content": memory("Pin", "The vault pin is 4711.")}),
    );
    assert_eq!(st, 200);
    let (st, _, _) = post(
        Some(&mallory),
        &s.url("/v1/namespaces"),
        &json!({"name": "mine"}),
    );
    assert_eq!(st, 201);
    let before = snapshot(s.data.path());

    let code = |r: &Reply| (r.0, r.1["error"]["code"].as_str().map(str::to_owned));
    let c = |st: u16, code: &str| (st, Some(code.to_owned()));

    // No key, a wrong key, a malformed header.
    assert_eq!(
        code(&get(None, &s.url("/v1/namespaces/secret/log"))),
        c(401, "unauthorized")
    );
    assert_eq!(
        code(&get(Some("glk_00"), &s.url("/v1/namespaces/secret/log"))),
        c(401, "unauthorized")
    );

    // Another account's key: alice's namespace does not exist for mallory, whatever she asks.
    assert_eq!(
        code(&get(Some(&mallory), &s.url("/v1/namespaces/secret/log"))),
        c(404, "namespace_not_found")
    );
    assert_eq!(
        code(&get(
            Some(&mallory),
            &s.url("/v1/namespaces/secret/retrieve?q=vault%20pin")
        )),
        c(404, "namespace_not_found")
    );
    assert_eq!(
        code(&get(
            Some(&mallory),
            &s.url("/v1/namespaces/secret/memories/facts/pin.md")
        )),
        c(404, "namespace_not_found")
    );
    assert_eq!(
        code(&post(
            Some(&mallory),
            &s.url("/v1/namespaces/secret/memories"),
            &json!({"path": "facts/x.md", "content": memory("X", "x")})
        )),
        c(404, "namespace_not_found")
    );
    assert_eq!(
        code(&delete(Some(&mallory), &s.url("/v1/namespaces/secret"))),
        c(404, "namespace_not_found")
    );
    let (_, body, _) = get(Some(&mallory), &s.url("/v1/namespaces"));
    assert_eq!(body["result"]["namespaces"], json!(["mine"]));

    // Traversal in namespace names: `..`, encoded slashes and dots, absolute paths.
    for ns in [
        "..",
        "%2E%2E",
        "..%2Fsecret",
        "%2e%2e%2falice%2fns%2fsecret",
        "%2Fetc",
        "a%5Cb",
        "Secret",
        "x%00",
    ] {
        let r = get(Some(&mallory), &s.url(&format!("/v1/namespaces/{ns}/log")));
        assert_eq!(code(&r), c(400, "invalid_name"), "{ns}: {}", r.1);
    }
    for name in ["..", "../alice", "/abs", "a/b", "", "ns.git"] {
        let r = post(
            Some(&mallory),
            &s.url("/v1/namespaces"),
            &json!({"name": name}),
        );
        assert_eq!(code(&r), c(400, "invalid_name"), "{name:?}: {}", r.1);
    }
    // The URL's `..` segments are resolved by the client or refused: either way no 2xx.
    let r = get(Some(&mallory), &s.url("/v1/namespaces/mine/../secret/log"));
    assert!(r.0 >= 400, "{}", r.1);

    // Traversal in memory paths, in mallory's own namespace.
    for path in [
        "../../../alice/ns/secret/facts/pin.md",
        "/etc/passwd.md",
        "facts/../../x.md",
        "facts/x",
        ".git/config.md",
    ] {
        let r = post(
            Some(&mallory),
            &s.url("/v1/namespaces/mine/memories"),
            &json!({"path": path, "content": memory("X", "x")}),
        );
        assert_eq!(code(&r), c(400, "invalid_path"), "{path}: {}", r.1);
    }
    for path in [
        "..%2F..%2F..%2Falice%2Fns%2Fsecret%2Ffacts%2Fpin.md",
        "facts%2F..%2F..%2Fx.md",
        "%2Fetc%2Fpasswd",
    ] {
        let r = get(
            Some(&mallory),
            &s.url(&format!("/v1/namespaces/mine/memories/{path}")),
        );
        assert_eq!(code(&r), c(400, "invalid_path"), "{path}: {}", r.1);
    }

    // Oversized bodies, malformed JSON, wrong shapes.
    let big = "x".repeat(100 * 1024);
    let r = post(
        Some(&mallory),
        &s.url("/v1/namespaces/mine/memories"),
        &json!({"path": "facts/big.md", "content": big}),
    );
    assert_eq!(code(&r), c(413, "payload_too_large"), "{}", r.1);
    let r = post_raw(
        Some(&mallory),
        &s.url("/v1/namespaces/mine/memories"),
        "{\"path\": \"facts/x.md\", ",
    );
    assert_eq!(code(&r), c(400, "malformed_json"), "{}", r.1);
    let r = post_raw(Some(&mallory), &s.url("/v1/namespaces"), "[1,2]");
    assert_eq!(code(&r), c(400, "invalid_params"), "{}", r.1);
    let r = post(
        Some(&mallory),
        &s.url("/v1/namespaces/mine/memories"),
        &json!({"title": 7}),
    );
    assert_eq!(code(&r), c(400, "invalid_params"), "{}", r.1);
    let r = post(
        Some(&mallory),
        &s.url("/v1/namespaces/mine/memories"),
        &json!({"path": "facts/bad.md", "content": "---\ntitle: [unclosed\n---\nx"}),
    );
    assert_eq!(code(&r), c(422, "invalid_memory"), "{}", r.1);
    let r = get(
        Some(&mallory),
        &s.url("/v1/namespaces/mine/retrieve?limit=3"),
    );
    assert_eq!(code(&r), c(400, "invalid_params"), "{}", r.1);
    let r = get(Some(&mallory), &s.url("/v1/jobs/job_nothing"));
    assert_eq!(code(&r), c(404, "job_not_found"), "{}", r.1);

    // Nothing anywhere changed but mallory's index being read and the meter counting
    // her requests (its journal and records are not data).
    let after = snapshot(s.data.path());
    let changed: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, _)| k)
        .chain(before.keys().filter(|k| !after.contains_key(*k)))
        .filter(|k| !k.contains("accounts/mallory/ns/mine/.gitloom/"))
        .filter(|k| !k.starts_with("usage/") && !k.contains("/usage/"))
        .collect();
    assert!(changed.is_empty(), "touched: {changed:?}");
    // Alice's memory is intact and hers alone.
    let (st, body, _) = get(
        Some(&alice),
        &s.url("/v1/namespaces/secret/memories/facts/pin.md"),
    );
    assert_eq!(st, 200);
    assert!(
        body["result"]["content"]
            .as_str()
            .is_some_and(|c| c.contains("4711"))
    );
}

#[test]
fn a_key_over_its_rate_gets_429_and_others_do_not() {
    let s = start_with(|c| {
        c.rate = gitloom_server::RateLimit {
            per_second: 0.5,
            burst: 3.0,
        }
    });
    let a = s.account("alice");
    let b = s.account("bob");
    for _ in 0..3 {
        assert_eq!(get(Some(&a), &s.url("/v1/namespaces")).0, 200);
    }
    let r = get(Some(&a), &s.url("/v1/namespaces"));
    assert_eq!(
        (r.0, r.1["error"]["code"].as_str()),
        (429, Some("rate_limited"))
    );
    assert_eq!(get(Some(&b), &s.url("/v1/namespaces")).0, 200);
}
