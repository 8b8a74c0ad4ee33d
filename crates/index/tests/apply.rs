mod common;

use std::collections::BTreeMap;

use common::*;
use gitloom_index::testutil::memory_text;
use gitloom_index::{Index, LexicalQuery, LinkKind, PriorAsks, SyncBatch};

fn q(text: &str) -> LexicalQuery {
    LexicalQuery {
        text: text.into(),
        limit: 50,
        ..LexicalQuery::default()
    }
}

#[test]
fn upsert_remove_reupsert() {
    let (_dir, mut idx) = temp_index();
    assert_eq!(idx.state().expect("state"), None);
    let st = idx
        .apply(&upserts(
            "c1",
            vec![
                simple("facts/pets/cat.md", "Cat named Mellob", "A grey cat."),
                simple("facts/pets/dog.md", "Dog", "No dog, actually."),
            ],
        ))
        .expect("apply");
    assert_eq!((st.upserted, st.removed), (2, 0));
    assert_eq!(idx.state().expect("state").expect("some").commit, "c1");
    assert_eq!(idx.lexical(&q("grey")).expect("q").len(), 1);

    // Changing a file replaces every row of it.
    idx.apply(&upserts(
        "c2",
        vec![simple(
            "facts/pets/cat.md",
            "Cat named Mellob",
            "A black cat.",
        )],
    ))
    .expect("apply");
    assert!(idx.lexical(&q("grey")).expect("q").is_empty());
    assert_eq!(idx.lexical(&q("black")).expect("q").len(), 1);
    assert_eq!(idx.stats().expect("stats").files, 2);

    let st = idx
        .apply(&removals(
            "c3",
            &["facts/pets/cat.md", "facts/pets/never.md"],
        ))
        .expect("apply");
    assert_eq!(st.removed, 1);
    assert!(idx.lexical(&q("black")).expect("q").is_empty());
    assert!(idx.file("facts/pets/cat.md").expect("file").is_none());
    assert_eq!(idx.tree(Some("facts/pets")).expect("tree").files.len(), 1);

    idx.apply(&upserts(
        "c4",
        vec![simple(
            "facts/pets/cat.md",
            "Cat named Mellob",
            "A black cat.",
        )],
    ))
    .expect("apply");
    assert_eq!(idx.lexical(&q("black")).expect("q").len(), 1);
    let s = idx.stats().expect("stats");
    assert_eq!(s.files, 2);
    assert_eq!(s.per_tier["facts"], 2);
    assert_eq!(idx.state().expect("state").expect("some").tree, "tree-c4");
}

#[test]
fn file_row_has_metadata_and_reverse_supersession() {
    let (_dir, mut idx) = temp_index();
    let new = "---\ntitle: Works at Orbital AI\nsummary: Joined in 2026.\ntags: [work]\ncues:\n  - where do I work\nentities:\n  - Orbital AI (org)\n  - {name: Lena Fischer, kind: person, role: manager}\nsupersedes: facts/work/acme.md\nconfidence: 0.9\ncreated: 2026-07-30T19:12:00Z\nvalid_from: 2026-08-03\ntimeline:\n  - {date: 2026-08-03, text: first day}\nmood: good\n---\nReports to [[Lena Fischer]].\n";
    idx.apply(&upserts(
        "c1",
        vec![
            file("facts/work/orbital.md", new),
            simple("facts/work/acme.md", "Worked at Acme", "Old job."),
            simple("facts/people/lena-fischer.md", "Lena — manager", "Manager."),
        ],
    ))
    .expect("apply");
    let f = idx.file("facts/work/orbital.md").expect("ok").expect("row");
    assert_eq!(f.topic, "work");
    assert_eq!(f.slug, "orbital");
    assert_eq!(f.summary.as_deref(), Some("Joined in 2026."));
    assert_eq!(f.confidence, Some(0.9));
    assert_eq!(f.supersedes, vec!["facts/work/acme.md"]);
    assert_eq!(f.tags, vec!["work"]);
    assert_eq!(f.cues, vec!["where do I work"]);
    assert_eq!(
        f.valid_from.as_ref().map(|s| s.text.as_str()),
        Some("2026-08-03")
    );
    assert_eq!(f.created.as_ref().map(|s| s.unix), Some(1785438720));
    assert_eq!(f.extra.get("mood").and_then(|v| v.as_str()), Some("good"));
    assert_eq!(f.blob.len(), 40);
    let old = idx.file("facts/work/acme.md").expect("ok").expect("row");
    assert_eq!(old.superseded_by, vec!["facts/work/orbital.md"]);
    // Wikilink resolved by slug (title differs), supersedes by path.
    let links = idx.links_from("facts/work/orbital.md").expect("links");
    assert_eq!(links.len(), 2);
    assert_eq!(links[0].kind, LinkKind::Wiki);
    assert_eq!(
        links[0].resolved.as_deref(),
        Some("facts/people/lena-fischer.md")
    );
    assert_eq!(links[1].kind, LinkKind::Supersedes);
    let m = idx.mentions_of("lena fischer").expect("mentions");
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].role.as_deref(), Some("manager"));
    let s = idx.stats().expect("stats");
    assert_eq!((s.entities, s.mentions, s.timeline), (2, 2, 1));
    // Removing the only mentioning file drops its entities.
    idx.apply(&removals("c2", &["facts/work/orbital.md"]))
        .expect("apply");
    let s = idx.stats().expect("stats");
    assert_eq!((s.entities, s.mentions, s.links), (0, 0, 0));
    assert!(
        idx.file("facts/work/acme.md")
            .expect("ok")
            .expect("row")
            .superseded_by
            .is_empty()
    );
}

