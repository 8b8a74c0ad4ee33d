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
