//! The OpenAI-compatible client against a real HTTP/1.1 server on 127.0.0.1 speaking
//! the embeddings wire format.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gitloom_embed::{EmbedError, Embedder, OpenAiConfig, OpenAiEmbedder};

/// What the server does with the n-th request (0-based).
#[derive(Clone, Copy)]
enum Act {
    Ok,
    Status(u16),
    SleepThenOk(u64),
    Dim(usize),
}

struct Seen {
    /// Per request: number of inputs, model, Authorization header.
    requests: Vec<(usize, String, Option<String>)>,
}

struct Server {
    url: String,
    seen: Arc<Mutex<Seen>>,
}

fn serve(dim: usize, script: Vec<Act>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Seen {
        requests: Vec::new(),
    }));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for (n, conn) in listener.incoming().enumerate() {
            let Ok(conn) = conn else { break };
            let act = script.get(n).copied().unwrap_or(Act::Ok);
            let seen = s2.clone();
            std::thread::spawn(move || handle(conn, act, dim, &seen));
        }
    });
    Server { url, seen }
}

fn handle(mut conn: TcpStream, act: Act, dim: usize, seen: &Mutex<Seen>) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut request_line = String::new();
    reader.read_line(&mut request_line).expect("read");
    assert!(
        request_line.starts_with("POST /v1/embeddings "),
        "{request_line}"
    );
    let (mut len, mut auth) = (0usize, None);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("read header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').expect("header");
        match k.to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().expect("length"),
            "authorization" => auth = Some(v.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).expect("body");
    let req: serde_json::Value = serde_json::from_slice(&body).expect("json body");
    let inputs: Vec<String> = req["input"]
        .as_array()
        .expect("input array")
        .iter()
        .map(|v| v.as_str().expect("string input").to_string())
        .collect();
    let model = req["model"].as_str().expect("model").to_string();
    seen.lock()
        .expect("lock")
        .requests
        .push((inputs.len(), model.clone(), auth));
    let (status, dim) = match act {
        Act::Ok => (200, dim),
        Act::Status(s) => (s, dim),
        Act::SleepThenOk(ms) => {
            std::thread::sleep(Duration::from_millis(ms));
            (200, dim)
        }
        Act::Dim(d) => (200, d),
    };
    let reply = if status == 200 {
        // Returned in reverse order: the client must place by "index".
        let data: Vec<serde_json::Value> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": fake(t, dim)}))
            .collect();
        serde_json::json!({"object": "list", "data": data, "model": model}).to_string()
    } else {
        r#"{"error":{"message":"overloaded"}}"#.to_string()
    };
    let _ = write!(
        conn,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
        reply.len()
    );
}

/// The server's vector for a text: one-hot-ish on the text's length (unnormalised).
fn fake(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0.0; dim];
    if dim > 0 {
        v[text.len() % dim] = 2.0;
        v[0] += 1.0;
    }
    v
}

fn config(url: &str, dim: usize) -> OpenAiConfig {
    OpenAiConfig {
        batch_size: 3,
        timeout: Duration::from_millis(200),
        max_retries: 2,
        backoff: Duration::from_millis(10),
        api_key_env: Some("PATH".into()), // any variable that is set: sent as the bearer token
        ..OpenAiConfig::new(url, "text-embedding-test", dim)
    }
}

#[test]
fn batches_and_returns_vectors_in_order() {
    let srv = serve(8, vec![]);
    let e = OpenAiEmbedder::new(config(&srv.url, 8)).expect("client");
    assert_eq!(e.endpoint(), format!("{}/v1/embeddings", srv.url));
    let host = srv.url.trim_start_matches("http://");
    assert_eq!(e.model_id(), format!("openai:text-embedding-test@{host}/8"));
    let texts = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"];
    let v = e.embed(&texts).expect("embed");
    assert_eq!(v.len(), 7);
    for (t, v) in texts.iter().zip(&v) {
        let mut want = fake(t, 8);
        let n = want.iter().map(|x| x * x).sum::<f32>().sqrt();
        want.iter_mut().for_each(|x| *x /= n);
        assert_eq!(*v, want, "{t}: in order and L2-normalised");
    }
    let seen = srv.seen.lock().expect("lock");
    let sizes: Vec<usize> = seen.requests.iter().map(|r| r.0).collect();
    assert_eq!(sizes, vec![3, 3, 1]);
    assert!(seen.requests.iter().all(|r| r.1 == "text-embedding-test"));
    let auth = seen.requests[0].2.as_deref().expect("authorization sent");
    assert!(auth.starts_with("Bearer "), "{auth}");
}

#[test]
fn a_500_is_retried() {
    let srv = serve(4, vec![Act::Status(500), Act::Status(429), Act::Ok]);
    let e = OpenAiEmbedder::new(config(&format!("{}/v1/", srv.url), 4)).expect("client");
    let v = e.embed(&["x", "y"]).expect("third attempt succeeds");
    assert_eq!(v.len(), 2);
    assert_eq!(srv.seen.lock().expect("lock").requests.len(), 3);
}

#[test]
fn gives_up_after_the_retries_naming_the_url() {
    let srv = serve(4, vec![Act::Status(503); 10]);
    let e = OpenAiEmbedder::new(config(&srv.url, 4)).expect("client");
    let err = e.embed(&["x"]).expect_err("fails");
    let msg = err.to_string();
    assert!(matches!(err, EmbedError::Http { .. }));
    assert!(
        msg.contains(&srv.url) && msg.contains("503") && msg.contains("3 attempts"),
        "{msg}"
    );
}

#[test]
fn a_timeout_is_retried_then_succeeds() {
    let srv = serve(4, vec![Act::SleepThenOk(500), Act::Ok]);
    let e = OpenAiEmbedder::new(config(&srv.url, 4)).expect("client");
    let start = std::time::Instant::now();
    let v = e.embed(&["slow"]).expect("second attempt succeeds");
    assert_eq!(v.len(), 1);
    assert!(
        start.elapsed() < Duration::from_millis(450),
        "did not wait for the slow reply"
    );
    assert_eq!(srv.seen.lock().expect("lock").requests.len(), 2);
}

#[test]
fn persistent_timeouts_are_an_error() {
    let srv = serve(4, vec![Act::SleepThenOk(400); 3]);
    let cfg = OpenAiConfig {
        max_retries: 1,
        ..config(&srv.url, 4)
    };
    let e = OpenAiEmbedder::new(cfg).expect("client");
    let err = e.embed(&["slow"]).expect_err("times out");
    assert!(err.to_string().contains("2 attempts"), "{err}");
}

#[test]
fn a_wrong_dimension_is_an_error() {
    let srv = serve(4, vec![Act::Dim(5)]);
    let e = OpenAiEmbedder::new(config(&srv.url, 4)).expect("client");
    let err = e.embed(&["x"]).expect_err("wrong dimension");
    assert!(
        matches!(
            err,
            EmbedError::Dimension {
                expected: 4,
                actual: 5,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_4xx_other_than_429_is_not_retried() {
    let srv = serve(4, vec![Act::Status(401), Act::Ok]);
    let e = OpenAiEmbedder::new(config(&srv.url, 4)).expect("client");
    let err = e.embed(&["x"]).expect_err("401");
    assert!(err.to_string().contains("401"), "{err}");
    assert_eq!(srv.seen.lock().expect("lock").requests.len(), 1);
}

#[test]
fn rejects_a_non_http_url() {
    assert!(OpenAiEmbedder::new(OpenAiConfig::new("localhost:80", "m", 4)).is_err());
}