/// The read path's prior facts: supersession both ways and the timeline, the last two
/// read only when asked for (`PriorAsks`), and the same whether or not the others are.
#[test]
fn prior_facts_read_what_is_asked_for() {
    let (_dir, mut idx) = temp_index();
    let new = "---\ntitle: Works at Orbital AI\nsupersedes: facts/work/acme.md\nvalid_from: 2026-08-03\ntimeline:\n  - {date: 2026-08-03, text: first day}\n---\nStarted.\n";
    idx.apply(&upserts(
        "c1",
        vec![
            file("facts/work/orbital.md", new),
            simple("facts/work/acme.md", "Worked at Acme", "Old job."),
        ],
    ))
    .expect("apply");
    let all = PriorAsks {
        timeline: true,
        supersedes: true,
    };
    let facts = |path: &str, asks: PriorAsks| {
        idx.prior_facts(path, asks)
            .expect("prior facts")
            .expect("indexed")
    };
    let orbital = facts("facts/work/orbital.md", all);
    assert_eq!(
        (
            orbital.superseded,
            orbital.supersedes,
            orbital.dated,
            orbital.says_dates
        ),
        (false, Some(true), Some(true), Some(true))
    );
    let acme = facts("facts/work/acme.md", all);
    assert_eq!(
        (
            acme.superseded,
            acme.supersedes,
            acme.dated,
            acme.says_dates
        ),
        (true, Some(false), Some(false), Some(false))
    );
    for (asks, timeline, supersedes) in [
        (PriorAsks::default(), None, None),
        (
            PriorAsks {
                timeline: true,
                supersedes: false,
            },
            Some(true),
            None,
        ),
        (
            PriorAsks {
                timeline: false,
                supersedes: true,
            },
            None,
            Some(true),
        ),
    ] {
        let f = facts("facts/work/orbital.md", asks);
        assert_eq!(
            (f.says_dates, f.supersedes),
            (timeline, supersedes),
            "{asks:?}"
        );
        assert_eq!(f.dated, timeline);
        assert_eq!(
            (f.superseded, f.valid_to, &f.title),
            (false, None, &orbital.title)
        );
    }
    assert!(idx.prior_facts("facts/none.md", all).expect("ok").is_none());
}

#[test]
fn dangling_links_heal_and_break() {
    let (_dir, mut idx) = temp_index();
    let src = "---\ntitle: Source\nrelated:\n  - \"friend: facts/people/arjun.md\"\n---\nSee [[Arjun Nair]] and [[facts/people/arjun]] and [[nowhere]].\n";
    let st = idx
        .apply(&upserts("c1", vec![file("facts/a/src.md", src)]))
        .expect("apply");
    assert_eq!(st.links_dangling, 4);
    assert_eq!(idx.stats().expect("stats").dangling_links, 4);

    let st = idx
        .apply(&upserts(
            "c2",
            vec![simple("facts/people/arjun.md", "Arjun Nair", "A friend.")],
        ))
        .expect("apply");
    assert_eq!(st.links_resolved, 3);
    assert_eq!(st.links_dangling, 1);
    let links = idx.links_from("facts/a/src.md").expect("links");
    assert_eq!(
        links.iter().filter(|l| l.resolved.is_some()).count(),
        3,
        "{links:?}"
    );
    let rel = links
        .iter()
        .find(|l| l.kind == LinkKind::Related)
        .expect("related link");
    assert_eq!(rel.label.as_deref(), Some("friend"));
    assert_eq!(idx.links_to("facts/people/arjun.md").expect("to").len(), 3);

    // Renaming the title breaks only the title link.
    idx.apply(&upserts(
        "c3",
        vec![simple("facts/people/arjun.md", "Arjun", "A friend.")],
    ))
    .expect("apply");
    assert_eq!(idx.links_to("facts/people/arjun.md").expect("to").len(), 2);

    let st = idx
        .apply(&removals("c4", &["facts/people/arjun.md"]))
        .expect("apply");
    assert_eq!(st.links_dangling, 4);
    assert!(
        idx.links_to("facts/people/arjun.md")
            .expect("to")
            .is_empty()
    );
}

