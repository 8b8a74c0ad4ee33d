//! Cosine and int8 quantisation arithmetic of the arena scan: the scan ranks and scores
//! rows by the int8 estimate of their cosine, whose error has an analytic bound.

mod common;

use common::random_unit;
use std::collections::BTreeMap;

use gitloom_embed::{Arena, ScanHit, cosine};

#[test]
fn cosine_basics() {
    assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
    assert!(cosine(&[1.0, 0.0], &[0.0, 3.0]).abs() < 1e-6);
    assert!((cosine(&[1.0, 2.0, 3.0], &[-2.0, -4.0, -6.0]) + 1.0).abs() < 1e-6);
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 2.0]), 0.0);
    assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
    // Not normalised inputs: still a cosine. Odd length exercises the tail loop.
    let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..19).map(|i| (i * i) as f32 * 0.5).collect();
    let naive = a.iter().zip(&b).map(|(x, y)| x * y).sum::<f32>()
        / (a.iter().map(|x| x * x).sum::<f32>().sqrt()
            * b.iter().map(|x| x * x).sum::<f32>().sqrt());
    assert!((cosine(&a, &b) - naive).abs() < 1e-5);
}

#[test]
fn push_checks_dimension_and_values() {
    let mut a = Arena::new(4);
    assert!(a.push(1, 0, &[1.0, 0.0, 0.0]).is_err());
    assert!(a.push(1, 0, &[f32::NAN, 0.0, 0.0, 0.0]).is_err());
    assert_eq!(a.push(7, 1, &[0.0, 2.0, 0.0, 0.0]).ok(), Some(0));
    assert_eq!(a.push(8, 0, &[0.0, 0.0, 0.0, 0.0]).ok(), Some(1));
    assert_eq!(a.len(), 2);
    assert_eq!(a.meta(0), Some((7, 1)));
    // Stored in int8, the scale divided by the row's norm (2): 127 × (2/127) / 2 = 1.
    assert_eq!(a.row(0), Some((&[0i8, 127, 0, 0][..], 1.0 / 127.0)));
    // Wrong-dimension or zero queries match nothing.
    assert!(a.scan(&[1.0, 0.0], 5).is_empty());
    assert!(a.scan(&[0.0; 4], 5).is_empty());
    let hits = a.scan(&[0.0, 1.0, 0.0, 0.0], 5);
    assert_eq!(hits.len(), 2);
    assert_eq!((hits[0].key, hits[0].kind), (7, 1));
    assert!((hits[0].cosine - 1.0).abs() < 1e-6);
    assert_eq!(hits[1].cosine, 0.0, "a zero row scores 0");
    assert!(Arena::new(4).scan(&[1.0, 0.0, 0.0, 0.0], 3).is_empty());
    assert!(a.scan(&[0.0, 1.0, 0.0, 0.0], 0).is_empty());
}

#[test]
fn quantised_estimate_error_is_bounded() {
    let mut rng = fastrand::Rng::with_seed(7);
    let dim = 384;
    let mut a = Arena::new(dim);
    let rows: Vec<Vec<f32>> = (0..500).map(|_| random_unit(&mut rng, dim)).collect();
    for (i, r) in rows.iter().enumerate() {
        a.push(i as u32, 0, r).expect("push");
    }
    let mut max_err = 0f32;
    for _ in 0..20 {
        let q = random_unit(&mut rng, dim);
        for (i, r) in rows.iter().enumerate() {
            let exact = cosine(&q, r);
            let approx = a.approx_cosine(&q, i);
            let err = (exact - approx).abs();
            // The analytic bound: (s_q/2)·‖r‖₁ + (s_r/2)·‖q̂‖₁ (unit vectors, scale = max/127).
            let s = |v: &[f32]| v.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0;
            let l1 = |v: &[f32]| v.iter().map(|x| x.abs()).sum::<f32>();
            let bound = s(&q) / 2.0 * l1(r) + s(r) / 2.0 * (l1(&q) + dim as f32 * s(&q) / 2.0);
            assert!(
                err <= bound + 1e-5,
                "row {i}: error {err} above bound {bound}"
            );
            max_err = max_err.max(err);
        }
    }
    assert!(max_err < 0.01, "max abs error {max_err}");
}

