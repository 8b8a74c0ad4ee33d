//! The model path against a real HTTP server on 127.0.0.1 that speaks the
//! chat-completions wire format and replays scripted replies: a 429, a timeout,
//! malformed JSON, then a valid answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gitloom_cortex::llm::{ChatClient, ChatConfig, ChatMessage};
use gitloom_cortex::{IngestOptions, IngestStage, ModelExtractor, answer, ingest, parse_sessions};
use gitloom_engine::{EmbedderChoice, Engine, EngineOptions};
use serde_json::{Value, json};

/// One scripted reply.
#[derive(Clone)]
enum Reply {
    /// Status and raw body.
    Http(u16, String),
    /// Read the request, then say nothing until the client gives up.
    Hang,
    /// A chat completion whose message content is this text.
    Content(String),
    /// The same, streamed as server-sent events in chunks of this many characters.
    Stream(String, usize),
    /// Streamed, and ended as a server ends a reply cut at `max_tokens`.
    Cut(String),
}

struct Server {
    url: String,
    /// Each request's headers (lowercased names) and JSON body.
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    /// Most requests ever in flight at once.
    max_in_flight: Arc<AtomicUsize>,
}

fn read_request(stream: &mut TcpStream) -> Option<(String, Value)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut headers = String::new();
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().ok()?;
        }
        headers.push_str(&line.to_lowercase());
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some((headers, serde_json::from_slice(&body).ok()?))
}

fn respond(stream: &mut TcpStream, status: u16, body: &str, extra: &str) {
    let reason = if status == 200 { "OK" } else { "Scripted" };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

/// Serves `script` in order, one reply per connection (each on its own thread, so
/// a hanging reply does not hold up the retry behind it); after the script, the
/// last reply repeats.
fn serve(script: Vec<Reply>) -> Server {
    serve_with(move |n, _| script.get(n).or(script.last()).cloned().expect("a script"))
}

/// Serves the reply `reply_for(connection number, request body)` chooses.
fn serve_with(reply_for: impl Fn(usize, &Value) -> Reply + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let (log, max) = (Arc::clone(&seen), Arc::clone(&max_in_flight));
    let reply_for = Arc::new(reply_for);
    let in_flight = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for (n, conn) in listener.incoming().enumerate() {
            let Ok(mut stream) = conn else { continue };
            let (log, max, reply_for, in_flight) = (
                Arc::clone(&log),
                Arc::clone(&max),
                Arc::clone(&reply_for),
                Arc::clone(&in_flight),
            );
            std::thread::spawn(move || {
                let Some(req) = read_request(&mut stream) else {
                    return;
                };
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                max.fetch_max(now, Ordering::SeqCst);
                let reply = reply_for(n, &req.1);
                // As OpenAI does: a streamed reply's usage only when asked for.
                let stream_usage = req.1["stream_options"]["include_usage"] == true;
                log.lock().expect("log").push(req);
                // A request stops counting as in flight before the write that lets the
                // client send its next one: counted after it, the next request could
                // arrive first and count one too many.
                let answered = || in_flight.fetch_sub(1, Ordering::SeqCst);
                match reply {
                    Reply::Http(status, body) => {
                        let extra = if status == 429 {
                            "Retry-After: 0\r\n"
                        } else {
                            ""
                        };
                        answered();
                        respond(&mut stream, status, &body, extra);
                    }
                    Reply::Hang => {
                        // Hold the connection open until the client has timed out and closed it.
                        let mut buf = [0u8; 1];
                        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                        let _ = stream.read(&mut buf);
                        answered();
                    }
                    Reply::Stream(_, _) | Reply::Cut(_) => {
                        let (text, size, finish) = match reply {
                            Reply::Stream(text, size) => (text, size, "stop"),
                            Reply::Cut(text) => (text, 16, "length"),
                            _ => unreachable!(),
                        };
                        let _ = write!(
                            stream,
                            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                        );
                        let chars: Vec<char> = text.chars().collect();
                        for piece in chars.chunks(size.max(1)) {
                            let chunk = json!({"object": "chat.completion.chunk",
                                "choices": [{"index": 0, "delta": {"content": piece.iter().collect::<String>()},
                                             "finish_reason": null}]});
                            let _ = write!(stream, "data: {chunk}\n\n");
                            let _ = stream.flush();
                        }
                        let last = json!({"object": "chat.completion.chunk",
                            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                            "usage": null});
                        let _ = write!(stream, "data: {last}\n\n");
                        if stream_usage {
                            let usage = json!({"object": "chat.completion.chunk", "choices": [],
                                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}});
                            let _ = write!(stream, "data: {usage}\n\n");
                        }
                        answered();
                        let _ = write!(stream, "data: [DONE]\n\n");
                        let _ = stream.flush();
                    }
                    Reply::Content(text) => {
                        let body = json!({
                            "id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": text}}],
                            "usage": {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100}
                        });
                        answered();
                        respond(&mut stream, 200, &body.to_string(), "");
                    }
                }
            });
        }
    });
    Server {
        url,
        seen,
        max_in_flight,
    }
}

