//! End to end through the product: the store is built by ingestion, then the
//! questions are asked and scored by the messages the hits cite.
//!
//! The read-path harnesses ([`crate::run`]) hand the engine memory files written from the
//! gold; here nothing is written by the harness. Each conversation (a probe persona's
//! sessions, a LoCoMo conversation, a LongMemEval question's haystack) becomes
//! [`gitloom_cortex::Session`]s, goes through [`gitloom_cortex::ingest`] into a fresh
//! store (offline extractor by default, or a model), and every question is asked through
//! [`gitloom_engine::Engine::retrieve`] with the product's defaults, as `gitloom retrieve`
//! would. The harness adds no context, tags no speaker and chunks nothing: what the
//! data says goes in as messages, and what comes back is scored.
//!
//! **Citations.** A hit cites the messages named by its memory's `sources` (and `source`)
//! anchors, `sessions/<date>/<id>.md#m<i>`, read from the file at HEAD; a memory that
//! names a transcript without `#m<i>` cites that session but no message.
//!
//! **Gold.** Probe personas: `gold_messages` (`<session id>#<message index>`); LoCoMo:
//! the evidence `dia_id`s, each mapped to its turn; LongMemEval: `has_answer` user turns
//! (message level) and `answer_session_ids` (session level). A question's gold sessions
//! are the sessions of its gold messages, and for LongMemEval its answer sessions.
//!
//! **Scores** ([`report`]): over answerable questions, `hit_at_k` is 1 when one of the first
//! k hits cites a gold message (`message`) or a message of a gold session (`session`); the
//! mean over questions with that kind of gold. `mrr` is 1/rank of the first such hit.
//! A false abstention is an answerable question with no hits. Abstention precision,
//! recall and F1 follow [`crate::metrics`]: the positive prediction is "no hits", the
//! positive class is unanswerable, with the same 0/0 conventions.
//!
//! **Facts** ([`facts`]): where the data lists every fact the user states
//! (`facts.jsonl`), the store is also scored for fact recall, subject purity, the share
//! of memories in a catch-all topic and titles that read as titles.

pub mod data;
pub mod facts;
pub mod report;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use gitloom_cortex::{IngestOptions, IngestReport, Session};
use gitloom_engine::{Engine, EngineOptions, RetrieveRequest};
use gitloom_model::{Memory, StorePath};

use crate::EvalError;
pub use data::{Conversation, Gold, MessageRef, Question};
pub use report::E2eReport;

/// Which extractor builds the store.
#[derive(Debug, Clone, Default)]
pub enum ExtractorChoice {
    /// The offline extractor (the product's default).
    #[default]
    Offline,
    /// A model behind an OpenAI-compatible endpoint.
    Model(gitloom_cortex::llm::ChatConfig),
}

/// Knobs of an end-to-end run.
pub struct E2eOptions<'a> {
    /// Hits asked for per question (the scores go up to @10).
    pub limit: usize,
    pub extractor: ExtractorChoice,
    /// Sessions extracted at once (model calls in flight).
    pub concurrency: usize,
    /// Engine options of every store (embedder, vector cache).
    pub engine: EngineOptions,
    /// Only these conversations or questions (as [`data`] names them).
    pub only: Option<Vec<String>>,
    /// One JSON line per question here.
    pub per_query: Option<PathBuf>,
    /// Called after each conversation with (done, total).
    pub progress: Option<&'a dyn Fn(usize, usize)>,
    /// Copied into the report.
    pub build: String,
}

impl Default for E2eOptions<'_> {
    fn default() -> Self {
        E2eOptions {
            limit: 10,
            extractor: ExtractorChoice::Offline,
            concurrency: IngestOptions::default().concurrency,
            engine: EngineOptions::default(),
            only: None,
            per_query: None,
            progress: None,
            build: String::new(),
        }
    }
}

/// One memory of a built store: what scoring needs.
#[derive(Debug, Clone)]
pub struct Built {
    pub path: String,
    pub memory: Memory,
    /// Messages its `sources` cite.
    pub cites: BTreeSet<MessageRef>,
    /// Sessions it cites (with or without a message).
    pub sessions: BTreeSet<String>,
}

/// A store built from a conversation by ingestion.
pub struct Store {
    _dir: tempfile::TempDir,
    pub engine: Engine,
    pub ingest: IngestReport,
    /// Every memory at HEAD (transcripts excluded), by path.
    pub memories: BTreeMap<String, Built>,
}

