mod common;

use common::*;
use gitloom_index::{Decor, LexicalQuery, Tier, match_strings};

fn q(text: &str, limit: usize) -> LexicalQuery {
    LexicalQuery {
        text: text.into(),
        limit,
        ..LexicalQuery::default()
    }
}

/// Commits `files` through a second connection to the index at `path`, as another
/// process would: what this test's connection keeps must not outlive it.
fn apply_elsewhere(path: &std::path::Path, commit: &str, files: Vec<gitloom_index::IndexedFile>) {
    let (mut other, _) = gitloom_index::Index::open(path).expect("second connection");
    other
        .apply(&upserts(commit, files))
        .expect("apply elsewhere");
}

fn has_term(m: &str, t: &str) -> bool {
    m.split(" AND ")
        .flat_map(|p| p.split(" OR "))
        .any(|p| p.trim_matches('"') == t)
}

#[test]
fn r1_where_do_i_work_matches_only_work() {
    let (all, any) = match_strings("where do i work").expect("has a content term");
    for m in [&all, &any] {
        for bad in ["where", "do", "i"] {
            assert!(!has_term(m, bad), "{m} contains {bad}");
        }
        assert!(!m.contains('*'), "no prefix expansion: {m}");
        assert!(has_term(m, "work"));
    }
}

#[test]
fn r1_probe_corpus() {
    let Some(files) = probe() else { return };
    let (_dir, mut idx) = temp_index();
    let st = idx.apply(&full_batch(&files)).expect("apply");
    assert_eq!(st.upserted, files.len());
    // A memory made only of the query's stopwords must not be returned.
    let decoy = simple(
        "facts/misc/decoy.md",
        "Where do I",
        "Where do I? I do, I did, where is it, is it in.",
    );
    idx.apply(&upserts("c2", vec![decoy])).expect("apply decoy");
    let corpus = files.len() + 1;

    let hits = idx.lexical(&q("where do i work", 50)).expect("search");
    assert!(!hits.is_empty());
    assert!(
        hits[0].path == "facts/work/orbital-ai.md" || hits[0].path == "facts/work/acme-robotics.md",
        "first hit {:?}",
        hits.iter().map(|h| &h.path).collect::<Vec<_>>()
    );
    assert!(hits.iter().all(|h| h.path != "facts/misc/decoy.md"));
    for h in &hits {
        assert_eq!(h.matched_terms, vec!["work"]);
        assert!(h.score > 0.0);
        for bad in ["[i]", "[is]", "[in]", "[it]", "[do]", "[where]"] {
            assert!(!h.snippet.to_lowercase().contains(bad), "{}", h.snippet);
        }
    }
    // Ranks are 1-based and consecutive.
    for (i, h) in hits.iter().enumerate() {
        assert_eq!(h.rank, i + 1);
    }

    let queries = probe_queries();
    assert!(!queries.is_empty());
    for qq in queries {
        let text = qq["query"].as_str().expect("query text");
        let hits = idx.lexical(&q(text, 1000)).expect("search");
        assert!(
            hits.len() * 10 <= corpus * 6,
            "{text:?} returned {} of {corpus}",
            hits.len()
        );
        assert!(hits.iter().all(|h| h.path != "facts/misc/decoy.md"));
    }
}

#[test]
fn stopword_only_query_returns_nothing() {
    let (_dir, mut idx) = temp_index();
    idx.apply(&upserts(
        "c1",
        vec![simple(
            "facts/a/x.md",
            "Who is it",
            "what is this, who are they, how do you do",
        )],
    ))
    .expect("apply");
    for text in [
        "who is it",
        "what is this",
        "how do you do",
        "",
        "  ?!  ",
        "I",
    ] {
        assert!(
            idx.lexical(&q(text, 10)).expect("search").is_empty(),
            "{text:?}"
        );
        assert!(match_strings(text).is_none());
    }
}

