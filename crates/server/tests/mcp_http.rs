//! MCP over streamable HTTP (`serve --mcp`): a JSON-RPC session on the wire, with the
//! API's key and a namespace header; another account's namespace stays out of reach.

mod common;

use common::*;
use serde_json::{Value, json};

/// One JSON-RPC message to /mcp; returns (status, the JSON-RPC reply if any, session id).
fn rpc(
    s: &TestServer,
    key: &str,
    ns: &str,
    session: Option<&str>,
    msg: &Value,
) -> (u16, Value, Option<String>) {
    let mut req = agent()
        .post(&s.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", &format!("Bearer {key}"))
        .header("x-gitloom-namespace", ns);
    if let Some(id) = session {
        req = req.header("mcp-session-id", id);
    }
    let mut r = req.send(msg.to_string()).expect("sent");
    let status = r.status().as_u16();
    let session = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = r.body_mut().read_to_string().expect("body");
    // JSON, or server-sent events whose data lines carry the reply.
    let body = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null)
    });
    (status, body, session)
}

#[test]
fn mcp_session_over_http_in_a_namespace() {
    let s = start_with(|c| c.mcp = true);
    let key = s.account("alice");
    let other = s.account("bob");
    let (st, _, _) = post(
        Some(&key),
        &s.url("/v1/namespaces"),
        &json!({"name": "notes"}),
    );
    assert_eq!(st, 201);

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    let (st, reply, session) = rpc(&s, &key, "notes", None, &init);
    assert_eq!(st, 200, "{reply}");
    assert_eq!(reply["result"]["serverInfo"]["name"], "gitloom", "{reply}");
    let session = session.expect("session id");
    let (st, _, _) = rpc(
        &s,
        &key,
        "notes",
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert!(st < 300, "{st}");

    let (_, reply, _) = rpc(
        &s,
        &key,
        "notes",
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    assert_eq!(
        reply["result"]["tools"].as_array().map(Vec::len),
        Some(gitloom_toolkit::ops().len()),
        "{reply}"
    );

    let call = |id: u64, name: &str, args: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
    let (_, reply, _) = rpc(
        &s,
        &key,
        "notes",
        Some(&session),
        &call(
            3,
            "remember",
            json!({"title": "Cat", "body": "The cat is called Miso."}),
        ),
    );
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let (_, reply, _) = rpc(
        &s,
        &key,
        "notes",
        Some(&session),
        &call(4, "retrieve", json!({"query": "what is the cat called"})),
    );
    assert_eq!(
        reply["result"]["structuredContent"]["hits"][0]["path"], "facts/general/cat.md",
        "{reply}"
    );
    // The write is in the namespace, as seen through the HTTP API.
    let (st, _, _) = get(
        Some(&key),
        &s.url("/v1/namespaces/notes/memories/facts/general/cat.md"),
    );
    assert_eq!(st, 200);

    // Bob's key cannot reach alice's namespace through MCP either.
    let (st, reply, bob_session) = rpc(&s, &other, "notes", None, &init);
    assert_eq!(st, 200, "{reply}");
    let (_, reply, _) = rpc(
        &s,
        &other,
        "notes",
        bob_session.as_deref(),
        &call(5, "retrieve", json!({"query": "cat"})),
    );
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["code"], "namespace_not_found",
        "{reply}"
    );
    // No key, or a bad namespace name: refused before MCP.
    let r = agent()
        .post(&s.url("/mcp"))
        .header("content-type", "application/json")
        .send(init.to_string())
        .expect("sent");
    assert_eq!(r.status().as_u16(), 401);
    let (_, doc, _) = get(None, &s.url("/openapi.json"));
    assert!(
        doc["paths"]["/mcp"]["post"].is_object(),
        "the /mcp route is documented"
    );
    let (st, reply, _) = rpc(&s, &key, "../bob", None, &init);
    assert_eq!(
        (st, reply["error"]["code"].as_str()),
        (400, Some("invalid_name")),
        "{reply}"
    );
}