/// The analytic bound of the int8 estimate's error for unit vectors `q` and `r`:
/// `(s_q/2)·‖r‖₁ + (s_r/2)·‖q̂‖₁`, scales `max/127`.
fn bound(q: &[f32], r: &[f32]) -> f32 {
    let s = |v: &[f32]| v.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0;
    let l1 = |v: &[f32]| v.iter().map(|x| x.abs()).sum::<f32>();
    s(q) / 2.0 * l1(r) + s(r) / 2.0 * (l1(q) + q.len() as f32 * s(q) / 2.0)
}

/// Whether `hits` are a top `k` of `rows` (the vectors pushed, in row order) that an
/// estimate within the analytic bound can give: every hit's score is its row's
/// estimate, the hits are best first, and no row left out beats a kept one by more
/// than both their bounds.
fn within_bound_of_exact(a: &Arena, rows: &[Vec<f32>], q: &[f32], hits: &[ScanHit], k: usize) {
    assert_eq!(hits.len(), k.min(rows.len()));
    for h in hits {
        assert_eq!(h.cosine, a.approx_cosine(q, h.row));
    }
    for w in hits.windows(2) {
        assert!(w[0].cosine >= w[1].cosine);
    }
    let q = {
        let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        q.iter().map(|x| x / n).collect::<Vec<f32>>()
    };
    // A row left out was estimated at most as high as every kept row, whose estimate
    // is at most its cosine plus its bound.
    let kept: std::collections::HashSet<usize> = hits.iter().map(|h| h.row).collect();
    let ceiling = hits
        .iter()
        .map(|h| cosine(&q, &rows[h.row]) + bound(&q, &rows[h.row]))
        .fold(f32::INFINITY, f32::min);
    for (r, v) in rows.iter().enumerate().filter(|(r, _)| !kept.contains(r)) {
        assert!(
            cosine(&q, v) - bound(&q, v) <= ceiling + 1e-5,
            "row {r} left out at {} above the kept rows' ceiling {ceiling}",
            cosine(&q, v)
        );
    }
}

#[test]
fn quantised_top_k_is_the_exact_top_k_within_the_bound() {
    let mut rng = fastrand::Rng::with_seed(42);
    let dim = 384;
    let n = 3000;
    let mut a = Arena::with_capacity(dim, n);
    let rows: Vec<Vec<f32>> = (0..n).map(|_| random_unit(&mut rng, dim)).collect();
    for (i, r) in rows.iter().enumerate() {
        a.push(i as u32, (i % 2) as u8, r).expect("push");
    }
    let trials = 200;
    let mut same = 0;
    for t in 0..trials {
        // Half the queries are near an existing row (the realistic case), half random.
        let q: Vec<f32> = if t % 2 == 0 {
            let base = &rows[rng.usize(0..n)];
            let noise = random_unit(&mut rng, dim);
            base.iter().zip(&noise).map(|(b, e)| b + 0.8 * e).collect()
        } else {
            random_unit(&mut rng, dim)
        };
        let fast = a.scan(&q, 10);
        within_bound_of_exact(&a, &rows, &q, &fast, 10);
        let mut exact: Vec<(f32, usize)> = rows
            .iter()
            .enumerate()
            .map(|(r, v)| (cosine(&q, v), r))
            .collect();
        exact.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        let mut want: Vec<usize> = exact.iter().take(10).map(|x| x.1).collect();
        let mut got: Vec<usize> = fast.iter().map(|h| h.row).collect();
        want.sort_unstable();
        got.sort_unstable();
        if got == want {
            same += 1;
        }
    }
    // Random unit vectors crowd their cosines (the 10th and 11th best of 3,000 are
    // often a few thousandths apart), so the sets may differ at the edge; they should
    // still agree most of the time.
    assert!(
        same * 100 >= trials * 80,
        "quantised top-10 set matched exact in {same}/{trials} trials"
    );
}