#[test]
fn fts_syntax_in_user_input_is_inert() {
    let (_dir, mut idx) = temp_index();
    idx.apply(&upserts(
        "c1",
        vec![simple(
            "facts/a/near.md",
            "Near the station",
            "The flat is near the station and the bakery.",
        )],
    ))
    .expect("apply");
    for text in [
        "\"",
        "\"station",
        "station*",
        "title:station",
        "-station",
        "(station",
        "station)",
        "NEAR(station bakery)",
        "station AND",
        "AND OR NOT",
        "station NOT bakery",
        "^station",
        "{title summary}: station",
        "station + bakery",
        "'; DROP TABLE files; --",
    ] {
        let r = idx.lexical(&q(text, 10));
        assert!(r.is_ok(), "{text:?}: {r:?}");
    }
    let hits = idx.lexical(&q("NEAR(station bakery)", 10)).expect("search");
    assert_eq!(hits.len(), 1);
    assert!(hits[0].all_terms);
}

#[test]
fn all_terms_rank_above_some_terms_without_a_cliff() {
    let (_dir, mut idx) = temp_index();
    idx.apply(&upserts(
        "c1",
        vec![
            simple(
                "facts/a/both.md",
                "Camera lens",
                "A Sony camera with a Sigma lens.",
            ),
            simple(
                "facts/a/camera.md",
                "Camera",
                "The camera camera camera body.",
            ),
            simple("facts/a/lens.md", "Lens", "A lens."),
            simple("facts/a/other.md", "Other", "Nothing relevant here."),
        ],
    ))
    .expect("apply");
    let hits = idx.lexical(&q("camera lens", 10)).expect("search");
    assert_eq!(hits.len(), 3, "partial matches still returned");
    assert_eq!(hits[0].path, "facts/a/both.md");
    assert!(hits[0].all_terms);
    assert!(!hits[1].all_terms && !hits[2].all_terms);
    assert_eq!(hits[0].matched_terms, vec!["camera", "lens"]);
    // Missing term: any-term hits still come back.
    let hits = idx.lexical(&q("camera zeppelin", 10)).expect("search");
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| !h.all_terms));
}

#[test]
fn cues_outweigh_body_and_filters_apply() {
    let (_dir, mut idx) = temp_index();
    idx.apply(&upserts(
        "c1",
        vec![
            file(
                "facts/work/job.md",
                &gitloom_index::testutil::memory_text(
                    "Job",
                    &["who is my employer"],
                    "Works at a place.",
                ),
            ),
            simple(
                "facts/workshop/tools.md",
                "Tools",
                "The employer gave me tools; employer employer.",
            ),
            simple(
                "rules/work/style.md",
                "Style",
                "My employer wants short mails.",
            ),
        ],
    ))
    .expect("apply");
    let hits = idx.lexical(&q("who is my employer", 10)).expect("search");
    assert_eq!(hits[0].path, "facts/work/job.md");
    let mut f = q("employer", 10);
    f.tier = Some(Tier::Rules);
    let hits = idx.lexical(&f).expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, "rules/work/style.md");
    let mut f = q("employer", 10);
    f.topic = Some("work".into());
    let paths: Vec<String> = idx
        .lexical(&f)
        .expect("search")
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(paths, vec!["facts/work/job.md", "rules/work/style.md"]);
    f.topic = Some("facts/work".into());
    let paths: Vec<String> = idx
        .lexical(&f)
        .expect("search")
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(paths, vec!["facts/work/job.md"]);
}

#[test]
fn snippet_and_section() {
    let (_dir, mut idx) = temp_index();
    let text = "---\ntitle: Workstation\nsummary: The desktop machine.\n---\nIntro line.\n\n## GPU\nAn RTX 5090 drawing 575 watts.\n\n## Storage\nTwo NVMe drives of 4 TB.\n";
    idx.apply(&upserts("c1", vec![file("facts/hardware/ws.md", text)]))
        .expect("apply");
    let hits = idx.lexical(&q("how many watts", 5)).expect("search");
    assert_eq!(hits.len(), 1);
    assert!(hits[0].snippet.contains("[watts]"), "{}", hits[0].snippet);
    let s = hits[0].section.as_ref().expect("section");
    assert_eq!(s.anchor, "gpu");
    assert!(s.start_line < s.end_line);
    let hits = idx.lexical(&q("nvme storage", 5)).expect("search");
    assert_eq!(
        hits[0].section.as_ref().map(|s| s.anchor.as_str()),
        Some("storage")
    );
    // Match only in the summary: snippet falls back to it.
    let hits = idx.lexical(&q("desktop", 5)).expect("search");
    assert!(hits[0].snippet.contains("[desktop]"), "{}", hits[0].snippet);
    assert!(hits[0].section.is_none());
}

