//! What a caller asks: the query and its scope.

use gitloom_model::{StorePath, Tier};
use serde::Deserialize;

/// A retrieval request.
#[derive(Debug, Clone, Deserialize)]
pub struct RetrieveRequest {
    pub query: String,
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(default)]
    pub tier: Option<Tier>,
    #[serde(default)]
    pub topic: Option<String>,
    #[serde(default)]
    pub explain: bool,
    /// When the question is asked, in seconds since the epoch (default: now). Relative
    /// dates in it ("four weeks ago", "last Friday") count back from this moment.
    #[serde(default)]
    pub now: Option<i64>,
}

fn default_limit() -> usize {
    10
}

impl RetrieveRequest {
    pub fn new(query: impl Into<String>) -> Self {
        RetrieveRequest {
            query: query.into(),
            limit: default_limit(),
            tier: None,
            topic: None,
            explain: false,
            now: None,
        }
    }

    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

/// [`in_scope`] for a path the index holds, which sync indexed only because it
/// parsed as a store path: without a tier or topic filter every such path is in scope,
/// and the parse (once per candidate of every arm) is skipped.
pub(crate) fn indexed_in_scope(req: &RetrieveRequest, path: &str) -> bool {
    (req.tier.is_none() && req.topic.is_none()) || in_scope(req, path)
}

/// Does a path pass the request's tier and topic filters?
pub(crate) fn in_scope(req: &RetrieveRequest, path: &str) -> bool {
    let Ok(p) = StorePath::parse(path) else {
        return false;
    };
    if let Some(t) = req.tier
        && p.tier() != Some(t)
    {
        return false;
    }
    if let Some(topic) = &req.topic {
        let topic = topic.trim_matches('/');
        let (tier_part, rest) = match topic.split_once('/') {
            Some((a, b)) if Tier::from_dir(a).is_some() => (Some(a), b),
            _ if Tier::from_dir(topic).is_some() => (Some(topic), ""),
            _ => (None, topic),
        };
        if tier_part.is_some_and(|t| p.tier().map(Tier::as_str) != Some(t)) {
            return false;
        }
        let pt = p.topic();
        if !rest.is_empty() && pt != rest && !pt.starts_with(&format!("{rest}/")) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_filters() {
        let mut r = RetrieveRequest::new("x");
        assert!(in_scope(&r, "facts/work/a.md"));
        r.topic = Some("work".into());
        assert!(in_scope(&r, "facts/work/a.md") && in_scope(&r, "rules/work/x/b.md"));
        assert!(!in_scope(&r, "facts/workshop/a.md"));
        r.topic = Some("facts/work".into());
        assert!(!in_scope(&r, "rules/work/b.md"));
        r.topic = None;
        r.tier = Some(Tier::Rules);
        assert!(!in_scope(&r, "facts/work/a.md"));
    }
}
