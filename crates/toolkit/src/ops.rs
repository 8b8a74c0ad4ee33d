//! The handlers: each turns typed parameters into an engine call and returns typed,
//! serialisable data. No formatting here; front-ends render.

use gitloom_engine::{
    Engine, GetResult, IndexStats, LogEntry, RememberRequest, Retrieval, RetrieveRequest,
    SyncReport, TopicCount, TreeListing, WriteOutcome,
};
use gitloom_index::{LinkRow, MentionRow, VocabGroup};
use gitloom_model::StorePath;
use serde::Serialize;

use crate::error::OpError;
use crate::params::*;

type R<T> = Result<T, OpError>;

/// A write's path is checked before any work: a job for it is refused at once.
pub(crate) fn check_write(p: &WriteParams, _: &crate::Limits) -> R<()> {
    let path = StorePath::parse(&p.path).map_err(gitloom_engine::EngineError::from)?;
    gitloom_engine::check_new_path(&path)?;
    Ok(())
}

pub(crate) fn write(e: &Engine, p: WriteParams) -> R<WriteOutcome> {
    Ok(e.write(&p.path, p.content.as_bytes(), p.message)?)
}

fn remember_request(p: RememberParams) -> RememberRequest {
    RememberRequest {
        title: p.title,
        tier: p.tier.map(Into::into),
        topic: p.topic,
        summary: p.summary,
        body: p.body.unwrap_or_default(),
        cues: p.cue,
        entities: p.entity,
        tags: p.tag,
        related: p.related,
        supersedes: p.supersedes,
        confidence: p.confidence,
        valid_from: p.valid_from,
        source: p.source,
    }
}

/// The sizes of a memory's lists and texts are bounded on the parameters, before
/// a file is built (a request with 100,000 cues fails at once, naming `cue`).
pub(crate) fn check_remember(p: &RememberParams, _: &crate::Limits) -> R<()> {
    Ok(remember_request(p.clone()).check()?)
}

pub(crate) fn remember(e: &Engine, p: RememberParams) -> R<WriteOutcome> {
    Ok(e.remember(remember_request(p))?)
}

pub(crate) fn forget(e: &Engine, p: PathParams) -> R<WriteOutcome> {
    Ok(e.delete(&p.path)?)
}

pub(crate) fn get(e: &Engine, p: GetParams) -> R<GetResult> {
    Ok(e.get(&p.path, p.at.as_deref())?)
}

fn request(
    query: String,
    limit: usize,
    tier: Option<TierParam>,
    topic: Option<String>,
    explain: bool,
) -> RetrieveRequest {
    RetrieveRequest {
        query,
        limit,
        tier: tier.map(Into::into),
        topic,
        explain,
        now: None,
    }
}

pub(crate) fn retrieve(e: &Engine, p: RetrieveParams) -> R<Retrieval> {
    let now = p
        .now
        .as_deref()
        .map(|s| gitloom_model::When::parse(s).map(|w| w.unix_seconds()))
        .transpose()
        .map_err(|e| gitloom_engine::EngineError::Usage(format!("now: {e}")))?;
    let req = RetrieveRequest {
        now,
        ..request(p.query, p.limit, p.tier, p.topic, p.explain)
    };
    Ok(e.retrieve_at(&req, p.at.as_deref())?)
}

/// Lexical hits.
#[derive(Debug, Serialize)]
pub struct SearchHits {
    pub query: String,
    pub hits: Vec<gitloom_engine::Hit>,
}

pub(crate) fn search(e: &Engine, p: QueryParams) -> R<SearchHits> {
    let req = request(p.query, p.limit, p.tier, p.topic, false);
    let hits = e.search(&req)?;
    Ok(SearchHits {
        query: req.query,
        hits,
    })
}

/// The semantic arms' own candidates: (path, cosine) per arm, best first.
#[derive(Debug, Serialize)]
pub struct SemanticHits {
    pub query: String,
    pub model: String,
    pub cues: Vec<(String, f64)>,
    pub bodies: Vec<(String, f64)>,
}

pub(crate) fn semantic_search(e: &Engine, p: QueryParams) -> R<SemanticHits> {
    let Some(model) = e.embedder_id().map(str::to_owned) else {
        return Err(gitloom_engine::EngineError::Usage(
            "semantic_search needs an embedding model, and none is configured (run `gitloom model install`)".into(),
        )
        .into());
    };
    if p.limit == 0 {
        return Err(gitloom_engine::EngineError::Usage("limit must be at least 1".into()).into());
    }
    let limit = p.limit;
    // The arms' candidate lists come from the one read path (with explain), so the
    // semantic search is exactly what retrieval's semantic arms saw.
    let r = e.retrieve(&request(p.query, limit, p.tier, p.topic, true))?;
    let arm = |wanted: gitloom_engine::Arm| -> Vec<(String, f64)> {
        r.explain
            .iter()
            .flatten()
            .find(|a| a.arm == wanted)
            .map(|a| a.candidates.iter().take(limit).cloned().collect())
            .unwrap_or_default()
    };
    Ok(SemanticHits {
        query: r.query.clone(),
        model,
        cues: arm(gitloom_engine::Arm::Cues),
        bodies: arm(gitloom_engine::Arm::Bodies),
    })
}