#[test]
fn details_read_terms_alone_or_with_snippet_and_section() {
    let (_dir, mut idx) = temp_index();
    let ws = "---\ntitle: Workstation\n---\nIntro line.\n\n## GPU\nAn RTX 5090 drawing 575 watts.\n\n## Storage\nTwo NVMe drives.\n";
    let cat = "---\ntitle: The cat\nsummary: Miso, a tabby.\n---\nMiso sleeps on the GPU box for its watts of heat.\n";
    idx.apply(&upserts(
        "c1",
        vec![
            file("facts/hardware/ws.md", ws),
            file("facts/home/cat.md", cat),
            file(
                "facts/home/plant.md",
                "---\ntitle: A fern\n---\nWatered on Sundays.\n",
            ),
        ],
    ))
    .expect("apply");
    let paths: Vec<String> = [
        "facts/hardware/ws.md",
        "facts/home/cat.md",
        "facts/home/plant.md",
    ]
    .map(String::from)
    .to_vec();
    let terms = idx
        .lexical_details("gpu watts", &paths, Decor::Terms)
        .expect("terms");
    let full = idx
        .lexical_details("gpu watts", &paths, Decor::Full)
        .expect("full");
    let shown = idx
        .lexical_details("gpu watts", &paths, Decor::Shown)
        .expect("shown");
    for p in &paths {
        // Judging reads the same terms and coverage either way.
        assert_eq!(terms[p].matched_terms, full[p].matched_terms, "{p}");
        assert_eq!(terms[p].coverage, full[p].coverage, "{p}");
        assert!(terms[p].section.is_none(), "{p}");
        // What a shown hit adds to its judged terms: the same snippet and section.
        assert_eq!(shown[p].snippet, full[p].snippet, "{p}");
        assert_eq!(shown[p].section, full[p].section, "{p}");
        assert!(shown[p].matched_terms.is_empty(), "{p}");
    }
    assert_eq!(full["facts/hardware/ws.md"].matched_terms, ["gpu", "watts"]);
    assert!(full["facts/hardware/ws.md"].snippet.contains("[watts]"));
    assert_eq!(
        full["facts/hardware/ws.md"]
            .section
            .as_ref()
            .map(|s| s.anchor.as_str()),
        Some("gpu")
    );
    assert!(!terms["facts/hardware/ws.md"].snippet.contains('['));
    assert!(full["facts/home/plant.md"].matched_terms.is_empty());
    assert_eq!(full["facts/home/plant.md"].coverage, 0.0);
}

#[test]
fn terms_in_most_files_are_not_scored_but_change_no_ranking() {
    let (_dir, mut idx) = temp_index();
    let mut files = Vec::new();
    for i in 0..100 {
        let body = match i {
            7 => "Caroline went to a pottery class.".to_owned(),
            8 => "Melanie mentioned pottery once.".to_owned(),
            _ => format!("Caroline talked about day {i}."),
        };
        files.push(simple(
            &format!("facts/c/t{i:03}.md"),
            &format!("turn {i}"),
            &body,
        ));
    }
    idx.apply(&upserts("c1", files)).expect("apply");
    let hits = idx
        .lexical(&q("what did caroline do at pottery", 5))
        .expect("search");
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(
        &paths[..2],
        ["facts/c/t007.md", "facts/c/t008.md"],
        "{paths:?}"
    );
    assert!(hits[0].all_terms && !hits[1].all_terms);
    // A query of common terms only still answers.
    let hits = idx.lexical(&q("caroline", 5)).expect("search");
    assert_eq!(hits.len(), 5);
}