fn client(url: &str, retries: u32) -> ChatClient {
    let mut c = ChatConfig::new(url, "scripted-model");
    c.api_key_env = Some("GITLOOM_CORTEX_TEST_KEY_UNSET".into());
    c.timeout = Duration::from_millis(400);
    c.max_retries = retries;
    c.backoff = Duration::from_millis(5);
    ChatClient::new(c).expect("client")
}

fn store(dir: &Path) -> Engine {
    Engine::init_with(
        dir,
        EngineOptions {
            embedder: EmbedderChoice::None,
            ..Default::default()
        },
    )
    .expect("store")
}

const SESSION: &str = r#"[{"id": "s1", "date": "2026-07-30", "messages": [
  {"role": "user", "content": "I accepted an offer from Orbital AI this morning. I start Monday 3 August."},
  {"role": "assistant", "content": "Congratulations!"}]}]"#;

fn good_facts() -> String {
    json!({"facts": [{
        "subject": "Orbital AI", "tier": "facts", "topic": "work",
        "title": "Works at Orbital AI from 2026-08-03",
        "body": "User accepted an offer from Orbital AI on 2026-07-30 and starts on 2026-08-03.",
        "entities": [{"name": "Orbital AI", "kind": "org"}],
        "cues": ["where do I work", "who is my employer", "when did I start at Orbital AI"],
        "slot": "employer", "ends_slot": false, "valid_from": "2026-08-03", "valid_to": null,
        "timeline": [{"date": "2026-08-03", "text": "starts at Orbital AI"}],
        "confidence": 0.9, "messages": [0], "unresolved": []
    }]})
    .to_string()
}

#[test]
fn model_extraction_survives_429_timeout_and_malformed_output() {
    let server = serve(vec![
        Reply::Http(429, r#"{"error": {"message": "slow down"}}"#.into()),
        Reply::Hang,
        Reply::Content("{\"facts\": [ this is not json".into()),
        Reply::Content(json!({"facts": [{"subject": "x"}]}).to_string()),
        Reply::Content(good_facts()),
    ]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(SESSION).expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 4));
    let report = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("ingest");
    assert_eq!(report.errors, 0, "{report:#?}");
    assert_eq!((report.new, report.commits), (1, 1), "{report:#?}");

    let path = &report.sessions[0].paths[0];
    let content = engine.get(path, None).expect("written").content;
    assert!(
        content.contains("valid_from: 2026-08-03")
            || content.contains("valid_from: \"2026-08-03\""),
        "{content}"
    );
    assert!(content.contains("where do I work"), "{content}");
    assert!(
        content.contains("sessions/2026-07-30/s1.md#m0"),
        "{content}"
    );

    let seen = server.seen.lock().expect("log");
    assert_eq!(
        seen.len(),
        5,
        "429, timeout, malformed, out of schema, good"
    );
    let (headers, body) = &seen[0];
    assert!(
        headers.starts_with("post /v1/chat/completions "),
        "{headers}"
    );
    assert!(!headers.contains("authorization"), "no key set, none sent");
    assert_eq!(body["model"], "scripted-model");
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["messages"][0]["role"], "system");
    // The system prompt is the stable, cacheable prefix; the session goes after it.
    assert_eq!(
        body["messages"][0]["content"],
        gitloom_cortex::EXTRACT_PROMPT
    );
    assert!(
        body["messages"][1]["content"]
            .as_str()
            .is_some_and(|c| c.contains("[m0] user: I accepted"))
    );
}

