//! The remote layer against a real S3 server (SeaweedFS `weed mini` in CI): the
//! server itself must refuse a stale ETag (412) and a create over an existing head,
//! or these races would overwrite. Needs GITLOOM_TEST_S3 (endpoint),
//! GITLOOM_TEST_S3_BUCKET (default gitloom-test) and AWS credentials; skipped with
//! the reason printed otherwise.

use gitloom_engine::{EmbedderChoice, EngineOptions};
use gitloom_remote::{Location, Namespace, RemoteNamespace};

fn location(test: &str) -> Option<Location> {
    let Ok(endpoint) = std::env::var("GITLOOM_TEST_S3") else {
        eprintln!("{test}: skipped: GITLOOM_TEST_S3 is not set (no S3 server to test against)");
        return None;
    };
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        eprintln!("{test}: skipped: AWS_ACCESS_KEY_ID is not set");
        return None;
    }
    let bucket =
        std::env::var("GITLOOM_TEST_S3_BUCKET").unwrap_or_else(|_| "gitloom-test".to_owned());
    let url = format!("s3://{bucket}/lib-{test}-{:08x}", fastrand::u32(..));
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
    Some(
        Location::from_url_with(
            &url,
            &[
                ("aws_endpoint", endpoint.as_str()),
                ("aws_allow_http", "true"),
                ("aws_region", region.as_str()),
            ],
        )
        .expect("location"),
    )
}

fn node(location: &Location, cache: &std::path::Path) -> RemoteNamespace {
    let options = EngineOptions {
        embedder: EmbedderChoice::None,
        ..EngineOptions::default()
    };
    RemoteNamespace::open(
        location,
        Namespace::parse("race").expect("ns"),
        cache,
        options,
    )
    .expect("opens")
}

fn write(n: &RemoteNamespace, path: &str, title: &str) -> gitloom_remote::Pushed {
    let content = format!("---\ntitle: {title}\n---\n{title}.\n").into_bytes();
    n.write(|e| e.write(path, &content, None))
        .expect("acknowledged")
}

#[test]
fn the_server_refuses_a_create_over_an_existing_head_and_a_stale_etag() {
    let Some(location) = location("races") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let a = node(&location, &dir.path().join("a"));
    let b = node(&location, &dir.path().join("b"));

    // a creates the head while b's first write runs: b's create-only PUT must be
    // refused and b replays on a's head instead of replacing it.
    let raced = std::cell::Cell::new(false);
    let content = b"---\ntitle: From b\n---\nFrom b.\n".to_vec();
    let first = b
        .write(|e| {
            if !raced.replace(true) {
                write(&a, "facts/a.md", "From a");
            }
            e.write("facts/b.md", &content, None)
        })
        .expect("b lands");
    assert_eq!(
        (first.generation, first.attempts),
        (Some(2), 2),
        "{first:?}"
    );

    // Now b moves the head while a's write runs: a's If-Match holds a stale ETag.
    let raced = std::cell::Cell::new(false);
    let content = b"---\ntitle: From a again\n---\nAgain.\n".to_vec();
    let second = a
        .write(|e| {
            if !raced.replace(true) {
                write(&b, "facts/b2.md", "From b again");
            }
            e.write("facts/a2.md", &content, None)
        })
        .expect("a lands");
    assert_eq!(
        (second.generation, second.attempts),
        (Some(4), 2),
        "{second:?}"
    );

    let c = node(&location, &dir.path().join("c"));
    for p in ["facts/a.md", "facts/b.md", "facts/b2.md", "facts/a2.md"] {
        assert!(c.engine().get(p, None).is_ok(), "{p} lost");
    }
    assert_eq!(c.opening().generation, 4);
}
