//! Namespaces over an in-process object store (`InMemory` implements create-only
//! puts and ETag-conditional updates the way S3 does), exercising the public API:
//! several mirrors ("nodes") over one store, races, folds, corruption.

use std::path::Path;
use std::sync::Arc;

use gitloom_engine::{EmbedderChoice, EngineOptions};
use gitloom_remote::{Head, Location, MAX_PACKS, Namespace, RemoteError, RemoteNamespace};
use object_store::ObjectStoreExt;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;

fn options() -> EngineOptions {
    EngineOptions {
        embedder: EmbedderChoice::None,
        ..EngineOptions::default()
    }
}

fn node(location: &Location, ns: &str, cache: &Path) -> RemoteNamespace {
    RemoteNamespace::open(
        location,
        Namespace::parse(ns).expect("valid namespace"),
        cache,
        options(),
    )
    .expect("namespace opens")
}

fn memory(title: &str, body: &str) -> Vec<u8> {
    format!("---\ntitle: {title}\n---\n{body}\n").into_bytes()
}

fn write(n: &RemoteNamespace, path: &str, title: &str) -> gitloom_remote::Pushed {
    let content = memory(title, &format!("{title} body text."));
    n.write(|e| e.write(path, &content, None))
        .expect("write is acknowledged")
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn read_head(store: &InMemory, ns: &str) -> Head {
    let path = ObjectPath::from(format!("pfx/namespaces/{ns}/head.json"));
    let bytes = rt().block_on(async {
        store
            .get(&path)
            .await
            .expect("head exists")
            .bytes()
            .await
            .expect("head body")
    });
    serde_json::from_slice(&bytes).expect("head parses")
}

fn setup() -> (Arc<InMemory>, Location, tempfile::TempDir) {
    let store = Arc::new(InMemory::new());
    let location = Location::new("mem://test", store.clone(), "pfx").expect("location");
    (store, location, tempfile::tempdir().expect("tempdir"))
}

#[test]
fn a_namespace_handle_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RemoteNamespace>();
    assert_send_sync::<gitloom_remote::Storage>();
}

#[test]
fn a_write_through_one_node_is_read_through_another_on_the_next_operation() {
    let (store, location, dir) = setup();
    let a = node(&location, "team", &dir.path().join("a"));
    let b = node(&location, "team", &dir.path().join("b"));
    assert!(b.engine().log(None, None).expect("log").is_empty());

    let pushed = write(&a, "facts/work/orbital.md", "Works at Orbital");
    assert_eq!(pushed.generation, Some(1));
    assert_eq!(pushed.attempts, 1);
    let head = read_head(&store, "team");
    assert_eq!(Some(head.commit.clone()), pushed.outcome.commit);

    let r = b.revalidate().expect("revalidates");
    assert!(r.changed);
    assert_eq!(r.fetched_packs, 1);
    let got = b
        .engine()
        .get("facts/work/orbital.md", None)
        .expect("read on b");
    assert!(got.content.contains("Works at Orbital"));
    // The first commit of the namespace is the same one a local store starts with.
    let log = b.engine().log(None, None).expect("log");
    assert_eq!(
        log.last().map(|e| e.summary.as_str()),
        Some("init: gitloom store")
    );
    let stats = b.engine().stats().expect("stats");
    assert_eq!(stats.files, 1, "{stats:?}");

    // Unchanged head: nothing fetched, nothing synced.
    let again = b.revalidate().expect("revalidates");
    assert!(!again.changed);
    assert_eq!(again.fetched_packs, 0);
    assert!(again.sync.is_none());

    // A third node cold-starts from the bucket alone.
    let c = node(&location, "team", &dir.path().join("c"));
    assert!(c.engine().get("facts/work/orbital.md", None).is_ok());
}

#[test]
fn a_lost_race_is_replayed_on_the_new_head_and_overwrites_no_one() {
    let (store, location, dir) = setup();
    let a = node(&location, "ns", &dir.path().join("a"));
    let b = node(&location, "ns", &dir.path().join("b"));
    write(&a, "facts/a0.md", "A zero");
    // While b's write runs (after b read the head), a moves the head: b's CAS holds a
    // stale ETag and must lose, then b replays on a's head.
    let raced = std::cell::Cell::new(false);
    let content = memory("B one", "b body");
    let pushed = b
        .write(|e| {
            if !raced.replace(true) {
                write(&a, "facts/a1.md", "A one");
            }
            e.write("facts/b1.md", &content, None)
        })
        .expect("b's write lands");
    assert_eq!(pushed.attempts, 2, "the first CAS must lose");
    assert_eq!(pushed.generation, Some(3));
    let head = read_head(&store, "ns");
    assert_eq!(head.generation, 3);
    for p in ["facts/a0.md", "facts/a1.md", "facts/b1.md"] {
        assert!(b.engine().get(p, None).is_ok(), "{p} missing on b");
    }
    a.revalidate().expect("a follows");
    for p in ["facts/a0.md", "facts/a1.md", "facts/b1.md"] {
        assert!(a.engine().get(p, None).is_ok(), "{p} missing on a");
    }
}