/// A memory's links, both ways.
#[derive(Debug, Serialize)]
pub struct Links {
    pub path: String,
    pub outgoing: Vec<LinkRow>,
    pub incoming: Vec<LinkRow>,
}

pub(crate) fn related(e: &Engine, p: PathParams) -> R<Links> {
    let path = StorePath::parse(&p.path).map_err(gitloom_engine::EngineError::from)?;
    let (outgoing, incoming) = e.links(path.as_str())?;
    Ok(Links {
        path: path.to_string(),
        outgoing,
        incoming,
    })
}

#[derive(Debug, Serialize)]
pub struct EntityMentions {
    pub name: String,
    pub mentions: Vec<MentionRow>,
}

pub(crate) fn entity(e: &Engine, p: EntityParams) -> R<EntityMentions> {
    let mentions = e.entity(&p.name)?;
    Ok(EntityMentions {
        name: p.name,
        mentions,
    })
}

pub(crate) fn tree(e: &Engine, p: TreeParams) -> R<TreeListing> {
    Ok(e.tree(p.topic.as_deref())?)
}

pub(crate) fn topics(e: &Engine, _: NoParams) -> R<Vec<TopicCount>> {
    Ok(e.topics()?)
}

#[derive(Debug, Serialize)]
pub struct VocabListing {
    pub groups: Vec<VocabGroup>,
}

pub(crate) fn vocab(e: &Engine, p: VocabParams) -> R<VocabListing> {
    let v = e.vocab()?;
    let groups = match &p.term {
        Some(t) => v.groups_with(t),
        None => v.groups().to_vec(),
    };
    Ok(VocabListing { groups })
}

pub(crate) fn log(e: &Engine, p: LogParams) -> R<Vec<LogEntry>> {
    Ok(e.log(p.path.as_deref(), p.limit)?)
}

/// One version of a memory.
#[derive(Debug, Serialize)]
pub struct HistoryEntry {
    pub commit: String,
    pub time: String,
    pub summary: String,
    /// The file at that commit; `None` where the commit deleted it.
    pub content: Option<String>,
}

pub(crate) fn history(e: &Engine, p: HistoryParams) -> R<Vec<HistoryEntry>> {
    let entries = e.log(Some(&p.path), p.limit)?;
    let mut out = Vec::with_capacity(entries.len());
    for c in entries {
        let content = match e.get(&p.path, Some(&c.commit)) {
            Ok(g) => Some(g.content),
            Err(gitloom_engine::EngineError::NotFound { .. }) => None,
            Err(err) => return Err(err.into()),
        };
        out.push(HistoryEntry {
            commit: c.commit,
            time: c.time,
            summary: c.summary,
            content,
        });
    }
    Ok(out)
}

#[derive(Debug, Serialize)]
pub struct EmbedReport {
    pub model: Option<String>,
    pub embedded: usize,
    pub cached: usize,
}

pub(crate) fn embed_pending(e: &Engine, _: NoParams) -> R<EmbedReport> {
    let s = e.embed_pending()?;
    Ok(EmbedReport {
        model: e.embedder_id().map(str::to_owned),
        embedded: s.embedded,
        cached: s.cached,
    })
}

pub(crate) fn rebuild(e: &Engine, _: NoParams) -> R<SyncReport> {
    Ok(e.rebuild()?)
}

pub(crate) fn sync(e: &Engine, _: NoParams) -> R<SyncReport> {
    Ok(match e.take_opening_sync() {
        Some(r) => r,
        None => e.sync()?,
    })
}

pub(crate) fn stats(e: &Engine, _: NoParams) -> R<IndexStats> {
    Ok(e.stats()?)
}

/// The chat model configured for this process (`GITLOOM_LLM_URL`, `GITLOOM_LLM_MODEL`,
/// `GITLOOM_LLM_KEY_ENV`), if any: set by whoever runs the server or CLI, never by a
/// request.
fn chat_client() -> R<Option<gitloom_cortex::llm::ChatClient>> {
    let Some(url) = std::env::var("GITLOOM_LLM_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        return Ok(None);
    };
    let model = std::env::var("GITLOOM_LLM_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned());
    let mut config = gitloom_cortex::llm::ChatConfig::new(url, model);
    config.api_key_env =
        Some(std::env::var("GITLOOM_LLM_KEY_ENV").unwrap_or_else(|_| "OPENAI_API_KEY".to_owned()));
    // Seconds per model request; the default suits a CPU-served model.
    if let Some(t) = std::env::var("GITLOOM_LLM_TIMEOUT")
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        let secs = t
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|s| *s > 0)
            .ok_or_else(|| {
                OpError::Internal(format!(
                    "the server's GITLOOM_LLM_TIMEOUT is {t:?}, not a whole number of seconds"
                ))
            })?;
        config.timeout = std::time::Duration::from_secs(secs);
    }
    Ok(Some(gitloom_cortex::llm::ChatClient::new(config)?))
}