#[test]
fn output_that_stays_malformed_is_reported_and_never_written() {
    let server = serve(vec![Reply::Content("not json at all".into())]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(SESSION).expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 2));
    let report = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("ingest");
    assert_eq!(report.errors, 1);
    let err = &report.sessions[0].errors[0];
    assert!(
        err.contains("model output rejected") && err.contains("after 3 attempts"),
        "{err}"
    );
    assert_eq!(server.seen.lock().expect("log").len(), 3);
    // Nothing was committed, not even the transcript: nothing invalid, and the
    // session is not taken for ingested, so a later run extracts it again.
    assert!(report.sessions[0].failed);
    assert_eq!(report.sessions[0].paths, Vec::<String>::new());
    let tree = engine.tree(None).expect("tree");
    let listing = serde_json::to_string(&tree).expect("json");
    assert!(!listing.contains("facts/"), "{listing}");
    assert!(engine.get("sessions/2026-07-30/s1.md", None).is_err());
}

#[test]
fn a_reply_cut_at_max_tokens_is_reported_and_not_asked_again() {
    // What a small model under greedy decoding does: the same words until the cap.
    let cut = format!(
        r#"{{"facts": [{{"subject": "User", "body": "{}"#,
        "SRE at Tallyline Payments, ".repeat(40)
    );
    let server = serve(vec![Reply::Cut(cut)]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(SESSION).expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 3));
    let report = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("ingest");
    assert!(report.sessions[0].failed, "{report:#?}");
    let err = &report.sessions[0].errors[0];
    assert!(err.contains("cut at max_tokens (4096)"), "{err}");
    assert_eq!(server.seen.lock().expect("log").len(), 1, "asked once");
    assert!(engine.get("sessions/2026-07-30/s1.md", None).is_err());
}

#[test]
fn a_client_error_is_not_retried() {
    let server = serve(vec![Reply::Http(
        401,
        r#"{"error": {"message": "bad key"}}"#.into(),
    )]);
    let err = client(&server.url, 3)
        .complete(&[gitloom_cortex::llm::ChatMessage::user("hi")], None)
        .expect_err("401");
    assert!(err.to_string().contains("HTTP 401"), "{err}");
    assert_eq!(server.seen.lock().expect("log").len(), 1);
}

#[test]
fn answers_cite_memories_and_abstain_without_evidence() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    engine
        .write(
            "facts/work/orbital-ai.md",
            b"---\ntitle: Works at Orbital AI\ncues: [where do I work]\n---\nUser is an ML engineer at Orbital AI.\n",
            None,
        )
        .expect("write");
    let server = serve(vec![Reply::Content(
        json!({"answer": "At Orbital AI, as an ML engineer.", "cited": ["facts/work/orbital-ai.md"]}).to_string(),
    )]);
    let llm = client(&server.url, 1);
    let a = answer(&engine, "where do i work", Some(&llm), 5).expect("answer");
    assert_eq!(a.text.as_deref(), Some("At Orbital AI, as an ML engineer."));
    assert_eq!(a.cited, vec!["facts/work/orbital-ai.md"]);
    assert!(!a.abstained && !a.evidence.is_empty());
    // No model: only the evidence.
    let a = answer(&engine, "where do i work", None, 5).expect("answer");
    assert!(a.text.is_none() && a.evidence[0].path == "facts/work/orbital-ai.md");
    // Nothing relevant: abstain, and the model is not asked.
    let before = server.seen.lock().expect("log").len();
    let a = answer(&engine, "what is my favourite volcano", Some(&llm), 5).expect("answer");
    assert!(a.abstained && a.cited.is_empty(), "{a:?}");
    assert_eq!(server.seen.lock().expect("log").len(), before);
}

