//! 8 clients writing to one namespace and 8 writing to 8 namespaces at once: every
//! acknowledged write is present afterwards (in the tree and in its path's history,
//! whether it shared a commit or not), and reads proceed during the writes.

mod common;

use common::*;
use serde_json::json;

const WRITES: usize = 4;

#[test]
fn concurrent_writers_lose_nothing() {
    let s = start();
    let key = s.account("alice");
    for ns in ["shared"]
        .into_iter()
        .map(str::to_owned)
        .chain((0..8).map(|i| format!("own{i}")))
    {
        let (st, body, _) = post(Some(&key), &s.url("/v1/namespaces"), &json!({"name": ns}));
        assert_eq!(st, 201, "{body}");
    }
    let s = &s;
    let key = key.as_str();
    let acked: Vec<(String, String)> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for client in 0..16 {
            handles.push(scope.spawn(move || {
                let ns = if client < 8 { "shared".to_owned() } else { format!("own{}", client - 8) };
                let mut acked = Vec::new();
                for i in 0..WRITES {
                    let path = format!("facts/c{client}/m{i}.md");
                    let (st, body, _) = post(
                        Some(key),
                        &s.url(&format!("/v1/namespaces/{ns}/memories")),
                        &json!({"path": path, "content": memory(&format!("Note {client} {i}"), &format!("client{client} wrote item{i}"))}),
                    );
                    assert_eq!(st, 200, "{ns} {path}: {body}");
                    assert_eq!(body["namespace"], ns.as_str());
                    acked.push((ns.clone(), path));
                    // A read in the same namespace between writes never fails.
                    let (st, body, _) = get(Some(key), &s.url(&format!("/v1/namespaces/{ns}/retrieve?q=item{i}")));
                    assert_eq!(st, 200, "{body}");
                }
                acked
            }));
        }
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("client"))
            .collect()
    });
    assert_eq!(acked.len(), 16 * WRITES);
    for (ns, path) in &acked {
        let (st, body, _) = get(
            Some(key),
            &s.url(&format!("/v1/namespaces/{ns}/memories/{path}")),
        );
        assert_eq!(st, 200, "{ns} {path}: {body}");
    }
    let (_, body, _) = post(
        Some(key),
        &s.url("/v1/namespaces/shared/ops/stats"),
        &json!({}),
    );
    assert_eq!(body["result"]["files"], 8 * WRITES as u64, "{body}");
    // Writes that arrived together may share a commit (group commit): at most one
    // commit per write after the store's first, and each write is in the history of
    // its own path.
    let (_, body, _) = get(Some(key), &s.url("/v1/namespaces/shared/log"));
    let commits = body["result"].as_array().map_or(0, Vec::len);
    assert!((2..=8 * WRITES + 1).contains(&commits), "{commits} commits");
    for (_, path) in acked.iter().filter(|(ns, _)| ns == "shared") {
        let (_, body, _) = get(
            Some(key),
            &s.url(&format!("/v1/namespaces/shared/log?path={path}")),
        );
        assert_eq!(
            body["result"].as_array().map(Vec::len),
            Some(1),
            "{path}: {body}"
        );
    }
    for i in 0..8 {
        let (_, body, _) = post(
            Some(key),
            &s.url(&format!("/v1/namespaces/own{i}/ops/stats")),
            &json!({}),
        );
        assert_eq!(body["result"]["files"], WRITES as u64, "{body}");
    }
}
