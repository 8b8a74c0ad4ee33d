//! The `gitloom` binary, driven the way a user drives it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn gitloom(repo: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gitloom"));
    cmd.arg("--repo")
        .arg(repo)
        .args(args)
        .env_remove("GITLOOM_REPO");
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("gitloom runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("gitloom finishes")
}

fn ok(repo: &Path, args: &[&str], stdin: Option<&[u8]>) -> String {
    let out = gitloom(repo, args, stdin);
    assert!(
        out.status.success(),
        "gitloom {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 stdout")
}

fn json(repo: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(repo, &all, None)).expect("valid JSON on stdout")
}

fn memory(title: &str, body: &str) -> String {
    format!("---\ntitle: {title}\ncues:\n  - where do I work\n---\n{body}\n")
}

#[test]
fn a_user_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("mem");
    ok(&repo, &["init"], None);
    ok(
        &repo,
        &["write", "facts/work/orbital-ai.md"],
        Some(memory("Works at Orbital AI", "ML engineer on the inference team.").as_bytes()),
    );
    ok(
        &repo,
        &[
            "remember",
            "--title",
            "Cat called Mellob",
            "--topic",
            "pets",
            "--cue",
            "what is my cat called",
            "--entity",
            "Mellob (pet)",
            "--body",
            "A grey cat.",
        ],
        None,
    );

    let r = json(&repo, &["retrieve", "where do i work"]);
    for key in ["query", "hits", "abstained", "timings_ms", "build"] {
        assert!(r.get(key).is_some(), "retrieve --json lacks {key}: {r}");
    }
    let hit = &r["hits"][0];
    assert_eq!(hit["path"], "facts/work/orbital-ai.md");
    for key in ["path", "title", "score", "arms", "snippet"] {
        assert!(hit.get(key).is_some(), "hit lacks {key}: {hit}");
    }
    assert!(hit["arms"]["lexical"]["score"].as_f64().expect("score") > 0.0);
    assert_eq!(hit["arms"]["lexical"]["rank"], 1);
    assert!(r["timings_ms"]["total"].is_number() && r["timings_ms"]["lexical"].is_number());
    assert!(r["build"].as_str().expect("build").contains('+'));

    let none = json(&repo, &["retrieve", "who is bruno"]);
    assert_eq!(none["abstained"], true);
    assert_eq!(none["hits"].as_array().expect("hits").len(), 0);

    let s = json(&repo, &["sync"]);
    for key in ["visited_entries", "changed_files", "ms"] {
        assert!(s.get(key).is_some(), "sync --json lacks {key}: {s}");
    }
    let stats = json(&repo, &["stats"]);
    assert_eq!(stats["files"], 2);
    assert!(json(&repo, &["tree"]).is_object());
    assert!(json(&repo, &["topics"]).is_array());
    let log = json(&repo, &["log"]);
    assert_eq!(log.as_array().expect("log").len(), 3);
    let got = ok(&repo, &["get", "facts/pets/cat-called-mellob.md"], None);
    assert!(got.contains("Mellob"));
    let first = log[1]["commit"].as_str().expect("commit").to_owned();
    let old = gitloom(
        &repo,
        &["get", "facts/pets/cat-called-mellob.md", "--at", &first],
        None,
    );
    assert!(
        !old.status.success(),
        "the cat did not exist yet at {first}"
    );
    ok(&repo, &["rebuild"], None);
    let again = json(&repo, &["retrieve", "where do i work"]);
    assert_eq!(again["hits"][0]["path"], "facts/work/orbital-ai.md");
}

