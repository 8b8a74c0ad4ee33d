//! A real MCP client session (rmcp's client) against the server over an in-process
//! duplex pipe: initialize, list tools, remember, retrieve, an error.

use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};
use gitloom_server::mcp::McpServer;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

fn args(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("arguments must be an object"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_session_remember_retrieve_and_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(
        dir.path(),
        EngineOptions {
            embedder: EmbedderChoice::None,
            ..EngineOptions::default()
        },
    )
    .expect("store");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move {
        let running = McpServer::local(engine)
            .serve(server_io)
            .await
            .expect("server initialised");
        running.waiting().await.expect("server ran");
    });
    let client = ().serve(client_io).await.expect("client initialised");
    let info = client.peer_info().expect("server info");
    let implementation = info.server_info.as_ref().expect("server implementation");
    assert_eq!(implementation.name, "gitloom");
    assert_eq!(implementation.version, gitloom_engine::BUILD);

    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let ops: Vec<&str> = gitloom_toolkit::ops().iter().map(|o| o.name).collect();
    assert_eq!(names, ops, "every op is a tool, in order");
    let remember = tools
        .iter()
        .find(|t| t.name == "remember")
        .expect("remember tool");
    assert_eq!(
        Value::Object((*remember.input_schema).clone()),
        gitloom_toolkit::find("remember")
            .expect("op")
            .params_schema()
    );

    let r = client
        .call_tool(
            CallToolRequestParams::new("remember").with_arguments(args(json!({
                "title": "Employer", "topic": "work",
                "body": "Alice works at Initech as a database engineer.",
                "cue": ["where does Alice work"]
            }))),
        )
        .await
        .expect("remember");
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let s = r.structured_content.expect("structured");
    assert_eq!(s["paths"][0], "facts/work/employer.md");

    let r = client
        .call_tool(
            CallToolRequestParams::new("retrieve")
                .with_arguments(args(json!({"query": "where does Alice work", "limit": 3}))),
        )
        .await
        .expect("retrieve");
    assert_eq!(r.is_error, Some(false));
    let s = r.structured_content.expect("structured");
    assert_eq!(s["hits"][0]["path"], "facts/work/employer.md", "{s}");
    let text = r.content[0].as_text().expect("text rendering").text.clone();
    assert!(text.contains("facts/work/employer.md"));

    // An op error is a tool error the model can read, with its code.
    let r = client
        .call_tool(
            CallToolRequestParams::new("get")
                .with_arguments(args(json!({"path": "../etc/passwd.md"}))),
        )
        .await
        .expect("call returns");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        r.structured_content.expect("structured")["code"],
        "invalid_path"
    );
    let r = client
        .call_tool(CallToolRequestParams::new("retrieve").with_arguments(args(json!({"limit": 3}))))
        .await
        .expect("call returns");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        r.structured_content.expect("structured")["code"],
        "invalid_params"
    );
    // An unknown tool is a protocol error.
    assert!(
        client
            .call_tool(CallToolRequestParams::new("nope"))
            .await
            .is_err()
    );

    client.cancel().await.expect("client closed");
    server.await.expect("server task");
}
