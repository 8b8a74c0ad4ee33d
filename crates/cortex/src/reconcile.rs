//! Reconciliation: where a fact goes, serially, against what the store (and the
//! session's staged writes) already hold. The rules every extractor shares: a merge
//! needs subject agreement, paths derive from a hash of the subject, a new holder of
//! a one-value slot supersedes the current one, a flagged reference is repaired by
//! a judge that reads the candidates (offline it stays flagged).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use gitloom_engine::{Engine, RetrieveRequest};
use gitloom_model::{
    EntityRef, Memory, Related, StorePath, TimelineEntry, When, fold_name, normalise_topic, slugify,
};
use gitloom_store::ObjectId;
use serde_json::Value;

use crate::error::CortexError;
use crate::extract::{Candidate, Extractor, Fact, Judgement, Verdict};
use crate::text;

/// Key in a memory's frontmatter naming the subject it is about (see [`Fact::subject_key`]).
pub const SUBJECT_KEY: &str = "subject";
/// Key listing every `session#messages` a memory was built from.
pub use gitloom_model::SOURCES_KEY;

/// What a run learns across its sessions without asking the index again: for each
/// subject name, the newest memory about it. Filled from the index before the run's
/// first commit ([`RunCache::prefetch`]) and kept up to date with what each session
/// writes ([`RunCache::record`]), so the index is synced once, at the end of the run,
/// instead of after every session's commit.
#[derive(Debug, Default)]
pub struct RunCache {
    about: HashMap<String, Option<StorePath>>,
    /// Every memory the run's earlier sessions wrote, as a change looks for it.
    titled: BTreeMap<StorePath, Titled>,
}

/// A memory as a statement of change looks for it (see `change.rs`): its subject and
/// the terms of its title.
#[derive(Debug, Clone)]
struct Titled {
    subject: String,
    terms: BTreeSet<String>,
    /// It already ended (`valid_to`), so no change ends it again.
    ended: bool,
}

impl Titled {
    fn of(m: &Memory) -> Titled {
        Titled {
            subject: subject_of(m)
                .as_deref()
                .map(key_name)
                .unwrap_or_default()
                .to_owned(),
            terms: crate::change::title_terms(&m.front.title),
            ended: m.front.valid_to.is_some(),
        }
    }
}

/// How many earlier memories' titles may hold a changed term for it to name one
/// thing: a term in more titles than this ("work", a name everyone mentions) says
/// which kind of memory changed, not which one.
const CHANGE_TITLES: usize = 2;

impl RunCache {
    /// Looks up every name in `names` in the index as it is before the run.
    pub fn prefetch<'n>(
        &mut self,
        engine: &Engine,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Result<(), CortexError> {
        let head = engine
            .store()
            .head()
            .map_err(gitloom_engine::EngineError::from)?;
        for n in names {
            let key = fold_name(n);
            if key.is_empty() || self.about.contains_key(&key) {
                continue;
            }
            let found = about_in_index(engine, head, n)?;
            self.about.insert(key, found);
        }
        Ok(())
    }

    /// Records the memories one session wrote as the newest about their subjects.
    pub fn record(&mut self, files: &BTreeMap<StorePath, Memory>) {
        for (p, m) in files {
            self.titled.insert(p.clone(), Titled::of(m));
            if let Some(k) = subject_of(m) {
                let name = key_name(&k);
                if name != "user" && !name.starts_with("rule ") && !name.starts_with("howto ") {
                    self.about.insert(name.to_owned(), Some(p.clone()));
                }
            }
        }
    }
}