/// The rows a term matched are reused for later asks (`ranged.rs`): what they answer
/// inside one read transaction must equal fresh reads outside it, for a subset, for
/// ids outside the first asks' range, for paths not indexed and for a path asked twice.
#[test]
fn reused_term_walks_answer_as_fresh_ones() {
    let (_dir, mut idx) = temp_index();
    let mut files = Vec::new();
    for i in 0..60 {
        let body = match i % 3 {
            0 => format!("The kiln fired pottery on day {i}."),
            1 => format!("Pottery glaze notes, batch {i}."),
            _ => format!("A walk by the river on day {i}."),
        };
        files.push(simple(
            &format!("facts/p/t{i:03}.md"),
            &format!("turn {i}"),
            &body,
        ));
    }
    idx.apply(&upserts("c1", files)).expect("apply");
    let all: Vec<String> = (0..60).map(|i| format!("facts/p/t{i:03}.md")).collect();
    let query = "kiln pottery river";
    // Every ask of the read path, in its order: coverage of a wide candidate set,
    // then the judged head (a subset), then a few files from the edges and a path
    // that is not indexed, one asked twice.
    let wide: Vec<&str> = all[10..50].iter().map(String::as_str).collect();
    let head: Vec<String> = all[20..30].to_vec();
    let mut edges: Vec<String> = vec![
        all[0].clone(),
        all[59].clone(),
        all[25].clone(),
        all[25].clone(),
        "facts/p/none.md".to_owned(),
    ];
    edges.sort();
    let fresh = (
        idx.term_matches(query, &wide).expect("terms"),
        idx.lexical_details(query, &head, Decor::Terms)
            .expect("head"),
        idx.lexical_details(query, &edges, Decor::Terms)
            .expect("edges"),
    );
    let reused = idx
        .read(|idx| -> Result<_, gitloom_index::IndexError> {
            Ok((
                idx.term_matches(query, &wide)?,
                idx.lexical_details(query, &head, Decor::Terms)?,
                idx.lexical_details(query, &edges, Decor::Terms)?,
            ))
        })
        .expect("read");
    assert_eq!(fresh.0, reused.0);
    assert_eq!(fresh.1, reused.1);
    assert_eq!(fresh.2, reused.2);
    assert_eq!(fresh.2.len(), 3, "{:?}", fresh.2.keys());
    assert_eq!(fresh.1["facts/p/t022.md"].matched_terms, ["pottery"]);
    assert_eq!(fresh.1["facts/p/t023.md"].matched_terms, ["river"]);
    assert_eq!(
        fresh.1["facts/p/t024.md"].matched_terms,
        ["kiln", "pottery"]
    );
}

/// Document frequencies are kept per term with the database version they were read
/// at (`doc_freq.rs`): coverage (IDF-weighted) and the lexical ranking read through
/// the memo must equal those of a fresh connection, for terms asked before in other
/// company, after this connection applies a batch, and after another connection
/// commits one.
#[test]
fn kept_document_frequencies_answer_as_fresh_ones() {
    use gitloom_index::Index;
    let (_dir, mut idx) = temp_index();
    let mut files = Vec::new();
    for i in 0..80 {
        let body = match i % 4 {
            0 => format!("The kiln fired pottery on day {i}."),
            1 => format!("Pottery glaze notes, batch {i}."),
            2 => format!("A walk by the river with the kiln crew, day {i}."),
            _ => format!("River pottery market, stall {i}."),
        };
        files.push(simple(
            &format!("facts/p/t{i:03}.md"),
            &format!("turn {i}"),
            &body,
        ));
    }
    idx.apply(&upserts("c1", files)).expect("apply");
    let paths: Vec<String> = (0..80).map(|i| format!("facts/p/t{i:03}.md")).collect();
    let some: Vec<&str> = paths.iter().step_by(3).map(String::as_str).collect();
    let path = idx.path().to_path_buf();
    let check = |idx: &Index, label: &str| {
        let (fresh, _) = Index::open(&path).expect("fresh connection");
        for query in [
            "kiln pottery",
            "pottery river glaze",
            "river kiln market walk",
            "kiln",
        ] {
            assert_eq!(
                idx.term_matches(query, &some).expect("kept"),
                fresh.term_matches(query, &some).expect("fresh"),
                "{label}: {query}"
            );
            assert_eq!(
                idx.lexical(&q(query, 20)).expect("kept"),
                fresh.lexical(&q(query, 20)).expect("fresh"),
                "{label}: {query}"
            );
        }
    };
    check(&idx, "first asks");
    check(&idx, "asked again");
    // This connection applies a batch: the river files gain "glaze", the kiln ones go.
    let mut more = Vec::new();
    for i in (2..80).step_by(4) {
        more.push(simple(
            &format!("facts/p/t{i:03}.md"),
            &format!("turn {i}"),
            &format!("River glaze, day {i}."),
        ));
    }
    idx.apply(&upserts("c2", more)).expect("apply");
    let gone: Vec<&str> = paths.iter().step_by(4).map(String::as_str).collect();
    idx.apply(&removals("c3", &gone)).expect("remove");
    check(&idx, "after this connection's batches");
    // Another connection commits: this one's memo must not survive it.
    let kilns = (100..140)
        .map(|i| {
            simple(
                &format!("facts/k/t{i:03}.md"),
                &format!("turn {i}"),
                &format!("Kiln market glaze, day {i}."),
            )
        })
        .collect();
    apply_elsewhere(&path, "c4", kilns);
    check(&idx, "after another connection's commit");
}

