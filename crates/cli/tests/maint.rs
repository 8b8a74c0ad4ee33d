//! `gitloom gc`, `doctor` and `consolidate`, driven the way a user drives them.

#[path = "torture/common.rs"]
mod common;

use common::{git, memory, new_store, ok, run};
use serde_json::Value;

#[test]
fn gc_doctor_and_consolidate_from_the_command_line() {
    let repo = new_store();
    let dir = repo.path();
    let incident = "---\ntitle: Build server outage\ncreated: 2026-01-01T00:00:00Z\nttl: 7d\n---\nThe build server was down.\n";
    ok(
        dir,
        &["write", "incidents/ops/outage.md"],
        incident.as_bytes(),
    );
    for (i, body) in [
        "Rohan works at Orbital AI on the inference team.",
        "Rohan works at Orbital AI on the inference team now.",
    ]
    .iter()
    .enumerate()
    {
        ok(
            dir,
            &["write", &format!("facts/work/orbital-{i}.md")],
            memory("Works at Orbital AI", body).as_bytes(),
        );
    }

    // gc: the dry run names the incident and changes nothing; the real run commits.
    let dry: Value =
        serde_json::from_str(&ok(dir, &["--json", "gc", "--dry-run"], b"")).expect("json");
    assert_eq!(dry["expired"][0]["path"], "incidents/ops/outage.md");
    assert!(dry["commit"].is_null());
    let text = ok(dir, &["gc", "--no-repack"], b"");
    assert!(text.contains("expired 1 incident(s)"), "{text}");
    assert!(git(dir, &["log", "-1", "--format=%s"]).starts_with("gc: expire 1"));
    let repacked = ok(dir, &["gc", "--repack"], b"");
    assert!(repacked.contains("repacked:"), "{repacked}");

    // consolidate: plan, then do it.
    let plan = ok(dir, &["consolidate", "--dry-run"], b"");
    assert!(plan.contains("would merge 1 cluster(s)"), "{plan}");
    assert!(plan.contains("retire facts/work/orbital-1.md"), "{plan}");
    let done: Value =
        serde_json::from_str(&ok(dir, &["--json", "consolidate"], b"")).expect("json");
    assert!(done["commit"].is_string(), "{done}");

    // doctor: healthy, then a damaged index is reported with exit status 1.
    let report: Value = serde_json::from_str(&ok(dir, &["--json", "doctor"], b"")).expect("json");
    assert_eq!(report["ok"], true, "{report}");
    let db = rusqlite::Connection::open(dir.join(".gitloom/index.db")).expect("open index");
    db.execute("UPDATE files SET title = 'tampered'", [])
        .expect("tamper");
    drop(db);
    let out = run(dir, &["--json", "doctor"], b"");
    assert!(!out.status.success(), "doctor passed a tampered index");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["ok"], false);
    assert_eq!(report["problems"][0]["check"], "index", "{report}");
    ok(dir, &["rebuild"], b"");
    let report: Value = serde_json::from_str(&ok(dir, &["--json", "doctor"], b"")).expect("json");
    assert_eq!(report["ok"], true, "{report}");
}
