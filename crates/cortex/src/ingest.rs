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
pub fn ingest(
    engine: &Engine,
    sessions: &[Session],
    extractor: &dyn Extractor,
    options: &IngestOptions,
    progress: &dyn Fn(IngestProgress),
) -> Result<IngestReport, CortexError> {
    let started = Instant::now();
    let mut order: Vec<&Session> = sessions.iter().collect();
    for s in &order {
        s.day()?;
    }
    order.sort_by(|a, b| (a.day().ok(), &a.id).cmp(&(b.day().ok(), &b.id)));
    let total = order.len();
    // Topics without their tier (`facts/travel` → `travel`), each once.
    let mut topics: Vec<String> = engine
        .topics()?
        .into_iter()
        .filter_map(|t| t.topic.split_once('/').map(|(_, rest)| rest.to_owned()))
        .filter(|t| !t.is_empty())
        .collect();
    topics.sort();
    topics.dedup();

    // Which sessions need work, and what the store already knows about each.
    let head = engine
        .store()
        .head()
        .map_err(gitloom_engine::EngineError::from)?;
    let mut todo: Vec<(usize, ExtractContext)> = Vec::new();
    let run_text = std::sync::Arc::new(crate::RunText::new(
        order
            .iter()
            .flat_map(|s| s.user_messages().map(|(_, m)| m.content.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
    ));
    let mut skipped = vec![false; total];
    for (i, s) in order.iter().enumerate() {
        let path = s.transcript_path()?;
        if !options.reextract
            && let Some(h) = head
            && let Some(bytes) = engine
                .store()
                .read(h, &path)
                .map_err(gitloom_engine::EngineError::from)?
            && bytes == s.transcript().as_bytes()
        {
            skipped[i] = true;
            continue;
        }
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
        todo.push((
            i,
            ExtractContext {
                topics: topics.clone(),
                known,
                run_text: std::sync::Arc::clone(&run_text),
            },
        ));
    }

    // Extraction in parallel; results come back over a channel so progress is
    // reported on this thread (the callback need not be Sync).
    let mut extracted: Vec<Option<Result<Vec<Fact>, CortexError>>> =
        (0..total).map(|_| None).collect();
    let next = AtomicUsize::new(0);
    let workers = options.concurrency.clamp(1, 64).min(todo.len().max(1));
    let extract_started = Instant::now();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let tx = tx.clone();
            let (todo, order, next) = (&todo, &order, &next);
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

    let mut report = IngestReport {
        extractor: extractor.id(),
        ..Default::default()
    };
    report.timings_ms.extract = extract_started.elapsed().as_secs_f64() * 1e3;
    // Every name the facts mention, looked up once in the index as it is now; the
    // sessions' commits then need no index sync until the end of the run.
    let reconcile_started = Instant::now();
    let mut cache = RunCache::default();
    let names: Vec<String> = extracted
        .iter()
        .flatten()
        .filter_map(|r| r.as_ref().ok())
        .flatten()
        .flat_map(|f| f.entities.iter().map(|e| e.name.clone()))
        .collect();
    cache.prefetch(engine, names.iter().map(String::as_str))?;
    report.timings_ms.reconcile += reconcile_started.elapsed().as_secs_f64() * 1e3;
    for (i, s) in order.iter().enumerate() {
        if options.cancelled() {
            report.cancelled = true;
            break;
        }
        let day = s.day()?;
        let transcript = s.transcript_path()?;
        let mut sr = SessionReport {
            id: s.id.clone(),
            date: s.date.clone(),
            transcript: transcript.to_string(),
            skipped: skipped[i],
            ..Default::default()
        };
        report.turns += s.messages.len();
        if skipped[i] {
            report.sessions.push(sr);
            progress(IngestProgress {
                stage: IngestStage::Committed,
                session: s.id.clone(),
                done: i + 1,
                total,
                received: 0,
            });
            continue;
        }
        let facts = match extracted[i].take() {
            Some(Ok(f)) => f,
            Some(Err(e)) => {
                sr.errors.push(format!("extraction failed: {e}"));
                sr.failed = true;
                report.failed += 1;
                report.errors += sr.errors.len();
                progress(IngestProgress {
                    stage: IngestStage::Failed,
                    session: s.id.clone(),
                    done: i + 1,
                    total,
                    received: 0,
                });
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
        let flagged_before = report.flagged.len();
        let mut attempt = 0;
        let outcome = loop {
            let mut sr_try = sr.clone();
            report.flagged.truncate(flagged_before);
            let facts = facts.clone();
            let reconcile_started = Instant::now();
            let mut staged = Staged::new(engine, &mut cache, options.candidates)?;
            for mut fact in facts {
                // Facts about the user stay apart per message, whichever extractor made them.
                if fact.about_user() && fact.group.is_none() {
                    let m = fact.messages.first().copied().unwrap_or_default();
                    fact.group = Some(format!("{}/m{m}", s.id));
                }
                // A slot is also a tag (that is how its holders are found later); a
                // fact that ends one without a date ends it on the session's day.
                if let Some(slot) = fact.slot.clone().filter(|s| !s.trim().is_empty()) {
                    if !fact.tags.contains(&slot) {
                        fact.tags.push(slot);
                    }
                    if fact.ends_slot && fact.valid_to.is_none() {
                        fact.valid_to = Some(s.date.clone());
                    }
                }
                if let Err(e) = validate(&fact) {
                    sr_try.errors.push(e);
                    continue;
                }
                let title = fact.title.clone();
                match staged.reconcile(fact, transcript.as_str(), day, extractor) {
                    Ok(o) => {
                        match o.verdict {
                            Verdict::New => sr_try.new += 1,
                            Verdict::Extends => sr_try.extended += 1,
                            Verdict::Corrects => sr_try.corrected += 1,
                            Verdict::Supersedes => sr_try.new += 1,
                            Verdict::Duplicate => sr_try.duplicate += 1,
                        }
                        sr_try.superseded += o.superseded.len();
                        for (reference, resolved) in o.flagged {
                            report.flagged.push(Flagged {
                                session: s.id.clone(),
                                path: o.path.to_string(),
                                reference,
                                resolved,
                            });
                        }
                    }
                    Err(CortexError::Memory(e)) => {
                        sr_try.errors.push(format!("fact {title:?}: {e}"))
                    }
                    Err(e) => return Err(e),
                }
            }
            let mut files: Vec<(StorePath, Option<Vec<u8>>)> =
                vec![(transcript.clone(), Some(s.transcript().into_bytes()))];
            let changed = staged.changed.len();
            for (p, m) in &staged.files {
                sr_try.paths.push(p.to_string());
                files.push((p.clone(), Some(m.render().into_bytes())));
            }
            let created = staged.created.len();
            let time = When::Date(day).unix_seconds();
            let time = jiff::Timestamp::from_second(time).map_err(|e| {
                CortexError::Input(format!("session {}: date out of range: {e}", s.id))
            })?;
            let message = format!("ingest: {} (+{created} ~{changed})", s.id);
            // Reconciliation read the store at `staged.head`; if another writer
            // changed one of these files since, redo it on the new head rather than
            // overwrite that change (a lost update).
            report.timings_ms.reconcile += reconcile_started.elapsed().as_secs_f64() * 1e3;
            let commit_started = Instant::now();
            // The index is synced once, after the last session (reconciliation reads
            // what earlier sessions wrote from git and from the run's cache).
            let written = engine.commit_batch_on(staged.head, files, message, Some(time));
            report.timings_ms.commit += commit_started.elapsed().as_secs_f64() * 1e3;
            let written_files = std::mem::take(&mut staged.files);
            drop(staged);
            if written.is_ok() {
                cache.record(&written_files);
            }
            match written {
                Err(gitloom_engine::EngineError::Store(gitloom_store::StoreError::Stale {
                    ..
                })) if attempt < STALE_RETRIES => {
                    attempt += 1;
                    continue;
                }
                r => {
                    sr = sr_try;
                    break r?;
                }
            }
        };
        if outcome.is_some() {
            report.commits += 1;
        }
        sr.commit = outcome;
        report.facts += sr.facts;
        report.new += sr.new;
        report.extended += sr.extended;
        report.corrected += sr.corrected;
        report.superseded += sr.superseded;
        report.duplicate += sr.duplicate;
        report.errors += sr.errors.len();
        progress(IngestProgress {
            stage: IngestStage::Committed,
            session: s.id.clone(),
            done: i + 1,
            total,
            received: 0,
        });
        report.sessions.push(sr);
    }
    if report.commits > 0 {
        let sync_started = Instant::now();
        engine.sync()?;
        report.timings_ms.commit += sync_started.elapsed().as_secs_f64() * 1e3;
    }
    report.elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(report)
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
