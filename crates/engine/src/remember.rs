//! `remember`: a memory from fields, at a path the engine derives from its subject.

use gitloom_model::{
    EntityRef, Memory, Related, StorePath, Tier, When, fold_name, normalise_topic, slugify,
};
use serde::Deserialize;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::write::WriteOutcome;

/// The fields of a memory given piece by piece.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RememberRequest {
    pub title: String,
    #[serde(default)]
    pub tier: Option<Tier>,
    /// `work` or `database/replication`; default `general`.
    #[serde(default)]
    pub topic: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub cues: Vec<String>,
    /// `Name` or `Name (kind)`.
    #[serde(default)]
    pub entities: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub related: Vec<String>,
    #[serde(default)]
    pub supersedes: Vec<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub valid_from: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
}

/// Most items of each list of a memory given by fields (`cues`, `entities`, `tags`,
/// `related`, `supersedes`): far above any real memory, far below what would make a
/// file the YAML parser refuses.
pub const MAX_LIST_ITEMS: usize = 500;

/// Longest title, summary, list item, date or source given by fields.
pub const MAX_TEXT_BYTES: usize = 4096;

/// How often a remember is recomputed when another writer changed its file between
/// reading and committing it.
const STALE_RETRIES: usize = 8;

impl RememberRequest {
    /// Checks the request's sizes before anything is built: each list holds at most
    /// [`MAX_LIST_ITEMS`], each short text at most [`MAX_TEXT_BYTES`], the body at
    /// most a memory's size. The error names the field as callers name it (`cue`,
    /// `entity`, `tag`: the CLI flags and op parameters).
    pub fn check(&self) -> Result<()> {
        let lists: [(&str, &[String]); 5] = [
            ("cue", &self.cues),
            ("entity", &self.entities),
            ("tag", &self.tags),
            ("related", &self.related),
            ("supersedes", &self.supersedes),
        ];
        for (name, items) in lists {
            if items.len() > MAX_LIST_ITEMS {
                return Err(EngineError::Usage(format!(
                    "{name} has {} items; at most {MAX_LIST_ITEMS} are accepted",
                    items.len()
                )));
            }
            if let Some((i, item)) = items
                .iter()
                .enumerate()
                .find(|(_, x)| x.len() > MAX_TEXT_BYTES)
            {
                return Err(EngineError::Usage(format!(
                    "{name}[{i}] is {} bytes; at most {MAX_TEXT_BYTES} are accepted",
                    item.len()
                )));
            }
        }
        let texts = [
            ("title", Some(&self.title)),
            ("topic", self.topic.as_ref()),
            ("summary", self.summary.as_ref()),
            ("valid_from", self.valid_from.as_ref()),
            ("source", self.source.as_ref()),
        ];
        for (name, text) in texts {
            if let Some(t) = text
                && t.len() > MAX_TEXT_BYTES
            {
                return Err(EngineError::Usage(format!(
                    "{name} is {} bytes; at most {MAX_TEXT_BYTES} are accepted",
                    t.len()
                )));
            }
        }
        if self.body.len() > gitloom_model::MAX_MEMORY_BYTES {
            return Err(EngineError::Usage(format!(
                "body is {} bytes; a memory may be at most {} bytes",
                self.body.len(),
                gitloom_model::MAX_MEMORY_BYTES
            )));
        }
        Ok(())
    }
}

/// The stable path for a subject: `<tier>/<topic>/<slug of the title>.md`. The same
/// title always lands on the same file, so remembering it again updates it.
pub fn subject_path(tier: Tier, topic: &str, title: &str) -> Result<StorePath> {
    let topic = normalise_topic(topic)?;
    let topic = if topic.is_empty() {
        "general".to_owned()
    } else {
        topic
    };
    let slug = slugify(title, 60);
    Ok(StorePath::parse(&format!("{tier}/{topic}/{slug}.md"))?)
}

/// A short, stable suffix for two subjects whose slugs collide.
fn subject_hash(title: &str) -> String {
    let h = blake3::hash(fold_name(title).as_bytes());
    h.to_hex()[..8].to_owned()
}

impl Engine {
    /// Builds the memory, picks its path from the subject and writes it as one commit.
    /// An existing memory with the same subject is updated (its `created`, unknown
    /// keys and any field not given are kept).
    ///
    /// Read-modify-write: the file is built from HEAD and committed only if no other
    /// writer changed it since (else it is built again from the new HEAD), so two
    /// remembers of one subject at once both land.
    pub fn remember(&self, req: RememberRequest) -> Result<WriteOutcome> {
        req.check()?;
        let mut attempt = 0;
        loop {
            match self.remember_once(&req) {
                Err(EngineError::Store(gitloom_store::StoreError::Stale { .. }))
                    if attempt < STALE_RETRIES =>
                {
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn remember_once(&self, req: &RememberRequest) -> Result<WriteOutcome> {
        let req = req.clone();
        let title = req.title.trim();
        if title.is_empty() {
            return Err(EngineError::Usage(
                "remember needs a non-empty title".into(),
            ));
        }
        let tier = req.tier.unwrap_or(Tier::Facts);
        let mut path = subject_path(tier, req.topic.as_deref().unwrap_or_default(), title)?;
        let now = jiff::Timestamp::now();
        let head = self.store.head()?;
        let existing = match head {
            Some(h) => self.store.read(h, &path)?,
            None => None,
        };
        let mut memory = Memory::new(title, req.body.clone());
        if let Some(bytes) = existing {
            match Memory::parse(path.as_str(), &bytes) {
                Ok(old) if fold_name(&old.front.title) == fold_name(title) => {
                    memory.front = old.front;
                    if req.body.trim().is_empty() {
                        memory.body = old.body;
                    }
                }
                // Another subject (or a broken file) owns the slug: never overwrite it.
                _ => {
                    let p = path.as_str().trim_end_matches(".md");
                    path = StorePath::parse(&format!("{p}-{}.md", subject_hash(title)))?;
                }
            }
        }
        let f = &mut memory.front;
        f.title = title.to_owned();
        if let Some(s) = req.summary.filter(|s| !s.trim().is_empty()) {
            f.summary = Some(s);
        }
        merge(&mut f.cues, req.cues);
        merge(&mut f.tags, req.tags);
        for e in req.entities.iter().map(|e| EntityRef::parse(e)) {
            if !f
                .entities
                .iter()
                .any(|x| fold_name(&x.name) == fold_name(&e.name))
            {
                f.entities.push(e);
            }
        }
        for r in req.related.iter().map(|r| Related::parse(r)) {
            if !f.related.contains(&r) {
                f.related.push(r);
            }
        }
        merge(&mut f.supersedes, req.supersedes);
        if req.confidence.is_some() {
            f.confidence = req.confidence;
        }
        if let Some(v) = req.valid_from {
            f.valid_from = Some(When::parse(&v).map_err(EngineError::Usage)?);
        }
        if req.source.is_some() {
            f.source = req.source;
        }
        f.created.get_or_insert(When::Instant(now));
        f.updated = Some(When::Instant(now));
        let message = format!("remember: {title}");
        self.write_batch_on(
            head,
            vec![(path, Some(memory.render().into_bytes()))],
            message,
            Some(now),
        )
    }
}

fn merge(into: &mut Vec<String>, more: Vec<String>) {
    for m in more {
        let m = m.trim().to_owned();
        if !m.is_empty() && !into.iter().any(|x| x.eq_ignore_ascii_case(&m)) {
            into.push(m);
        }
    }
}