fn fact_json(subject: &str, title: &str, body: &str, entities: Value) -> String {
    json!({"facts": [{
        "subject": subject, "tier": "facts", "topic": "hardware", "title": title, "body": body,
        "entities": entities,
        "cues": ["what did I buy", "what hardware do I have", "how much power does my graphics card draw"],
        "slot": null, "ends_slot": false, "valid_from": null, "valid_to": null, "timeline": [],
        "confidence": 0.8, "messages": [0], "unresolved": []
    }]})
    .to_string()
}

const CAMERA: &[u8] = b"---\ntitle: Sony a7 III camera purchase\ncues: [what camera did I buy, what did I buy]\nentities: [Sony a7 III (product)]\n---\nUser bought a Sony a7 III camera with the kit lens.\n";

/// I1 by construction: a model that wants to merge a fact into a memory about
/// another subject is overruled; the fact is filed as new.
#[test]
fn a_model_merge_without_subject_agreement_is_filed_as_new() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    engine
        .write("facts/purchases/sony-a7-iii.md", CAMERA, None)
        .expect("camera");
    let server = serve(vec![
        Reply::Content(fact_json(
            "RTX 5090",
            "RTX 5090 draws nearly 600 watts",
            "User's RTX 5090 graphics card, bought in June, draws nearly 600 watts under load.",
            json!([{"name": "RTX 5090", "kind": "product"}]),
        )),
        Reply::Content(json!({"verdict": "extends", "target": "facts/purchases/sony-a7-iii.md", "resolved": null}).to_string()),
    ]);
    let sessions = parse_sessions(
        r#"[{"id": "gpu", "date": "2026-06-18", "messages": [{"role": "user", "content": "My RTX 5090 draws nearly 600 watts. Bought it in June, what did I buy again?"}]}]"#,
    )
    .expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 1));
    let report = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("ingest");
    let seen = server.seen.lock().expect("log");
    assert_eq!(seen.len(), 2, "extraction, then the verdict");
    // The judge saw the candidates with their per-arm raw scores.
    let judge = seen[1].1["messages"][1]["content"]
        .as_str()
        .expect("content")
        .to_owned();
    assert!(
        judge.contains("facts/purchases/sony-a7-iii.md")
            && judge.contains("\"arms\"")
            && judge.contains("\"score\""),
        "{judge}"
    );
    assert_eq!((report.new, report.extended), (1, 0), "{report:#?}");
    let camera = engine
        .get("facts/purchases/sony-a7-iii.md", None)
        .expect("camera")
        .content;
    assert!(!camera.contains("watts"), "{camera}");
    let gpu = &report.sessions[0].paths;
    assert_eq!(gpu.len(), 1);
    assert!(
        engine
            .get(&gpu[0], None)
            .expect("gpu")
            .content
            .contains("600 watts")
    );
}