#[test]
fn per_kind_scan_ranks_kinds_apart_in_one_pass() {
    let mut rng = fastrand::Rng::with_seed(3);
    let dim = 64;
    let mut a = Arena::new(dim);
    let vs: Vec<Vec<f32>> = (0..600).map(|_| random_unit(&mut rng, dim)).collect();
    for (i, v) in vs.iter().enumerate() {
        a.push(i as u32 / 3, (i % 3) as u8, v).expect("push");
    }
    let q = random_unit(&mut rng, dim);
    let per = a.scan_per_kind(&q, 5);
    assert_eq!(per.keys().copied().collect::<Vec<_>>(), vec![0, 1, 2]);
    for (kind, hits) in &per {
        assert_eq!(hits.len(), 5);
        assert!(hits.iter().all(|h| h.kind == *kind));
        // The kind's own top 5 by the estimate, each within the bound of its cosine.
        let mut est: Vec<(f32, usize)> = (0..a.len())
            .filter(|&r| a.meta(r).map(|m| m.1) == Some(*kind))
            .map(|r| (a.approx_cosine(&q, r), r))
            .collect();
        est.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        let want: Vec<usize> = est.iter().take(5).map(|x| x.1).collect();
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), want);
        for h in hits {
            assert!((h.cosine - cosine(&q, &vs[h.row])).abs() <= bound(&q, &vs[h.row]) + 1e-5);
        }
    }
}

#[test]
fn scoring_chosen_rows_gives_the_scans_cosines_in_the_order_asked() {
    let (a, vs) = sample_arena_and_rows(40, 32, 9);
    let mut rng = fastrand::Rng::with_seed(10);
    let q = random_unit(&mut rng, 32);
    let hits = a.score_rows(&q, &[7, 2, 39, 40, 1000, 3, 4, 5]);
    // Rows past the end are skipped, not an error; runs of rows keep the order asked.
    assert_eq!(
        hits.iter().map(|h| h.row).collect::<Vec<_>>(),
        [7, 2, 39, 3, 4, 5]
    );
    let scanned = a.scan(&q, 40);
    for h in &hits {
        let s = scanned.iter().find(|s| s.row == h.row).expect("scanned");
        assert_eq!(h, s, "the value a scan gives the row");
        assert!((h.cosine - cosine(&q, &vs[h.row])).abs() <= bound(&q, &vs[h.row]) + 1e-5);
        assert_eq!(a.meta(h.row), Some((h.key, h.kind)));
    }
    assert!(a.score_rows(&q, &[]).is_empty());
    assert!(
        a.score_rows(&[1.0; 3], &[0]).is_empty(),
        "a query of another dimension"
    );
}

fn sample_arena(n: usize, dim: usize, seed: u64) -> Arena {
    sample_arena_and_rows(n, dim, seed).0
}

/// An arena of `n` random unit rows (two per key, kinds 0 and 1 in turn) and the rows.
fn sample_arena_and_rows(n: usize, dim: usize, seed: u64) -> (Arena, Vec<Vec<f32>>) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut a = Arena::with_capacity(dim, n);
    let rows: Vec<Vec<f32>> = (0..n).map(|_| random_unit(&mut rng, dim)).collect();
    for (i, r) in rows.iter().enumerate() {
        a.push((i / 2) as u32, (i % 2) as u8, r).expect("push");
    }
    (a, rows)
}

