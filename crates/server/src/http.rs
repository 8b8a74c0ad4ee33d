//! The HTTP API (axum). Routes are declared with `utoipa` so `/openapi.json` is
//! generated from the same declarations the router is built from.
//!
//! Every response carries the build: an `x-gitloom-build` header on all of them and a
//! `build` field in every JSON body. Errors are `{"build", "error": {"code",
//! "message"}}` with a stable code. Namespaced responses echo `namespace` (O1).

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, request::Parts};
use axum::response::{IntoResponse, Response};
use gitloom_engine::BUILD;
use gitloom_toolkit::OpError;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::jobs::{Job, JobError, Outcome};
use crate::namespaces::{CallError, NamespaceError};
use crate::usage::Event;

pub const BUILD_HEADER: &str = "x-gitloom-build";

/// An error response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"build": BUILD, "error": {"code": self.code, "message": self.message}});
        (self.status, axum::Json(body)).into_response()
    }
}

fn status_of(code: &str) -> StatusCode {
    match code {
        "unknown_op" | "not_found" | "namespace_not_found" | "job_not_found" => {
            StatusCode::NOT_FOUND
        }
        "invalid_memory" => StatusCode::UNPROCESSABLE_ENTITY,
        "conflict" | "namespace_exists" | "path_collision" | "job_finished" => StatusCode::CONFLICT,
        "too_large" | "payload_too_large" => StatusCode::PAYLOAD_TOO_LARGE,
        "too_many_jobs" | "quota_exceeded" | "rate_limited" => StatusCode::TOO_MANY_REQUESTS,
        "embedding_failed" | "model_failed" => StatusCode::BAD_GATEWAY,
        // The object store failed or the namespace's head is too contended: retry.
        "storage_unavailable" | "contended" => StatusCode::SERVICE_UNAVAILABLE,
        "internal" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

impl ApiError {
    /// The error for a stable code. A client's mistake (4xx) keeps its message, which
    /// names the caller's input; a server-side failure (5xx) is logged in full under
    /// a reference and answered without its detail, so no server path, bucket or
    /// OS error ever reaches a client.
    pub fn from_code(code: &'static str, message: impl std::fmt::Display) -> ApiError {
        let status = status_of(code);
        if !status.is_server_error() {
            return ApiError::new(status, code, message.to_string());
        }
        let reference = error_reference();
        tracing::error!(code, reference = %reference, error = %message, "request failed");
        let public = match code {
            "storage_unavailable" => "object storage did not answer; retry".to_owned(),
            "contended" => "the namespace is busy with other writers; retry".to_owned(),
            "embedding_failed" => "the embedding model failed".to_owned(),
            "model_failed" => "the language model failed".to_owned(),
            _ => "internal error".to_owned(),
        };
        ApiError::new(
            status,
            code,
            format!("{public} (reference {reference} in the server's log)"),
        )
    }
}

/// A short random reference tying an answered 5xx to its log line.
fn error_reference() -> String {
    format!("err_{:08x}", fastrand::u32(..))
}

/// A failure of the server itself (a task that panicked, a value that would not
/// serialise): 500, detail in the log only.
pub(crate) fn internal(e: &dyn std::fmt::Display) -> ApiError {
    ApiError::from_code("internal", e)
}

impl From<OpError> for ApiError {
    fn from(e: OpError) -> ApiError {
        ApiError::from_code(e.code(), &e)
    }
}

impl From<NamespaceError> for ApiError {
    fn from(e: NamespaceError) -> ApiError {
        ApiError::from_code(e.code(), &e)
    }
}

impl From<CallError> for ApiError {
    fn from(e: CallError) -> ApiError {
        ApiError::from_code(e.code(), &e)
    }
}

/// A JSON body whose rejections are JSON errors too.
pub struct Body(pub Value);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<Value>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Body(v)),
            Err(r) => Err(json_rejection(r)),
        }
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let status = r.status();
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        _ => "malformed_json",
    };
    ApiError::new(status, code, r.body_text())
}

