//! Every page of the web view over a real store with a known history, read over
//! HTTP the way a browser reads it: what each page shows, time travel, escaping of
//! hostile memories, and the error pages for bad input.

mod common;

use common::*;

#[test]
fn the_tree_counts_topics_and_lists_a_topics_memories() {
    let (s, _) = served_store();
    let root = get(&s.url("/ui/"));
    assert_eq!(root.status, 303, "one local store: straight to it");
    assert_eq!(root.headers["location"], "/ui/n/local/");

    let page = get(&s.url("/ui/n/local/"));
    assert_eq!(page.status, 200, "{}", page.body);
    let t = text(&page.body);
    assert!(t.contains("5 memories · 1 session transcripts"), "{t}");
    // facts 5 in all; work 3 of them, people 1, misc 1.
    assert!(t.contains("facts 5"), "{t}");
    assert!(t.contains("work 3"), "{t}");
    assert!(t.contains("people 1"), "{t}");

    let work = get(&s.url("/ui/n/local/?topic=facts/work"));
    let t = text(&work.body);
    for title in [
        "Works at Acme Robotics",
        "Works at Orbital AI",
        "Works at Nova Labs",
    ] {
        assert!(t.contains(title), "{title} listed: {t}");
    }
    assert!(
        work.body
            .contains(r#"href="/ui/n/local/m/facts/work/orbital.md""#)
    );
}

#[test]
fn a_memory_page_shows_card_body_chain_links_source_and_history_with_diffs() {
    let (s, h) = served_store();
    let page = get(&s.url("/ui/n/local/m/facts/work/orbital.md"));
    assert_eq!(page.status, 200, "{}", page.body);
    let t = text(&page.body);
    // The card.
    for part in [
        "who is my employer",
        "Orbital AI org",
        "previous-employer",
        "2026-02-10",
    ] {
        assert!(t.contains(part), "card shows {part:?}: {t}");
    }
    // The body, rendered.
    assert!(
        page.body
            .contains("<p>ML engineer at Orbital AI, on the inference team.</p>")
    );
    // Supersession both ways: it replaced Acme and Nova replaced it.
    assert!(t.contains("older 1 Works at Acme Robotics"), "{t}");
    assert!(t.contains("newer 1 Works at Nova Labs"), "{t}");
    // Links out (related + supersedes to acme) and in (nova's supersedes).
    assert!(
        t.contains("related previous-employer Works at Acme Robotics"),
        "{t}"
    );
    assert!(
        t.contains("supersedes Works at Nova Labs facts/work/nova.md"),
        "{t}"
    );
    // The transcript, with the cited message marked.
    assert!(
        t.contains("m0 user cited I start at Orbital AI on Monday."),
        "{t}"
    );
    assert!(t.contains("m1 assistant Congratulations!"), "{t}");
    // History: two versions, newest first, each with its diff.
    assert!(t.contains("remember: orbital team; nova +1 −1"), "{t}");
    assert!(t.contains("ingest: s1 (+1 ~0)"), "{t}");
    assert!(
        page.body
            .contains(r#"<span class="del">-ML engineer at Orbital AI."#),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains(r#"<span class="add">+ML engineer at Orbital AI, on the inference team."#)
    );
    assert!(page.body.contains(&format!("/ui/n/local/c/{}", h.third)));
    // The wikilink in Lena's body leads to the memory it names.
    let lena = get(&s.url("/ui/n/local/m/facts/people/lena.md"));
    assert!(
        lena.body
            .contains(r#"<a href="/ui/n/local/m/facts/work/acme.md">Works at Acme Robotics</a>"#),
        "{}",
        lena.body
    );
}

#[test]
fn time_travel_shows_every_page_as_it_was() {
    let (s, h) = served_store();
    // The tree at the first commit: only acme and lena.
    let t = text(&get(&s.url(&format!("/ui/n/local/?at={}", h.first))).body);
    assert!(t.contains("2 memories · 0 session transcripts"), "{t}");
    assert!(t.contains("Showing the store as of"), "{t}");
    // By date: 2026-02-15 is after the second commit, before the third.
    let t = text(&get(&s.url("/ui/n/local/m/facts/work/orbital.md?at=2026-02-15")).body);
    assert!(t.contains("ML engineer at Orbital AI."), "{t}");
    assert!(
        !t.contains("inference team"),
        "the later edit is not there yet: {t}"
    );
    assert!(
        !t.contains("Works at Nova Labs"),
        "nor is Nova, which superseded it later: {t}"
    );
    assert!(
        !t.contains("remember: orbital team"),
        "history stops at the moment: {t}"
    );
    // The past link graph: at the second commit acme is superseded by orbital.
    let t = text(&get(&s.url(&format!("/ui/n/local/m/facts/work/acme.md?at={}", h.second))).body);
    assert!(t.contains("newer 1 Works at Orbital AI"), "{t}");
    assert!(!t.contains("Nova"), "{t}");
    // A memory that did not exist yet shows its (empty) past and says so.
    let page = get(&s.url(&format!("/ui/n/local/m/facts/work/nova.md?at={}", h.first)));
    assert_eq!(page.status, 404, "{}", page.body);
    // A memory that existed later: its page at that moment says it is not there.
    let t = text(&get(&s.url("/ui/n/local/m/facts/work/orbital.md?at=HEAD")).body);
    assert!(t.contains("Works at Nova Labs"), "{t}");
    // The timeline at the second commit starts there.
    let t = text(&get(&s.url(&format!("/ui/n/local/timeline?at={}", h.second))).body);
    assert!(t.starts_with("Timeline") || t.contains("Timeline"), "{t}");
    assert!(
        t.contains("ingest: s1 (+1 ~0)") && !t.contains("remember: evil"),
        "{t}"
    );
    // Search at the first commit cannot find Orbital.
    let t = text(&get(&s.url(&format!("/ui/n/local/search?q=orbital&at={}", h.first))).body);
    assert!(t.contains("No answer: abstained"), "{t}");
    // Links on a past page keep the moment.
    let page = get(&s.url(&format!("/ui/n/local/?topic=facts/work&at={}", h.second)));
    assert!(
        page.body.contains(&format!(
            "/ui/n/local/m/facts/work/orbital.md?at={}",
            h.second
        )),
        "{}",
        page.body
    );
}

#[test]
fn search_shows_the_arms_the_evidence_and_why_an_answer_abstained() {
    let (s, _) = served_store();
    let page = get(&s.url("/ui/n/local/search?q=who+is+my+employer"));
    assert_eq!(page.status, 200, "{}", page.body);
    let t = text(&page.body);
    assert!(t.contains("Works at Orbital AI"), "{t}");
    assert!(t.contains("Arms that found it"), "{t}");
    assert!(t.contains("lexical"), "{t}");
    assert!(t.contains("Why it is here"), "{t}");
    assert!(
        t.contains("≥ the strong bar") || t.contains("≥ the weak bar"),
        "{t}"
    );
    assert!(t.contains("Every arm's candidates (explain)"), "{t}");

    let page = get(&s.url("/ui/n/local/search?q=what+is+the+capital+of+peru"));
    let t = text(&page.body);
    assert!(t.contains("No answer: abstained"), "{t}");
    assert!(t.contains("Why it abstained"), "{t}");
    assert!(t.contains("no arm found a candidate"), "{t}");
    // A filter the request names is applied.
    let t = text(&get(&s.url("/ui/n/local/search?q=who+is+my+employer&tier=rules")).body);
    assert!(t.contains("No answer: abstained"), "{t}");
}

#[test]
fn the_timeline_lists_each_commit_with_what_it_touched() {
    let (s, h) = served_store();
    let page = get(&s.url("/ui/n/local/timeline"));
    assert_eq!(page.status, 200, "{}", page.body);
    let t = text(&page.body);
    let evil = t.find("remember: evil").expect("newest commit");
    let ingest = t.find("ingest: s1 (+1 ~0)").expect("the ingest commit");
    assert!(evil < ingest, "newest first: {t}");
    assert!(
        t.contains("+ Works at Orbital AI facts/work/orbital.md"),
        "{t}"
    );
    assert!(t.contains("~ Works at Orbital AI"), "the edit: {t}");
    assert!(t.contains("transcript sessions/2026-02-10/s1.md"), "{t}");
    // A commit's page has every file's diff.
    let page = get(&s.url(&format!("/ui/n/local/c/{}", h.third)));
    assert_eq!(page.status, 200, "{}", page.body);
    let t = text(&page.body);
    assert!(t.contains("2 file(s) changed"), "{t}");
    assert!(
        page.body
            .contains(r#"<span class="add">+Research engineer at Nova Labs."#)
    );
}

#[test]
fn hostile_memory_content_is_shown_as_text_never_run() {
    let (s, _) = served_store();
    let page = get(&s.url("/ui/n/local/m/facts/misc/evil.md"));
    assert_eq!(page.status, 200, "{}", page.body);
    let csp = page.headers["content-security-policy"]
        .to_str()
        .expect("csp");
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    assert_eq!(page.headers["x-content-type-options"], "nosniff");
    let body = &page.body;
    // No hostile element, handler or script URL reached the markup...
    assert_inert(body);
    assert!(tags(body).len() > 50, "the scanner read the page");
    // ...and all of it is on the page as text.
    for shown in [
        "Evil &lt;script&gt;window.__pwned = 1&lt;/script&gt; title",
        "&lt;img src=x onerror=window.__pwned=2&gt;",
        "&lt;script&gt;window.__pwned = 5&lt;/script&gt;",
        "click me",
    ] {
        assert!(body.contains(shown), "{shown:?} shown as text:\n{body}");
    }
    // The same on the pages that list it.
    for url in [
        "/ui/n/local/?topic=facts/misc",
        "/ui/n/local/timeline",
        "/ui/n/local/search?q=evil+title",
    ] {
        let page = get(&s.url(url));
        assert_inert(&page.body);
        assert!(
            page.body.contains("Evil &lt;script&gt;"),
            "{url}: {}",
            page.body
        );
    }
}

#[test]
fn bad_input_gets_a_clear_4xx_page_naming_it() {
    let (s, _) = served_store();
    let root = s.dir.path().display().to_string();
    let cases = [
        ("/ui/n/local/?at=no-such-rev", 400, "no-such-rev"),
        (
            "/ui/n/local/m/facts/work/none.md",
            404,
            "facts/work/none.md",
        ),
        ("/ui/n/local/m/../../etc/passwd", 400, "not a store path"),
        (
            "/ui/n/local/search?q=x&limit=many",
            400,
            "limit must be a whole number",
        ),
        (
            "/ui/n/local/search?q=x&limit=0",
            400,
            "limit must be between 1 and 50",
        ),
        ("/ui/n/local/search?q=x&tier=planets", 400, "unknown tier"),
        ("/ui/n/local/?topic=planets/mars", 400, "not in a tier"),
        (
            "/ui/n/local/timeline?skip=-1",
            400,
            "skip must be a whole number",
        ),
        (
            "/ui/n/local/c/0000000000000000000000000000000000000000",
            400,
            "cannot resolve",
        ),
        ("/ui/n/elsewhere/", 404, "no store \"elsewhere\" here"),
        ("/ui/no/such/page", 404, "there is no page /ui/no/such/page"),
    ];
    for (url, status, says) in cases {
        let page = get(&s.url(url));
        assert_eq!(page.status, status, "{url}: {}", page.body);
        assert!(
            page.headers["content-type"]
                .to_str()
                .is_ok_and(|c| c.starts_with("text/html")),
            "{url}: an HTML page"
        );
        let t = text(&page.body);
        assert!(t.contains(says), "{url} says {says:?}: {t}");
        assert!(!page.body.contains(&root), "{url} leaks a server path: {t}");
    }
}

#[test]
fn assets_are_served_from_the_binary() {
    let (s, _) = served_store();
    let css = get(&s.url("/ui/static/app.css"));
    assert_eq!(css.status, 200);
    assert!(
        css.headers["content-type"]
            .to_str()
            .is_ok_and(|c| c.starts_with("text/css"))
    );
    assert!(
        css.body.contains("@media (max-width"),
        "a layout for phones"
    );
    let js = get(&s.url("/ui/static/app.js"));
    assert_eq!(js.status, 200);
    assert!(js.body.contains("keydown"));
    // Pages name them with the build, and nothing from elsewhere.
    let page = get(&s.url("/ui/n/local/"));
    assert!(page.body.contains("/ui/static/app.css?v="));
    assert!(
        !page.body.contains("http://") && !page.body.contains("https://"),
        "{}",
        page.body
    );
}

#[test]
fn the_inertness_check_catches_what_it_looks_for() {
    let fails = |html: &'static str| std::panic::catch_unwind(|| assert_inert(html)).is_err();
    assert!(fails(r#"<p><img src="x"></p>"#));
    assert!(fails(r#"<p onclick="x()">a</p>"#));
    assert!(fails(r#"<a href=" JavaScript:alert(1)">a</a>"#));
    assert!(fails(r#"<script>alert(1)</script>"#));
    assert!(fails(r#"<iframe src="data:text/html,x"></iframe>"#));
    assert!(!fails(
        r#"<script src="/ui/static/app.js?v=1" defer></script><p title="a &gt; b">&lt;img onerror=x&gt;</p>"#
    ));
}
