//! The MCP server: every toolkit op is a tool, with the op's parameter schema as its
//! input schema. A call returns structured content (the op's JSON, wrapped as
//! `{"result": …}` when it is not an object, since MCP requires an object) plus a
//! readable text rendering (pretty JSON). Op failures are tool errors the model can
//! read (`is_error` with `{"code", "message"}`), not protocol errors.

use std::sync::Arc;

use gitloom_engine::{BUILD, Engine};
use gitloom_remote::Storage;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// An MCP server over one store (a local one, or a namespace in object storage).
#[derive(Clone)]
pub struct McpServer {
    storage: Arc<Storage>,
}

impl McpServer {
    pub fn new(storage: Storage) -> McpServer {
        McpServer {
            storage: Arc::new(storage),
        }
    }

    /// Over a local store.
    pub fn local(engine: Engine) -> McpServer {
        McpServer::new(Storage::Local(Box::new(engine)))
    }

    /// The tool list, from the toolkit's op list.
    pub fn tools() -> Vec<Tool> {
        gitloom_toolkit::ops()
            .iter()
            .map(|op| {
                let schema = match op.params_schema() {
                    Value::Object(m) => m,
                    _ => serde_json::Map::new(),
                };
                Tool::new(op.name, op.description, Arc::new(schema))
            })
            .collect()
    }

    /// Serves MCP on stdin/stdout until the client closes it.
    pub async fn serve_stdio(self) -> Result<(), McpServeError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpServeError(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpServeError(e.to_string()))?;
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("MCP server: {0}")]
pub struct McpServeError(String);

fn render(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

impl McpServer {
    fn get_info_static() -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("gitloom", BUILD))
            .with_instructions(
                "gitloom: long-term memory. `retrieve` answers a question from memories (it abstains when nothing is evidence); `remember` stores a memory from fields.",
            )
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        McpServer::get_info_static()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult {
            tools: McpServer::tools(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if gitloom_toolkit::find(&name).is_none() {
            return Err(McpError::invalid_params(
                format!("no such tool: {name}"),
                None,
            ));
        }
        let params = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let storage = self.storage.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let op = gitloom_toolkit::find(&name)
                .ok_or_else(|| gitloom_toolkit::OpError::UnknownOp(name.clone()))?;
            crate::namespaces::call_on(&storage, op, params)
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let result = match outcome {
            Ok(v) => tool_result(v),
            Err(e) => tool_error(e.code(), &e.to_string()),
        };
        Ok(result.into())
    }
}

/// MCP over streamable HTTP (`gitloom serve --mcp`, at `/mcp`), multi-tenant like
/// the HTTP API: each request carries `Authorization: Bearer KEY` and
/// `X-Gitloom-Namespace: NAME` (checked by `mcp_auth` before the MCP layer sees
/// the request), and every tool call runs in that account's namespace through the
/// same path as `POST /v1/namespaces/{ns}/ops/{op}`.
#[derive(Clone)]
pub struct HttpMcp {
    state: crate::AppState,
}

/// The header naming the namespace of an MCP-over-HTTP request.
pub const NAMESPACE_HEADER: &str = "x-gitloom-namespace";

/// Who is calling: set by [`mcp_auth`] in the request's extensions.
#[derive(Debug, Clone)]
struct Caller {
    account: String,
    namespace: String,
}

impl ServerHandler for HttpMcp {
    fn get_info(&self) -> ServerConfig {
        McpServer::get_info_static()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult {
            tools: McpServer::tools(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Caller>())
            .cloned()
            .ok_or_else(|| McpError::invalid_request("no authenticated caller", None))?;
        let name = request.name.to_string();
        if gitloom_toolkit::find(&name).is_none() {
            return Err(McpError::invalid_params(
                format!("no such tool: {name}"),
                None,
            ));
        }
        let params = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // A client's `notifications/cancelled` stops a long op (ingest) between
        // sessions, as `DELETE /v1/jobs/{id}` does for a job.
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watch = {
            let (cancel, ct) = (cancel.clone(), context.ct.clone());
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        };
        let outcome = crate::http::run_op_with(
            &self.state,
            &caller.account,
            &caller.namespace,
            &name,
            params,
            Some(cancel),
        )
        .await;
        watch.abort();
        Ok(match outcome {
            Ok(v) => tool_result(v),
            Err(e) => tool_error(e.code, &e.message),
        }
        .into())
    }
}

fn tool_result(v: Value) -> CallToolResult {
    let structured = if v.is_object() {
        v
    } else {
        json!({"result": v})
    };
    let mut r = CallToolResult::structured(structured.clone());
    r.content = vec![ContentBlock::text(render(&structured))];
    r
}

fn tool_error(code: &str, message: &str) -> CallToolResult {
    let mut r = CallToolResult::structured_error(json!({"code": code, "message": message}));
    r.content = vec![ContentBlock::text(format!("error ({code}): {message}"))];
    r
}

/// Authenticates an MCP-over-HTTP request and resolves its namespace, and holds its
/// body to the API's rules (at most `--max-body` bytes, JSON, well-formed); refuses
/// it with the API's JSON errors otherwise.
async fn mcp_auth(
    axum::extract::State(state): axum::extract::State<crate::AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::extract::FromRequestParts;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let (mut parts, body) = req.into_parts();
    let auth = match crate::http::Auth::from_request_parts(&mut parts, &state).await {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    let ns = parts
        .headers
        .get(NAMESPACE_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if let Err(m) = crate::names::validate("namespace", &ns) {
        return crate::http::ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_name",
            format!("{m} (header {NAMESPACE_HEADER})"),
        )
        .into_response();
    }
    let body = if parts.method == axum::http::Method::POST {
        match checked_body(&parts, body, state.max_body).await {
            Ok(b) => b,
            Err(e) => return e.into_response(),
        }
    } else {
        body
    };
    parts.extensions.insert(Caller {
        account: auth.account,
        namespace: ns,
    });
    json_errors(
        next.run(axum::extract::Request::from_parts(parts, body))
            .await,
    )
    .await
}

/// The body of a POST to `/mcp`, read whole within `max` bytes and checked to be
/// JSON, so the caller's mistakes get the API's errors rather than the MCP layer's.
async fn checked_body(
    parts: &axum::http::request::Parts,
    body: axum::body::Body,
    max: usize,
) -> Result<axum::body::Body, crate::http::ApiError> {
    use axum::http::StatusCode;
    let is_json = parts
        .headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
    if !is_json {
        return Err(crate::http::ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "an MCP request is JSON: Content-Type: application/json",
        ));
    }
    let bytes = axum::body::to_bytes(body, max).await.map_err(|_| {
        crate::http::ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than the {max} bytes this server accepts"),
        )
    })?;
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return Err(crate::http::ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            format!("the request body is not JSON: {e}"),
        ));
    }
    Ok(axum::body::Body::from(bytes))
}

