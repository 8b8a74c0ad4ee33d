mod common;

use common::*;
use gitloom_store::{Batch, StoreError};

fn ts(s: &str) -> jiff::Timestamp {
    s.parse().expect("timestamp")
}

#[test]
fn resolve_revisions_and_dates() {
    let (dir, store) = new_store();
    let c1 = store
        .commit(
            &Batch::new("one")
                .put(sp("facts/a.md"), "1")
                .at(ts("2026-01-10T12:00:00Z")),
        )
        .expect("commit")
        .expect("changed");
    let c2 = store
        .commit(
            &Batch::new("two")
                .put(sp("facts/a.md"), "2")
                .at(ts("2026-01-20T12:00:00Z")),
        )
        .expect("commit")
        .expect("changed");

    assert_eq!(store.resolve("HEAD").expect("HEAD"), c2.commit);
    assert_eq!(store.resolve("main").expect("main"), c2.commit);
    assert_eq!(store.resolve("HEAD~1").expect("HEAD~1"), c1.commit);
    assert_eq!(
        store.resolve(&c1.commit.to_string()).expect("sha"),
        c1.commit
    );
    assert_eq!(
        store
            .resolve(&c1.commit.to_string()[..10])
            .expect("short sha"),
        c1.commit
    );
    assert_eq!(
        git(dir.path(), &["rev-parse", "HEAD~1"]).trim(),
        store.resolve("HEAD~1").expect("HEAD~1").to_string()
    );

    assert_eq!(store.resolve("2026-01-15").expect("date"), c1.commit);
    assert_eq!(
        store.resolve("2026-01-10").expect("same day, end of day"),
        c1.commit
    );
    assert_eq!(store.resolve("2026-01-20").expect("date"), c2.commit);
    assert_eq!(
        store.resolve("2026-01-20T11:59:59Z").expect("ts"),
        c1.commit
    );
    assert_eq!(
        store.resolve("2026-01-20T13:00:00+01:00").expect("ts"),
        c2.commit
    );
    assert_eq!(store.resolve("2030-01-01").expect("future"), c2.commit);

    // The init commit was made now, after both: a date before the init commit has no answer.
    let err = store.resolve("2000-01-01").expect_err("too early");
    assert!(
        matches!(&err, StoreError::BadRevision { rev, .. } if rev == "2000-01-01"),
        "{err}"
    );
    let err = store.resolve("no-such-branch").expect_err("bad rev");
    assert!(err.to_string().contains("no-such-branch"), "{err}");
}

#[test]
fn log_lists_newest_first_and_filters_by_path() {
    let (_dir, store) = new_store();
    let a1 = put(&store, "facts/a.md", "1");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let b1 = put(&store, "facts/b.md", "1");
    let a2 = store
        .commit(
            &Batch::new("edit a\n\ndetails")
                .put(sp("facts/a.md"), "2")
                .at(ts("2099-01-01T00:00:00Z")),
        )
        .expect("commit")
        .expect("changed");
    let a3 = store
        .commit(
            &Batch::new("forget a")
                .delete(sp("facts/a.md"))
                .at(ts("2099-01-02T00:00:00Z")),
        )
        .expect("commit")
        .expect("changed");

    let all = store.log(None, None).expect("log");
    assert_eq!(all.len(), 5);
    assert_eq!(all[0].id, a3.commit);
    assert_eq!(all[1].id, a2.commit);
    assert_eq!(all[1].summary, "edit a");
    assert_eq!(all[1].message, "edit a\n\ndetails");
    assert_eq!(all[4].summary, "init: gitloom store");
    let ids: Vec<_> = all.iter().map(|c| c.id).collect();
    assert!(ids.contains(&b1.commit));

    let a = store.log(Some(&sp("facts/a.md")), None).expect("log a");
    assert_eq!(
        a.iter().map(|c| c.id).collect::<Vec<_>>(),
        vec![a3.commit, a2.commit, a1.commit]
    );
    let limited = store.log(Some(&sp("facts/a.md")), Some(2)).expect("log a");
    assert_eq!(limited.len(), 2);
    assert!(
        store
            .log(Some(&sp("facts/none.md")), None)
            .expect("log")
            .is_empty()
    );
}

#[test]
fn log_from_a_commit_is_the_history_as_it_was_then() {
    let (_dir, store) = new_store();
    let mut commits = Vec::new();
    for (i, path) in ["facts/a.md", "facts/b.md", "facts/a.md"]
        .iter()
        .enumerate()
    {
        let c = store
            .commit(
                &Batch::new(format!("c{i}"))
                    .put(sp(path), format!("v{i}"))
                    .at(ts(&format!("2026-02-0{}T12:00:00Z", i + 1))),
            )
            .expect("commit")
            .expect("changed");
        commits.push(c.commit);
    }
    // `init` made a root commit before ours.
    let from_middle = store.log_from(commits[1], None, None).expect("log_from");
    let ids: Vec<_> = from_middle.iter().map(|c| c.id).collect();
    assert_eq!(ids.len(), 3, "c1, c0 and the root");
    assert_eq!(
        ids[..2],
        [commits[1], commits[0]],
        "newest first, from the given commit"
    );
    assert_eq!(from_middle[0].parent, Some(commits[0]));
    assert_eq!(from_middle[1].parent, Some(ids[2]));
    assert_eq!(from_middle[2].parent, None, "the root commit has no parent");
    // With a path: only the commits that changed it, still from that commit back.
    let a = store
        .log_from(commits[1], Some(&sp("facts/a.md")), None)
        .expect("log_from path");
    assert_eq!(a.iter().map(|c| c.id).collect::<Vec<_>>(), vec![commits[0]]);
    // `log` is `log_from(HEAD)`.
    let head = store.log(None, None).expect("log");
    assert_eq!(
        head.iter().map(|c| c.id).take(3).collect::<Vec<_>>(),
        vec![commits[2], commits[1], commits[0]]
    );
}