/// Path parameters with JSON rejections.
pub struct P<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> FromRequestParts<S> for P<T> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(t)| P(t))
            .map_err(|r: PathRejection| {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_path", r.body_text())
            })
    }
}

/// Query parameters with JSON rejections.
pub struct Q<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> FromRequestParts<S> for Q<T> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(t)| Q(t))
            .map_err(|r: QueryRejection| {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_params", r.body_text())
            })
    }
}

/// The authenticated account (from `Authorization: Bearer KEY`), rate limited per key.
pub struct Auth {
    /// The tenant id: where the account's namespaces, jobs and usage live. The
    /// account's name for its first incarnation; `name.N` for one re-created after
    /// `N` deletions, so it never reaches what an earlier account of that name left.
    pub account: String,
    /// The account's name.
    pub name: String,
}

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let arrived = std::time::Instant::now();
        let unauthorized = || {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid API key is required: Authorization: Bearer KEY",
            )
        };
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(unauthorized)?;
        let key = header
            .strip_prefix("Bearer ")
            .ok_or_else(unauthorized)?
            .trim()
            .to_owned();
        // Every request looks at the accounts first (a stat, or one conditional read
        // of object storage shared by concurrent requests), so a revoked key or a
        // deleted account is refused from the next request on.
        let tenant = if state.accounts.is_remote() {
            let accounts = state.accounts.clone();
            let k = key.clone();
            tokio::task::spawn_blocking(move || accounts.authenticate_at(&k, arrived))
                .await
                .map_err(|e| internal(&e))?
        } else {
            state.accounts.authenticate_at(&key, arrived)
        };
        for gone in state.accounts.take_removed() {
            state.namespaces.evict(&gone);
            state.jobs.forget_tenant(&gone);
            // Its records go with its data; counting it on would write them again.
            state.usage.forget_tenant(&gone);
        }
        let tenant = tenant.ok_or_else(unauthorized)?;
        if let Err(wait) = state.limiter.check(&key) {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("too many requests for this key; retry in {wait:.2}s"),
            ));
        }
        Ok(Auth {
            account: tenant.id,
            name: tenant.name,
        })
    }
}

fn ok(status: StatusCode, namespace: Option<&str>, op: Option<&str>, result: Value) -> Response {
    let mut body = json!({"build": BUILD});
    if let Some(ns) = namespace {
        body["namespace"] = json!(ns);
    }
    if let Some(op) = op {
        body["op"] = json!(op);
    }
    body["result"] = result;
    (status, axum::Json(body)).into_response()
}

/// Runs a toolkit op in a namespace of `account` (a tenant id) on a blocking
/// thread: reads on the namespace's reader engine, writes on its writer under the
/// namespace's lock. Counted in the tenant's usage. A long op (ingest) runs only as
/// a job.
pub async fn run_op(
    state: &AppState,
    account: &str,
    namespace: &str,
    op: &str,
    params: Value,
) -> Result<Value, ApiError> {
    run_op_with(state, account, namespace, op, params, None).await
}

/// [`run_op`] for a caller that waits for a long op and can cancel it (an MCP tool
/// call: `cancel` is set when the client sends `notifications/cancelled`); `None`
/// refuses long ops, which over HTTP run only as jobs.
pub async fn run_op_with(
    state: &AppState,
    account: &str,
    namespace: &str,
    op: &str,
    params: Value,
    cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
) -> Result<Value, ApiError> {
    let Some(op) = gitloom_toolkit::find(op) else {
        state
            .usage
            .record(account, None, Event::Request("unknown_op"));
        return Err(OpError::UnknownOp(op.to_owned()).into());
    };
    if op.long && cancel.is_none() {
        state.usage.record(account, None, Event::Request(op.name));
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "use_a_job",
            format!(
                "{} takes long and runs only as a job: POST /v1/namespaces/{{ns}}/jobs with {{\"op\": \"{}\", \"params\": …}}",
                op.name, op.name
            ),
        ));
    }
    let namespaces = state.namespaces.clone();
    let limits = state.limits;
    let (tenant, name) = (account.to_owned(), namespace.to_owned());
    let (out, found, context) = tokio::task::spawn_blocking(move || {
        let context = crate::namespaces::context(limits, cancel);
        let ns = namespaces.get(&tenant, &name);
        let found = ns.is_ok();
        let out = ns
            .map_err(CallError::from)
            .and_then(|ns| ns.call(op, params, &context));
        (out, found, context)
    })
    .await
    .map_err(|e| internal(&e))?;
    // Counted under the namespace only if it exists: a caller cannot grow the meter
    // with made-up names.
    let at = found.then_some(namespace);
    state.usage.record(account, at, Event::Request(op.name));
    if found {
        count_spent(state, account, namespace, op, out.is_ok(), &context);
    }
    Ok(out?)
}

