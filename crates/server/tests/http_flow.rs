//! The whole flow over a real server: account → key → namespace → write → retrieve →
//! job → poll; and the OpenAPI document against the routes.

mod common;

use common::*;
use gitloom_engine::BUILD;
use serde_json::json;

#[test]
fn account_namespace_write_retrieve_job_poll() {
    let s = start();
    let key = s.account("alice");

    let (st, body, build) = get(None, &s.url("/healthz"));
    assert_eq!((st, body["status"].as_str()), (200, Some("ok")));
    assert_eq!(build.as_deref(), Some(BUILD));

    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces"),
        &json!({"name": "notes"}),
    );
    assert_eq!(st, 201, "{body}");
    assert_eq!(body["namespace"], "notes");
    assert_eq!(body["build"], BUILD);
    let (st, _, _) = post(
        Some(&key),
        &s.url("/v1/namespaces"),
        &json!({"name": "notes"}),
    );
    assert_eq!(st, 409);
    let (_, body, _) = get(Some(&key), &s.url("/v1/namespaces"));
    assert_eq!(body["result"]["namespaces"], json!(["notes"]));

    // A whole file, then a memory from fields.
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/memories"),
        &json!({"path": "facts/work/employer.md", "content": memory("Employer", "Alice works at Initech as a database engineer.")}),
    );
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["op"], "write");
    assert!(body["result"]["commit"].is_string());
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/memories"),
        &json!({"title": "Cat", "topic": "home", "body": "The cat is called Miso.", "cue": ["what is the cat called"]}),
    );
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["op"], "remember");
    let cat_path = body["result"]["paths"][0]
        .as_str()
        .expect("path")
        .to_owned();

    let (st, body, _) = get(
        Some(&key),
        &s.url("/v1/namespaces/notes/retrieve?q=where%20does%20Alice%20work&limit=3&explain=true"),
    );
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["namespace"], "notes");
    assert_eq!(body["result"]["build"], BUILD);
    assert_eq!(
        body["result"]["hits"][0]["path"], "facts/work/employer.md",
        "{body}"
    );
    assert!(body["result"]["explain"].is_array(), "explain asked for");

    let (st, body, _) = get(
        Some(&key),
        &s.url(&format!("/v1/namespaces/notes/memories/{cat_path}")),
    );
    assert_eq!(st, 200, "{body}");
    assert!(
        body["result"]["content"]
            .as_str()
            .is_some_and(|c| c.contains("Miso"))
    );
    let (st, body, _) = get(
        Some(&key),
        &s.url("/v1/namespaces/notes/memories/facts/work/employer.md?at=HEAD~1"),
    );
    assert_eq!(st, 200, "{body}");
    let (st, body, _) = get(
        Some(&key),
        &s.url(&format!(
            "/v1/namespaces/notes/memories/{cat_path}?at=HEAD~1"
        )),
    );
    assert_eq!(
        (st, body["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );

    let (_, body, _) = get(Some(&key), &s.url("/v1/namespaces/notes/log?limit=2"));
    assert_eq!(body["result"].as_array().map(Vec::len), Some(2), "{body}");
    assert_eq!(
        body["result"][1]["summary"], "remember: facts/work/employer.md",
        "{body}"
    );
    let (_, body, _) = get(Some(&key), &s.url("/v1/namespaces/notes/tree?topic=facts"));
    assert_eq!(body["op"], "tree", "{body}");

    // Any op by name.
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/ops/stats"),
        &json!({}),
    );
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["result"]["files"], 2, "{body}");
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/ops/nope"),
        &json!({}),
    );
    assert_eq!(
        (st, body["error"]["code"].as_str()),
        (404, Some("unknown_op"))
    );
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/ops/retrieve"),
        &json!({"query": "x", "bogus": 1}),
    );
    assert_eq!(
        (st, body["error"]["code"].as_str()),
        (400, Some("invalid_params")),
        "{body}"
    );

    // A job: 202 with an id, then poll to the result.
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/jobs"),
        &json!({"op": "rebuild"}),
    );
    assert_eq!(st, 202, "{body}");
    let id = body["result"]["id"].as_str().expect("job id").to_owned();
    let done = wait_job(&s, &key, &id);
    assert_eq!(done["result"]["status"], "succeeded", "{done}");
    assert_eq!(done["result"]["result"]["full"], true, "{done}");
    assert_eq!(done["result"]["result"]["upserted"], 2, "{done}");
    assert_eq!(done["namespace"], "notes");

    // Ingestion is a job too: a conversation in, memories out, one commit per session.
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/ingest"),
        &json!({"sessions": [{"id": "s1", "date": "2026-03-02", "messages": [
            {"role": "user", "content": "I just started a new job at Globex Corporation as a data engineer."}
        ]}]}),
    );
    assert_eq!(st, 202, "{body}");
    let id = body["result"]["id"].as_str().expect("job id").to_owned();
    let done = wait_job(&s, &key, &id);
    assert_eq!(done["result"]["status"], "succeeded", "{done}");
    assert_eq!(done["result"]["result"]["commits"], 1, "{done}");
    let (st, body, _) = get(
        Some(&key),
        &s.url("/v1/namespaces/notes/retrieve?q=globex%20corporation%20data%20engineer"),
    );
    assert_eq!(st, 200, "{body}");
    let hits = body["result"]["hits"].as_array().expect("hits");
    assert!(
        hits.iter()
            .any(|h| h["snippet"].as_str().unwrap_or("").contains("Globex")
                || h["title"].as_str().unwrap_or("").contains("Globex")),
        "{body}"
    );
    // A session that is not one is refused before a job is made, naming the field.
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/ingest"),
        &json!({"sessions": [{"id": "s2", "messages": "nope"}]}),
    );
    assert_eq!(
        (st, body["error"]["code"].as_str()),
        (400, Some("invalid_params")),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("messages"),
        "{body}"
    );

    // So is a job whose parameters can only fail; its error code is the op's.
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/jobs"),
        &json!({"op": "write", "params": {"path": "../x.md", "content": "x"}}),
    );
    assert_eq!(
        (st, body["error"]["code"].as_str()),
        (400, Some("invalid_path")),
        "{body}"
    );

    // A job that fails while it runs keeps its error code.
    let (st, body, _) = post(
        Some(&key),
        &s.url("/v1/namespaces/notes/jobs"),
        &json!({"op": "write", "params": {"path": "facts/broken.md", "content": "no frontmatter"}}),
    );
    assert_eq!(st, 202, "{body}");
    let id = body["result"]["id"].as_str().expect("job id").to_owned();
    let done = wait_job(&s, &key, &id);
    assert_eq!(done["result"]["status"], "failed", "{done}");
    assert_eq!(done["result"]["error"]["code"], "invalid_memory", "{done}");

    // Delete the namespace: gone from the list and from disk.
    let (st, _, _) = delete(Some(&key), &s.url("/v1/namespaces/notes"));
    assert_eq!(st, 200);
    let (st, body, _) = get(Some(&key), &s.url("/v1/namespaces/notes/log"));
    assert_eq!(
        (st, body["error"]["code"].as_str()),
        (404, Some("namespace_not_found"))
    );
    assert!(!s.data.path().join("accounts/alice/ns/notes").exists());
}