/// Term walks are kept across asks and transactions with the database version they
/// were read at (`ranged.rs`): matched terms, coverage and the best section read
/// through the memo must equal those of a fresh connection, in a read transaction and
/// out of one, after this connection applies a batch, and after another connection
/// commits one.
#[test]
fn kept_term_walks_answer_as_fresh_ones() {
    use gitloom_index::Index;
    // Rewritten files get a new title too: the lexical arm keeps files' titles.
    let text = |i: usize, a: &str, b: &str| {
        let title = if a.starts_with("The kiln") || a.starts_with("Glaze") || a.starts_with("River")
        {
            format!("note {i}")
        } else {
            format!("note {i}, {a}")
        };
        format!("---\ntitle: {title}\n---\nIntro {i}.\n\n## First\n{a}\n\n## Second\n{b}\n")
    };
    let (_dir, mut idx) = temp_index();
    let mut files = Vec::new();
    for i in 0..60 {
        let (a, b) = match i % 3 {
            0 => ("The kiln fired pottery.", "A walk by the river."),
            1 => ("Glaze notes.", "Pottery by the kiln."),
            _ => ("River market.", "Nothing else."),
        };
        files.push(file(&format!("facts/p/t{i:03}.md"), &text(i, a, b)));
    }
    idx.apply(&upserts("c1", files)).expect("apply");
    let paths: Vec<String> = (0..60).map(|i| format!("facts/p/t{i:03}.md")).collect();
    let some: Vec<String> = paths.iter().step_by(2).cloned().collect();
    let some_refs: Vec<&str> = some.iter().map(String::as_str).collect();
    let path = idx.path().to_path_buf();
    let check = |idx: &Index, label: &str| {
        let (fresh, _) = Index::open(&path).expect("fresh connection");
        // The lexical arm's all-terms rows from kept walks against the full-text
        // query (`zebra` is in no file: an empty walk, which falls back to it).
        fresh.all_terms_by_query(true);
        for query in [
            "kiln pottery",
            "river glaze market",
            "walk",
            "kiln zebra",
            "pottery kiln river walk",
        ] {
            let lq = |text: &str| gitloom_index::LexicalQuery {
                text: text.to_owned(),
                limit: 40,
                decorate: Some(0),
                ..Default::default()
            };
            let kept = idx
                .read(|idx| idx.lexical(&lq(query)))
                .expect("kept lexical");
            let by_query = fresh.lexical(&lq(query)).expect("lexical by query");
            assert_eq!(kept, by_query, "{label}, lexical: {query}");
            assert_eq!(
                idx.lexical(&lq(query)).expect("kept lexical"),
                by_query,
                "{label}, lexical out of a transaction: {query}"
            );
        }
        fresh.all_terms_by_query(false);
        for query in ["kiln pottery", "river glaze market", "walk"] {
            let kept = idx
                .read(|idx| -> Result<_, gitloom_index::IndexError> {
                    Ok((
                        idx.term_matches(query, &some_refs)?,
                        idx.lexical_details(query, &some, Decor::Full)?,
                    ))
                })
                .expect("kept");
            assert_eq!(
                kept.0,
                fresh.term_matches(query, &some_refs).expect("fresh"),
                "{label}: {query}"
            );
            assert_eq!(
                kept.1,
                fresh
                    .lexical_details(query, &some, Decor::Full)
                    .expect("fresh"),
                "{label}: {query}"
            );
            assert_eq!(
                idx.lexical_details(query, &some, Decor::Full)
                    .expect("kept"),
                kept.1,
                "{label}, out of a transaction: {query}"
            );
        }
    };
    check(&idx, "first asks");
    check(&idx, "asked again");
    // This connection rewrites some files (their sections swap terms) and removes others.
    let mut more = Vec::new();
    for i in (0..60).step_by(4) {
        more.push(file(
            &format!("facts/p/t{i:03}.md"),
            &text(i, "Market glaze.", "The river kiln walk."),
        ));
    }
    idx.apply(&upserts("c2", more)).expect("apply");
    // Among them paths asked before: their kept ids must go.
    let gone: Vec<&str> = paths.iter().step_by(6).map(String::as_str).collect();
    idx.apply(&removals("c3", &gone)).expect("remove");
    check(&idx, "after this connection's batches");
    // Another connection commits: this one's kept walks must not survive it.
    let changed = (2..60)
        .step_by(6)
        .map(|i| {
            file(
                &format!("facts/p/t{i:03}.md"),
                &text(i, "Kiln pottery walk.", "Glaze by the river market."),
            )
        })
        .collect();
    apply_elsewhere(&path, "c4", changed);
    check(&idx, "after another connection's commit");
}