/// Counts what a finished call did: a write, messages ingested, model tokens.
fn count_spent(
    state: &AppState,
    tenant: &str,
    namespace: &str,
    op: &gitloom_toolkit::Op,
    succeeded: bool,
    context: &gitloom_toolkit::Context,
) {
    use std::sync::atomic::Ordering::Relaxed;
    if succeeded && op.access == gitloom_toolkit::Access::Write {
        state.usage.record(tenant, Some(namespace), Event::Write);
    }
    let messages = context.spent.messages.load(Relaxed);
    if messages > 0 {
        state
            .usage
            .record(tenant, Some(namespace), Event::Messages(messages));
    }
    let tokens = context.spent.model_tokens.load(Relaxed);
    if tokens > 0 {
        state
            .usage
            .record(tenant, Some(namespace), Event::ModelTokens(tokens));
    }
}

#[utoipa::path(get, path = "/healthz", tag = "meta",
    responses((status = 200, description = "The server is up; `build` names the build.")))]
async fn healthz() -> Response {
    (
        StatusCode::OK,
        axum::Json(json!({"build": BUILD, "status": "ok"})),
    )
        .into_response()
}

#[utoipa::path(get, path = "/v1/namespaces", tag = "namespaces",
    responses((status = 200, description = "The account's namespaces."), (status = 401, description = "No valid key.")))]
async fn list_namespaces(State(s): State<AppState>, auth: Auth) -> Result<Response, ApiError> {
    s.usage
        .record(&auth.account, None, Event::Request("list_namespaces"));
    let namespaces = s.namespaces.clone();
    let names = tokio::task::spawn_blocking(move || namespaces.list(&auth.account))
        .await
        .map_err(|e| internal(&e))??;
    Ok(ok(StatusCode::OK, None, None, json!({"namespaces": names})))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNamespace {
    /// 1–63 characters of a-z, 0-9, '-', '_'.
    pub name: String,
}

#[utoipa::path(post, path = "/v1/namespaces", tag = "namespaces", request_body = CreateNamespace,
    responses((status = 201, description = "Created."), (status = 400, description = "Invalid name."), (status = 409, description = "Exists.")))]
async fn create_namespace(
    State(s): State<AppState>,
    auth: Auth,
    Body(body): Body,
) -> Result<Response, ApiError> {
    s.usage
        .record(&auth.account, None, Event::Request("create_namespace"));
    let req: CreateNamespace = serde_json::from_value(body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_params", e.to_string()))?;
    let namespaces = s.namespaces.clone();
    let name = req.name.clone();
    tokio::task::spawn_blocking(move || namespaces.create(&auth.account, &name).map(|_| ()))
        .await
        .map_err(|e| internal(&e))??;
    Ok(ok(
        StatusCode::CREATED,
        Some(&req.name),
        None,
        json!({"created": true}),
    ))
}

#[utoipa::path(delete, path = "/v1/namespaces/{ns}", tag = "namespaces",
    params(("ns" = String, Path, description = "Namespace name")),
    responses((status = 200, description = "Deleted with its store."), (status = 404, description = "No such namespace.")))]
