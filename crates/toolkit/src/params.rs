//! The parameter structs: one per op. Their doc comments become the schema's
//! descriptions, so they are written for a model (and a person) calling the op.

use gitloom_model::Tier;
use schemars::JsonSchema;
use serde::Deserialize;

/// A tier of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TierParam {
    Facts,
    Incidents,
    Rules,
    Skills,
}

impl From<TierParam> for Tier {
    fn from(t: TierParam) -> Tier {
        match t {
            TierParam::Facts => Tier::Facts,
            TierParam::Incidents => Tier::Incidents,
            TierParam::Rules => Tier::Rules,
            TierParam::Skills => Tier::Skills,
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteParams {
    /// Store path, e.g. `facts/work/employer.md` (a tier, `sessions/` or `vocab/`; `.md`).
    pub path: String,
    /// The whole file: YAML frontmatter between `---` lines, then the markdown body.
    pub content: String,
    /// Commit message (default: "remember: PATH").
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberParams {
    /// The subject, e.g. "Employer"; the file name is derived from it.
    pub title: String,
    /// Default `facts`.
    #[serde(default)]
    pub tier: Option<TierParam>,
    /// `work` or `database/replication`; default `general`.
    #[serde(default)]
    pub topic: Option<String>,
    /// One line saying what the memory holds.
    #[serde(default)]
    pub summary: Option<String>,
    /// The markdown body.
    #[serde(default)]
    pub body: Option<String>,
    /// Questions this memory answers.
    #[serde(default)]
    pub cue: Vec<String>,
    /// "Name" or "Name (kind)".
    #[serde(default)]
    pub entity: Vec<String>,
    #[serde(default)]
    pub tag: Vec<String>,
    /// "path" or "label: path".
    #[serde(default)]
    pub related: Vec<String>,
    /// Paths of memories this one replaces.
    #[serde(default)]
    pub supersedes: Vec<String>,
    /// 0..1.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Date from which it holds (2026-08-01).
    #[serde(default)]
    pub valid_from: Option<String>,
    /// Where it came from.
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathParams {
    /// Store path, e.g. `facts/work/employer.md`.
    pub path: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// Store path, e.g. `facts/work/employer.md`.
    pub path: String,
    /// A revision (sha, HEAD~2) or a date (2026-08-01); default HEAD.
    #[serde(default)]
    pub at: Option<String>,
}

fn default_limit() -> usize {
    10
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveParams {
    /// The question or keywords.
    pub query: String,
    /// Most hits to return (default 10).
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(default)]
    pub tier: Option<TierParam>,
    /// Only memories in this topic or below it (e.g. `work`).
    #[serde(default)]
    pub topic: Option<String>,
    /// Add each arm's candidate list and timings.
    #[serde(default)]
    pub explain: bool,
    /// Answer from the store as it was at a revision (sha, HEAD~3) or date (2026-08-01).
    #[serde(default)]
    pub at: Option<String>,
    /// Ask as of this moment (default: the current time): what "now", "next" and
    /// relative dates in the question ("last Friday", "three weeks ago") count from.
    /// A date (2026-08-01, from its UTC midnight) or an RFC 3339 time.
    #[serde(default)]
    pub now: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryParams {
    /// The question or keywords.
    pub query: String,
    /// Most hits to return (default 10).
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(default)]
    pub tier: Option<TierParam>,
    /// Only memories in this topic or below it (e.g. `work`).
    #[serde(default)]
    pub topic: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityParams {
    /// An entity's name, or a person's first name.
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeParams {
    /// A topic such as `facts/work`; none lists the tiers.
    #[serde(default)]
    pub topic: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VocabParams {
    /// Only the alias groups holding this term.
    #[serde(default)]
    pub term: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogParams {
    /// Only commits that changed this memory.
    #[serde(default)]
    pub path: Option<String>,
    /// Most commits to list.
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryParams {
    /// Store path of the memory.
    pub path: String,
    /// Most versions to list.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// No parameters.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Sessions to ingest. The model used for extraction is the operator's choice, not the
/// caller's: it comes from the server's environment (`GITLOOM_LLM_URL`,
/// `GITLOOM_LLM_MODEL`, `GITLOOM_LLM_KEY_ENV`), never from a request, so a request
/// cannot send the server's key to an endpoint of its choosing.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IngestParams {
    /// A list of sessions `{"id", "date", "messages": [{"role", "content"}]}`, or one
    /// OpenAI-style `{"messages": [...]}`.
    pub sessions: serde_json::Value,
    /// Sessions extracted at once (default 4).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Re-extract sessions whose identical transcript is already stored.
    #[serde(default)]
    pub reextract: bool,
}

fn default_concurrency() -> usize {
    4
}

/// A question to answer from the store's memories.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerParams {
    /// The question.
    pub question: String,
    /// Most memories to read (default 10).
    #[serde(default = "default_limit")]
    pub limit: usize,
}

/// Expire incidents past `expires_at`/`ttl` (one `gc:` commit) and repack on a cadence.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GcParams {
    /// Show what would expire and whether a repack is due; change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Repack and prune the object store now, whatever the cadence.
    #[serde(default)]
    pub repack: bool,
    /// Never repack in this run.
    #[serde(default)]
    pub no_repack: bool,
    /// Repack once this many commits were made since the last repack.
    #[serde(default = "default_repack_every")]
    pub repack_every: usize,
    /// Judge expiry as of this time (RFC 3339) instead of now.
    #[serde(default)]
    pub now: Option<String>,
    /// `git prune --expire` value for unreachable loose objects (default 2.weeks.ago).
    #[serde(default = "default_prune_expire")]
    pub prune_expire: String,
}

fn default_repack_every() -> usize {
    gitloom_engine::gc::DEFAULT_REPACK_EVERY
}

fn default_prune_expire() -> String {
    "2.weeks.ago".to_owned()
}