/// With subject agreement (a shared entity) the model's verdict stands.
#[test]
fn a_model_merge_with_a_shared_entity_stands() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    engine
        .write("facts/purchases/sony-a7-iii.md", CAMERA, None)
        .expect("camera");
    let server = serve(vec![
        Reply::Content(fact_json(
            "Sony a7 III camera",
            "Sony a7 III camera purchase price",
            "The Sony a7 III camera bundle User bought cost 1,549 euros.",
            json!([{"name": "Sony a7 III", "kind": "product"}]),
        )),
        Reply::Content(json!({"verdict": "extends", "target": "facts/purchases/sony-a7-iii.md", "resolved": null}).to_string()),
    ]);
    let sessions = parse_sessions(
        r#"[{"id": "cam", "date": "2026-06-19", "messages": [{"role": "user", "content": "The a7 III bundle cost 1,549 euros."}]}]"#,
    )
    .expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 1));
    let report = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("ingest");
    assert_eq!((report.new, report.extended), (0, 1), "{report:#?}");
    let camera = engine
        .get("facts/purchases/sony-a7-iii.md", None)
        .expect("camera")
        .content;
    assert!(
        camera.contains("1,549 euros") && camera.contains("kit lens"),
        "{camera}"
    );
}

/// Extraction runs `concurrency` requests at once (never more); reconciliation still
/// goes in date order, so the latest employer wins although the input is shuffled.
#[test]
fn extraction_is_parallel_within_the_limit_and_reconciliation_in_date_order() {
    let dates = [
        "2024-05-01",
        "2024-01-10",
        "2024-09-30",
        "2024-03-15",
        "2024-07-04",
        "2024-11-20",
    ];
    let sessions: Vec<Value> = dates
        .iter()
        .enumerate()
        .map(|(i, d)| json!({"id": format!("s{i}"), "date": d, "messages": [{"role": "user", "content": format!("I joined Company{i} today.")}]}))
        .collect();
    let sessions = parse_sessions(&Value::Array(sessions).to_string()).expect("sessions");
    // The first request is answered only once a second one has arrived (or after a
    // deadline, and then the assertion on max_in_flight fails).
    let seen_by_server = Arc::new(AtomicUsize::new(0));
    let server = serve_with(move |_, body| {
        seen_by_server.fetch_add(1, Ordering::SeqCst);
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if system == gitloom_cortex::RECONCILE_PROMPT {
            return Reply::Content(
                json!({"verdict": "new", "target": null, "resolved": null}).to_string(),
            );
        }
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let date = user
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("SESSION DATE: "))
            .unwrap_or_default()
            .to_owned();
        let company = user
            .split("joined ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap_or_default()
            .to_owned();
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while seen_by_server.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        Reply::Content(json!({"facts": [{
            "subject": company, "tier": "facts", "topic": "work",
            "title": format!("Works at {company}"),
            "body": format!("User joined {company} on {date}."),
            "entities": [{"name": company, "kind": "org"}],
            "cues": ["where do I work", "who is my employer", format!("when did I join {company}")],
            "slot": "employer", "ends_slot": false, "valid_from": date, "valid_to": null,
            "timeline": [], "confidence": 0.9, "messages": [0], "unresolved": []
        }]}).to_string())
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let mut c = ChatConfig::new(&server.url, "scripted-model");
    c.timeout = Duration::from_secs(10);
    let extractor = ModelExtractor::new(ChatClient::new(c).expect("client"));
    let options = IngestOptions {
        concurrency: 2,
        ..Default::default()
    };
    let report = ingest(&engine, &sessions, &extractor, &options, &|_| {}).expect("ingest");
    assert_eq!(report.errors, 0, "{report:#?}");
    assert_eq!(
        server.max_in_flight.load(Ordering::SeqCst),
        2,
        "two at once, never more"
    );
    let order: Vec<&str> = report.sessions.iter().map(|s| s.date.as_str()).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    assert_eq!(
        report.superseded, 5,
        "each new employer supersedes the one before"
    );
    let hits = engine
        .retrieve(&gitloom_engine::RetrieveRequest::new("where do i work"))
        .expect("retrieve")
        .hits;
    assert!(
        hits[0].title.contains("Company5"),
        "latest date wins: {:?}",
        hits[0]
    );
}

/// I7 on the model path: the judge names who "him" is from the candidates; the fact
/// is repaired and linked to that person's memory.
#[test]
fn the_judge_resolves_a_flagged_reference() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    engine
        .write(
            "facts/people/arjun.md",
            b"---\ntitle: Arjun, an old friend in Kyoto\nentities: [Arjun (person), Kyoto (place)]\n---\nUser told Arjun about the Japan trip; he lives in Kyoto.\n",
            None,
        )
        .expect("arjun");
    // Other memories, so BM25 has a corpus to weigh terms against.
    for (i, t) in [
        "Rent is paid on the first",
        "The cat eats wet food",
        "Bouldering on Mondays",
    ]
    .iter()
    .enumerate()
    {
        let m = format!("---\ntitle: {t}\n---\n{t}.\n");
        engine
            .write(&format!("facts/misc/m{i}.md"), m.as_bytes(), None)
            .expect("filler");
    }
    let server = serve_with(|_, body| {
        if body["messages"][0]["content"] == gitloom_cortex::RECONCILE_PROMPT {
            return Reply::Content(
                json!({"verdict": "new", "target": null, "resolved": "Arjun"}).to_string(),
            );
        }
        Reply::Content(json!({"facts": [{
            "subject": "User", "tier": "facts", "topic": "travel",
            "title": "Will stay with him during the Japan trip",
            "body": "During the Japan trip User will stay with him.",
            "entities": [{"name": "Japan", "kind": "place"}],
            "cues": ["where will I stay in Japan", "who will I stay with", "what are my travel plans"],
            "slot": null, "ends_slot": false, "valid_from": null, "valid_to": null, "timeline": [],
            "confidence": 0.6, "messages": [0], "unresolved": ["him"]
        }]}).to_string())
    });
    let sessions = parse_sessions(
        r#"[{"id": "stay", "date": "2026-07-05", "messages": [{"role": "user", "content": "During my Japan trip I will stay with him."}]}]"#,
    )
    .expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 1));
    let report = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("ingest");
    assert_eq!(report.flagged.len(), 1, "{report:#?}");
    assert_eq!(report.flagged[0].resolved.as_deref(), Some("Arjun"));
    let content = engine
        .get(&report.flagged[0].path, None)
        .expect("memory")
        .content;
    assert!(content.contains("stay with Arjun"), "{content}");
    assert!(content.contains("Arjun (person)"), "{content}");
    assert!(
        content.contains("person: facts/people/arjun.md"),
        "{content}"
    );
    assert!(!content.contains("unresolved"), "{content}");
}