#[test]
fn problems_recorded_and_cleared() {
    let (_dir, mut idx) = temp_index();
    let mut b = upserts("c1", vec![]);
    b.problems.push(problem("facts/a/bad.md", "no frontmatter"));
    b.problems.push(problem("facts/a/worse.md", "bad date"));
    idx.apply(&b).expect("apply");
    assert_eq!(idx.problems().expect("p").len(), 2);
    assert_eq!(idx.stats().expect("s").problems, 2);
    // Fixed file: upserted, its problem goes.
    idx.apply(&upserts(
        "c2",
        vec![simple("facts/a/bad.md", "Now fine", "ok")],
    ))
    .expect("apply");
    let p = idx.problems().expect("p");
    assert_eq!(p, vec![problem("facts/a/worse.md", "bad date")]);
    // A valid file going invalid: removed + problem.
    let mut b = removals("c3", &["facts/a/bad.md"]);
    b.problems.push(problem("facts/a/bad.md", "broken again"));
    idx.apply(&b).expect("apply");
    assert!(idx.file("facts/a/bad.md").expect("f").is_none());
    assert_eq!(idx.problems().expect("p").len(), 2);
    // Deleted from the tree.
    idx.apply(&removals("c4", &["facts/a/bad.md", "facts/a/worse.md"]))
        .expect("apply");
    assert!(idx.problems().expect("p").is_empty());
}

fn recount(idx: &Index) -> BTreeMap<String, (u64, u64)> {
    let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for p in idx.paths().expect("paths") {
        let dir = &p[..p.rfind('/').expect("has dir")];
        m.entry(dir.to_owned()).or_default().0 += 1;
        let mut cur = dir;
        loop {
            m.entry(cur.to_owned()).or_default().1 += 1;
            match cur.rfind('/') {
                Some(i) => cur = &cur[..i],
                None => break,
            }
        }
    }
    m
}

#[test]
fn topic_counts_match_recount_after_random_sequences() {
    let (_dir, mut idx) = temp_index();
    let mut rng = fastrand::Rng::with_seed(7);
    let dirs = [
        "facts",
        "facts/a",
        "facts/a/b",
        "facts/a/b/c",
        "facts/d",
        "rules/x",
        "skills",
        "incidents/y/z",
    ];
    for round in 0..60 {
        let mut b = SyncBatch {
            commit: format!("c{round}"),
            tree: format!("t{round}"),
            ..SyncBatch::default()
        };
        for _ in 0..rng.usize(1..6) {
            let path = format!("{}/f{}.md", dirs[rng.usize(..dirs.len())], rng.usize(..6));
            if rng.bool() {
                b.upserted
                    .push(simple(&path, &format!("T {round}"), "body text"));
            } else {
                b.removed.push(path);
            }
        }
        if round % 17 == 16 {
            // A rebuild from the current file set.
            b.full = true;
            b.removed.clear();
            let mut keep = b.upserted.clone();
            for p in idx.paths().expect("paths") {
                if !keep.iter().any(|f| f.path.as_str() == p) {
                    keep.push(simple(&p, "kept", "body"));
                }
            }
            b.upserted = keep;
        }
        idx.apply(&b).expect("apply");
        let expected = recount(&idx);
        let got: BTreeMap<String, (u64, u64)> = idx
            .topics()
            .expect("topics")
            .into_iter()
            .map(|t| (t.topic, (t.direct, t.total)))
            .collect();
        assert_eq!(got, expected, "round {round}");
        // tree() agrees at each level.
        let root = idx.tree(None).expect("root");
        assert_eq!(root.total as usize, idx.paths().expect("paths").len());
        for (topic, (direct, total)) in &expected {
            let t = idx.tree(Some(topic)).expect("tree");
            assert_eq!(t.files.len() as u64, *direct, "{topic}");
            assert_eq!(t.total, *total, "{topic}");
            let child_sum: u64 = t.children.iter().map(|c| c.total).sum();
            assert_eq!(child_sum + direct, *total, "{topic}");
        }
    }
}

