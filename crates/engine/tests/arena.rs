//! The persisted vector arena: written by sync, kept in step with every change (equal,
//! byte for byte, to a fresh build), opened in place by a cold process, rebuilt when
//! missing, stale or damaged. Uses a deterministic word-hashing embedder so it runs
//! without a model installed.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{WordHashing, git, memory};
use gitloom_engine::embed::{EmbedError, Embedder, StoredArena};
use gitloom_engine::{ArenaUpdate, EmbedderChoice, Engine, EngineOptions, RetrieveRequest};

/// The shared word-hashing embedder, counting the calls made to it.
#[derive(Default)]
struct Hashing {
    calls: AtomicUsize,
}

impl Embedder for Hashing {
    fn model_id(&self) -> &str {
        WordHashing.model_id()
    }
    fn dim(&self) -> usize {
        WordHashing.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        WordHashing.embed(texts)
    }
    fn max_tokens(&self) -> usize {
        WordHashing.max_tokens()
    }
}

fn options(e: &Arc<Hashing>) -> EngineOptions {
    EngineOptions {
        embedder: EmbedderChoice::Given(e.clone()),
        ..Default::default()
    }
}

fn arena_file(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir.join(".gitloom"))
        .expect("list .gitloom")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("arena-") && n.ends_with(".bin"))
        })
        .collect();
    assert_eq!(found.len(), 1, "one arena file: {found:?}");
    found[0].clone()
}

fn file(title: &str, cue: &str, body: &str) -> Vec<u8> {
    format!("---\ntitle: {title}\ncues: [{cue}]\ncreated: 2026-01-01T00:00:00Z\n---\n{body}\n## Notes\nMore about {title}.\n")
        .into_bytes()
}

/// A new store with one memory (a cat) written through the engine, so synced.
fn store_with_a_cat(e: &Arc<Hashing>) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(dir.path(), options(e)).expect("init");
    engine
        .write(
            "facts/pets/cat.md",
            &file("The cat", "what pet do I have", "A grey cat called Mellob."),
            None,
        )
        .expect("write");
    (dir, engine)
}

fn top_paths(engine: &Engine, q: &str) -> Vec<String> {
    engine
        .retrieve(&RetrieveRequest::new(q))
        .expect("retrieve")
        .hits
        .into_iter()
        .map(|h| h.path)
        .collect()
}

#[test]
fn sync_keeps_the_arena_equal_to_a_fresh_build() {
    let e = Arc::new(Hashing::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(dir.path(), options(&e)).expect("init");
    let topics = ["pets", "work", "home", "travel"];
    let files: Vec<(String, Vec<u8>)> = (0..40)
        .map(|i| {
            (
                format!("facts/{}/note-{i:02}.md", topics[i % 4]),
                file(
                    &format!("Note {i} about {}", topics[i % 4]),
                    &format!("what about {} number {i}", topics[i % 4]),
                    &format!(
                        "The {} note {i} says something about item {}.",
                        topics[i % 4],
                        i * 7
                    ),
                ),
            )
        })
        .collect();
    // The store's first commit (its .gitignore) was synced when it was created, with
    // an empty arena: every write after that is merged into the previous arena.
    for (i, (p, c)) in files.iter().enumerate() {
        let out = engine.write(p, c, None).expect("write");
        let want = ArenaUpdate::Merged;
        assert_eq!(
            out.sync.arena,
            want,
            "write {i}: {:?} {:?}",
            out.sync,
            engine.take_warnings()
        );
    }
    let path = arena_file(dir.path());
    let stored = StoredArena::open(&path).expect("arena written by sync");
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    assert!(
        stored.tag.ends_with(head.trim()),
        "tag {} names HEAD",
        stored.tag
    );
    // 40 files × (one cue + two sections) = 120 units.
    assert_eq!(stored.labels.len(), 120);

    // Hand edits committed with git, a deletion, a new file, then one sync.
    std::fs::write(
        dir.path().join("facts/work/note-01.md"),
        file(
            "Note 1 rewritten",
            "what changed at work",
            "A new body for note one.",
        ),
    )
    .expect("edit");
    std::fs::write(
        dir.path().join("facts/aaa-first.md"),
        file(
            "First of all",
            "what comes first",
            "Sorted before every other path.",
        ),
    )
    .expect("add");
    std::fs::write(
        dir.path().join("facts/zzz-last.md"),
        memory("Last of all", "Sorted after every other path, no sections."),
    )
    .expect("add");
    git(dir.path(), &["rm", "-q", "facts/home/note-02.md"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "hand edits"]);
    let report = engine.sync().expect("sync");
    assert_eq!(report.changed_files, 4);
    assert_eq!(report.arena, ArenaUpdate::Merged, "{report:?}");
    let synced = std::fs::read(&path).expect("read arena");

    // A fresh build from nothing: delete the arena and the index, open, query.
    drop(engine);
    std::fs::remove_file(&path).expect("delete arena");
    std::fs::remove_file(dir.path().join(".gitloom/index.db")).expect("delete index");
    let engine = Engine::open_with(dir.path(), options(&e)).expect("reopen");
    assert!(!top_paths(&engine, "what changed at work").is_empty());
    let fresh = std::fs::read(&path).expect("rebuilt arena");
    assert!(
        synced == fresh,
        "the synced arena differs from a fresh build"
    );
}

#[test]
fn a_cold_process_uses_the_stored_arena_and_rebuilds_a_stale_or_damaged_one() {
    let e = Arc::new(Hashing::default());
    let (dir, engine) = store_with_a_cat(&e);
    engine
        .write(
            "facts/work/job.md",
            &file("The job", "where do I work", "An engineer at Orbital."),
            None,
        )
        .expect("write");
    let want = top_paths(&engine, "what pet do I have");
    drop(engine);
    let path = arena_file(dir.path());
    let ino = std::fs::metadata(&path).expect("stat").ino();

    // Cold: the stored arena is used as it is (not rewritten), with the same answer.
    let engine = Engine::open_with(dir.path(), options(&e)).expect("open");
    assert_eq!(top_paths(&engine, "what pet do I have"), want);
    assert_eq!(
        std::fs::metadata(&path).expect("stat").ino(),
        ino,
        "rewritten"
    );
    drop(engine);

    // Damaged: refused, rebuilt, same answer.
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&path, &bytes).expect("damage");
    let engine = Engine::open_with(dir.path(), options(&e)).expect("open");
    assert_eq!(top_paths(&engine, "what pet do I have"), want);
    assert!(StoredArena::open(&path).is_ok(), "rebuilt whole");
    drop(engine);

    // Stale: a commit made by hand that no gitloom process synced; the arena still
    // names the old commit, so the next query's sync brings it forward.
    std::fs::write(
        dir.path().join("facts/pets/dog.md"),
        file(
            "The dog",
            "what pet do I have",
            "A dog called Rex, and a pet.",
        ),
    )
    .expect("add");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "a dog"]);
    let engine = Engine::open_with(dir.path(), options(&e)).expect("open");
    assert!(top_paths(&engine, "what pet do I have").contains(&"facts/pets/dog.md".to_owned()));
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    let stored = StoredArena::open(&path).expect("arena");
    assert!(stored.tag.ends_with(head.trim()));
}