/// The sessions of an ingest call, parsed and held to the operator's limits.
fn ingest_sessions(p: &IngestParams, limits: &crate::Limits) -> R<Vec<gitloom_cortex::Session>> {
    let text =
        serde_json::to_string(&p.sessions).map_err(|err| OpError::Internal(err.to_string()))?;
    let sessions = gitloom_cortex::parse_sessions(&text)?;
    let messages: usize = sessions.iter().map(|s| s.messages.len()).sum();
    if messages > limits.ingest_messages {
        return Err(OpError::TooLarge {
            op: "ingest",
            message: format!(
                "sessions hold {messages} messages; at most {} are accepted per call (send them in several calls)",
                limits.ingest_messages
            ),
        });
    }
    for s in &sessions {
        s.day()?;
        if let Some((i, m)) = s
            .messages
            .iter()
            .enumerate()
            .find(|(_, m)| m.content.len() > limits.ingest_message_bytes)
        {
            return Err(OpError::TooLarge {
                op: "ingest",
                message: format!(
                    "session {:?} message {i} is {} bytes; at most {} are accepted per message",
                    s.id,
                    m.content.len(),
                    limits.ingest_message_bytes
                ),
            });
        }
    }
    Ok(sessions)
}

/// Sessions are parsed and counted before an ingest job is accepted.
pub(crate) fn check_ingest(p: &IngestParams, limits: &crate::Limits) -> R<()> {
    ingest_sessions(p, limits).map(|_| ())
}

/// How many messages an ingest call carries (for per-account quotas); `None` when
/// its parameters do not parse.
pub fn ingest_message_count(params: &serde_json::Value) -> Option<usize> {
    let p: IngestParams = serde_json::from_value(params.clone()).ok()?;
    let text = serde_json::to_string(&p.sessions).ok()?;
    let sessions = gitloom_cortex::parse_sessions(&text).ok()?;
    Some(sessions.iter().map(|s| s.messages.len()).sum())
}

pub(crate) fn ingest(
    e: &Engine,
    p: IngestParams,
    context: &crate::Context,
) -> R<gitloom_cortex::IngestReport> {
    let sessions = ingest_sessions(&p, &context.limits)?;
    let options = gitloom_cortex::IngestOptions {
        concurrency: p.concurrency.clamp(1, 16),
        reextract: p.reextract,
        cancel: context.cancel.clone(),
        ..Default::default()
    };
    let report = match chat_client()? {
        Some(client) => {
            let extractor = gitloom_cortex::ModelExtractor::new(client);
            let report = gitloom_cortex::ingest(e, &sessions, &extractor, &options, &|_| {});
            // Tokens are spent whether or not the run succeeded.
            context
                .spent
                .add_model_tokens(extractor.client().tokens_used());
            report?
        }
        None => gitloom_cortex::ingest(
            e,
            &sessions,
            &gitloom_cortex::OfflineExtractor,
            &options,
            &|_| {},
        )?,
    };
    context.spent.add_messages(report.turns as u64);
    Ok(report)
}

pub(crate) fn answer(
    e: &Engine,
    p: AnswerParams,
    context: &crate::Context,
) -> R<gitloom_cortex::Answer> {
    let client = chat_client()?;
    let answer = gitloom_cortex::answer(e, &p.question, client.as_ref(), p.limit);
    if let Some(c) = &client {
        context.spent.add_model_tokens(c.tokens_used());
    }
    Ok(answer?)
}

pub(crate) fn gc(e: &Engine, p: GcParams) -> R<gitloom_engine::gc::GcReport> {
    use gitloom_engine::gc::{GcOptions, Repack};
    let now = match &p.now {
        Some(s) => Some(
            s.parse::<jiff::Timestamp>()
                .map_err(|err| OpError::InvalidParams {
                    op: "gc",
                    message: format!("now {s:?} is not an RFC 3339 time: {err}"),
                })?,
        ),
        None => None,
    };
    if p.repack && p.no_repack {
        return Err(OpError::InvalidParams {
            op: "gc",
            message: "repack and no_repack exclude each other".to_owned(),
        });
    }
    let opts = GcOptions {
        now,
        dry_run: p.dry_run,
        repack: if p.repack {
            Repack::Always
        } else if p.no_repack {
            Repack::Never
        } else {
            Repack::Auto
        },
        repack_every: p.repack_every,
        prune_expire: p.prune_expire,
    };
    Ok(e.gc(&opts)?)
}