/// Ingests `conv` into a fresh temporary store, as `gitloom ingest` would.
pub fn build(conv: &Conversation, opts: &E2eOptions) -> Result<Store, EvalError> {
    let dir = tempfile::Builder::new()
        .prefix("gitloom-e2e-")
        .tempdir()
        .map_err(|e| EvalError::backend(format!("cannot create a temporary store: {e}")))?;
    let engine = Engine::init_with(dir.path(), opts.engine.clone()).map_err(EvalError::backend)?;
    let options = IngestOptions {
        concurrency: opts.concurrency.max(1),
        ..Default::default()
    };
    let report = match &opts.extractor {
        ExtractorChoice::Offline => gitloom_cortex::ingest(
            &engine,
            &conv.sessions,
            &gitloom_cortex::OfflineExtractor,
            &options,
            &|_| {},
        ),
        ExtractorChoice::Model(config) => {
            let client =
                gitloom_cortex::llm::ChatClient::new(config.clone()).map_err(EvalError::backend)?;
            let extractor = gitloom_cortex::ModelExtractor::new(client);
            gitloom_cortex::ingest(&engine, &conv.sessions, &extractor, &options, &|_| {})
        }
    }
    .map_err(|e| EvalError::backend(format!("{}: ingest failed: {e}", conv.id)))?;
    for w in engine.take_warnings() {
        eprintln!("warning: {}: {w}", conv.id);
    }
    let memories = read_memories(&engine, &conv.sessions)?;
    Ok(Store {
        _dir: dir,
        engine,
        ingest: report,
        memories,
    })
}

/// Every memory at HEAD with the messages it cites.
fn read_memories(
    engine: &Engine,
    sessions: &[Session],
) -> Result<BTreeMap<String, Built>, EvalError> {
    let mut by_transcript: BTreeMap<String, String> = BTreeMap::new();
    for s in sessions {
        let p = s.transcript_path().map_err(EvalError::backend)?;
        by_transcript.insert(p.to_string(), s.id.clone());
    }
    let store = engine.store();
    let Some(head) = store.head().map_err(EvalError::backend)? else {
        return Ok(BTreeMap::new());
    };
    let tree = store.tree_of(head).map_err(EvalError::backend)?;
    let mut out = BTreeMap::new();
    for entry in store.walk(tree).map_err(EvalError::backend)? {
        let Ok(path) = StorePath::parse(&entry.path) else {
            continue;
        };
        if !path.is_memory() {
            continue;
        }
        let bytes = store.read_blob(entry.blob).map_err(EvalError::backend)?;
        let Ok(memory) = Memory::parse(path.as_str(), &bytes) else {
            eprintln!("warning: {path} does not parse; not scored");
            continue;
        };
        let (cites, sessions) = citations(&memory, &by_transcript);
        out.insert(
            path.to_string(),
            Built {
                path: path.to_string(),
                memory,
                cites,
                sessions,
            },
        );
    }
    Ok(out)
}

/// The messages and sessions a memory's `source`/`sources` anchors name.
fn citations(
    m: &Memory,
    by_transcript: &BTreeMap<String, String>,
) -> (BTreeSet<MessageRef>, BTreeSet<String>) {
    let (mut cites, mut sessions) = (BTreeSet::new(), BTreeSet::new());
    for cited in m.front.citations() {
        let Some(session) = by_transcript.get(cited.file) else {
            continue;
        };
        sessions.insert(session.clone());
        for index in cited.messages {
            cites.insert(MessageRef {
                session: session.clone(),
                index,
            });
        }
    }
    (cites, sessions)
}

/// What one question got.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Asked {
    pub id: String,
    pub shape: String,
    pub answerable: bool,
    /// 1-based rank of the first hit citing a gold message / a gold session.
    pub message_rank: Option<usize>,
    pub session_rank: Option<usize>,
    /// The question has message-level gold (LongMemEval questions whose evidence is
    /// only in assistant turns have none).
    pub has_message_gold: bool,
    pub abstained: bool,
    pub hits: usize,
}

