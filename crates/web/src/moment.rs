//! The moment a page shows: HEAD, or what `?at=` (a sha, `HEAD~3`, a date or an
//! RFC 3339 time) resolves to. Every page reads the store at its moment.

use gitloom_engine::Engine;
use gitloom_store::ObjectId;

use crate::error::WebError;

/// A resolved `?at=`.
#[derive(Debug, Clone)]
pub struct Moment {
    /// The commit read; `None` only for a store with no commit at all.
    pub commit: Option<ObjectId>,
    /// `?at=` as the viewer gave it; `None` = now (HEAD).
    pub at: Option<String>,
    /// The commit's time and first line.
    pub time: Option<jiff::Timestamp>,
    pub summary: String,
}

impl Moment {
    /// Resolves `at` (trimmed; empty means now). A revision that does not resolve is
    /// the viewer's mistake: a 400 naming it.
    pub fn resolve(engine: &Engine, at: Option<&str>) -> Result<Moment, WebError> {
        let at = at.map(str::trim).filter(|a| !a.is_empty());
        let store = engine.store();
        let commit = match at {
            Some(rev) => Some(store.resolve(rev)?),
            None => store.head()?,
        };
        let (time, summary) = match commit {
            Some(c) => match store.log_from(c, None, Some(1))?.into_iter().next() {
                Some(info) => (Some(info.time), info.summary),
                None => (None, String::new()),
            },
            None => (None, String::new()),
        };
        Ok(Moment {
            commit,
            at: at.map(str::to_owned),
            time,
            summary,
        })
    }

    /// True when the page shows the store as it is now.
    pub fn is_now(&self) -> bool {
        self.at.is_none()
    }

    /// The commit, or a 404 for a store with no history yet.
    pub fn commit(&self) -> Result<ObjectId, WebError> {
        self.commit
            .ok_or_else(|| WebError::not_found("the store has no commits yet"))
    }
}

/// The first 12 hex digits of a commit, as the CLI prints them.
pub fn short(commit: &str) -> &str {
    &commit[..12.min(commit.len())]
}

/// A commit time as a reader wants it: `2026-07-30 10:00 UTC`.
pub fn when(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M UTC").to_string()
}
