//! The quality gate fails, and says what regressed, when retrieval falls below the
//! baseline. Retrieval "breaks" here by the baseline claiming better figures than
//! the engine delivers, which is exactly what a regression looks like to the gate.

use std::path::{Path, PathBuf};
use std::process::Command;

fn shared_data() -> Option<PathBuf> {
    let shared = std::env::var_os("GITLOOM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let data = shared.join("data");
    // Under CI missing data fails the test rather than letting it pass unchecked.
    assert!(
        data.join("probe").is_dir() || std::env::var_os("CI").is_none(),
        "test data {} is missing (set GITLOOM_SHARED to the folder holding data/)",
        data.display()
    );
    data.join("probe").is_dir().then_some(data)
}

#[test]
fn gate_passes_on_the_committed_baseline_and_fails_on_a_regression() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: shared/data not found");
        return;
    };
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/baseline.json");
    let text = std::fs::read_to_string(&baseline).expect("eval/baseline.json is committed");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("baseline is JSON");
    let p1 = value["probe"]["p_at_1"].as_f64().expect("probe p_at_1");
    let r10 = value["locomo_conv26"]["recall_at_10"]
        .as_f64()
        .expect("locomo recall_at_10");
    value["probe"]["p_at_1"] = serde_json::json!(p1 + 0.1);
    value["locomo_conv26"]["recall_at_10"] = serde_json::json!(r10 + 0.05);
    let dir = tempfile::tempdir().expect("tempdir");
    let tampered = dir.path().join("baseline.json");
    std::fs::write(
        &tampered,
        serde_json::to_string_pretty(&value).expect("json"),
    )
    .expect("write");

    let out = Command::new(env!("CARGO_BIN_EXE_gitloom"))
        .args(["eval", "gate", "--baseline"])
        .arg(&tampered)
        .arg("--data")
        .arg(&data)
        // The read-path sections: the full gate (every persona, end to end too) is
        // CI's last step.
        .args(["--section", "probe", "--section", "locomo_conv26"])
        .output()
        .expect("gitloom runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the gate must fail on a regression:\n{err}"
    );
    assert!(
        err.contains("p_at_1") && err.contains("recall_at_10"),
        "the diff names the metrics:\n{err}"
    );

    // The committed baseline itself passes: the gate is not failing for other reasons.
    let out = Command::new(env!("CARGO_BIN_EXE_gitloom"))
        .args(["eval", "gate", "--baseline"])
        .arg(&baseline)
        .arg("--data")
        .arg(&data)
        // The read-path sections: the full gate (every persona, end to end too) is
        // CI's last step.
        .args(["--section", "probe", "--section", "locomo_conv26"])
        .output()
        .expect("gitloom runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