#[test]
fn a_stored_arena_reads_back_in_place_and_scans_the_same() {
    use gitloom_embed::{ArenaMiss, StoredArena};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.arena");
    assert_eq!(StoredArena::open(&path).err(), Some(ArenaMiss::Missing));
    let a = sample_arena(1001, 48, 5);
    let labels: Vec<(String, String)> = (0..501)
        .map(|k| (format!("facts/x/{k}.md"), format!("cue «{k}»")))
        .collect();
    let refs: Vec<(&str, &str)> = labels
        .iter()
        .map(|(p, l)| (p.as_str(), l.as_str()))
        .collect();
    StoredArena::write(&path, &a, &refs, "model-x/48", "tag 1").expect("write");
    let s = StoredArena::open(&path).expect("open");
    assert!(s.arena.is_mapped());
    assert_eq!((s.model.as_str(), s.tag.as_str()), ("model-x/48", "tag 1"));
    assert_eq!(
        (s.arena.len(), s.arena.dim(), s.labels.len()),
        (1001, 48, 501)
    );
    assert_eq!(s.labels.get(500), Some(("facts/x/500.md", "cue «500»")));
    assert_eq!(s.labels.get(501), None);
    // The parts one at a time, mapped and held in memory alike.
    let held = gitloom_embed::Labels::new(labels.clone());
    for l in [&s.labels, &held] {
        assert_eq!(l.owner_bytes(7), Some("facts/x/7.md".as_bytes()));
        assert_eq!(
            (l.owner(7), l.label(7)),
            (Some("facts/x/7.md"), Some("cue «7»"))
        );
        assert_eq!(
            (l.owner_bytes(501), l.owner(501), l.label(501)),
            (None, None, None)
        );
        assert_eq!(
            (l.owner_bytes(usize::MAX), l.label(usize::MAX)),
            (None, None)
        );
    }
    let mut rng = fastrand::Rng::with_seed(9);
    for _ in 0..20 {
        let q = random_unit(&mut rng, 48);
        assert_eq!(s.arena.scan(&q, 10), a.scan(&q, 10));
        assert_eq!(s.arena.scan_per_kind(&q, 7), a.scan_per_kind(&q, 7));
    }
    for r in [0, 500, 1000] {
        assert_eq!(s.arena.row(r), a.row(r));
        assert_eq!(s.arena.meta(r), a.meta(r));
    }
    // Rows copied from a mapped arena are bit for bit those pushed.
    let mut copy = Arena::new(48);
    for r in 0..a.len() {
        copy.push_row_of(&s.arena, r, a.meta(r).expect("meta").0)
            .expect("copy");
    }
    let q = random_unit(&mut rng, 48);
    assert_eq!(copy.scan(&q, 20), a.scan(&q, 20));
    assert!(copy.push_row_of(&Arena::new(3), 0, 0).is_err());
}