async fn delete_namespace(
    State(s): State<AppState>,
    auth: Auth,
    P(ns): P<String>,
) -> Result<Response, ApiError> {
    s.usage
        .record(&auth.account, None, Event::Request("delete_namespace"));
    let namespaces = s.namespaces.clone();
    let name = ns.clone();
    tokio::task::spawn_blocking(move || namespaces.delete(&auth.account, &name))
        .await
        .map_err(|e| internal(&e))??;
    Ok(ok(
        StatusCode::OK,
        Some(&ns),
        None,
        json!({"deleted": true}),
    ))
}

#[utoipa::path(post, path = "/v1/namespaces/{ns}/memories", tag = "memories",
    params(("ns" = String, Path, description = "Namespace name")),
    request_body(content = Object, description = "Either a whole file (`write` op: {path, content, message?}) or the fields of `remember` (see the `write` and `remember` op schemas)."),
    responses((status = 200, description = "Committed: the write outcome."), (status = 400, description = "Invalid path or parameters."), (status = 422, description = "The memory does not parse.")))]
async fn write_memory(
    State(s): State<AppState>,
    auth: Auth,
    P(ns): P<String>,
    Body(body): Body,
) -> Result<Response, ApiError> {
    let op = if body.get("content").is_some() {
        "write"
    } else {
        "remember"
    };
    let out = run_op(&s, &auth.account, &ns, op, body).await?;
    Ok(ok(StatusCode::OK, Some(&ns), Some(op), out))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AtQuery {
    /// A revision (sha, HEAD~2) or a date (2026-08-01).
    pub at: Option<String>,
}

#[utoipa::path(get, path = "/v1/namespaces/{ns}/memories/{*path}", tag = "memories",
    params(("ns" = String, Path, description = "Namespace name"), ("path" = String, Path, description = "Store path, e.g. facts/work/employer.md"), AtQuery),
    responses((status = 200, description = "The file."), (status = 404, description = "No such memory.")))]
async fn get_memory(
    State(s): State<AppState>,
    auth: Auth,
    P((ns, path)): P<(String, String)>,
    Q(q): Q<AtQuery>,
) -> Result<Response, ApiError> {
    let out = run_op(
        &s,
        &auth.account,
        &ns,
        "get",
        json!({"path": path, "at": q.at}),
    )
    .await?;
    Ok(ok(StatusCode::OK, Some(&ns), Some("get"), out))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RetrieveQuery {
    /// The question.
    pub q: String,
    pub limit: Option<usize>,
    pub explain: Option<bool>,
    pub tier: Option<String>,
    pub topic: Option<String>,
    pub at: Option<String>,
}

#[utoipa::path(get, path = "/v1/namespaces/{ns}/retrieve", tag = "read",
    params(("ns" = String, Path, description = "Namespace name"), RetrieveQuery),
    responses((status = 200, description = "Hits with why each was returned (the `retrieve` op).")))]
async fn retrieve(
    State(s): State<AppState>,
    auth: Auth,
    P(ns): P<String>,
    Q(q): Q<RetrieveQuery>,
) -> Result<Response, ApiError> {
    let mut params = json!({"query": q.q});
    for (k, v) in [
        ("limit", json!(q.limit)),
        ("explain", json!(q.explain)),
        ("tier", json!(q.tier)),
        ("topic", json!(q.topic)),
        ("at", json!(q.at)),
    ] {
        if !v.is_null() {
            params[k] = v;
        }
    }
    let out = run_op(&s, &auth.account, &ns, "retrieve", params).await?;
    Ok(ok(StatusCode::OK, Some(&ns), Some("retrieve"), out))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    pub path: Option<String>,
    pub limit: Option<usize>,
}

#[utoipa::path(get, path = "/v1/namespaces/{ns}/log", tag = "read",
    params(("ns" = String, Path, description = "Namespace name"), LogQuery),
    responses((status = 200, description = "Commits, newest first (the `log` op).")))]