/// The model server is down for the first run: the sessions are reported as failed and
/// nothing of them is written (not even the transcript that marks a session as
/// ingested), so the second run, with the server back, extracts them.
#[test]
fn a_session_whose_extraction_failed_is_extracted_by_the_next_run() {
    let healthy = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let up = Arc::clone(&healthy);
    let server = serve_with(move |_, _| {
        if up.load(Ordering::SeqCst) {
            Reply::Content(good_facts())
        } else {
            Reply::Http(503, r#"{"error": {"message": "loading model"}}"#.into())
        }
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(SESSION).expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 1));
    let head_before = engine.store().head().expect("head");

    let first = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("a failed extraction is reported, not an error of the run");
    assert_eq!((first.failed, first.commits), (1, 0), "{first:#?}");
    assert!(first.sessions[0].failed, "{first:#?}");
    assert!(
        first.sessions[0].errors[0].contains("extraction failed"),
        "{first:#?}"
    );
    assert_eq!(
        engine.store().head().expect("head"),
        head_before,
        "nothing committed"
    );
    assert!(
        engine.get("sessions/2026-07-30/s1.md", None).is_err(),
        "the transcript of a failed session is not stored"
    );

    healthy.store(true, Ordering::SeqCst);
    let second = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("second run");
    assert_eq!(
        (second.failed, second.commits, second.new),
        (0, 1, 1),
        "{second:#?}"
    );
    assert!(
        !second.sessions[0].skipped,
        "not taken for already ingested"
    );
    assert!(engine.get("sessions/2026-07-30/s1.md", None).is_ok());
    // And now it is ingested: a third run skips it.
    let third = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|_| {},
    )
    .expect("third run");
    assert!(third.sessions[0].skipped, "{third:#?}");
}