/// The word-hashing embedder under another model id, as a model whose vectors changed.
struct Renamed;

impl Embedder for Renamed {
    fn model_id(&self) -> &str {
        "word-hashing/renamed"
    }
    fn dim(&self) -> usize {
        WordHashing.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        WordHashing.embed(texts)
    }
    fn max_tokens(&self) -> usize {
        WordHashing.max_tokens()
    }
}

#[test]
fn a_new_model_re_embeds_with_progress_and_replaces_the_old_arena_file() {
    let e = Arc::new(Hashing::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::init_with(dir.path(), options(&e)).expect("init");
    engine
        .write(
            "facts/pets/miso.md",
            &file("Miso", "what is my cat called", "A grey cat."),
            None,
        )
        .expect("write");
    let old = arena_file(dir.path());
    drop(engine);
    let renamed = EngineOptions {
        embedder: EmbedderChoice::Given(Arc::new(Renamed)),
        ..Default::default()
    };
    // The new model's first query embeds every text again, and says so.
    let reported = Arc::new(AtomicUsize::new(0));
    let seen = reported.clone();
    let progress = Box::new(move |_: &str, _: usize, _: usize| {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    let engine = Engine::open_with_progress(dir.path(), renamed, Some(progress)).expect("open");
    assert_eq!(
        top_paths(&engine, "what is my cat called"),
        ["facts/pets/miso.md"]
    );
    assert!(
        reported.load(Ordering::SeqCst) > 0,
        "re-embedding at query time reports its progress"
    );
    let new = arena_file(dir.path());
    assert_ne!(new, old, "the renamed model has its own arena file");
    assert!(!old.exists(), "the old model's arena file is removed");
}

#[test]
fn a_merge_that_cannot_be_written_is_kept_in_memory_and_answers_the_same() {
    let e = Arc::new(Hashing::default());
    let (dir, engine) = store_with_a_cat(&e);
    // A directory where the arena file goes: the merged file cannot be renamed into
    // place, so the sync keeps the merged arena in memory.
    let path = arena_file(dir.path());
    std::fs::remove_file(&path).expect("remove arena");
    std::fs::create_dir(&path).expect("a directory in its place");
    std::fs::write(path.join("keep"), b"x").expect("fill it");
    let out = engine
        .write(
            "facts/pets/dog.md",
            &file("The dog", "which dog do I have", "A dog called Rex."),
            None,
        )
        .expect("write");
    assert_eq!(out.sync.arena, ArenaUpdate::Merged, "{:?}", out.sync);
    let hits = top_paths(&engine, "which dog do I have");
    assert_eq!(hits.first().map(String::as_str), Some("facts/pets/dog.md"));
    assert!(path.is_dir(), "the directory is left as it was");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join(".gitloom"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    drop(engine);

    // Once the path is free again, a cold process writes the arena and answers the same.
    std::fs::remove_dir_all(&path).expect("remove the directory");
    let engine = Engine::open_with(dir.path(), options(&e)).expect("open");
    assert_eq!(top_paths(&engine, "which dog do I have"), hits);
    assert!(StoredArena::open(&arena_file(dir.path())).is_ok());
}
