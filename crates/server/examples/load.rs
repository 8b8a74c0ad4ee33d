//! A bounded load generator for `gitloom serve` (loopback only): `scripts/load_test.sh`
//! runs it. Not a benchmark harness of its own: it sends requests and reports what it
//! saw, medians and tails, and stops by itself.
//!
//! ```text
//! load mixed URL KEY NAMESPACE CLIENTS SECONDS QUERIES_FILE
//!     CLIENTS threads for SECONDS; even-numbered clients write (remember a new
//!     subject), odd-numbered ones retrieve (a query from QUERIES_FILE, one a line)
//! load jobs URL KEY NAMESPACE COUNT
//!     COUNT `log` jobs from one key, each polled to its end (a 429 is waited out)
//! ```
//!
//! The URL must be a loopback address: this is a tool for one's own machine.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .new_agent()
}

/// (status, body) of one request.
fn send(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    key: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let auth = format!("Bearer {key}");
    let reply = match (method, body) {
        ("GET", _) => agent.get(url).header("authorization", &auth).call(),
        ("DELETE", _) => agent.delete(url).header("authorization", &auth).call(),
        (_, b) => agent
            .post(url)
            .header("authorization", &auth)
            .header("content-type", "application/json")
            .send(b.map(Value::to_string).unwrap_or_default()),
    };
    match reply {
        Ok(mut r) => {
            let status = r.status().as_u16();
            let text = r.body_mut().read_to_string().unwrap_or_default();
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        }
        Err(e) => {
            eprintln!("request failed: {e}");
            (0, Value::Null)
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(name: &str, mut ms: Vec<f64>) -> Value {
    ms.sort_by(f64::total_cmp);
    json!({
        "kind": name,
        "count": ms.len(),
        "p50_ms": percentile(&ms, 0.50),
        "p90_ms": percentile(&ms, 0.90),
        "p99_ms": percentile(&ms, 0.99),
        "max_ms": ms.last().copied().unwrap_or(0.0),
    })
}

struct Client {
    writes: Vec<f64>,
    reads: Vec<f64>,
    statuses: std::collections::BTreeMap<u16, usize>,
}

fn mixed(
    url: &str,
    key: &str,
    ns: &str,
    clients: usize,
    seconds: f64,
    queries: &[String],
) -> Value {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let results: Vec<Client> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                scope.spawn(move || {
                    let agent = agent();
                    let mut me = Client {
                        writes: Vec::new(),
                        reads: Vec::new(),
                        statuses: Default::default(),
                    };
                    let mut n = 0usize;
                    while Instant::now() < deadline {
                        n += 1;
                        let t = Instant::now();
                        let status = if c % 2 == 0 {
                            let body = json!({
                                "title": format!("load note {c} {n}"),
                                "topic": format!("load/c{c}"),
                                "body": format!("Client {c} wrote note {n} about the rollout of service {} in region {}.", n % 17, n % 5),
                                "cue": [format!("what did client {c} write in note {n}")],
                            });
                            let (s, _) = send(&agent, "POST", &format!("{url}/v1/namespaces/{ns}/memories"), key, Some(&body));
                            me.writes.push(t.elapsed().as_secs_f64() * 1e3);
                            s
                        } else {
                            let q = &queries[(c * 7919 + n) % queries.len()];
                            let encoded: String = q
                                .bytes()
                                .map(|b| match b {
                                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
                                    _ => format!("%{b:02X}"),
                                })
                                .collect();
                            let (s, _) = send(&agent, "GET", &format!("{url}/v1/namespaces/{ns}/retrieve?q={encoded}"), key, None);
                            me.reads.push(t.elapsed().as_secs_f64() * 1e3);
                            s
                        };
                        *me.statuses.entry(status).or_default() += 1;
                    }
                    me
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut writes = Vec::new();
    let mut reads = Vec::new();
    let mut statuses = std::collections::BTreeMap::new();
    for r in results {
        writes.extend(r.writes);
        reads.extend(r.reads);
        for (s, n) in r.statuses {
            *statuses.entry(s.to_string()).or_insert(0usize) += n;
        }
    }
    let total = writes.len() + reads.len();
    json!({
        "clients": clients,
        "seconds": elapsed,
        "requests": total,
        "requests_per_second": total as f64 / elapsed,
        "writes": summary("write", writes),
        "retrieves": summary("retrieve", reads),
        "statuses": statuses,
    })
}

fn jobs(url: &str, key: &str, ns: &str, count: usize) -> Value {
    let agent = agent();
    let started = Instant::now();
    let (mut accepted, mut refused, mut failed) = (0, 0, 0);
    let mut statuses = std::collections::BTreeMap::new();
    while accepted < count {
        let (s, body) = send(
            &agent,
            "POST",
            &format!("{url}/v1/namespaces/{ns}/jobs"),
            key,
            Some(&json!({"op": "log"})),
        );
        *statuses.entry(s.to_string()).or_insert(0usize) += 1;
        match s {
            202 => {
                accepted += 1;
                let id = body["result"]["id"].as_str().unwrap_or_default().to_owned();
                loop {
                    let (s, job) = send(&agent, "GET", &format!("{url}/v1/jobs/{id}"), key, None);
                    if s != 200 || !matches!(job["result"]["status"].as_str(), Some("running")) {
                        if job["result"]["status"] != "succeeded" {
                            failed += 1;
                        }
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            429 => {
                refused += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                failed += 1;
                if failed > 100 {
                    break;
                }
            }
        }
    }
    json!({
        "jobs": accepted,
        "refused_429": refused,
        "failed": failed,
        "seconds": started.elapsed().as_secs_f64(),
        "statuses": statuses,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: load mixed URL KEY NS CLIENTS SECONDS QUERIES | load jobs URL KEY NS COUNT";
    let Some(mode) = args.get(1) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let url = args.get(2).map(String::as_str).unwrap_or_default();
    if !(url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:")) {
        eprintln!(
            "load: {url:?} is not a loopback address; this tool only loads one's own machine"
        );
        std::process::exit(2);
    }
    let (key, ns) = (
        args.get(3).cloned().unwrap_or_default(),
        args.get(4).cloned().unwrap_or_default(),
    );
    let number = |i: usize| -> f64 { args.get(i).and_then(|s| s.parse().ok()).unwrap_or(0.0) };
    let report = match mode.as_str() {
        "mixed" => {
            let queries: Vec<String> = args
                .get(7)
                .and_then(|p| std::fs::read_to_string(p).ok())
                .map(|t| {
                    t.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if queries.is_empty() {
                eprintln!("load mixed: no queries in {:?}", args.get(7));
                std::process::exit(2);
            }
            mixed(
                url,
                &key,
                &ns,
                number(5).max(1.0) as usize,
                number(6).max(1.0),
                &queries,
            )
        }
        "jobs" => jobs(url, &key, &ns, number(5).max(1.0) as usize),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&report).unwrap_or_default()
    );
}
