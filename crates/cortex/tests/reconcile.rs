//! Reconciliation rules on small conversations that are not the probe's: the
//! offline extractor has to generalise.

use gitloom_cortex::{
    IngestOptions, IngestReport, OfflineExtractor, Session, ingest, parse_sessions,
};
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions, RetrieveRequest};
use gitloom_model::Memory;

fn lexical_only() -> EngineOptions {
    EngineOptions {
        embedder: EmbedderChoice::None,
        ..Default::default()
    }
}

fn store(dir: &std::path::Path) -> Engine {
    Engine::init_with(dir, lexical_only()).expect("store")
}

fn store_open(dir: &std::path::Path) -> Engine {
    Engine::open_with(dir, lexical_only()).expect("open")
}

/// The offline ingestion of `sessions` into `engine`, with default options.
fn ingest_offline(engine: &Engine, sessions: &[Session]) -> IngestReport {
    ingest(
        engine,
        sessions,
        &OfflineExtractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("ingest")
}

fn read(engine: &Engine, path: &str) -> Memory {
    let c = engine.get(path, None).expect("memory").content;
    Memory::parse(path, c.as_bytes()).expect("parses")
}

const JOBS: &str = r#"[
 {"id": "a", "date": "2025-03-03", "messages": [
   {"role": "user", "content": "I work at Globex Corporation as a data analyst. The office is near the river."}]},
 {"id": "b", "date": "2025-11-20", "messages": [
   {"role": "user", "content": "Big change: I accepted an offer from Initech Labs yesterday. I start on 1 December as a product manager."},
   {"role": "assistant", "content": "Congratulations!"}]},
 {"id": "c", "date": "2025-12-02", "messages": [
   {"role": "user", "content": "My sister Priya lives in Lisbon."}]},
 {"id": "d", "date": "2025-12-09", "messages": [
   {"role": "user", "content": "Actually, my sister Priya lives in Porto, not Lisbon."}]}
]"#;

#[test]
fn a_new_employer_supersedes_the_old_and_corrections_are_marked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(JOBS).expect("sessions");
    let r = ingest_offline(&engine, &sessions);
    assert_eq!(r.commits, 4, "{r:#?}");
    assert_eq!(r.superseded, 1, "{r:#?}");
    assert_eq!(r.corrected, 1, "{r:#?}");

    let hits = engine
        .retrieve(&RetrieveRequest::new("where do i work"))
        .expect("retrieve")
        .hits;
    assert!(hits[0].title.contains("Initech"), "{:?}", hits[0]);
    let initech = read(&engine, &hits[0].path);
    let globex_path = initech
        .front
        .supersedes
        .first()
        .expect("supersedes the old employer")
        .clone();
    let globex = read(&engine, &globex_path);
    assert!(globex.body.contains("Globex"));
    // The old job ended when the new one started ("I start on 1 December").
    assert_eq!(
        globex.front.valid_to.map(|w| w.to_string()).as_deref(),
        Some("2025-12-01")
    );
    assert_eq!(
        initech.front.valid_from.map(|w| w.to_string()).as_deref(),
        Some("2025-12-01")
    );
    // "yesterday" was resolved against the session.
    assert!(
        initech.body.contains("on 19 November 2025"),
        "{}",
        initech.body
    );

    let priya = r.sessions[3]
        .paths
        .first()
        .expect("the correction's memory");
    let m = read(&engine, priya);
    assert!(
        m.body.contains("Lisbon") && m.body.contains("Porto"),
        "{}",
        m.body
    );
    assert_eq!(m.front.entities[0].name, "Priya");
    assert_eq!(m.front.entities[0].kind.as_deref(), Some("person"));
}

/// Sessions are reconciled in date order whatever order they arrive in.
#[test]
fn input_order_does_not_matter() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let mut sessions = parse_sessions(JOBS).expect("sessions");
    sessions.reverse();
    let r = ingest_offline(&engine, &sessions);
    assert_eq!((r.superseded, r.corrected), (1, 1), "{r:#?}");
    let ids: Vec<&str> = r.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c", "d"]);
    let hits = engine
        .retrieve(&RetrieveRequest::new("where do i work"))
        .expect("retrieve")
        .hits;
    assert!(hits[0].title.contains("Initech"), "{:?}", hits[0]);
}