/// An error the MCP layer answered in plain text (a missing `Accept`, an unknown
/// session, …) becomes the API's JSON error with the same status.
async fn json_errors(res: axum::response::Response) -> axum::response::Response {
    use axum::response::IntoResponse;
    let status = res.status();
    let is_json = res
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json") || v.contains("event-stream"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return res;
    }
    let text = axum::body::to_bytes(res.into_body(), 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let code = match status.as_u16() {
        400 => "invalid_request",
        401 => "unauthorized",
        404 => "mcp_session_not_found",
        405 => "method_not_allowed",
        406 => "not_acceptable",
        413 => "payload_too_large",
        415 => "unsupported_media_type",
        422 => "invalid_request",
        _ if status.is_server_error() => "internal",
        _ => "invalid_request",
    };
    if status.is_server_error() {
        return crate::http::ApiError::from_code("internal", format!("MCP layer: {text}"))
            .into_response();
    }
    crate::http::ApiError::new(status, code, text.trim().to_owned()).into_response()
}

/// The `/mcp` route: rmcp's streamable HTTP service behind `mcp_auth`.
pub fn http_router(state: crate::AppState) -> axum::Router {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let handler = HttpMcp {
        state: state.clone(),
    };
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        // DNS-rebinding protection stays on (loopback host names only) unless the
        // server is put behind a proxy that rewrites Host. The body limit is the
        // API's (`--max-body`); `mcp_auth` enforces it first with a JSON error.
        StreamableHttpServerConfig::default()
            .with_json_response(true)
            .with_max_request_body_bytes(state.max_body),
    );
    axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(state, mcp_auth))
        .layer(axum::middleware::map_response(
            crate::http::add_build_header,
        ))
}