async fn log(
    State(s): State<AppState>,
    auth: Auth,
    P(ns): P<String>,
    Q(q): Q<LogQuery>,
) -> Result<Response, ApiError> {
    let out = run_op(
        &s,
        &auth.account,
        &ns,
        "log",
        json!({"path": q.path, "limit": q.limit}),
    )
    .await?;
    Ok(ok(StatusCode::OK, Some(&ns), Some("log"), out))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TreeQuery {
    pub topic: Option<String>,
}

#[utoipa::path(get, path = "/v1/namespaces/{ns}/tree", tag = "read",
    params(("ns" = String, Path, description = "Namespace name"), TreeQuery),
    responses((status = 200, description = "Topics and files (the `tree` op).")))]
async fn tree(
    State(s): State<AppState>,
    auth: Auth,
    P(ns): P<String>,
    Q(q): Q<TreeQuery>,
) -> Result<Response, ApiError> {
    let out = run_op(&s, &auth.account, &ns, "tree", json!({"topic": q.topic})).await?;
    Ok(ok(StatusCode::OK, Some(&ns), Some("tree"), out))
}

#[utoipa::path(post, path = "/v1/namespaces/{ns}/ops/{op}", tag = "ops",
    params(("ns" = String, Path, description = "Namespace name"), ("op" = String, Path, description = "An op name; its parameter schema is under `x-gitloom-ops` in this document")),
    request_body(content = Object, description = "The op's parameters."),
    responses((status = 200, description = "The op's result."), (status = 404, description = "No such op or namespace.")))]
async fn call_op(
    State(s): State<AppState>,
    auth: Auth,
    P((ns, op)): P<(String, String)>,
    Body(body): Body,
) -> Result<Response, ApiError> {
    let out = run_op(&s, &auth.account, &ns, &op, body).await?;
    Ok(ok(StatusCode::OK, Some(&ns), Some(&op), out))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateJob {
    /// A write op (e.g. `rebuild`, `embed_pending`, `write`).
    pub op: String,
    /// Its parameters.
    #[serde(default)]
    pub params: Value,
}

/// Starts an op as a job in a namespace: its parameters are checked first (a job
/// that can only fail is refused with the error it would have had), then the
/// tenant's job and ingest quotas. Shared by `POST …/jobs` and `POST …/ingest`.
pub async fn start_job(
    state: &AppState,
    account: &str,
    ns: &str,
    op: &str,
    params: Value,
) -> Result<Response, ApiError> {
    let Some(found) = gitloom_toolkit::find(op) else {
        state
            .usage
            .record(account, None, Event::Request("unknown_op"));
        return Err(OpError::UnknownOp(op.to_owned()).into());
    };
    if let Err(e) = found.check(&params, &state.limits) {
        state
            .usage
            .record(account, None, Event::Request(found.name));
        return Err(e.into());
    }
    let messages = if found.name == "ingest" {
        gitloom_toolkit::ingest_message_count(&params).unwrap_or(0)
    } else {
        0
    };
    // Fail fast on a namespace that does not exist, before a job is made.
    let namespaces = state.namespaces.clone();
    let (a, n) = (account.to_owned(), ns.to_owned());
    let handle = tokio::task::spawn_blocking(move || namespaces.get(&a, &n))
        .await
        .map_err(|e| internal(&e))?;
    let at = handle.is_ok().then_some(ns);
    state.usage.record(account, at, Event::Request(found.name));
    let handle = handle?;
    let limits = state.limits;
    let st = state.clone();
    let (tenant, name) = (account.to_owned(), ns.to_owned());
    let job = state
        .jobs
        .spawn(
            account,
            ns,
            found.name,
            found.long,
            messages,
            move |cancel| {
                let context = crate::namespaces::context(limits, cancel);
                let out = handle.call(found, params, &context);
                count_spent(&st, &tenant, &name, found, out.is_ok(), &context);
                let cancelled = context
                    .cancel
                    .as_ref()
                    .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
                    && out
                        .as_ref()
                        .is_ok_and(|v| v.get("cancelled").and_then(Value::as_bool) == Some(true));
                Outcome {
                    result: out.map_err(|e| {
                        let api = ApiError::from(e);
                        JobError {
                            code: api.code.to_owned(),
                            message: api.message,
                        }
                    }),
                    cancelled,
                }
            },
        )
        .map_err(|e| ApiError::from_code(e.code(), &e))?;
    let v = serde_json::to_value(&job).map_err(|e| internal(&e))?;
    Ok(ok(StatusCode::ACCEPTED, Some(ns), Some(op), v))
}

#[utoipa::path(post, path = "/v1/namespaces/{ns}/jobs", tag = "jobs",
    params(("ns" = String, Path, description = "Namespace name")), request_body = CreateJob,
    responses((status = 202, description = "Started; poll GET /v1/jobs/{id}.")))]