#[test]
fn a_damaged_arena_file_is_refused_with_the_reason() {
    use gitloom_embed::{ArenaMiss, StoredArena};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.arena");
    let a = sample_arena(64, 16, 2);
    let labels = vec![("p", "l"); 32];
    StoredArena::write(&path, &a, &labels, "m", "t").expect("write");
    let bytes = std::fs::read(&path).expect("read");
    let reason = |b: &[u8]| {
        std::fs::write(&path, b).expect("write");
        match StoredArena::open(&path) {
            Err(ArenaMiss::Invalid(r)) => r,
            other => panic!("expected a refusal, got {other:?}"),
        }
    };
    assert!(
        reason(&bytes[..bytes.len() - 1]).contains("bytes"),
        "truncated"
    );
    assert!(reason(&bytes[..100]).contains("truncated"));
    assert!(reason(b"not an arena at all").contains("not an arena"));
    let mut v2 = bytes.clone();
    v2[8] = 9;
    assert!(reason(&v2).contains("format 9"));
    let mut bad_key = bytes.clone();
    // The first key of the keys section (the header is padded to 64 bytes).
    bad_key[64..68].copy_from_slice(&1000u32.to_le_bytes());
    assert!(reason(&bad_key).contains("key"));
    // No temporary file is left behind by a write.
    StoredArena::write(&path, &a, &labels, "m", "t").expect("write");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

/// What `scan_per_kind` must return, from the public estimate alone: per kind, the
/// `k` best rows by int8 estimate, ties to the earlier row.
fn per_kind_reference(a: &Arena, q: &[f32], k: usize) -> BTreeMap<u8, Vec<usize>> {
    let mut by_kind: BTreeMap<u8, Vec<(f32, usize)>> = BTreeMap::new();
    for r in 0..a.len() {
        let kind = a.meta(r).expect("meta").1;
        by_kind
            .entry(kind)
            .or_default()
            .push((a.approx_cosine(q, r), r));
    }
    by_kind
        .into_iter()
        .map(|(kind, mut v)| {
            v.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
            (kind, v.iter().take(k).map(|x| x.1).collect())
        })
        .collect()
}

/// The int8 pass (on AVX2 where the CPU has it) and the per-kind selection keep exactly
/// the rows the int8 estimate ranks best, ties to the earlier row: random and clustered
/// vectors, copies of one vector (all tied), a zero row, MiniLM's dimension and one
/// that leaves a tail.
#[test]
fn per_kind_scan_keeps_the_int8_best_rows_of_each_kind() {
    for dim in [384usize, 100] {
        let mut rng = fastrand::Rng::with_seed(dim as u64);
        let mut a = Arena::new(dim);
        let centres: Vec<Vec<f32>> = (0..8).map(|_| random_unit(&mut rng, dim)).collect();
        let mut i = 0u32;
        for _ in 0..1500 {
            let v = if i.is_multiple_of(3) {
                random_unit(&mut rng, dim)
            } else {
                // Clustered: a centre plus noise, as texts on one topic are.
                let c = &centres[rng.usize(0..centres.len())];
                let e = random_unit(&mut rng, dim);
                c.iter().zip(&e).map(|(x, y)| x + 0.4 * y).collect()
            };
            a.push(i, (i % 3) as u8, &v).expect("push");
            i += 1;
        }
        // 60 copies of one vector in kind 0 (more than 4 × k: ties decide), and a zero row.
        for _ in 0..60 {
            a.push(i, 0, &centres[0]).expect("push");
            i += 1;
        }
        a.push(i, 1, &vec![0.0; dim]).expect("push");
        let mut queries = vec![centres[0].clone(), centres[3].clone()];
        for _ in 0..40 {
            let c = &centres[rng.usize(0..centres.len())];
            let e = random_unit(&mut rng, dim);
            queries.push(c.iter().zip(&e).map(|(x, y)| x + 0.6 * y).collect());
            queries.push(random_unit(&mut rng, dim));
        }
        for q in &queries {
            for k in [1usize, 10, 50] {
                let got: BTreeMap<u8, Vec<usize>> = a
                    .scan_per_kind(q, k)
                    .into_iter()
                    .map(|(kind, hits)| (kind, hits.iter().map(|h| h.row).collect()))
                    .collect();
                assert_eq!(got, per_kind_reference(&a, q, k), "dim {dim}, k {k}");
            }
        }
        // The copies tie: the earliest rows win, in row order.
        let copies = a.scan_per_kind(&centres[0], 10);
        let rows: Vec<usize> = copies[&0].iter().map(|h| h.row).collect();
        assert_eq!(rows, (1500..1510).collect::<Vec<_>>());
    }
}

/// On vectors with clear margins (each query near one row), the per-kind head is the
/// exact f32 head of that kind, and the rest of the top 5 within the estimate's bound.
#[test]
fn per_kind_head_equals_exact_f32_on_clear_margins() {
    let mut rng = fastrand::Rng::with_seed(11);
    let dim = 384;
    let mut a = Arena::new(dim);
    let vs: Vec<Vec<f32>> = (0..4000).map(|_| random_unit(&mut rng, dim)).collect();
    for (i, v) in vs.iter().enumerate() {
        a.push(i as u32, (i % 2) as u8, v).expect("push");
    }
    for t in 0..30 {
        let near = rng.usize(0..a.len());
        let e = random_unit(&mut rng, dim);
        let q: Vec<f32> = vs[near].iter().zip(&e).map(|(x, y)| x + 0.5 * y).collect();
        let per = a.scan_per_kind(&q, 5);
        let kind = (near % 2) as u8;
        assert_eq!(per[&kind][0].row, near, "query {t}");
        for (kind, hits) in &per {
            let (rows, vectors): (Vec<usize>, Vec<Vec<f32>>) = vs
                .iter()
                .enumerate()
                .filter(|(r, _)| r % 2 == usize::from(*kind))
                .map(|(r, v)| (r, v.clone()))
                .unzip();
            let mut only = Arena::new(dim);
            for (r, v) in rows.iter().zip(&vectors) {
                only.push(*r as u32, *kind, v).expect("push");
            }
            let local: Vec<ScanHit> = hits
                .iter()
                .map(|h| {
                    let at = rows.binary_search(&h.row).expect("a row of the kind");
                    ScanHit { row: at, ..*h }
                })
                .collect();
            within_bound_of_exact(&only, &vectors, &q, &local, 5);
        }
    }
}
