//! The MCP server: every toolkit op is a tool, with the op's parameter schema as its
//! input schema. A call returns structured content (the op's JSON, wrapped as
//! `{"result": …}` when it is not an object, since MCP requires an object) plus a
//! readable text rendering (pretty JSON). Op failures are tool errors the model can
//! read (`is_error` with `{"code", "message"}`), not protocol errors.

use std::sync::Arc;

use gitloom_engine::{BUILD, Engine};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// An MCP server over one store.
#[derive(Clone)]
pub struct McpServer {
    engine: Arc<Engine>,
}

impl McpServer {
    pub fn new(engine: Arc<Engine>) -> McpServer {
        McpServer { engine }
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

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("gitloom", BUILD))
            .with_instructions(
                "gitloom: long-term memory. `retrieve` answers a question from memories (it abstains when nothing is evidence); `remember` stores a memory from fields.",
            )
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
        let engine = self.engine.clone();
        let outcome =
            tokio::task::spawn_blocking(move || gitloom_toolkit::call(&engine, &name, params))
                .await
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let result = match outcome {
            Ok(v) => {
                let structured = if v.is_object() {
                    v
                } else {
                    json!({"result": v})
                };
                let mut r = CallToolResult::structured(structured.clone());
                r.content = vec![ContentBlock::text(render(&structured))];
                r
            }
            Err(e) => {
                let body = json!({"code": e.code(), "message": e.to_string()});
                let mut r = CallToolResult::structured_error(body);
                r.content = vec![ContentBlock::text(format!("error ({}): {e}", e.code()))];
                r
            }
        };
        Ok(result.into())
    }
}