#[test]
fn errors_are_clear_and_exit_nonzero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("mem");
    let out = gitloom(&repo, &["stats"], None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error:") && err.contains("mem"), "{err}");

    ok(&repo, &["init"], None);
    let out = gitloom(
        &repo,
        &["write", "facts/bad.md"],
        Some(b"---\ntitle: [oops\n---\n"),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("facts/bad.md"), "{err}");
    let out = gitloom(
        &repo,
        &["write", "../escape.md"],
        Some(memory("x", "y").as_bytes()),
    );
    assert!(!out.status.success());
    assert_eq!(
        json(&repo, &["log"]).as_array().expect("log").len(),
        1,
        "nothing was committed"
    );
    // A cause is said once, not once by the message and again by the chain.
    let missing = dir.path().join("missing.json");
    let out = gitloom(
        &repo,
        &["eval", "locomo", missing.to_str().expect("utf-8 path")],
        None,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing.json"), "{err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
}

#[test]
fn separate_processes_racing_lose_no_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("mem");
    ok(&repo, &["init"], None);
    let children: Vec<_> = (0..6)
        .map(|i| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_gitloom"))
                .arg("--repo")
                .arg(&repo)
                .args(["write", &format!("facts/race/m{i}.md")])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(memory(&format!("racer {i}"), "x").as_bytes())
                .expect("stdin");
            child
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let stats = json(&repo, &["stats"]);
    assert_eq!(stats["files"], 6, "every acknowledged write is at HEAD");
}

#[test]
fn global_retrieval_flags_reach_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("mem");
    ok(&repo, &["--embedder", "none", "init"], None);
    ok(
        &repo,
        &["--embedder", "none", "write", "facts/work/orbital-ai.md"],
        Some(memory("Works at Orbital AI", "ML engineer.").as_bytes()),
    );
    // No semantic arm ran, so no query embedding was timed.
    let r = json(
        &repo,
        &["--embedder", "none", "retrieve", "orbital engineer"],
    );
    assert!(r["timings_ms"].get("embed_query").is_none(), "{r}");
    // A settings file is read, and a bad one is a clear error naming it.
    let cfg = dir.path().join("cfg.json");
    std::fs::write(&cfg, r#"{"depht": 3}"#).expect("write");
    let out = gitloom(
        &repo,
        &[
            "--embedder",
            "none",
            "--config",
            cfg.to_str().expect("utf-8"),
            "retrieve",
            "x",
        ],
        None,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cfg.json") && err.contains("depht"), "{err}");
    // An unknown embedder is refused.
    assert!(
        !gitloom(&repo, &["--embedder", "bert", "stats"], None)
            .status
            .success()
    );
}

#[test]
fn sync_reports_a_commit_made_with_git_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("mem");
    ok(&repo, &["--embedder", "none", "init"], None);
    ok(
        &repo,
        &["--embedder", "none", "write", "facts/a/one.md"],
        Some(memory("One", "first").as_bytes()),
    );
    // The user edits and commits by hand, as git users do.
    std::fs::write(
        repo.join("facts/a/one.md"),
        memory("One", "edited by hand with zeppelins"),
    )
    .expect("edit");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&[
        "-c",
        "user.name=u",
        "-c",
        "user.email=u@x",
        "commit",
        "-qam",
        "edit by hand",
    ]);
    let s = json(&repo, &["--embedder", "none", "sync"]);
    assert_eq!(s["changed_files"], 1, "{s}");
    assert!(s["visited_entries"].as_u64().expect("n") > 0);
    let r = json(&repo, &["--embedder", "none", "retrieve", "zeppelins"]);
    assert_eq!(r["hits"][0]["path"], "facts/a/one.md");
}

/// `retrieve --now` asks as of another moment: a relative date in the question
/// ("last friday") counts back from it, so the memory of that Friday is the one the
/// date prior lifts. A bad moment is refused by name, and search, which has no time,
/// refuses it rather than ignore it.
#[test]
fn retrieve_asks_as_of_the_moment_given() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("mem");
    ok(&repo, &["init"], None);
    for (path, title, day) in [
        (
            "incidents/hardware/pc-shutdown.md",
            "The PC switched off mid-run",
            "2026-08-14",
        ),
        (
            "incidents/hardware/pc-blue-screen.md",
            "The PC crashed to a blue screen",
            "2026-07-03",
        ),
    ] {
        let file = format!(
            "---\ntitle: {title}\ncreated: {day}T20:00:00Z\n---\nOn {day}, a Friday, something went wrong with my PC.\n"
        );
        ok(&repo, &["write", path], Some(file.as_bytes()));
    }
    let lifted = |now: &str| -> Vec<String> {
        let r = json(
            &repo,
            &[
                "retrieve",
                "what went wrong with my pc last friday",
                "--now",
                now,
            ],
        );
        r["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .filter(|h| {
                h["priors"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|x| x == "when"))
            })
            .map(|h| h["path"].as_str().expect("path").to_owned())
            .collect()
    };
    assert_eq!(
        lifted("2026-08-20T12:00:00Z"),
        ["incidents/hardware/pc-shutdown.md"]
    );
    assert_eq!(
        lifted("2026-07-08"),
        ["incidents/hardware/pc-blue-screen.md"]
    );

    let bad = gitloom(
        &repo,
        &["retrieve", "anything", "--now", "next tuesday"],
        None,
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("--now"), "{err}");
    let search = gitloom(&repo, &["search", "pc", "--now", "2026-07-08"], None);
    let err = String::from_utf8_lossy(&search.stderr);
    assert!(!search.status.success() && err.contains("--now"), "{err}");
}