/// Asks every question of `conv` against the built store.
pub fn ask(
    conv: &Conversation,
    store: &Store,
    opts: &E2eOptions,
    log: &mut Option<std::fs::File>,
) -> Result<Vec<Asked>, EvalError> {
    let mut out = Vec::with_capacity(conv.questions.len());
    for q in &conv.questions {
        let req = RetrieveRequest {
            now: q.asked_at,
            ..RetrieveRequest::new(q.query.clone()).with_limit(opts.limit)
        };
        let r = store
            .engine
            .retrieve(&req)
            .map_err(|e| EvalError::backend(format!("{} {}: {e}", conv.id, q.id)))?;
        let hits: Vec<&Built> = r
            .hits
            .iter()
            .filter_map(|h| store.memories.get(&h.path))
            .collect();
        let (gold_msgs, gold_sessions) = match &q.gold {
            Gold::Unanswerable => (BTreeSet::new(), BTreeSet::new()),
            Gold::Answerable { messages, sessions } => (messages.clone(), sessions.clone()),
        };
        let message_rank = hits
            .iter()
            .position(|b| b.cites.iter().any(|c| gold_msgs.contains(c)))
            .map(|i| i + 1);
        let session_rank = hits
            .iter()
            .position(|b| b.sessions.iter().any(|s| gold_sessions.contains(s)))
            .map(|i| i + 1);
        let abstained = r.abstained || r.hits.is_empty();
        let asked = Asked {
            id: q.id.clone(),
            shape: q.shape.clone(),
            answerable: !matches!(q.gold, Gold::Unanswerable),
            message_rank,
            session_rank,
            has_message_gold: !gold_msgs.is_empty(),
            abstained,
            hits: r.hits.len(),
        };
        if let Some(f) = log.as_mut() {
            let line = serde_json::json!({
                "conversation": conv.id,
                "id": q.id,
                "query": q.query,
                "shape": q.shape,
                "gold_messages": gold_msgs.iter().map(MessageRef::to_string).collect::<Vec<_>>(),
                "gold_sessions": gold_sessions,
                "message_rank": message_rank,
                "session_rank": session_rank,
                "abstained": abstained,
                "hits": r.hits.iter().map(|h| {
                    let cites = store.memories.get(&h.path).map(|b| {
                        b.cites.iter().map(MessageRef::to_string).collect::<Vec<_>>()
                    }).unwrap_or_default();
                    serde_json::json!({"path": h.path, "title": h.title, "score": h.score, "cites": cites})
                }).collect::<Vec<_>>(),
            });
            writeln!(f, "{line}").map_err(|source| EvalError::Write {
                path: opts.per_query.clone().unwrap_or_default(),
                source,
            })?;
        }
        out.push(asked);
    }
    Ok(out)
}

/// Builds, asks and scores every conversation of a data set.
pub fn run(
    dataset: &str,
    convs: Vec<Conversation>,
    opts: &E2eOptions,
) -> Result<E2eReport, EvalError> {
    let mut log = match &opts.per_query {
        Some(p) => Some(std::fs::File::create(p).map_err(|source| EvalError::Write {
            path: p.clone(),
            source,
        })?),
        None => None,
    };
    let total = convs.len();
    let mut asked = Vec::new();
    let mut ingests = Vec::new();
    let mut fact_scores = Vec::new();
    let skipped = convs.iter().map(|c| c.skipped).sum();
    for (n, conv) in convs.iter().enumerate() {
        let store = build(conv, opts)?;
        asked.extend(ask(conv, &store, opts, &mut log)?);
        if !conv.facts.is_empty() {
            let scores = facts::score(conv, &store);
            if let Some(p) = &opts.per_query {
                let path = p.with_extension("facts.jsonl");
                let mut text = String::new();
                for l in &scores.log {
                    text.push_str(&l.to_string());
                    text.push('\n');
                }
                for b in store.memories.values() {
                    text.push_str(
                        &serde_json::json!({"memory": b.path, "title": b.memory.front.title,
                        "subject": b.memory.front.extra.get("subject"), "body": b.memory.body,
                        "cites": b.cites.iter().map(MessageRef::to_string).collect::<Vec<_>>()})
                        .to_string(),
                    );
                    text.push('\n');
                }
                std::fs::write(&path, text).map_err(|source| EvalError::Write { path, source })?;
            }
            fact_scores.push(scores);
        }
        ingests.push(report::IngestFigures::of(&store));
        if let Some(p) = opts.progress {
            p(n + 1, total);
        }
    }
    Ok(report::build(
        dataset,
        skipped,
        opts,
        &asked,
        &ingests,
        &fact_scores,
    ))
}

/// The dev probe personas under `data` that have sessions, queries with
/// `gold_messages` and facts: `probe-*` folders.
pub fn persona_dirs(data: &Path) -> Result<Vec<PathBuf>, EvalError> {
    let entries = std::fs::read_dir(data).map_err(|source| EvalError::Read {
        path: data.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("probe-")
            && p.join("sessions.json").is_file()
            && p.join("facts.jsonl").is_file()
        {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}
