//! The pipeline: transcripts, parallel extraction, serial reconciliation, one commit
//! per session.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use gitloom_engine::Engine;
use gitloom_model::{StorePath, When};
use serde::Serialize;

use crate::error::CortexError;
use crate::extract::{ExtractContext, Extractor, Fact, FactEntity, Verdict};
use crate::reconcile::{RunCache, Staged};
use crate::session::Session;

/// Knobs of one ingestion run.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Sessions extracted at once (model calls in flight).
    pub concurrency: usize,
    /// Candidates retrieved per fact for reconciliation.
    pub candidates: usize,
    /// Re-extract a session whose identical transcript is already stored (by default
    /// it is skipped: it was ingested before).
    pub reextract: bool,
    /// Set from another thread to stop the run: no session is extracted or committed
    /// after it is seen (a session being committed finishes), and the report lists the
    /// sessions done so far with `cancelled: true`. Sessions not reached stay
    /// unrecorded, so a later run ingests them.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl IngestOptions {
    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            concurrency: 4,
            candidates: 8,
            reextract: false,
            cancel: None,
        }
    }
}

/// What just happened to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IngestStage {
    /// Extraction is under way (a model call may take minutes on a CPU-served
    /// model): sent once per session when a worker starts on it.
    Extracting,
    /// Its facts are extracted (not yet reconciled).
    Extracted,
    /// Reconciled and committed (or skipped: already ingested).
    Committed,
    /// Extraction failed; nothing of the session was written.
    Failed,
}

/// Progress, reported on the calling thread.
#[derive(Debug, Clone, Serialize)]
pub struct IngestProgress {
    pub stage: IngestStage,
    pub session: String,
    pub done: usize,
    pub total: usize,
    /// While [`IngestStage::Extracting`]: characters of the model's reply received so
    /// far (a streamed reply; 0 before the first, and for the offline extractor).
    pub received: usize,
}

/// What an extraction worker tells the calling thread.
enum Worker {
    Started,
    Received(usize),
    Done(Result<Vec<Fact>, CortexError>),
}

/// A reference the session did not resolve.
#[derive(Debug, Clone, Serialize)]
pub struct Flagged {
    pub session: String,
    pub path: String,
    pub reference: String,
    /// Who it was repaired to from the candidates, if anyone.
    pub resolved: Option<String>,
}

/// What happened to one session.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionReport {
    pub id: String,
    pub date: String,
    pub transcript: String,
    /// The session's commit; `None` when it changed nothing.
    pub commit: Option<String>,
    pub facts: usize,
    pub new: usize,
    pub extended: usize,
    pub corrected: usize,
    pub superseded: usize,
    pub duplicate: usize,
    /// Memories written (created or changed).
    pub paths: Vec<String>,
    /// Already ingested with the same transcript; not re-extracted.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// Extraction failed (the model timed out, or its output never passed the
    /// checks): nothing of the session was written, not even its transcript, so the
    /// next run extracts it again. The reason is in `errors`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    /// Facts refused (bad model output, invalid dates) — never written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// The result of an ingestion run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IngestReport {
    pub extractor: String,
    pub sessions: Vec<SessionReport>,
    pub turns: usize,
    pub facts: usize,
    pub new: usize,
    pub extended: usize,
    pub corrected: usize,
    pub superseded: usize,
    pub duplicate: usize,
    pub commits: usize,
    pub flagged: Vec<Flagged>,
    pub errors: usize,
    /// Sessions whose extraction failed and which were therefore not recorded
    /// (see [`SessionReport::failed`]); a later run extracts them.
    pub failed: usize,
    pub elapsed_ms: f64,
    /// Where the time went: extraction (wall time of the parallel stage),
    /// reconciliation, and commits with their index syncs.
    pub timings_ms: StageTimes,
    /// The run stopped early on [`IngestOptions::cancel`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

/// Wall time per stage of a run, in milliseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StageTimes {
    pub extract: f64,
    pub reconcile: f64,
    pub commit: f64,
}

