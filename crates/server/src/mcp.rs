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
/// `X-Gitloom-Namespace: NAME` (checked by [`mcp_auth`] before the MCP layer sees
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
        let outcome = crate::http::run_op(
            &self.state,
            &caller.account,
            &caller.namespace,
            &name,
            params,
        )
        .await;
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

/// Authenticates an MCP-over-HTTP request and resolves its namespace; refuses it
/// with the API's JSON errors otherwise.
async fn mcp_auth(
    axum::extract::State(state): axum::extract::State<crate::AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::extract::FromRequestParts;
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
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_name",
            format!("{m} (header {NAMESPACE_HEADER})"),
        )
        .into_response();
    }
    parts.extensions.insert(Caller {
        account: auth.account,
        namespace: ns,
    });
    next.run(axum::extract::Request::from_parts(parts, body))
        .await
}

/// The `/mcp` route: rmcp's streamable HTTP service behind [`mcp_auth`].
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
        // server is put behind a proxy that rewrites Host.
        StreamableHttpServerConfig::default().with_json_response(true),
    );
    axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(state, mcp_auth))
}