/// The lexical arm's BM25 from postings kept in memory (`bm25.rs`) equals FTS5's
/// `bm25()` bit for bit: every hit, score and rank of random queries over a random
/// store, with aliases (one that stems to its term's own token, one of two words,
/// which FTS5 scores), with integer and fractional column weights, with a tier
/// filter (FTS5 again), after this connection applies a batch and after another
/// connection commits one.
#[test]
fn kept_bm25_scores_equal_fts5s() {
    use gitloom_index::{Bm25Weights, Index, KeptScoring, Vocab, VocabGroup};
    const WORDS: [&str; 24] = [
        "kiln", "pottery", "river", "glaze", "market", "walk", "running", "runs", "garden",
        "tomato", "york", "new", "ledger", "postgres", "failover", "dog", "chicken", "allergy",
        "rent", "flat", "train", "nantes", "cousin", "funeral",
    ];
    // A few real words (stems, aliases) among 200 made-up ones, drawn with a skew:
    // some words in most files (IDF floored), most in few.
    let vocabulary: Vec<String> = WORDS
        .iter()
        .map(|w| (*w).to_owned())
        .chain((0..200).map(|k| format!("zq{k}x")))
        .collect();
    let mut rng = fastrand::Rng::with_seed(33);
    let mut words = |rng: &mut fastrand::Rng, n: usize| -> String {
        (0..n)
            .map(|_| {
                let r = rng.f64();
                vocabulary[((r * r) * vocabulary.len() as f64) as usize].as_str()
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let doc = |rng: &mut fastrand::Rng,
               i: usize,
               words: &mut dyn FnMut(&mut fastrand::Rng, usize) -> String| {
        let (t, c, b) = (rng.usize(1..5), rng.usize(0..4), rng.usize(0..40));
        let (title, cue, body) = (words(rng, t), words(rng, c), words(rng, b));
        let tier = ["facts", "rules", "skills"][i % 3];
        let cues = if cue.is_empty() {
            String::new()
        } else {
            format!("cues:\n- {cue}\n")
        };
        (
            format!("{tier}/t/n{i:03}.md"),
            format!(
                "---\ntitle: {title} {i}\n{cues}tags: [{}]\n---\n{body}\n",
                WORDS[i % WORDS.len()]
            ),
        )
    };
    let (_dir, mut idx) = temp_index();
    let mut files = Vec::new();
    for i in 0..150 {
        let (p, t) = doc(&mut rng, i, &mut words);
        files.push(file(&p, &t));
    }
    idx.apply(&upserts("c1", files)).expect("apply");
    let vocab = |groups: &[&[&str]]| {
        Vocab::new(
            groups
                .iter()
                .enumerate()
                .map(|(i, g)| VocabGroup {
                    file: "vocab/test.md".into(),
                    line: i + 1,
                    terms: g.iter().map(|t| (*t).to_owned()).collect(),
                })
                .collect(),
        )
    };
    let path = idx.path().to_path_buf();
    let mut queries: Vec<String> = (0..60)
        .map(|_| {
            let n = rng.usize(1..6);
            words(&mut rng, n)
        })
        .collect();
    queries.push("pottery zebra".into());
    queries.push("zebra".into());
    let check = |idx: &Index, label: &str, weights: Bm25Weights, v: &Vocab| {
        let (mut fts, _) = Index::open(&path).expect("second connection");
        fts.set_kept_scoring(KeptScoring::Off);
        fts.set_bm25_weights(weights);
        fts.set_vocab("v".into(), v.clone());
        let mut used = 0;
        let served = idx.kept_scored();
        for (n, text) in queries.iter().enumerate() {
            for tier in [None, Some(Tier::Facts)] {
                let lq = LexicalQuery {
                    text: text.clone(),
                    limit: 200,
                    tier: if n % 5 == 0 { tier } else { None },
                    decorate: Some(0),
                    ..Default::default()
                };
                let kept = idx.lexical(&lq).expect("kept");
                let by_fts = fts.lexical(&lq).expect("fts5");
                assert_eq!(kept, by_fts, "{label}: {text:?}");
                used += usize::from(!kept.is_empty());
            }
        }
        assert!(
            used > 60,
            "{label}: the queries match too little to test ({used})"
        );
        served
    };
    let plain = vocab(&[]);
    let aliased = vocab(&[
        &["running", "runs"],
        &["kiln", "new york"],
        &["rent", "flat"],
    ]);
    for (weights, v, label) in [
        (Bm25Weights::default(), &plain, "default weights"),
        (
            Bm25Weights {
                body: 0.5,
                title: 2.25,
                ..Bm25Weights::default()
            },
            &plain,
            "fractional weights",
        ),
        (Bm25Weights::default(), &aliased, "aliases"),
    ] {
        idx.set_bm25_weights(weights);
        idx.set_vocab("v".into(), v.clone());
        idx.set_kept_scoring(KeptScoring::Eager);
        let before = check(&idx, label, weights, v);
        let eager = idx.kept_scored() - before;
        // Every query without a tier filter or a two-word alias was scored from kept
        // postings (`zebra`, in no file, too: its list is empty).
        assert!(
            eager >= 60,
            "{label}: {eager} queries scored from kept postings"
        );
        // And by the default rule, once the words were asked before.
        idx.set_kept_scoring(KeptScoring::Auto);
        let before = check(&idx, label, weights, v);
        assert!(
            idx.kept_scored() - before >= eager / 2,
            "{label}: the default rule kept too few"
        );
    }
    idx.set_bm25_weights(Bm25Weights::default());
    idx.set_vocab("v".into(), plain.clone());
    idx.set_kept_scoring(KeptScoring::Eager);
    // A batch applied here: some files rewritten, some removed.
    let mut files = Vec::new();
    for i in (0..150).step_by(7) {
        let (p, t) = doc(&mut rng, i, &mut words);
        files.push(file(&p, &t));
    }
    idx.apply(&upserts("c2", files)).expect("apply again");
    let gone: Vec<String> = (0..150)
        .step_by(11)
        .map(|i| format!("{}/t/n{i:03}.md", ["facts", "rules", "skills"][i % 3]))
        .collect();
    let gone: Vec<&str> = gone.iter().map(String::as_str).collect();
    idx.apply(&removals("c3", &gone)).expect("remove");
    let before = check(&idx, "after an apply here", Bm25Weights::default(), &plain);
    assert!(idx.kept_scored() - before >= 60);
    // Another connection commits: the version moves.
    let mut files = Vec::new();
    for i in 150..190 {
        let (p, t) = doc(&mut rng, i, &mut words);
        files.push(file(&p, &t));
    }
    apply_elsewhere(&path, "c4", files);
    let before = check(
        &idx,
        "after a commit elsewhere",
        Bm25Weights::default(),
        &plain,
    );
    assert!(idx.kept_scored() - before >= 60);
}