#[test]
fn failing_batch_leaves_previous_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    let (mut idx, _) = Index::open(&db).expect("open");
    idx.apply(&upserts(
        "c1",
        vec![
            simple("facts/a/one.md", "One", "alpha"),
            simple("facts/a/two.md", "Two", "beta"),
        ],
    ))
    .expect("apply");
    let before = (
        idx.stats().expect("s"),
        idx.topics().expect("t"),
        idx.lexical(&q("alpha beta gamma")).expect("q"),
    );
    idx.fail_apply_after(Some(1));
    let mut b = upserts(
        "c2",
        vec![
            simple("facts/b/three.md", "Three", "gamma"),
            simple("facts/b/four.md", "Four", "delta"),
        ],
    );
    b.removed.push("facts/a/one.md".into());
    b.problems.push(problem("facts/c/x.md", "bad"));
    assert!(idx.apply(&b).is_err());
    idx.fail_apply_after(None);
    let after = (
        idx.stats().expect("s"),
        idx.topics().expect("t"),
        idx.lexical(&q("alpha beta gamma")).expect("q"),
    );
    assert_eq!(before, after);
    assert_eq!(idx.state().expect("s").expect("some").commit, "c1");
    // Another connection sees the same.
    let (other, status) = Index::open(&db).expect("open");
    assert_eq!(status, gitloom_index::OpenStatus::Reused);
    assert_eq!(other.stats().expect("s"), before.0);
    // And the batch applies cleanly afterwards.
    idx.apply(&b).expect("apply");
    assert_eq!(other.stats().expect("s").files, 3);
}

#[test]
fn reader_on_second_connection_sees_whole_commits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    let (mut writer, _) = Index::open(&db).expect("open");
    let (reader, _) = Index::open(&db).expect("open");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let db2 = db.clone();
    let h = std::thread::spawn(move || {
        let _ = &reader;
        let (r, _) = Index::open(&db2).expect("open");
        let mut seen = 0;
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            let n = r.stats().expect("stats").files;
            assert!(n % 50 == 0, "saw a partial batch: {n} files");
            seen += 1;
        }
        seen
    });
    for round in 0..10 {
        let files = (0..50)
            .map(|i| simple(&format!("facts/r{round}/f{i}.md"), "T", "body words"))
            .collect();
        writer
            .apply(&upserts(&format!("c{round}"), files))
            .expect("apply");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(h.join().expect("reader thread") > 0);
}

#[test]
fn non_memory_paths_are_ignored() {
    let (_dir, mut idx) = temp_index();
    let st = idx
        .apply(&upserts(
            "c1",
            vec![file(
                "sessions/2026-07-30/s-1.md",
                &memory_text("Transcript", &[], "raw talk"),
            )],
        ))
        .expect("apply");
    assert_eq!(st.upserted, 0);
    assert_eq!(idx.stats().expect("s").files, 0);
}

/// `Index::read` is one transaction: what another connection commits meanwhile is not
/// seen until it ends, a read inside it joins it, and an error ends it cleanly.
#[test]
fn reads_in_one_transaction_see_one_snapshot() {
    let (dir, mut idx) = temp_index();
    idx.apply(&upserts(
        "c1",
        vec![simple(
            "facts/pets/cat.md",
            "Cat named Mellob",
            "A grey cat.",
        )],
    ))
    .expect("apply");
    let (mut other, _) =
        Index::open(&dir.path().join(".gitloom/index.db")).expect("second connection");
    let (before, during) = idx
        .read(|i| {
            let before = i.lexical(&q("grey"))?.len();
            other.apply(&upserts(
                "c2",
                vec![simple(
                    "facts/pets/cat.md",
                    "Cat named Mellob",
                    "A black cat.",
                )],
            ))?;
            let during = i.read(|inner| {
                Ok::<_, gitloom_index::IndexError>(inner.lexical(&q("grey"))?.len())
            })?;
            Ok::<_, gitloom_index::IndexError>((before, during))
        })
        .expect("read");
    assert_eq!(
        (before, during),
        (1, 1),
        "the snapshot held for the whole read"
    );
    assert!(
        idx.lexical(&q("grey")).expect("q").is_empty(),
        "the next read sees c2"
    );

    let failed = idx.read(|i| {
        i.lexical(&q("black"))?;
        Err::<(), _>(gitloom_index::IndexError::Invalid {
            path: "test".into(),
            message: "a failed read".into(),
        })
    });
    assert!(failed.is_err());
    assert_eq!(
        idx.lexical(&q("black"))
            .expect("usable after an error")
            .len(),
        1
    );
}

