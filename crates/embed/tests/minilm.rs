//! MiniLM and the static table distilled from it. These run only where the model is
//! installed under `model_dir()`; elsewhere they print "skipped: MiniLM not installed"
//! and pass, except under CI (`CI` set), which installs the model first: there a
//! missing model fails them.

use gitloom_embed::{
    Embedder, MiniLm, Precision, StaticTable, cosine, default_embedder, minilm_dir,
};

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
    let m = m.with_precision(Precision::F32);
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
    let want = match Precision::fastest() {
        Precision::Int8 => "minilm-l6-v2@gt-0.1.0/384/int8",
        Precision::F32 => "minilm-l6-v2@gt-0.1.0/384",
    };
    assert_eq!(d.model_id(), want);
}

/// Stored texts run in 8-bit integers where the CPU has AVX-512 VNNI (the portable
/// loop elsewhere gives the same vectors, slowly), a query in f32: the int8 vectors
/// stay within a cosine of 0.995 of the f32 network's on sentences short and long
/// (0.99 on a text of one word or none, the special tokens alone), and the query path
/// is the f32 network exactly.
#[test]
fn int8_vectors_stay_close_to_f32_and_a_query_runs_in_f32() {
    let Some(m) = minilm() else { return };
    let m = m.with_precision(Precision::Int8);
    assert_eq!(m.model_id(), "minilm-l6-v2@gt-0.1.0/384/int8");
    let f32_net = MiniLm::load(&minilm_dir())
        .expect("load")
        .with_precision(Precision::F32);
    let long = "We moved the ledger database to the new cluster on Tuesday; the failover \
                took four minutes and the on-call engineer paged the DBA twice. "
        .repeat(6);
    let texts = [TEXTS[0], TEXTS[1], TEXTS[2], "", "ok", long.as_str()];
    let (q8, f) = (
        m.embed(&texts).expect("int8"),
        f32_net.embed(&texts).expect("f32"),
    );
    for ((t, a), b) in texts.iter().zip(&q8).zip(&f) {
        let c = cosine(a, b);
        let bound = if t.len() < 3 { 0.99 } else { 0.995 };
        assert!(c > bound, "{t:.30}: cosine {c} between int8 and f32");
        assert!(c < 1.0 - 1e-7, "{t:.30}: the int8 path did not run");
    }
    for t in TEXTS {
        assert_eq!(
            m.embed_query(t).expect("query"),
            f32_net.embed(&[t]).expect("f32")[0]
        );
    }
    // Rankings agree: the salary question is nearer work than the cat.
    let q = m.embed_query(TEXTS[0]).expect("query");
    assert!(cosine(&q, &q8[1]) > cosine(&q, &q8[2]));
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