/// Times a session is reconciled again because another writer changed a file it
/// writes in the meantime (see [`Engine::write_batch_on`]).
const STALE_RETRIES: usize = 8;

/// Ingests `sessions` into the store: see the crate docs. Extraction runs on up to
/// `options.concurrency` threads; reconciliation and commits run on the calling
/// thread in (date, id) order. A session whose extraction fails is reported and
/// written not at all (not even its transcript, which is what marks a session as
/// ingested), so the next run extracts it again; the run goes on with the others.
///
/// The stages: `plan` (the order, and what each session to extract needs from the
/// store), `extract_all` (in parallel), `prefetch` (the names the facts
/// mention, looked up once), then per session `write_session` (reconcile, commit,
/// retry on a concurrent writer), and one index sync at the end.
pub fn ingest(
    engine: &Engine,
    sessions: &[Session],
    extractor: &dyn Extractor,
    options: &IngestOptions,
    progress: &dyn Fn(IngestProgress),
) -> Result<IngestReport, CortexError> {
    let started = Instant::now();
    let plan = plan(engine, sessions, options)?;
    let mut report = IngestReport {
        extractor: extractor.id(),
        ..Default::default()
    };
    let extract_started = Instant::now();
    let mut extracted = extract_all(&plan, extractor, options, progress);
    report.timings_ms.extract = ms_since(extract_started);
    let reconcile_started = Instant::now();
    let mut cache = prefetch(engine, &extracted)?;
    report.timings_ms.reconcile += ms_since(reconcile_started);
    let total = plan.order.len();
    for (i, s) in plan.order.iter().enumerate() {
        if options.cancelled() {
            report.cancelled = true;
            break;
        }
        let mut sr = SessionReport {
            id: s.id.clone(),
            date: s.date.clone(),
            transcript: s.transcript_path()?.to_string(),
            skipped: plan.skipped[i],
            ..Default::default()
        };
        report.turns += s.messages.len();
        let committed = |stage| IngestProgress {
            stage,
            session: s.id.clone(),
            done: i + 1,
            total,
            received: 0,
        };
        if plan.skipped[i] {
            report.sessions.push(sr);
            progress(committed(IngestStage::Committed));
            continue;
        }
        let facts = match extracted[i].take() {
            Some(Ok(f)) => f,
            Some(Err(e)) => {
                sr.errors.push(format!("extraction failed: {e}"));
                sr.failed = true;
                report.failed += 1;
                report.errors += sr.errors.len();
                progress(committed(IngestStage::Failed));
                report.sessions.push(sr);
                continue;
            }
            // Not extracted: the run was cancelled before this session was reached.
            None => {
                report.cancelled = true;
                break;
            }
        };
        sr.facts = facts.len();
        let write = SessionWrite {
            engine,
            session: s,
            day: s.day()?,
            facts: &facts,
            extractor,
            options,
        };
        sr.commit = write_session(&write, &mut cache, &mut report, &mut sr)?;
        tally(&mut report, &sr);
        progress(committed(IngestStage::Committed));
        report.sessions.push(sr);
    }
    if report.commits > 0 {
        let sync_started = Instant::now();
        engine.sync()?;
        report.timings_ms.commit += ms_since(sync_started);
    }
    report.elapsed_ms = ms_since(started);
    Ok(report)
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// A run's sessions in (date, id) order, and which of them need extracting.
struct Plan<'s> {
    order: Vec<&'s Session>,
    /// Per session to extract: its place in `order` and what the store knows for it.
    todo: Vec<(usize, ExtractContext)>,
    /// Per session in `order`: already ingested with the same transcript.
    skipped: Vec<bool>,
}