#[test]
fn an_unresolvable_reference_is_kept_and_flagged() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(
        r#"[{"id": "x", "date": "2025-01-10", "messages": [{"role": "user", "content": "I promised to help her move next Saturday."}]}]"#,
    )
    .expect("sessions");
    let r = ingest_offline(&engine, &sessions);
    assert_eq!(r.flagged.len(), 1, "{r:#?}");
    assert_eq!(
        (
            r.flagged[0].reference.as_str(),
            r.flagged[0].resolved.as_deref()
        ),
        ("her", None)
    );
    let m = read(&engine, &r.flagged[0].path);
    assert!(
        m.body.contains("help her move on Saturday 11 January 2025"),
        "{}",
        m.body
    );
    assert_eq!(
        m.front.extra.get("unresolved"),
        Some(&serde_json::json!(["her"]))
    );
}

/// A pronoun in a session that names no one is not given to whoever the memories
/// its sentence retrieves happen to name: offline, with no judge to read them, it
/// stays as said and flagged (the brother of an earlier session is no "she").
#[test]
fn a_pronoun_is_not_given_to_a_person_other_memories_name() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(
        r#"[{"id": "family", "date": "2025-02-01", "messages": [
             {"role": "user", "content": "My little brother Tomas lives in Oslo and swims every morning."}]},
            {"id": "knee", "date": "2025-03-01", "messages": [
             {"role": "user", "content": "She said swimming in Oslo every morning is fine as long as the shoulder does not hurt."}]}]"#,
    )
    .expect("sessions");
    let r = ingest_offline(&engine, &sessions);
    let flagged: Vec<_> = r.flagged.iter().filter(|f| f.reference == "she").collect();
    assert_eq!(flagged.len(), 1, "{r:#?}");
    assert_eq!(flagged[0].resolved, None, "{r:#?}");
    let m = read(&engine, &flagged[0].path);
    assert!(m.body.contains("She said swimming"), "{}", m.body);
    assert!(!m.body.contains("Tomas"), "{}", m.body);
    assert_eq!(
        m.front.extra.get("unresolved"),
        Some(&serde_json::json!(["she"]))
    );
}

/// Odd input — an empty session, an id that is not a file name, emoji, code, dates
/// that do not exist — is ingested without an error and without losing a word.
#[test]
fn odd_input_loses_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let text = r#"[{"id": "empty", "date": "2026-01-01", "messages": []},
     {"id": "weird/..id", "date": "2026-01-02T23:59:59+05:00", "messages": [
       {"role": "user", "content": "🙂 ÄÖÜ straße! I'm moving to São Paulo next March. ```rm -rf /``` My friend Zoë Ångström says hi."},
       {"role": "system", "content": "be brief"},
       {"role": "user", "content": ""},
       {"role": "user", "content": "I I I. . . ! ? Dr. Dr."},
       {"role": "user", "content": "the 31st. 31 February. next Smarch. 99 years ago."}]}]"#;
    let sessions = parse_sessions(text).expect("sessions");
    let r = ingest_offline(&engine, &sessions);
    assert_eq!((r.commits, r.errors), (2, 0), "{r:#?}");
    let t = engine
        .get("sessions/2026-01-02/weird-id.md", None)
        .expect("transcript")
        .content;
    for m in &sessions[1].messages {
        assert!(t.contains(m.content.as_str()), "lost {:?}", m.content);
    }
    assert!(engine.get("sessions/2026-01-01/empty.md", None).is_ok());
    for p in r.sessions.iter().flat_map(|s| &s.paths) {
        let m = read(&engine, p);
        assert!(
            (3..=6).contains(&m.front.cues.len()),
            "{p}: {:?}",
            m.front.cues
        );
    }
    let moving = r.sessions[1]
        .paths
        .iter()
        .map(|p| read(&engine, p))
        .find(|m| m.body.contains("São Paulo"))
        .expect("the move is kept");
    assert!(moving.body.contains("in March 2026"), "{}", moving.body);
}

/// Four writers ingest at once, each a session adding to what the store knows about
/// the same person: whatever the interleaving, no fact is lost to another writer's
/// commit (a stale read-modify-write is reconciled again on the new head).
#[test]
fn concurrent_ingests_about_one_subject_lose_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    drop(store(tmp.path()));
    let said = [
        "My sister Priya plays the cello in an orchestra.",
        "My sister Priya has a dog named Biscuit.",
        "My sister Priya studied chemistry in Coimbra.",
        "My sister Priya runs a marathon every spring.",
    ];
    std::thread::scope(|scope| {
        for (i, text) in said.iter().enumerate() {
            let dir = tmp.path().to_owned();
            scope.spawn(move || {
                let engine = store_open(&dir);
                let json = format!(
                    r#"[{{"id": "w{i}", "date": "2025-06-1{i}", "messages": [{{"role": "user", "content": "{text}"}}]}}]"#
                );
                let sessions = parse_sessions(&json).expect("sessions");
                ingest(&engine, &sessions, &OfflineExtractor, &IngestOptions::default(), &|_| {})
                    .expect("ingest");
            });
        }
    });
    let engine = store_open(tmp.path());
    let mut memories = String::new();
    let head = engine.store().head().expect("head").expect("a commit");
    let tree = engine.store().tree_of(head).expect("tree");
    for entry in engine.store().walk(tree).expect("walk") {
        let path = entry.path.to_string();
        if path.ends_with(".md") && !path.starts_with("sessions/") {
            memories.push_str(&engine.get(&path, None).expect("get").content);
        }
    }
    for (word, text) in ["cello", "Biscuit", "Coimbra", "marathon"].iter().zip(said) {
        assert!(memories.contains(word), "lost: {text:?}\n{memories}");
    }
}