async fn create_job(
    State(s): State<AppState>,
    auth: Auth,
    P(ns): P<String>,
    Body(body): Body,
) -> Result<Response, ApiError> {
    let req: CreateJob = serde_json::from_value(body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_params", e.to_string()))?;
    start_job(&s, &auth.account, &ns, &req.op, req.params).await
}

/// Ingestion is a job: extraction can take minutes with a model.
#[utoipa::path(post, path = "/v1/namespaces/{ns}/ingest", tag = "jobs",
    params(("ns" = String, Path, description = "Namespace name")),
    request_body(content = serde_json::Value, description = "The `ingest` op's parameters: {\"sessions\": [...], \"concurrency\", \"reextract\"}."),
    responses((status = 202, description = "Started; poll GET /v1/jobs/{id}; the result is the ingestion report.")))]
async fn ingest(
    State(s): State<AppState>,
    auth: Auth,
    P(ns): P<String>,
    Body(body): Body,
) -> Result<Response, ApiError> {
    start_job(&s, &auth.account, &ns, "ingest", body).await
}

#[utoipa::path(get, path = "/v1/jobs/{id}", tag = "jobs",
    params(("id" = String, Path, description = "Job id")),
    responses((status = 200, description = "The job: status, and result or error when finished."), (status = 404, description = "No such job for this account (or it finished long enough ago to be forgotten).")))]
async fn get_job(
    State(s): State<AppState>,
    auth: Auth,
    P(id): P<String>,
) -> Result<Response, ApiError> {
    s.usage
        .record(&auth.account, None, Event::Request("get_job"));
    let job = s
        .jobs
        .get(&auth.account, &id)
        .map_err(|e| ApiError::from_code(e.code(), &e))?;
    Ok(job_response(StatusCode::OK, &job))
}

#[utoipa::path(delete, path = "/v1/jobs/{id}", tag = "jobs",
    params(("id" = String, Path, description = "Job id")),
    responses((status = 202, description = "A running job was asked to stop: it stops at its next safe point (between sessions) and is then `cancelled`, its result saying what it did before."), (status = 200, description = "A finished job was forgotten (its result is gone)."), (status = 404, description = "No such job for this account."), (status = 409, description = "A running job that cannot be stopped (only ingest can).")))]
async fn cancel_job(
    State(s): State<AppState>,
    auth: Auth,
    P(id): P<String>,
) -> Result<Response, ApiError> {
    s.usage
        .record(&auth.account, None, Event::Request("cancel_job"));
    let job = s
        .jobs
        .cancel(&auth.account, &id)
        .map_err(|e| ApiError::from_code(e.code(), &e))?;
    let status = if job.status == crate::jobs::JobStatus::Cancelling {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok(job_response(status, &job))
}

/// A job in the usual envelope, its result written as the JSON it was kept as.
fn job_response(status: StatusCode, job: &Job) -> Response {
    #[derive(serde::Serialize)]
    struct Envelope<'a> {
        build: &'static str,
        namespace: &'a str,
        result: &'a Job,
    }
    (
        status,
        axum::Json(Envelope {
            build: BUILD,
            namespace: &job.namespace,
            result: job,
        }),
    )
        .into_response()
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// Also measure each namespace's storage bytes (default true).
    pub storage: Option<bool>,
}

#[utoipa::path(get, path = "/v1/usage", tag = "usage", params(UsageQuery),
    responses((status = 200, description = "The account's usage: per namespace, requests by op, writes, ingested messages, model tokens and storage bytes, summed over every node.")))]