/// Orders the sessions, and gives each one to extract the store's topics, the
/// entities its text names and the run's text; a session already ingested with the
/// same transcript is skipped unless `options.reextract`.
fn plan<'s>(
    engine: &Engine,
    sessions: &'s [Session],
    options: &IngestOptions,
) -> Result<Plan<'s>, CortexError> {
    let mut order: Vec<&Session> = sessions.iter().collect();
    for s in &order {
        s.day()?;
    }
    order.sort_by(|a, b| (a.day().ok(), &a.id).cmp(&(b.day().ok(), &b.id)));
    let topics = store_topics(engine)?;
    let head = engine
        .store()
        .head()
        .map_err(gitloom_engine::EngineError::from)?;
    let run_text = Arc::new(crate::RunText::new(
        order
            .iter()
            .flat_map(|s| s.user_messages().map(|(_, m)| m.content.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
    ));
    let mut todo: Vec<(usize, ExtractContext)> = Vec::new();
    let mut skipped = vec![false; order.len()];
    for (i, s) in order.iter().enumerate() {
        if !options.reextract && already_ingested(engine, head, s)? {
            skipped[i] = true;
            continue;
        }
        todo.push((
            i,
            ExtractContext {
                topics: topics.clone(),
                known: known_entities(engine, s)?,
                run_text: Arc::clone(&run_text),
            },
        ));
    }
    Ok(Plan {
        order,
        todo,
        skipped,
    })
}

/// The store's topics without their tier (`facts/travel` → `travel`), each once.
fn store_topics(engine: &Engine) -> Result<Vec<String>, CortexError> {
    let mut topics: Vec<String> = engine
        .topics()?
        .into_iter()
        .filter_map(|t| t.topic.split_once('/').map(|(_, rest)| rest.to_owned()))
        .filter(|t| !t.is_empty())
        .collect();
    topics.sort();
    topics.dedup();
    Ok(topics)
}

/// Whether the store at `head` holds this session's transcript as it is now.
fn already_ingested(
    engine: &Engine,
    head: Option<gitloom_store::ObjectId>,
    s: &Session,
) -> Result<bool, CortexError> {
    let Some(h) = head else {
        return Ok(false);
    };
    let stored = engine
        .store()
        .read(h, &s.transcript_path()?)
        .map_err(gitloom_engine::EngineError::from)?;
    Ok(stored.is_some_and(|bytes| bytes == s.transcript().as_bytes()))
}

/// The entities of the store that the session's user messages name, each once.
fn known_entities(engine: &Engine, s: &Session) -> Result<Vec<FactEntity>, CortexError> {
    let text: String = s
        .user_messages()
        .map(|(_, m)| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut known: Vec<FactEntity> = Vec::new();
    for m in engine.entity(&text)? {
        if !known.iter().any(|k| k.name == m.entity) {
            known.push(FactEntity {
                name: m.entity,
                kind: m.kind,
            });
        }
    }
    Ok(known)
}

/// Per session in the plan's order, its extraction (`None`: skipped, or not reached
/// before a cancel). Extraction runs in parallel; results come back over a channel
/// so progress is reported on this thread (the callback need not be Sync).
fn extract_all(
    plan: &Plan<'_>,
    extractor: &dyn Extractor,
    options: &IngestOptions,
    progress: &dyn Fn(IngestProgress),
) -> Vec<Option<Result<Vec<Fact>, CortexError>>> {
    let (order, todo) = (&plan.order, &plan.todo);
    let mut extracted: Vec<Option<Result<Vec<Fact>, CortexError>>> =
        (0..order.len()).map(|_| None).collect();
    let next = AtomicUsize::new(0);
    let workers = options.concurrency.clamp(1, 64).min(todo.len().max(1));
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    if options.cancelled() {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some((i, ctx)) = todo.get(k) else { break };
                    if tx.send((*i, Worker::Started)).is_err() {
                        break;
                    }
                    // A streamed model reply reports its length; pass it on at most
                    // every 256 characters, so progress does not flood the channel.
                    let reported = AtomicUsize::new(0);
                    let received = |chars: usize| {
                        if chars >= reported.load(Ordering::Relaxed) + 256 {
                            reported.store(chars, Ordering::Relaxed);
                            let _ = tx.send((*i, Worker::Received(chars)));
                        }
                    };
                    let r = extractor.extract_reporting(order[*i], ctx, &received);
                    if tx.send((*i, Worker::Done(r))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut done = 0;
        for (i, w) in rx {
            let (stage, received) = match w {
                Worker::Started => (IngestStage::Extracting, 0),
                Worker::Received(n) => (IngestStage::Extracting, n),
                Worker::Done(r) => {
                    extracted[i] = Some(r);
                    done += 1;
                    (IngestStage::Extracted, 0)
                }
            };
            progress(IngestProgress {
                stage,
                session: order[i].id.clone(),
                done,
                total: todo.len(),
                received,
            });
        }
    });
    extracted
}

/// Every name the facts mention, looked up once in the index as it is now; the
/// sessions' commits then need no index sync until the end of the run.
fn prefetch(
    engine: &Engine,
    extracted: &[Option<Result<Vec<Fact>, CortexError>>],
) -> Result<RunCache, CortexError> {
    let mut cache = RunCache::default();
    let names: Vec<String> = extracted
        .iter()
        .flatten()
        .filter_map(|r| r.as_ref().ok())
        .flatten()
        .flat_map(|f| f.entities.iter().map(|e| e.name.clone()))
        .collect();
    cache.prefetch(engine, names.iter().map(String::as_str))?;
    Ok(cache)
}

/// One extracted session to write.
struct SessionWrite<'a> {
    engine: &'a Engine,
    session: &'a Session,
    /// The session's day.
    day: jiff::civil::Date,
    facts: &'a [Fact],
    extractor: &'a dyn Extractor,
    options: &'a IngestOptions,
}

/// Reconciles a session's facts with the store and commits them with its transcript,
/// dated as the session; the commit's id, `None` when it changed nothing.
/// Reconciliation read the store at `staged.head`; if another writer changed one of
/// these files since, it is redone on the new head rather than overwriting that
/// change (a lost update), up to [`STALE_RETRIES`] times. `sr` gets the counts of the
/// attempt that was committed; `report` its flagged references and the stages' time.
fn write_session(
    w: &SessionWrite<'_>,
    cache: &mut RunCache,
    report: &mut IngestReport,
    sr: &mut SessionReport,
) -> Result<Option<String>, CortexError> {
    let s = w.session;
    let transcript = s.transcript_path()?;
    let time = When::Date(w.day).unix_seconds();
    let time = jiff::Timestamp::from_second(time)
        .map_err(|e| CortexError::Input(format!("session {}: date out of range: {e}", s.id)))?;
    let flagged_before = report.flagged.len();
    let mut attempt = 0;
    loop {
        let mut sr_try = sr.clone();
        report.flagged.truncate(flagged_before);
        let reconcile_started = Instant::now();
        let mut staged = Staged::new(w.engine, cache, w.options.candidates)?;
        for fact in w.facts.iter().cloned() {
            reconcile_fact(w, &mut staged, fact, &transcript, &mut sr_try, report)?;
        }
        let mut files: Vec<(StorePath, Option<Vec<u8>>)> =
            vec![(transcript.clone(), Some(s.transcript().into_bytes()))];
        for (p, m) in &staged.files {
            sr_try.paths.push(p.to_string());
            files.push((p.clone(), Some(m.render().into_bytes())));
        }
        let message = format!(
            "ingest: {} (+{} ~{})",
            s.id,
            staged.created.len(),
            staged.changed.len()
        );
        report.timings_ms.reconcile += ms_since(reconcile_started);
        let commit_started = Instant::now();
        // The index is synced once, after the last session (reconciliation reads
        // what earlier sessions wrote from git and from the run's cache).
        let written = w
            .engine
            .commit_batch_on(staged.head, files, message, Some(time));
        report.timings_ms.commit += ms_since(commit_started);
        let written_files = std::mem::take(&mut staged.files);
        drop(staged);
        if written.is_ok() {
            cache.record(&written_files);
        }
        match written {
            Err(gitloom_engine::EngineError::Store(gitloom_store::StoreError::Stale {
                ..
            })) if attempt < STALE_RETRIES => attempt += 1,
            r => {
                *sr = sr_try;
                return Ok(r?);
            }
        }
    }
}

/// Reconciles one fact into `staged`, counting its verdict in `sr` and its flagged
/// references in `report`; a fact that would make a bad memory is refused and
/// counted as an error, the others go on.
fn reconcile_fact(
    w: &SessionWrite<'_>,
    staged: &mut Staged<'_>,
    mut fact: Fact,
    transcript: &StorePath,
    sr: &mut SessionReport,
    report: &mut IngestReport,
) -> Result<(), CortexError> {
    let s = w.session;
    // Facts about the user stay apart per message, whichever extractor made them.
    if fact.about_user() && fact.group.is_none() {
        let m = fact.messages.first().copied().unwrap_or_default();
        fact.group = Some(format!("{}/m{m}", s.id));
    }
    // A slot is also a tag (that is how its holders are found later); a fact that
    // ends one without a date ends it on the session's day.
    if let Some(slot) = fact.slot.clone().filter(|s| !s.trim().is_empty()) {
        if !fact.tags.contains(&slot) {
            fact.tags.push(slot);
        }
        if fact.ends_slot && fact.valid_to.is_none() {
            fact.valid_to = Some(s.date.clone());
        }
    }
    if let Err(e) = validate(&fact) {
        sr.errors.push(e);
        return Ok(());
    }
    let title = fact.title.clone();
    match staged.reconcile(fact, transcript.as_str(), w.day, w.extractor) {
        Ok(o) => {
            match o.verdict {
                Verdict::New | Verdict::Supersedes => sr.new += 1,
                Verdict::Extends => sr.extended += 1,
                Verdict::Corrects => sr.corrected += 1,
                Verdict::Duplicate => sr.duplicate += 1,
            }
            sr.superseded += o.superseded.len();
            for (reference, resolved) in o.flagged {
                report.flagged.push(Flagged {
                    session: s.id.clone(),
                    path: o.path.to_string(),
                    reference,
                    resolved,
                });
            }
            Ok(())
        }
        Err(CortexError::Memory(e)) => {
            sr.errors.push(format!("fact {title:?}: {e}"));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Adds a committed session's counts to the run's.
fn tally(report: &mut IngestReport, sr: &SessionReport) {
    if sr.commit.is_some() {
        report.commits += 1;
    }
    report.facts += sr.facts;
    report.new += sr.new;
    report.extended += sr.extended;
    report.corrected += sr.corrected;
    report.superseded += sr.superseded;
    report.duplicate += sr.duplicate;
    report.errors += sr.errors.len();
}

/// A fact that would make a broken or empty memory is refused here, by name.
fn validate(f: &Fact) -> Result<(), String> {
    if f.title.trim().is_empty() {
        return Err("a fact has an empty title".into());
    }
    if f.body.trim().is_empty() {
        return Err(format!("fact {:?}: empty body", f.title));
    }
    if !(0.0..=1.0).contains(&f.confidence) {
        return Err(format!(
            "fact {:?}: confidence {} is outside 0..1",
            f.title, f.confidence
        ));
    }
    for (what, d) in [("valid_from", &f.valid_from), ("valid_to", &f.valid_to)] {
        if let Some(d) = d
            && When::parse(d).is_err()
        {
            return Err(format!("fact {:?}: {what} {d:?} is not a date", f.title));
        }
    }
    for t in &f.timeline {
        if When::parse(&t.date).is_err() {
            return Err(format!(
                "fact {:?}: timeline date {:?} is not a date",
                f.title, t.date
            ));
        }
    }
    gitloom_model::normalise_topic(&f.topic)
        .map_err(|e| format!("fact {:?}: topic: {e}", f.title))?;
    Ok(())
}