const CHANGES: &str = r#"[
 {"id": "a", "date": "2025-02-03", "messages": [
   {"role": "user", "content": "I have a Pulsefit membership at the riverside location."},
   {"role": "assistant", "content": "Noted."},
   {"role": "user", "content": "I sing in the Hallé choir on Mondays."},
   {"role": "assistant", "content": "Lovely."},
   {"role": "user", "content": "We drive a 2015 Volvo estate."}]},
 {"id": "b", "date": "2025-06-01", "messages": [
   {"role": "user", "content": "I cancelled Pulsefit, last day is June 30."},
   {"role": "assistant", "content": "Okay."},
   {"role": "user", "content": "Rehearsals are hard work but I won't quit the choir."}]}
]"#;

const LATER: &str = r#"[
 {"id": "c", "date": "2025-09-14", "messages": [
   {"role": "user", "content": "We sold the Volvo on Saturday."}]}
]"#;

/// The memory of `engine` whose title contains `words`.
fn titled(engine: &Engine, words: &str) -> (String, Memory) {
    let hits = engine
        .retrieve(&RetrieveRequest::new(words).with_limit(20))
        .expect("retrieve")
        .hits;
    let h = hits
        .iter()
        .find(|h| h.title.contains(words))
        .unwrap_or_else(|| panic!("no memory titled {words:?} in {hits:#?}"));
    (h.path.clone(), read(engine, &h.path))
}

#[test]
fn a_statement_that_something_ended_supersedes_the_memory_whose_title_names_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let r = ingest_offline(&engine, &parse_sessions(CHANGES).expect("sessions"));
    assert_eq!(r.superseded, 1, "only the cancelled membership: {r:#?}");
    let (membership, m) = titled(&engine, "Pulsefit membership");
    let (_, cancelled) = titled(&engine, "cancelled Pulsefit");
    assert_eq!(
        cancelled.front.supersedes,
        std::slice::from_ref(&membership)
    );
    assert_eq!(
        m.front.valid_to.map(|w| w.to_string()).as_deref(),
        Some("2025-06-01"),
        "the membership ended when the user said so"
    );
    // "won't quit" ends nothing.
    let (_, choir) = titled(&engine, "choir");
    assert!(choir.front.valid_to.is_none(), "{choir:#?}");

    // A later run finds the earlier memory in the index.
    let r = ingest_offline(
        &store_open(tmp.path()),
        &parse_sessions(LATER).expect("sessions"),
    );
    assert_eq!(r.superseded, 1, "{r:#?}");
    let engine = store_open(tmp.path());
    let (volvo, car) = titled(&engine, "Volvo estate");
    let (_, sold) = titled(&engine, "sold the Volvo");
    assert_eq!(sold.front.supersedes, [volvo]);
    assert_eq!(
        car.front.valid_to.map(|w| w.to_string()).as_deref(),
        Some("2025-09-14")
    );
}

const SOMEONE_ELSES_JOB: &str = r#"[
 {"id": "a", "date": "2025-03-03", "messages": [
   {"role": "user", "content": "I work at Globex Corporation as a data analyst."}]},
 {"id": "b", "date": "2025-07-08", "messages": [
   {"role": "user", "content": "Big news from my daughter Maeve. She's got a job at Initech Labs in Nantes."}]}
]"#;

#[test]
fn someone_elses_new_job_leaves_the_users_employer_alone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let r = ingest_offline(
        &engine,
        &parse_sessions(SOMEONE_ELSES_JOB).expect("sessions"),
    );
    assert_eq!(r.superseded, 0, "{r:#?}");
    let (_, globex) = titled(&engine, "Globex");
    assert!(globex.front.valid_to.is_none(), "{globex:#?}");
}