async fn usage(
    State(s): State<AppState>,
    auth: Auth,
    Q(q): Q<UsageQuery>,
) -> Result<Response, ApiError> {
    s.usage.record(&auth.account, None, Event::Request("usage"));
    let st = s.clone();
    let (tenant, name) = (auth.account.clone(), auth.name.clone());
    let report = tokio::task::spawn_blocking(move || {
        crate::usage::report(
            &st.usage,
            &st.namespaces,
            &tenant,
            &name,
            q.storage != Some(false),
        )
    })
    .await
    .map_err(|e| internal(&e))?
    .map_err(|e| internal(&e))?;
    let v = serde_json::to_value(&report).map_err(|e| internal(&e))?;
    Ok(ok(StatusCode::OK, None, None, v))
}

#[utoipa::path(get, path = "/openapi.json", tag = "meta",
    responses((status = 200, description = "This document.")))]
async fn openapi_json(State(s): State<AppState>) -> Response {
    let doc = s
        .openapi
        .get()
        .cloned()
        .unwrap_or_else(|| Arc::new(json!({})));
    axum::Json((*doc).clone()).into_response()
}

async fn no_route() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no_such_route", "no such route")
}

async fn bad_method() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "method not allowed on this route",
    )
}

/// The API's routes with their OpenAPI document.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(openapi_json))
        .routes(routes!(list_namespaces, create_namespace))
        .routes(routes!(delete_namespace))
        .routes(routes!(write_memory))
        .routes(routes!(get_memory))
        .routes(routes!(retrieve))
        .routes(routes!(log))
        .routes(routes!(tree))
        .routes(routes!(call_op))
        .routes(routes!(create_job))
        .routes(routes!(ingest))
        .routes(routes!(get_job, cancel_job))
        .routes(routes!(usage))
}

/// The OpenAPI document: routes from `api()`, and every op's parameter schema (from
/// the toolkit) under `x-gitloom-ops`.
pub fn openapi_document(mut doc: utoipa::openapi::OpenApi) -> Value {
    doc.info.title = "gitloom".into();
    doc.info.version = BUILD.into();
    let mut v = serde_json::to_value(&doc).unwrap_or_else(|_| json!({}));
    // axum's catch-all segment `{*path}` is the OpenAPI parameter `{path}`.
    if let Some(paths) = v.get_mut("paths").and_then(Value::as_object_mut) {
        let renamed: Vec<(String, Value)> = std::mem::take(paths)
            .into_iter()
            .map(|(k, val)| (k.replace("{*", "{"), val))
            .collect();
        paths.extend(renamed);
    }
    let ops: serde_json::Map<String, Value> = gitloom_toolkit::ops()
        .iter()
        .map(|o| {
            (
                o.name.to_owned(),
                json!({"description": o.description, "access": o.access, "params": o.params_schema()}),
            )
        })
        .collect();
    v["x-gitloom-ops"] = Value::Object(ops);
    v
}

/// The whole router: API with `/openapi.json`, fallbacks, body limit, build header.
pub fn router(state: AppState) -> axum::Router {
    let (api, doc) = api().split_for_parts();
    let mut doc = openapi_document(doc);
    if state.mcp {
        doc["paths"]["/mcp"] = json!({"post": {
            "tags": ["mcp"],
            "summary": "MCP over streamable HTTP: every op is a tool",
            "parameters": [{"name": crate::mcp::NAMESPACE_HEADER, "in": "header", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "The JSON-RPC reply."}, "401": {"description": "No valid key."}}
        }});
    }
    let _ = state.openapi.set(Arc::new(doc));
    let max_body = state.max_body;
    api.fallback(no_route)
        .method_not_allowed_fallback(bad_method)
        .with_state(state)
        .layer(axum::extract::DefaultBodyLimit::max(max_body))
        .layer(axum::middleware::map_response(add_build_header))
}

pub(crate) async fn add_build_header(mut res: Response) -> Response {
    res.headers_mut()
        .insert(BUILD_HEADER, HeaderValue::from_static(BUILD));
    res
}