/// The newest memory at `head` whose `subject:` names `name` (whatever its group),
/// else a hand-written one whose first entity is it.
fn about_in_index(
    engine: &Engine,
    head: Option<ObjectId>,
    name: &str,
) -> Result<Option<StorePath>, CortexError> {
    let Some(head) = head else {
        return Ok(None);
    };
    let key = fold_name(name);
    let mut paths: Vec<String> = engine.entity(name)?.into_iter().map(|r| r.path).collect();
    paths.sort();
    paths.dedup();
    let mut best: Option<(i64, StorePath)> = None;
    let mut first_entity = None;
    for p in paths {
        let Ok(sp) = StorePath::parse(&p) else {
            continue;
        };
        let Some(m) = engine
            .store()
            .read(head, &sp)
            .map_err(gitloom_engine::EngineError::from)?
            .and_then(|b| Memory::parse(sp.as_str(), &b).ok())
        else {
            continue;
        };
        if subject_of(&m).as_deref().map(key_name) == Some(key.as_str()) {
            let when = m
                .front
                .updated
                .or(m.front.created)
                .map_or(0, |w| w.unix_seconds());
            if best.as_ref().is_none_or(|(w, _)| when >= *w) {
                best = Some((when, sp));
            }
        } else if first_entity.is_none()
            && m.front
                .entities
                .first()
                .is_some_and(|e| fold_name(&e.name) == key)
        {
            first_entity = Some(sp);
        }
    }
    Ok(best.map(|(_, p)| p).or(first_entity))
}

/// The writes of one session, before its commit.
pub struct Staged<'e> {
    pub engine: &'e Engine,
    /// What the run knows about subjects (see [`RunCache`]).
    pub cache: &'e mut RunCache,
    pub head: Option<ObjectId>,
    pub files: BTreeMap<StorePath, Memory>,
    /// Paths created in this session.
    pub created: BTreeSet<StorePath>,
    /// Paths of memories this session changed that existed before.
    pub changed: BTreeSet<StorePath>,
    pub candidates: usize,
}

/// What reconciliation did with one fact.
pub struct Outcome {
    pub verdict: Verdict,
    pub path: StorePath,
    pub superseded: Vec<String>,
    /// (reference, who it resolved to)
    pub flagged: Vec<(String, Option<String>)>,
}

