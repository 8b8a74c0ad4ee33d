//! gitloom-toolkit: every operation on a store, defined once.
//!
//! An [`Op`] is a name, a description, a JSON Schema of its parameters (derived from
//! a typed struct with `schemars`) and a handler over a [`gitloom_engine::Engine`]
//! returning serialisable data. The front-ends are built from [`ops()`]:
//! the MCP server lists each op as a tool with this schema, the HTTP API calls ops by
//! name (`POST /v1/namespaces/{ns}/ops/{op}`, and jobs), and the CLI's flags are
//! checked against these schemas by a test (`crates/cli/tests/op_schemas.rs`), so a
//! parameter cannot describe itself differently in two places.
//!
//! Not here: transport (HTTP, MCP, argument parsing), tenancy, output rendering.
#![forbid(unsafe_code)]

mod error;
mod ops;
mod params;

pub use error::OpError;
pub use ops::{
    EmbedReport, EntityMentions, HistoryEntry, Links, SearchHits, SemanticHits, VocabListing,
    ingest_message_count,
};
pub use params::*;

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, LazyLock};

use gitloom_engine::Engine;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

type Handler = dyn Fn(&Engine, Value, &Context) -> Result<Value, OpError> + Send + Sync;
type Check = dyn Fn(&Value, &Limits) -> Result<(), OpError> + Send + Sync;

/// Whether an op changes the store (or its derived state) or only reads it. Front-ends
/// serialise `Write` ops per store and run `Read` ops beside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Read,
    Write,
}

/// Bounds an operator sets on what one call may ask for (the server's flags). They
/// are checked on the parameters before any work starts ([`Op::check`]), so a call
/// that is too big fails at once, naming the parameter and the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Messages one `ingest` call may carry (all its sessions together).
    pub ingest_messages: usize,
    /// Bytes one message of an `ingest` call may hold.
    pub ingest_message_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ingest_messages: 2_000,
            ingest_message_bytes: 64 * 1024,
        }
    }
}

/// What a call spent on the operator's behalf (for metering): filled in by the op.
#[derive(Debug, Default)]
pub struct Spent {
    /// Conversation messages ingested.
    pub messages: AtomicU64,
    /// Tokens a language model was paid for (prompt and completion).
    pub model_tokens: AtomicU64,
}

