//! MiniLM and the static table distilled from it. These run only where the model is
//! installed under `model_dir()`; elsewhere they print "skipped: MiniLM not installed"
//! and pass, except under CI (`CI` set), which installs the model first: there a
//! missing model fails them.

use gitloom_embed::{Embedder, MiniLm, StaticTable, cosine, default_embedder, minilm_dir};

fn minilm() -> Option<MiniLm> {
    let d = minilm_dir();
    if !MiniLm::is_installed(&d) {
        assert!(
            std::env::var_os("CI").is_none(),
            "MiniLM is not installed under {} and CI is set (run `gitloom model install`)",
            d.display()
        );
        println!("skipped: MiniLM not installed");
        return None;
    }
    Some(MiniLm::load(&d).expect("load"))
}

const TEXTS: [&str; 3] = [
    "who pays my salary",
    "Works at Orbital AI as an ML engineer",
    "My cat is called Mellob",
];

/// First 8 components per text from an independent float64 NumPy implementation of the
/// same network (BERT forward pass over the same safetensors and tokenizer, mean pooling,
/// L2 normalisation).
const REFERENCE: [[f32; 8]; 3] = [
    [
        -0.001421, 0.008423, 0.035594, -0.012608, -0.018699, -0.079873, 0.12288, -0.037977,
    ],
    [
        -0.033233, -0.046101, 0.011145, -0.017586, -0.083591, -0.104645, 0.058119, -0.026595,
    ],
    [
        0.101822, -0.008745, 0.026344, 0.032172, -0.143751, 0.005052, 0.088767, 0.01974,
    ],
];

#[test]
fn minilm_embeds_like_the_reference() {
    let Some(m) = minilm() else { return };
    assert_eq!(m.model_id(), "minilm-l6-v2@gt-0.1.0/384");
    assert_eq!((m.dim(), m.max_tokens()), (384, 256));
    let v = m.embed(&TEXTS).expect("embed");
    assert_eq!(v.len(), 3);
    for (i, e) in v.iter().enumerate() {
        assert_eq!(e.len(), 384);
        let norm = e.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        for (j, (a, b)) in e.iter().zip(REFERENCE[i]).enumerate() {
            assert!(
                (a - b).abs() < 2e-4,
                "text {i} dim {j}: {a} vs reference {b}"
            );
        }
    }
    let (work, cat) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!(
        work > cat,
        "salary~work {work} should beat salary~cat {cat}"
    );
    assert!(
        (work - 0.2152).abs() < 2e-3 && (cat - 0.0816).abs() < 2e-3,
        "{work} {cat}"
    );
}

/// The largest difference between two vectors' components.
fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max)
}

#[test]
fn batched_equals_one_at_a_time_and_long_text_is_truncated() {
    let Some(m) = minilm() else { return };
    let long = "memory ".repeat(600);
    let texts = [TEXTS[1], "", long.as_str(), TEXTS[0], TEXTS[2]];
    let batched = m.embed(&texts).expect("embed batch");
    for (t, b) in texts.iter().zip(&batched) {
        let diff = largest_difference(&m.embed(&[t]).expect("embed one")[0], b);
        assert!(diff < 1e-4, "padding changed the vector of {t:.20}: {diff}");
    }
    assert!(m.embed(&[]).expect("nothing").is_empty());
}

/// A job of a few thousand tokens is cut into small batches that the cores share
/// (`minilm.rs`, `batch_size`): each text's vector is still its own, whichever batch
/// and thread it ran in.
#[test]
fn a_job_shared_by_the_cores_equals_one_text_at_a_time() {
    let Some(m) = minilm() else { return };
    let texts: Vec<String> = (0..48)
        .map(|i| {
            format!(
                "note {i}: {}",
                "the ledger failover runbook and the garden rota ".repeat(1 + i % 7)
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let shared = m.embed(&refs).expect("embed job");
    for (t, v) in refs.iter().zip(&shared) {
        let diff = largest_difference(&m.embed(&[t]).expect("embed one")[0], v);
        assert!(diff < 1e-4, "the job changed the vector of {t:.30}: {diff}");
    }
}

#[test]
fn loading_is_lazy_and_default_embedder_finds_the_install() {
    let Some(m) = minilm() else { return };
    assert!(format!("{m:?}").contains("loaded: false"));
    m.preload().expect("load");
    assert!(format!("{m:?}").contains("loaded: true"));
    let d = default_embedder().expect("default").expect("installed");
    assert_eq!(d.model_id(), "minilm-l6-v2@gt-0.1.0/384");
}

#[test]
fn a_broken_install_is_an_error_naming_the_model() {
    let tmp = tempfile::tempdir().expect("tempdir");
    assert!(MiniLm::load(tmp.path()).is_err());
    for n in ["model.safetensors", "tokenizer.json", "config.json"] {
        std::fs::write(tmp.path().join(n), b"garbage").expect("write");
    }
    let m = MiniLm::load(tmp.path()).expect("files present: lazy");
    let err = m.embed(&["x"]).expect_err("garbage");
    assert!(err.to_string().contains("minilm-l6-v2"), "{err}");
    // The failure is remembered, not retried on every call.
    assert!(m.embed(&["x"]).is_err());
}

#[test]
fn static_table_distils_saves_and_loads() {
    let Some(m) = minilm() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    // Debug builds are slow: distil only the first ids (the most frequent words start at
    // 1996 in this vocabulary); the rest get zero rows.
    let t = StaticTable::distill_with(&m, tmp.path(), Some(2300), None).expect("distil");
    assert_eq!(t.model_id(), "static-minilm-l6-v2@gt-0.1.0/384");
    assert_eq!(t.dim(), 384);
    let texts = [
        "the cat was in the house",
        "the dog was at home",
        "",
        "zzzzqqq",
    ];
    let v = t.embed(&texts).expect("embed");
    let norm = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
    assert!(v[2].iter().all(|x| *x == 0.0), "empty text: zero vector");
    let loaded = StaticTable::load(tmp.path()).expect("load");
    assert_eq!(loaded.embed(&texts).expect("embed"), v);
    assert_eq!(t.embed(&[texts[0]]).expect("one")[0], v[0]);
    // A damaged table file is refused.
    let table = tmp.path().join("table.bin");
    let bytes = std::fs::read(&table).expect("read");
    std::fs::write(&table, &bytes[..bytes.len() - 3]).expect("write");
    assert!(StaticTable::load(tmp.path()).is_err());
}

#[test]
fn weights_are_mapped_not_copied() {
    let Some(m) = minilm() else { return };
    assert_eq!(
        m.weights_mapped().expect("load"),
        cfg!(target_endian = "little"),
        "the installed safetensors file is 4-byte aligned: it should be read in place"
    );
}