fn subject_of(m: &Memory) -> Option<String> {
    m.front
        .extra
        .get(SUBJECT_KEY)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The subject a key names: `user` for the user's keys, else the entity name before
/// any `/<group>`.
pub fn key_name(key: &str) -> &str {
    if key == "user" || key.starts_with("user/") {
        "user"
    } else {
        key.split('/').next().unwrap_or(key)
    }
}

fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl<'e> Staged<'e> {
    pub fn new(
        engine: &'e Engine,
        cache: &'e mut RunCache,
        candidates: usize,
    ) -> Result<Staged<'e>, CortexError> {
        Ok(Staged {
            engine,
            cache,
            head: engine
                .store()
                .head()
                .map_err(gitloom_engine::EngineError::from)?,
            files: BTreeMap::new(),
            created: BTreeSet::new(),
            changed: BTreeSet::new(),
            candidates,
        })
    }

    /// The memory at `path`: staged, else at HEAD. A file that does not parse is
    /// left alone (reported by the engine), so it reads as absent here.
    pub fn load(&self, path: &StorePath) -> Result<Option<Memory>, CortexError> {
        if let Some(m) = self.files.get(path) {
            return Ok(Some(m.clone()));
        }
        let Some(head) = self.head else {
            return Ok(None);
        };
        let bytes = self
            .engine
            .store()
            .read(head, path)
            .map_err(gitloom_engine::EngineError::from)?;
        Ok(bytes.and_then(|b| Memory::parse(path.as_str(), &b).ok()))
    }

    fn put(&mut self, path: StorePath, m: Memory, is_new: bool) {
        if is_new && !self.changed.contains(&path) {
            self.created.insert(path.clone());
        } else if !self.created.contains(&path) {
            self.changed.insert(path.clone());
        }
        self.files.insert(path, m);
    }

    /// The memory already about `key`: at its hashed path, among the staged files,
    /// or among the memories mentioning the subject's name.
    /// `name`: the entity to look up among the memories mentioning it (`None` for the
    /// user, whose memories are found by path alone).
    fn find_subject(
        &self,
        name: Option<&str>,
        key: &str,
        home: Option<&StorePath>,
        loose: bool,
    ) -> Result<Option<StorePath>, CortexError> {
        if let Some(home) = home
            && let Some(m) = self.load(home)?
            && subject_of(&m).as_deref() == Some(key)
        {
            return Ok(Some(home.clone()));
        }
        for (p, m) in &self.files {
            if subject_of(m).as_deref() == Some(key) {
                return Ok(Some(p.clone()));
            }
        }
        let Some(name) = name else {
            return Ok(None);
        };
        let mut paths: Vec<String> = self
            .engine
            .entity(name)?
            .into_iter()
            .map(|r| r.path)
            .collect();
        paths.sort();
        paths.dedup();
        let mut first_entity = None;
        for p in paths {
            let Ok(sp) = StorePath::parse(&p) else {
                continue;
            };
            if let Some(m) = self.load(&sp)? {
                if subject_of(&m).as_deref() == Some(key) {
                    return Ok(Some(sp));
                }
                // A memory written by hand has no `subject:`; its first entity says
                // what it is about. Good enough to link to, never to merge into.
                if loose
                    && first_entity.is_none()
                    && m.front
                        .entities
                        .first()
                        .is_some_and(|e| fold_name(&e.name) == key)
                {
                    first_entity = Some(sp);
                }
            }
        }
        if first_entity.is_some() {
            return Ok(first_entity);
        }
        Ok(None)
    }

    /// A memory about `name` to link to: one this session wrote, else the newest one
    /// the run knows (see [`RunCache`]), else the newest at HEAD whose `subject:`
    /// names it (whatever its group), else a hand-written one whose first entity is it.
    fn find_about(&mut self, name: &str) -> Result<Option<StorePath>, CortexError> {
        let key = fold_name(name);
        for (p, m) in &self.files {
            if subject_of(m).as_deref().map(key_name) == Some(key.as_str()) {
                return Ok(Some(p.clone()));
            }
        }
        if let Some(found) = self.cache.about.get(&key) {
            return Ok(found.clone());
        }
        let found = about_in_index(self.engine, self.head, name)?;
        self.cache.about.insert(key, found.clone());
        Ok(found)
    }

    /// Candidates from precise retrieval (the evidence floor applies), with their
    /// per-arm raw scores.
    fn candidates(&self, query: &str) -> Result<Vec<Candidate>, CortexError> {
        let r = self
            .engine
            .retrieve(&RetrieveRequest::new(query).with_limit(self.candidates))?;
        let mut out = Vec::new();
        for h in r.hits {
            let Ok(p) = StorePath::parse(&h.path) else {
                continue;
            };
            let m = self.load(&p)?;
            out.push(Candidate {
                path: h.path.clone(),
                title: h.title.clone(),
                subject: m.as_ref().and_then(subject_of),
                entities: m
                    .as_ref()
                    .map(|m| {
                        m.front
                            .entities
                            .iter()
                            .map(|e| match &e.kind {
                                Some(k) => format!("{} ({k})", e.name),
                                None => e.name.clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                tags: m.as_ref().map(|m| m.front.tags.clone()).unwrap_or_default(),
                arms: h.arms.clone(),
                snippet: h.snippet.clone(),
            });
        }
        Ok(out)
    }

    /// Marks `old` (at `p`) superseded by `memory`: `supersedes` and a `related` link
    /// labelled `label` on the new one, `valid_to` on the old one unless it has one.
    fn supersede(
        &mut self,
        memory: &mut Memory,
        p: StorePath,
        mut old: Memory,
        label: &str,
        valid_from: When,
        when: When,
    ) {
        memory.front.supersedes.push(p.to_string());
        let rel = Related {
            label: Some(label.to_owned()),
            target: p.to_string(),
        };
        if !memory.front.related.contains(&rel) {
            memory.front.related.push(rel);
        }
        if old.front.valid_to.is_none() {
            old.front.valid_to = Some(valid_from);
            old.front.updated = Some(when);
        }
        self.put(p, old, false);
    }

    /// The one earlier memory of `fact`'s subject whose title names what the fact
    /// says changed: for each changed term, nearest the word of change first, the
    /// earlier memories (of this run's earlier sessions, or in the index) whose titles
    /// hold it; the first term held by one to [`CHANGE_TITLES`] of them decides, and
    /// of those the title holding most changed terms, then the shortest.
    fn changed_memory(
        &self,
        changes: &[String],
        key: &str,
        path: &StorePath,
    ) -> Result<Option<StorePath>, CortexError> {
        let subject = key_name(key);
        // A memory this session already ended reads as ended, whatever the run cache
        // recorded of it after its own session.
        let wanted = |p: &StorePath, t: &Titled| {
            t.subject == subject
                && !t.ended
                && p != path
                && !self.created.contains(p)
                && self.files.get(p).is_none_or(|m| m.front.valid_to.is_none())
        };
        // Memories from before this run are in the index.
        let mut from_index: Vec<(StorePath, Titled)> = Vec::new();
        for c in self.candidates(&changes.join(" "))? {
            if let Ok(p) = StorePath::parse(&c.path)
                && !self.cache.titled.contains_key(&p)
                && let Some(m) = self.load(&p)?
            {
                from_index.push((p, Titled::of(&m)));
            }
        }
        let earlier = || {
            self.cache
                .titled
                .iter()
                .chain(from_index.iter().map(|(p, t)| (p, t)))
                .filter(|(p, t)| wanted(p, t))
        };
        for term in changes {
            let holders: Vec<(&StorePath, &Titled)> =
                earlier().filter(|(_, t)| t.terms.contains(term)).collect();
            if holders.is_empty() || holders.len() > CHANGE_TITLES {
                continue;
            }
            let shared = |t: &Titled| changes.iter().filter(|c| t.terms.contains(*c)).count();
            return Ok(holders
                .into_iter()
                .min_by_key(|(p, t)| (std::cmp::Reverse(shared(t)), t.terms.len(), *p))
                .map(|(p, _)| p.clone()));
        }
        Ok(None)
    }

    /// Reconciles one fact (already validated) from `source`: its home, its flagged
    /// references repaired where that can be said, the memory it goes into (or a
    /// duplicate found), its fields merged, the memories it supersedes, and links to
    /// the memories about the others it names.
    pub fn reconcile(
        &mut self,
        mut fact: Fact,
        source: &str,
        day: jiff::civil::Date,
        extractor: &dyn Extractor,
    ) -> Result<Outcome, CortexError> {
        let when = When::Date(day);
        let key = fact.subject_key();
        let home = home_of(&fact, &key)?;
        let flagged = self.repair_references(&mut fact, &key, &home, extractor)?;
        let placing = Placing {
            fact: &fact,
            key: &key,
            home: &home,
            source,
            when,
            extractor,
        };
        let (path, mut memory, mut verdict, is_new) = match self.destination(&placing)? {
            Destination::Duplicate(path) => {
                return Ok(Outcome {
                    verdict: Verdict::Duplicate,
                    path,
                    superseded: Vec::new(),
                    flagged,
                });
            }
            Destination::Into {
                path,
                memory,
                verdict,
                is_new,
            } => (path, *memory, verdict, is_new),
        };
        merge_fields(&mut memory, &fact, source, when, extractor)?;
        let mut superseded = self.supersede_slot_holders(&mut memory, &fact, &key, &path, when)?;
        if superseded.is_empty()
            && let Some(p) = self.supersede_changed(&mut memory, &fact, &key, &path, when)?
        {
            superseded.push(p);
        }
        if !superseded.is_empty() && verdict == Verdict::New {
            verdict = Verdict::Supersedes;
        }
        self.relate(&mut memory, &fact, &key, &path)?;
        if !fact.unresolved.is_empty() {
            memory.front.extra.insert(
                "unresolved".into(),
                Value::Array(
                    fact.unresolved
                        .iter()
                        .map(|u| Value::String(u.clone()))
                        .collect(),
                ),
            );
        }
        self.put(path.clone(), memory, is_new);
        Ok(Outcome {
            verdict,
            path,
            superseded,
            flagged,
        })
    }

    /// Flagged references: repaired from the candidates when one names a person; the
    /// fact's pronouns then name them. Returns each reference with whom it was
    /// resolved to, if anyone.
    fn repair_references(
        &mut self,
        fact: &mut Fact,
        key: &str,
        home: &StorePath,
        extractor: &dyn Extractor,
    ) -> Result<Vec<(String, Option<String>)>, CortexError> {
        let mut flagged = Vec::new();
        if fact.unresolved.is_empty() {
            return Ok(flagged);
        }
        // Said before (a re-extraction): the memory already holding this fact names
        // who it was resolved to then.
        let before = self
            .load(home)?
            .filter(|m| subject_of(m).as_deref() == Some(key))
            .and_then(|m| {
                m.front
                    .entities
                    .iter()
                    .find(|e| {
                        e.kind.as_deref() == Some("person")
                            && !fact
                                .entities
                                .iter()
                                .any(|f| fold_name(&f.name) == fold_name(&e.name))
                    })
                    .map(|e| e.name.clone())
            });
        // Only a judge that reads the candidates says who a pronoun stands for.
        // The first person a retrieved memory happens to name is no answer: the
        // memories a sentence retrieves are about its other words. Taken offline,
        // it made 47 repairs on the dev stores and the only one read right was on
        // the persona it was written for; the others gave a "she" to the user's
        // brother and, between two people, a speaker's "her" to the speaker
        // herself. Bounded by gender, shared words
        // and the fact's own names, 10 of 11 were still wrong. Unrepaired, the
        // pronoun stays as said and flagged.
        let who = match before {
            Some(w) => Some(w),
            None if extractor.judges() => {
                let cands = self.candidates(&fact.body)?;
                extractor.judge(fact, &cands)?.and_then(|j| j.resolved)
            }
            None => None,
        };
        for r in fact.unresolved.clone() {
            flagged.push((r, who.clone()));
        }
        if let Some(name) = &who {
            fact.body = replace_pronouns(&fact.body, &fact.unresolved, name);
            fact.title = replace_pronouns(&fact.title, &fact.unresolved, name);
            if !fact
                .entities
                .iter()
                .any(|e| fold_name(&e.name) == fold_name(name))
            {
                fact.entities.push(crate::extract::FactEntity {
                    name: name.clone(),
                    kind: Some("person".into()),
                });
            }
            fact.unresolved.clear();
        }
        Ok(flagged)
    }

    /// Where the fact goes: the memory already about its subject (extended, or a
    /// duplicate when it holds every sentence), one a judge names with subject
    /// agreement, or a new memory at its home.
    fn destination(&mut self, p: &Placing<'_>) -> Result<Destination, CortexError> {
        let (fact, key, home) = (p.fact, p.key, p.home);
        let name = (!fact.about_user()).then_some(fact.subject.as_str());
        // A fact kept apart by its message has one home: its key names the message, so
        // no other path can hold it and the index need not be asked.
        let lookup = if fact.group.is_some() { None } else { name };
        let mut existing = self.find_subject(lookup, key, Some(home), false)?;
        // A fact kept apart by its message that corrects what was said before ("actually
        // Priya lives in Porto, not Lisbon") goes into the memory it corrects.
        if existing.is_none()
            && fact.group.is_some()
            && let Some(n) = name
            && says_correction(&fact.body)
        {
            existing = self.find_about(n)?;
        }
        match existing {
            Some(path) => self.extend(path, fact),
            None => self.merge_or_new(p),
        }
    }

    /// The memory at `p` with the fact's sentences it does not hold yet, or a
    /// duplicate when it holds them all.
    fn extend(&self, p: StorePath, fact: &Fact) -> Result<Destination, CortexError> {
        let mut m = self
            .load(&p)?
            .ok_or_else(|| CortexError::Memory(format!("{p}: vanished while ingesting")))?;
        let known = norm(&m.body);
        let fresh: Vec<&str> = split_body(&fact.body)
            .into_iter()
            .filter(|s| !known.contains(&norm(s)))
            .collect();
        if fresh.is_empty() {
            return Ok(Destination::Duplicate(p));
        }
        let corrects = says_correction(&fresh.join(" "));
        m.body = format!("{}\n\n{}\n", m.body.trim_end(), fresh.join(" "));
        Ok(Destination::Into {
            path: p,
            memory: Box::new(m),
            verdict: if corrects {
                Verdict::Corrects
            } else {
                Verdict::Extends
            },
            is_new: false,
        })
    }

    /// No memory is about the fact's subject yet: a candidate that already holds every
    /// sentence makes it a duplicate; a model may name a candidate to merge into (it
    /// needs subject agreement); else a new memory at `home`.
    fn merge_or_new(&mut self, p: &Placing<'_>) -> Result<Destination, CortexError> {
        let Placing {
            fact,
            key,
            home,
            source,
            when,
            extractor,
        } = *p;
        // What the fact says and what it answers: the title, then its first cue.
        // An extractor without a judge that keeps each message's facts apart
        // needs none: nothing merges into another message's memory, and a
        // re-extracted fact finds its own home above.
        let mut cands = if extractor.judges() || fact.group.is_none() {
            self.candidates(&fact.title)?
        } else {
            Vec::new()
        };
        if let Some(cue) = fact.cues.first().filter(|_| extractor.judges()) {
            for c in self.candidates(cue)? {
                if !cands.iter().any(|x| x.path == c.path) {
                    cands.push(c);
                }
            }
        }
        // Said before, under another subject or group: a candidate already
        // holds every sentence.
        let sentences: Vec<String> = split_body(&fact.body).into_iter().map(norm).collect();
        for c in &cands {
            let Ok(p) = StorePath::parse(&c.path) else {
                continue;
            };
            if let Some(m) = self.load(&p)?
                && sentences.iter().all(|s| norm(&m.body).contains(s.as_str()))
            {
                return Ok(Destination::Duplicate(p));
            }
        }
        let judged = if fact.unresolved.is_empty() {
            extractor
                .judge(fact, &cands)?
                .filter(|j| j.verdict != Verdict::New)
                .and_then(|j| agreeing(fact, j, &cands))
        } else {
            None
        };
        Ok(match judged {
            Some((Verdict::Duplicate, p)) => Destination::Duplicate(p),
            Some((verdict, p)) => {
                let mut m = self
                    .load(&p)?
                    .ok_or_else(|| CortexError::Memory(format!("{p}: not found")))?;
                m.body = format!("{}\n\n{}\n", m.body.trim_end(), fact.body.trim());
                Destination::Into {
                    path: p,
                    memory: Box::new(m),
                    verdict,
                    is_new: false,
                }
            }
            None => {
                let mut m = Memory::new(fact.title.clone(), format!("{}\n", fact.body.trim()));
                m.front.created = Some(when);
                m.front
                    .extra
                    .insert(SUBJECT_KEY.into(), Value::String(key.to_owned()));
                m.front.source = Some(source.to_owned());
                Destination::Into {
                    path: home.clone(),
                    memory: Box::new(m),
                    verdict: Verdict::New,
                    is_new: true,
                }
            }
        })
    }

    /// One-value slots: the new holder supersedes the current one. Returns the paths
    /// superseded.
    fn supersede_slot_holders(
        &mut self,
        memory: &mut Memory,
        fact: &Fact,
        key: &str,
        path: &StorePath,
        when: When,
    ) -> Result<Vec<String>, CortexError> {
        let mut superseded = Vec::new();
        let Some(slot) = fact.slot.as_ref().filter(|_| !fact.ends_slot) else {
            return Ok(superseded);
        };
        let mut holders: BTreeMap<StorePath, Memory> = BTreeMap::new();
        let cue = fact.cues.first().cloned().unwrap_or_else(|| slot.clone());
        for c in self.candidates(&cue)? {
            if let Ok(p) = StorePath::parse(&c.path)
                && let Some(m) = self.load(&p)?
            {
                holders.insert(p, m);
            }
        }
        for (p, m) in &self.files {
            holders.insert(p.clone(), m.clone());
        }
        holders.retain(|p, m| {
            p != path
                && m.front.tags.iter().any(|t| t == slot)
                && subject_of(m).as_deref().map(key_name) != Some(key_name(key))
        });
        let replaced: BTreeSet<String> = holders
            .values()
            .flat_map(|m| m.front.supersedes.clone())
            .collect();
        let valid_from = memory.front.valid_from.unwrap_or(when);
        for (p, old) in holders {
            if replaced.contains(p.as_str())
                || memory.front.supersedes.iter().any(|s| s == p.as_str())
            {
                continue;
            }
            superseded.push(p.to_string());
            self.supersede(
                memory,
                p,
                old,
                &format!("previous-{slot}"),
                valid_from,
                when,
            );
        }
        Ok(superseded)
    }

    /// Any other change ("cancelled the gym", "moved out of the flat") ends the one
    /// earlier memory whose title names what changed; returns its path.
    fn supersede_changed(
        &mut self,
        memory: &mut Memory,
        fact: &Fact,
        key: &str,
        path: &StorePath,
        when: When,
    ) -> Result<Option<String>, CortexError> {
        if fact.slot.is_some() || fact.ends_slot {
            return Ok(None);
        }
        let changes = changed_in(&fact.body);
        if changes.is_empty() {
            return Ok(None);
        }
        let Some(p) = self.changed_memory(&changes, key, path)? else {
            return Ok(None);
        };
        if memory.front.supersedes.iter().any(|s| s == p.as_str()) {
            return Ok(None);
        }
        let Some(old) = self.load(&p)? else {
            return Ok(None);
        };
        let valid_from = memory.front.valid_from.unwrap_or(when);
        let superseded = p.to_string();
        self.supersede(memory, p, old, "previous", valid_from, when);
        Ok(Some(superseded))
    }

    /// Links the memory to the memories about the other people, places and things the
    /// fact names.
    fn relate(
        &mut self,
        memory: &mut Memory,
        fact: &Fact,
        key: &str,
        path: &StorePath,
    ) -> Result<(), CortexError> {
        for e in fact
            .entities
            .iter()
            .skip(if fact.about_user() { 0 } else { 1 })
        {
            let ek = fold_name(&e.name);
            if ek == key_name(key) {
                continue;
            }
            if let Some(p) = self.find_about(&e.name)?
                && p != *path
            {
                let label = e.kind.clone().unwrap_or_else(|| "mentions".into());
                let rel = Related {
                    label: Some(slugify(&label, 30)),
                    target: p.to_string(),
                };
                if !memory.front.related.iter().any(|r| r.target == rel.target) {
                    memory.front.related.push(rel);
                }
            }
        }
        Ok(())
    }
}

/// A fact being placed: what [`Staged::destination`] reads.
#[derive(Clone, Copy)]
struct Placing<'a> {
    fact: &'a Fact,
    /// Its subject key.
    key: &'a str,
    /// The path it has when it makes a new memory.
    home: &'a StorePath,
    /// Where it was said (the transcript path).
    source: &'a str,
    when: When,
    extractor: &'a dyn Extractor,
}

/// Where a fact goes ([`Staged::destination`]).
enum Destination {
    /// A memory already holds every sentence of it.
    Duplicate(StorePath),
    /// Into `memory` at `path` (new, or loaded and extended), with the verdict.
    Into {
        path: StorePath,
        /// Boxed: a memory is large beside a path.
        memory: Box<Memory>,
        verdict: Verdict,
        is_new: bool,
    },
}

/// The fact's home: `<tier>/<topic>/<label>-<hash of its subject key>.md`, the label
/// its subject's name, or for a fact about the user the title's first words.
fn home_of(fact: &Fact, key: &str) -> Result<StorePath, CortexError> {
    let topic = normalise_topic(&fact.topic)?;
    let topic = if topic.is_empty() {
        "general".to_owned()
    } else {
        topic
    };
    let label = if fact.about_user() {
        // Named by what it says: the title's first words.
        fact.title
            .split_whitespace()
            .take(8)
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        fact.subject.clone()
    };
    let hash = blake3::hash(key.as_bytes()).to_hex()[..8].to_owned();
    Ok(StorePath::parse(&format!(
        "{}/{topic}/{}-{hash}.md",
        fact.tier,
        slugify(&label, 50)
    ))?)
}

/// Words people use when they fix what they said before.
fn says_correction(text: &str) -> bool {
    let said = format!(" {} ", fold_name(text));
    [
        " actually ",
        " correction ",
        " user meant ",
        " was wrong ",
        " not true ",
        " i meant ",
    ]
    .iter()
    .any(|c| said.contains(c))
}

/// What a fact's sentences say changed or ended (see `change.rs`), each term once,
/// in the order said. Read here rather than by an extractor, so a model's facts and
/// the offline extractor's are reconciled alike.
fn changed_in(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in split_body(body)
        .into_iter()
        .flat_map(crate::change::changed_things)
    {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

fn split_body(body: &str) -> Vec<&str> {
    // Sentences as the extractor joined them; a model body may be one paragraph.
    let mut out = Vec::new();
    let mut start = 0;
    let b = body.as_bytes();
    for i in 0..b.len() {
        if matches!(b[i], b'.' | b'!' | b'?') && b.get(i + 1).is_some_and(|c| *c == b' ') {
            out.push(body[start..=i].trim());
            start = i + 1;
        }
    }
    if start < body.len() && !body[start..].trim().is_empty() {
        out.push(body[start..].trim());
    }
    out
}

/// The person a candidate is about, best candidate first.
fn replace_pronouns(text: &str, pronouns: &[String], name: &str) -> String {
    let mut out = Vec::new();
    for w in text.split(' ') {
        let core = w.trim_end_matches(|c: char| !c.is_alphanumeric());
        let tail = &w[core.len()..];
        let l = core.to_lowercase();
        if pronouns.contains(&l) {
            let rep = if matches!(l.as_str(), "his" | "hers") {
                format!("{name}'s")
            } else {
                name.to_owned()
            };
            out.push(format!("{rep}{tail}"));
        } else {
            out.push(w.to_owned());
        }
    }
    out.join(" ")
}

/// A judge's merge stands only with subject agreement: a shared entity or real
/// lexical overlap with the target; otherwise the fact is filed as new.
fn agreeing(fact: &Fact, j: Judgement, cands: &[Candidate]) -> Option<(Verdict, StorePath)> {
    let target = j.target?;
    let c = cands.iter().find(|c| c.path == target)?;
    let names: BTreeSet<String> = fact.entities.iter().map(|e| fold_name(&e.name)).collect();
    let shared = c
        .entities
        .iter()
        .any(|e| names.contains(&fold_name(&EntityRef::parse(e).name)))
        || c.subject.as_deref().map(key_name) == Some(key_name(&fact.subject_key()));
    let overlap = text::overlap(
        &text::content_words(&format!("{} {}", fact.title, fact.body)),
        &text::content_words(&format!("{} {}", c.title, c.snippet)),
    );
    (shared || overlap >= 0.5).then(|| StorePath::parse(&target).ok().map(|p| (j.verdict, p)))?
}

fn merge_fields(
    m: &mut Memory,
    fact: &Fact,
    source: &str,
    when: When,
    extractor: &dyn Extractor,
) -> Result<(), CortexError> {
    let f = &mut m.front;
    for c in &fact.cues {
        if f.cues.len() < 8 && !f.cues.iter().any(|x| x.eq_ignore_ascii_case(c)) {
            f.cues.push(c.clone());
        }
    }
    for t in &fact.tags {
        if !f.tags.contains(t) {
            f.tags.push(t.clone());
        }
    }
    for e in &fact.entities {
        if !f
            .entities
            .iter()
            .any(|x| fold_name(&x.name) == fold_name(&e.name))
        {
            f.entities.push(EntityRef {
                name: e.name.clone(),
                kind: e.kind.clone(),
                role: None,
            });
        }
    }
    let parse = |what: &str, s: &str| {
        When::parse(s)
            .map_err(|e| CortexError::Memory(format!("fact {:?}: {what}: {e}", fact.title)))
    };
    if let Some(v) = &fact.valid_from
        && f.valid_from.is_none()
    {
        f.valid_from = Some(parse("valid_from", v)?);
    }
    if let Some(v) = &fact.valid_to {
        f.valid_to = Some(parse("valid_to", v)?);
    }
    for d in &fact.timeline {
        let entry = TimelineEntry {
            date: parse("timeline", &d.date)?,
            text: d.text.clone(),
        };
        if !f.timeline.contains(&entry) {
            f.timeline.push(entry);
        }
    }
    f.timeline.sort_by_key(|t| t.date.unix_seconds());
    f.confidence = Some(
        f.confidence
            .map_or(fact.confidence, |c| c.max(fact.confidence)),
    );
    // Re-extracting an old session must not move `updated` backwards.
    if f.updated
        .is_none_or(|u| u.unix_seconds() < when.unix_seconds())
    {
        f.updated = Some(when);
    }
    let msgs = fact
        .messages
        .iter()
        .map(|m| format!("m{m}"))
        .collect::<Vec<_>>()
        .join(",");
    let src = if msgs.is_empty() {
        source.to_owned()
    } else {
        format!("{source}#{msgs}")
    };
    let sources = f
        .extra
        .entry(SOURCES_KEY.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(a) = sources
        && !a.iter().any(|v| v.as_str() == Some(src.as_str()))
    {
        a.push(Value::String(src));
    }
    f.extra
        .insert("extractor".into(), Value::String(extractor.id()));
    Ok(())
}