fn person_memory(title: &str, people: &[&str], created: &str, sources: &str, body: &str) -> String {
    let ents: Vec<String> = people.iter().map(|p| format!("\"{p} (person)\"")).collect();
    format!(
        "---\ntitle: {title}\nentities: [{}]\ncreated: {created}\nsources: [\"{sources}\"]\n---\n{body}\n",
        ents.join(", ")
    )
}

#[test]
fn a_person_is_found_by_first_name_or_surname_and_introduced_where_first_said() {
    let (_dir, mut idx) = temp_index();
    idx.apply(&upserts(
        "c1",
        vec![
            file(
                "facts/club.md",
                &person_memory(
                    "Run club",
                    &["Odile Perrin"],
                    "2026-07-07T00:00:00Z",
                    "sessions/2026-07-07/a.md#m2",
                    "Coach is Odile Perrin.",
                ),
            ),
            file(
                "facts/joined.md",
                &person_memory(
                    "Joined a club",
                    &["Odile Perrin"],
                    "2026-07-07T00:00:00Z",
                    "sessions/2026-07-07/a.md#m4",
                    "Odile Perrin again.",
                ),
            ),
            file(
                "facts/half.md",
                &person_memory(
                    "Odile says run a half",
                    &["Odile"],
                    "2026-12-01T00:00:00Z",
                    "sessions/2026-12-01/b.md#m0",
                    "Odile says run a half.",
                ),
            ),
        ],
    ))
    .expect("apply");
    // The one-word name finds the person it names exactly and the full name it begins.
    let by_first: Vec<String> = idx
        .entities_in("who is odile")
        .expect("lookup")
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert!(by_first.contains(&"Odile".to_owned()), "{by_first:?}");
    assert!(
        by_first.contains(&"Odile Perrin".to_owned()),
        "{by_first:?}"
    );
    let by_surname: Vec<String> = idx
        .entities_in("who's perrin again")
        .expect("lookup")
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(by_surname, vec!["Odile Perrin".to_owned()]);
    // Introduced where first said: the earlier date, then the earlier message.
    let ids: Vec<i64> = idx
        .entities_in("odile")
        .expect("lookup")
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(
        idx.introductions(&ids, &[]).expect("introductions"),
        vec!["facts/club.md".to_owned()]
    );
    // A name the store says nothing about introduces nothing.
    assert!(
        idx.introductions(&[], &["nobody"])
            .expect("none")
            .is_empty()
    );
    // Nor do mentions with no order between them (one date, no messages cited).
    let same_day = |title: &str| {
        format!(
            "---\ntitle: {title}\nentities: [\"Fenna Quill (person)\"]\ncreated: 2026-01-01T00:00:00Z\n---\nFenna Quill.\n"
        )
    };
    idx.apply(&upserts(
        "c2",
        vec![
            file("facts/f1.md", &same_day("One")),
            file("facts/f2.md", &same_day("Two")),
        ],
    ))
    .expect("apply");
    let ids: Vec<i64> = idx
        .entities_in("fenna quill")
        .expect("lookup")
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids.len(), 1);
    assert!(idx.introductions(&ids, &[]).expect("unordered").is_empty());
    // A long text (a session's transcript) is held against the entity tables' words
    // first; each name is found in it as in a short text of its own, at its place.
    let filler = "we talked about the weather and the garden for a while ".repeat(8);
    let long = format!("{filler} then PERRIN came, {filler} and fenna quill and odile");
    assert!(long.split_whitespace().count() >= 64);
    let found: Vec<(String, String)> = idx
        .entities_in(&long)
        .expect("long lookup")
        .into_iter()
        .map(|m| (m.name, m.alias))
        .collect();
    // Longer names first, then by place; a person found once, by the first words
    // that named them.
    let mut expected: Vec<(String, String)> = Vec::new();
    for short in ["fenna quill", "perrin", "odile"] {
        for m in idx.entities_in(short).expect("short lookup") {
            if !expected.iter().any(|(n, _)| *n == m.name) {
                expected.push((m.name, m.alias));
            }
        }
    }
    assert_eq!(found, expected);
}