impl Spent {
    /// Counts `n` more messages ingested.
    pub fn add_messages(&self, n: u64) {
        self.messages
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// Counts `n` more model tokens paid for.
    pub fn add_model_tokens(&self, n: u64) {
        self.model_tokens
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Everything a call carries besides its parameters.
#[derive(Debug, Default)]
pub struct Context {
    /// Set to stop a long op ([`Op::long`]) at its next safe point; the op then
    /// returns what it did so far.
    pub cancel: Option<Arc<AtomicBool>>,
    pub limits: Limits,
    pub spent: Spent,
}

/// One operation.
pub struct Op {
    pub name: &'static str,
    pub description: &'static str,
    pub access: Access,
    /// Takes long (minutes): front-ends run it only as a job, which `cancel` can
    /// stop, and not under the namespace's writer (it commits as it goes, each
    /// commit under the store's own write lock, so other writes interleave).
    pub long: bool,
    schema: fn() -> schemars::Schema,
    check: Box<Check>,
    handler: Box<Handler>,
}

impl Op {
    /// The JSON Schema of the parameters (an object schema).
    pub fn params_schema(&self) -> Value {
        (self.schema)().to_value()
    }

    /// Checks parameters without running the op: they must parse into the typed
    /// struct (unknown fields are refused) and respect the op's own bounds and
    /// `limits`. Cheap; a front-end calls it before accepting a job.
    pub fn check(&self, params: &Value, limits: &Limits) -> Result<(), OpError> {
        (self.check)(params, limits)
    }

    /// Runs the op with the default context: parameters are checked first, so a
    /// handler only ever sees well-formed input.
    pub fn call(&self, engine: &Engine, params: Value) -> Result<Value, OpError> {
        self.call_with(engine, params, &Context::default())
    }

    /// Runs the op with a context (cancellation, limits, metering).
    pub fn call_with(
        &self,
        engine: &Engine,
        params: Value,
        context: &Context,
    ) -> Result<Value, OpError> {
        (self.handler)(engine, params, context)
    }
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Op")
            .field("name", &self.name)
            .field("access", &self.access)
            .finish_non_exhaustive()
    }
}

/// Parses parameters into the op's struct; `null` (no arguments at all) means "all
/// defaults".
fn parse<P: DeserializeOwned>(name: &'static str, params: &Value) -> Result<P, OpError> {
    let result = if params.is_null() {
        P::deserialize(Value::Object(Default::default()))
    } else {
        P::deserialize(params)
    };
    result.map_err(|e| OpError::InvalidParams {
        op: name,
        message: e.to_string(),
    })
}

type Bounds<P> = fn(&P, &Limits) -> Result<(), OpError>;

fn no_bounds<P>(_: &P, _: &Limits) -> Result<(), OpError> {
    Ok(())
}

fn op<P, O>(
    name: &'static str,
    description: &'static str,
    access: Access,
    handler: fn(&Engine, P) -> Result<O, OpError>,
) -> Op
where
    P: DeserializeOwned + schemars::JsonSchema + 'static,
    O: Serialize + 'static,
{
    op_with(name, description, access, no_bounds::<P>, move |e, p, _| {
        handler(e, p)
    })
}

fn op_with<P, O>(
    name: &'static str,
    description: &'static str,
    access: Access,
    bounds: Bounds<P>,
    handler: impl Fn(&Engine, P, &Context) -> Result<O, OpError> + Send + Sync + 'static,
) -> Op
where
    P: DeserializeOwned + schemars::JsonSchema + 'static,
    O: Serialize + 'static,
{
    Op {
        name,
        description,
        access,
        long: false,
        schema: || schemars::schema_for!(P),
        check: Box::new(move |params, limits| bounds(&parse::<P>(name, params)?, limits)),
        handler: Box::new(move |engine, params, context| {
            let p: P = parse(name, &params)?;
            bounds(&p, &context.limits)?;
            let out = handler(engine, p, context)?;
            serde_json::to_value(out).map_err(|e| OpError::Internal(e.to_string()))
        }),
    }
}

fn long(mut op: Op) -> Op {
    op.long = true;
    op
}

static OPS: LazyLock<Vec<Op>> = LazyLock::new(|| {
    use Access::{Read, Write};
    vec![
        op_with(
            "write",
            "Write a whole memory file (markdown with YAML frontmatter) at a store path, as one commit. The file is validated first; nothing is written if it is refused.",
            Write,
            ops::check_write,
            |e, p, _| ops::write(e, p),
        ),
        op_with(
            "remember",
            "Write a memory from fields; its path is derived from tier, topic and title, so remembering the same subject again updates it.",
            Write,
            ops::check_remember,
            |e, p, _| ops::remember(e, p),
        ),
        op(
            "forget",
            "Delete a memory (one commit; it stays in history).",
            Write,
            ops::forget,
        ),
        op(
            "get",
            "Read one memory file, at HEAD or at a revision or date.",
            Read,
            ops::get,
        ),
        op(
            "retrieve",
            "Retrieve the memories that are evidence for a question, best first, with why each was returned; abstains (no hits) when nothing clears the evidence floor.",
            Read,
            ops::retrieve,
        ),
        op(
            "search",
            "Lexical (BM25) search only: no fusion, no evidence floor.",
            Read,
            ops::search,
        ),
        op(
            "semantic_search",
            "Semantic search only: the memories whose cues and bodies are nearest the query's embedding (needs an embedding model).",
            Read,
            ops::semantic_search,
        ),
        op(
            "related",
            "The links of a memory: what it links to (wikilinks, related:, supersedes) and what links to it.",
            Read,
            ops::related,
        ),
        op(
            "entity",
            "Every memory that mentions an entity (by name, or a person's first name), with its role there.",
            Read,
            ops::entity,
        ),
        op(
            "tree",
            "Topics and files below a topic (e.g. facts/work); no topic lists the tiers.",
            Read,
            ops::tree,
        ),
        op(
            "topics",
            "Every topic with its memory counts.",
            Read,
            ops::topics,
        ),
        op(
            "vocab",
            "Term aliases (from the store's vocab/*.md files) used to expand lexical queries, e.g. k8s = kubernetes; with a term, only its groups.",
            Read,
            ops::vocab,
        ),
        op(
            "log",
            "History of the store, or of one memory, newest first.",
            Read,
            ops::log,
        ),
        op(
            "history",
            "Every version of one memory, newest first: the commit, its time and message, and the file's content then (absent where the commit deleted it).",
            Read,
            ops::history,
        ),
        op(
            "embed_pending",
            "Embed every cue and section the vector cache lacks.",
            Write,
            ops::embed_pending,
        ),
        op(
            "rebuild",
            "Rebuild the index from git alone.",
            Write,
            ops::rebuild,
        ),
        op(
            "sync",
            "Bring the index up to date with HEAD (incremental).",
            Write,
            ops::sync,
        ),
        op(
            "stats",
            "Counts of files, sections, cues, links, entities and files that failed to parse.",
            Read,
            ops::stats,
        ),
        long(op_with(
            "ingest",
            "Turn conversations into memories: each session is stored as a transcript and its facts are extracted, reconciled with what the store already holds (new, extends, corrects, supersedes, duplicate) and committed, one commit per session. Re-ingesting a session changes nothing. Extraction is offline unless the operator configured a model.",
            Write,
            ops::check_ingest,
            ops::ingest,
        )),
        op_with(
            "answer",
            "Answer a question from the retrieved memories, citing their paths; says it does not know when retrieval abstains. With no chat model configured, returns the evidence (hits with snippets) and no text.",
            Read,
            no_bounds::<params::AnswerParams>,
            ops::answer,
        ),
        op(
            "gc",
            "Expire incidents past expires_at/ttl as one gc: commit, and repack the object store on a cadence.",
            Write,
            ops::gc,
        ),
    ]
});

/// Every op, in a stable order.
pub fn ops() -> &'static [Op] {
    &OPS
}

/// The op called `name`.
pub fn find(name: &str) -> Option<&'static Op> {
    OPS.iter().find(|o| o.name == name)
}

/// Runs the op `name` with JSON parameters.
pub fn call(engine: &Engine, name: &str, params: Value) -> Result<Value, OpError> {
    let op = find(name).ok_or_else(|| OpError::UnknownOp(name.to_owned()))?;
    op.call(engine, params)
}