/// Every route the router serves is in /openapi.json, and every documented
/// operation is served (the document and the router come from one declaration).
#[test]
fn openapi_lists_every_route() {
    let s = start();
    let key = s.account("alice");
    let (st, doc, _) = get(None, &s.url("/openapi.json"));
    assert_eq!(st, 200);
    let paths = doc["paths"].as_object().expect("paths");
    let mut documented: Vec<String> = Vec::new();
    for (p, item) in paths {
        for m in ["get", "post", "delete", "put", "patch"] {
            if item.get(m).is_some() {
                documented.push(format!("{} {p}", m.to_uppercase()));
            }
        }
    }
    documented.sort();
    let mut expected = vec![
        "GET /healthz",
        "GET /openapi.json",
        "GET /v1/namespaces",
        "POST /v1/namespaces",
        "DELETE /v1/namespaces/{ns}",
        "POST /v1/namespaces/{ns}/memories",
        "GET /v1/namespaces/{ns}/memories/{path}",
        "GET /v1/namespaces/{ns}/retrieve",
        "GET /v1/namespaces/{ns}/log",
        "GET /v1/namespaces/{ns}/tree",
        "POST /v1/namespaces/{ns}/ops/{op}",
        "POST /v1/namespaces/{ns}/jobs",
        "POST /v1/namespaces/{ns}/ingest",
        "GET /v1/jobs/{id}",
        "DELETE /v1/jobs/{id}",
        "GET /v1/usage",
    ];
    expected.sort();
    assert_eq!(documented, expected);
    // Each documented route is really served: a request to it is never "no such route".
    for route in &documented {
        let (method, path) = route.split_once(' ').expect("method path");
        let url = s.url(
            &path
                .replace("{ns}", "missing")
                .replace("{path}", "facts/x.md")
                .replace("{op}", "stats")
                .replace("{id}", "job_x"),
        );
        let (_, body, build) = match method {
            "GET" => get(Some(&key), &url),
            "POST" => post(Some(&key), &url, &json!({})),
            "DELETE" => delete(Some(&key), &url),
            _ => unreachable!(),
        };
        assert_ne!(body["error"]["code"], "no_such_route", "{route}: {body}");
        assert_eq!(build.as_deref(), Some(BUILD), "{route}");
    }
    let (st, body, build) = get(Some(&key), &s.url("/v1/nothing"));
    assert_eq!(
        (st, body["error"]["code"].as_str()),
        (404, Some("no_such_route"))
    );
    assert_eq!(build.as_deref(), Some(BUILD));
    // Every op's schema is published with the document.
    for op in gitloom_toolkit::ops() {
        assert_eq!(
            doc["x-gitloom-ops"][op.name]["params"],
            op.params_schema(),
            "{}",
            op.name
        );
    }
}