/// A streamed reply (server-sent events) is read whole, and its progress reaches the
/// caller while the model is still writing.
#[test]
fn a_streamed_reply_is_read_and_reports_progress() {
    let server = serve(vec![Reply::Stream(good_facts(), 40)]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let engine = store(tmp.path());
    let sessions = parse_sessions(SESSION).expect("sessions");
    let extractor = ModelExtractor::new(client(&server.url, 0));
    let seen = Mutex::new(Vec::new());
    let report = ingest(
        &engine,
        &sessions,
        &extractor,
        &IngestOptions::default(),
        &|p| seen.lock().expect("seen").push((p.stage, p.received)),
    )
    .expect("ingest");
    assert_eq!((report.errors, report.new), (0, 1), "{report:#?}");
    let seen = seen.into_inner().expect("seen");
    let before_done = seen
        .iter()
        .take_while(|(stage, _)| *stage != IngestStage::Extracted)
        .collect::<Vec<_>>();
    assert_eq!(before_done[0], &(IngestStage::Extracting, 0), "{seen:?}");
    assert!(
        before_done.iter().any(|(_, n)| *n >= 256),
        "characters received are reported during extraction: {seen:?}"
    );
    let body = &server.seen.lock().expect("log")[0].1;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(
        extractor.client().tokens_used(),
        120,
        "the usage chunk is counted"
    );
    assert!(body["max_tokens"].as_u64().is_some());
    // The schema bounds message indexes to the session's messages.
    let schema = &body["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["facts"]["items"]["properties"]["messages"]["items"]["maximum"],
        1
    );
}

#[test]
fn a_local_endpoint_is_recognised() {
    for (url, local) in [
        ("http://127.0.0.1:8080", true),
        ("http://localhost:8080/v1", true),
        ("http://[::1]:8080", true),
        ("https://api.openai.com", false),
        ("http://10.1.2.3:8080", false),
    ] {
        assert_eq!(ChatConfig::new(url, "m").is_local(), local, "{url}");
    }
}

#[test]
fn every_answered_request_counts_its_tokens_rejected_output_included() {
    // Malformed output is asked for again; the server billed both replies.
    let server = serve(vec![
        Reply::Content("{\"facts\": [ not json".into()),
        Reply::Content(good_facts()),
    ]);
    let mut config = ChatConfig::new(&server.url, "scripted-model");
    config.api_key_env = Some("GITLOOM_CORTEX_TEST_KEY_UNSET".into());
    config.stream = false;
    config.max_retries = 2;
    config.backoff = Duration::from_millis(5);
    let c = ChatClient::new(config).expect("client");
    assert_eq!(c.tokens_used(), 0);
    let out: Value = c
        .complete_json(
            &[ChatMessage::user("x")],
            "facts",
            &json!({"type": "object"}),
            |_: &Value| Ok(()),
        )
        .expect("second reply parses");
    assert!(out["facts"].is_array());
    assert_eq!(c.tokens_used(), 200);
    // A reply without `usage` adds nothing.
    let quiet = serve(vec![Reply::Http(
        200,
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]})
            .to_string(),
    )]);
    let mut config = ChatConfig::new(&quiet.url, "scripted-model");
    config.api_key_env = Some("GITLOOM_CORTEX_TEST_KEY_UNSET".into());
    config.stream = false;
    let c = ChatClient::new(config).expect("client");
    assert_eq!(
        c.complete(&[ChatMessage::user("x")], None).expect("reply"),
        "hi"
    );
    assert_eq!(c.tokens_used(), 0);
}
