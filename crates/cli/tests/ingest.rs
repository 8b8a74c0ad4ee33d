//! `gitloom ingest`, driven the way a user drives it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn gitloom(repo: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gitloom"));
    cmd.arg("--repo")
        .arg(repo)
        .args(["--embedder", "none"])
        .args(args)
        .env_remove("GITLOOM_REPO")
        .env_remove("GITLOOM_LLM_URL");
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

fn commits(repo: &Path) -> usize {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-list", "--count", "HEAD"])
        .output()
        .expect("git");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a count")
}

#[test]
fn ingest_from_stdin_offline_then_again_changes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path();
    assert!(gitloom(repo, &["init"], None).status.success());
    let chat = br#"{"date": "2026-07-30", "messages": [
        {"role": "user", "content": "I accepted an offer from Orbital AI this morning. I start Monday 3 August. My manager is Lena Fischer."},
        {"role": "assistant", "content": "Congratulations!"}]}"#;
    let out = gitloom(repo, &["--json", "ingest", "-"], Some(chat));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["commits"], 1);
    assert!(report["new"].as_u64().is_some_and(|n| n >= 1), "{report}");
    let session = &report["sessions"][0];
    assert!(
        session["transcript"]
            .as_str()
            .is_some_and(|t| t.starts_with("sessions/2026-07-30/chat-"))
    );
    assert_eq!(commits(repo), 2);

    let out = gitloom(repo, &["retrieve", "where do i work"], None);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Orbital AI"));

    let out = gitloom(repo, &["ingest", "-"], Some(chat));
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("already ingested"));
    assert_eq!(commits(repo), 2);
}

#[test]
fn bad_input_names_the_field_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path();
    assert!(gitloom(repo, &["init"], None).status.success());
    let file = repo.join("bad.json");
    std::fs::write(
        &file,
        r#"[{"id": "a", "date": "2026-13-45", "messages": []}]"#,
    )
    .expect("write");
    let out = gitloom(repo, &["ingest", file.to_str().expect("utf-8 path")], None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json") && err.contains("sessions[0].date"),
        "{err}"
    );
    assert_eq!(commits(repo), 1);
}