#[test]
fn concurrent_writers_on_several_nodes_lose_no_acknowledged_write() {
    let (store, location, dir) = setup();
    let nodes: Vec<RemoteNamespace> = (0..3)
        .map(|i| node(&location, "busy", &dir.path().join(format!("n{i}"))))
        .collect();
    let acked: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|w| {
                let n = &nodes[w % nodes.len()];
                s.spawn(move || {
                    let p = write(n, &format!("facts/w{w}.md"), &format!("Writer {w}"));
                    p.outcome.commit.expect("a commit")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer thread"))
            .collect()
    });
    let head = read_head(&store, "busy");
    assert_eq!(head.generation, 8);
    let fresh = node(&location, "busy", &dir.path().join("fresh"));
    let log: Vec<String> = fresh
        .engine()
        .log(None, None)
        .expect("log")
        .into_iter()
        .map(|e| e.commit)
        .collect();
    for c in &acked {
        assert!(log.contains(c), "acknowledged commit {c} not in history");
    }
    for w in 0..8 {
        assert!(fresh.engine().get(&format!("facts/w{w}.md"), None).is_ok());
    }
    let fsck = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(dir.path().join("fresh").join(gitloom_remote::MIRROR_DIR))
        .args(["fsck", "--full", "--strict"])
        .output()
        .expect("git fsck runs");
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn packs_are_folded_past_the_limit_and_a_cold_node_still_sees_everything() {
    let (store, location, dir) = setup();
    let a = node(&location, "long", &dir.path().join("a"));
    let behind = node(&location, "long", &dir.path().join("behind"));
    for i in 0..=MAX_PACKS {
        write(&a, &format!("facts/m{i}.md"), &format!("Memory {i}"));
        if i == MAX_PACKS - 5 {
            behind.revalidate().expect("behind follows");
        }
    }
    let head = read_head(&store, "long");
    assert!(head.packs.len() <= MAX_PACKS, "{} packs", head.packs.len());
    // A node a few pushes behind fetches only the small recent packs, not the fold.
    let r = behind.revalidate().expect("catches up");
    assert!(r.fetched_packs <= 6, "{r:?}");
    assert!(
        behind
            .engine()
            .get(&format!("facts/m{MAX_PACKS}.md"), None)
            .is_ok()
    );
    let cold = node(&location, "long", &dir.path().join("cold"));
    assert_eq!(
        cold.engine().stats().expect("stats").files,
        (MAX_PACKS + 1) as u64
    );
}

#[test]
fn a_corrupt_pack_is_refused_by_name() {
    let (store, location, dir) = setup();
    let a = node(&location, "c", &dir.path().join("a"));
    write(&a, "facts/x.md", "X");
    let head = read_head(&store, "c");
    let path = ObjectPath::from(format!(
        "pfx/namespaces/c/packs/{}.pack",
        head.packs[0].name
    ));
    rt().block_on(async {
        store
            .put(&path, b"PACK garbage".to_vec().into())
            .await
            .expect("overwrite for the test")
    });
    let err = RemoteNamespace::open(
        &location,
        Namespace::parse("c").expect("ns"),
        &dir.path().join("cold"),
        options(),
    )
    .expect_err("a corrupt pack is refused");
    assert!(matches!(err, RemoteError::BadPack { .. }), "{err}");
    assert!(err.to_string().contains(&head.packs[0].name), "{err}");
}

#[test]
fn a_write_that_changes_nothing_pushes_nothing() {
    let (store, location, dir) = setup();
    let a = node(&location, "same", &dir.path().join("a"));
    // With `created:` given, the same bytes make the same blob: nothing to commit.
    let content = b"---\ntitle: Same\ncreated: 2026-01-01T00:00:00Z\n---\nsame body\n".to_vec();
    let first = a
        .write(|e| e.write("facts/same.md", &content, None))
        .expect("first");
    let second = a
        .write(|e| e.write("facts/same.md", &content, None))
        .expect("second");
    assert!(first.generation.is_some());
    assert_eq!(second.generation, None);
    assert_eq!(read_head(&store, "same").generation, 1);
}

#[test]
fn a_namespace_gone_from_the_bucket_leaves_no_stale_memories_in_the_mirror() {
    let (store, location, dir) = setup();
    let a = node(&location, "gone", &dir.path().join("a"));
    write(&a, "facts/x.md", "X");
    let path = ObjectPath::from("pfx/namespaces/gone/head.json");
    rt().block_on(async { store.delete(&path).await.expect("delete head") });
    let r = a.revalidate().expect("revalidates");
    assert!(r.changed && r.commit.is_none(), "{r:?}");
    assert!(a.engine().get("facts/x.md", None).is_err());
    assert_eq!(a.engine().stats().expect("stats").files, 0);
    let log = a.engine().log(None, None).expect("log");
    assert_eq!(
        log.len(),
        1,
        "only the first commit of a new store: {log:?}"
    );
    // Revalidating again changes nothing (no new commit each time).
    assert!(!a.revalidate().expect("again").changed);
    assert_eq!(a.engine().log(None, None).expect("log").len(), 1);
    // And the namespace can be written afresh.
    let p = write(&a, "facts/y.md", "Y");
    assert_eq!(p.generation, Some(1));
}

#[test]
fn a_write_that_changes_nothing_does_not_create_a_namespace() {
    let (store, location, dir) = setup();
    let a = node(&location, "empty", &dir.path().join("a"));
    let p = a.write(|e| e.delete("facts/none.md")).expect("a no-op");
    assert_eq!(p.generation, None);
    let path = ObjectPath::from("pfx/namespaces/empty/head.json");
    let found = rt().block_on(async { store.head(&path).await });
    assert!(found.is_err(), "a no-op created the namespace");
}
