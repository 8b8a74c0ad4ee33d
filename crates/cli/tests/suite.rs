//! `gitloom eval suite --ablate`, run as a user runs it: a data folder of one small
//! persona, lexical only (no model needed), each knob of an ablation file switched off
//! in turn.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_gitloom");

fn gitloom(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["--embedder", "none"])
        .args(args)
        .env_remove("GITLOOM_CONFIG")
        .output()
        .expect("run gitloom")
}

/// A persona whose three answerable questions each have a different memory as their
/// answer, found by the words they share, and one question nothing answers. A diary
/// memory, first by name, holds some of the words of two questions: evidence for both,
/// ranked under their answers by how much of each question it holds.
fn persona(data: &Path) {
    let dir = data.join("probe-tiny");
    let facts = dir.join("memories/facts/home");
    std::fs::create_dir_all(&facts).expect("mkdir");
    for (file, title, body) in [
        (
            "a-diary.md",
            "Diary",
            "The boiler man came to the cottage while I practised the piano.",
        ),
        (
            "boiler.md",
            "Boiler serviced",
            "The boiler at the cottage was serviced by Hallam Heating in March.",
        ),
        (
            "allotment.md",
            "Allotment plot",
            "My allotment plot near the cottage is number fourteen, beside the orchard.",
        ),
        (
            "piano.md",
            "Piano lessons",
            "Piano lessons at the cottage are on Thursday evenings with Marguerite.",
        ),
    ] {
        std::fs::write(
            facts.join(file),
            format!("---\ntitle: {title}\n---\n{body}\n"),
        )
        .expect("write memory");
    }
    let queries = [
        r#"{"id":"q1","query":"who serviced the boiler at the cottage","gold":["facts/home/boiler.md"],"shape":"lookup","abstain":false}"#,
        r#"{"id":"q2","query":"which allotment plot near the cottage is mine","gold":["facts/home/allotment.md"],"shape":"lookup","abstain":false}"#,
        r#"{"id":"q3","query":"when are my piano lessons at the cottage","gold":["facts/home/piano.md"],"shape":"lookup","abstain":false}"#,
        r#"{"id":"q4","query":"what colour is my passport","gold":[],"shape":"unanswerable","abstain":true}"#,
    ];
    std::fs::write(dir.join("queries.jsonl"), queries.join("\n") + "\n").expect("write queries");
}

#[test]
fn each_knob_switched_off_says_what_it_moves_on_every_store() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    persona(&data);
    let ablate = tmp.path().join("ablate.json");
    std::fs::write(
        &ablate,
        r#"{"knobs": {"weights.lexical": 0, "priors.tier": 1}}"#,
    )
    .expect("write ablation");
    let out = gitloom(&[
        "--json",
        "eval",
        "suite",
        data.to_str().expect("utf-8 path"),
        "--ablate",
        ablate.to_str().expect("utf-8 path"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["stores"][0]["store"], "probe-tiny", "{v}");
    assert_eq!(v["stores"][0]["p_at_1"], 1.0, "{v}");
    let knobs = v["ablation"].as_array().expect("ablation");
    let knob = |name: &str| {
        knobs
            .iter()
            .find(|k| k["knob"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {v}"))
    };
    // Lexical only, the lexical arm weighed at nothing ties every memory it found: the
    // diary, first by name, comes before the boiler's and the piano's answers.
    let lexical = &knob("weights.lexical")["stores"][0];
    assert_eq!(lexical["store"], "probe-tiny");
    assert!(lexical["lost"].as_u64().expect("lost") >= 2, "{lexical}");
    assert!(
        lexical["objective"].as_f64().expect("objective") < 0.0,
        "{lexical}"
    );
    assert_eq!(knob("weights.lexical")["default"], 1.0);
    // No question of this persona asks for a tier: the prior moves nothing.
    let tier = &knob("priors.tier")["stores"][0];
    assert_eq!(
        (tier["gained"].as_u64(), tier["lost"].as_u64()),
        (Some(0), Some(0))
    );

    // The table a person reads names every knob.
    let out = gitloom(&[
        "eval",
        "suite",
        data.to_str().expect("utf-8 path"),
        "--ablate",
        ablate.to_str().expect("utf-8 path"),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("| weights.lexical | 1.0 → 0 |"), "{text}");
    assert!(text.contains("| priors.tier | 1.5 → 1 | · |"), "{text}");
}

#[test]
fn a_bad_ablation_file_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    persona(&data);
    let data = data.to_str().expect("utf-8 path");
    // Each file is refused with a message that says what is wrong, before the
    // persona runs.
    for (name, text, says) in [
        (
            "broken.json",
            r#"{"knobs": {"priors.tier": 1"#,
            "broken.json",
        ),
        (
            "unknown.json",
            r#"{"knobs": {"priors.nothing": 1}}"#,
            "\"priors.nothing\" is not a setting",
        ),
        (
            "wrong.json",
            r#"{"knobs": {"priors.tier": "off"}}"#,
            "priors.tier = \"off\"",
        ),
    ] {
        let file = tmp.path().join(name);
        std::fs::write(&file, text).expect("write");
        let out = gitloom(&[
            "eval",
            "suite",
            data,
            "--ablate",
            file.to_str().expect("utf-8"),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(
            !err.contains("suite: probe-tiny"),
            "{name}: ran first: {err}"
        );
    }
}
