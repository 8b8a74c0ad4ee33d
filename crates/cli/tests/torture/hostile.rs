//! Hostile input: each is a clear error or a safe refusal; nothing is written
//! outside the store and nothing already stored is lost.

use std::path::Path;

use crate::common::*;

/// Runs a write that must be refused; returns its stderr. HEAD must not move.
fn refused(dir: &Path, args: &[&str], stdin: &[u8], expect: &str) -> String {
    let head = git(dir, &["rev-parse", "HEAD"]);
    let out = run(dir, args, stdin);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} was accepted");
    assert!(
        err.contains(expect),
        "{args:?}: expected {expect:?} in: {err}"
    );
    assert_eq!(
        git(dir, &["rev-parse", "HEAD"]),
        head,
        "{args:?} moved HEAD"
    );
    err
}

fn store_with_one() -> tempfile::TempDir {
    let repo = new_store();
    ok(
        repo.path(),
        &["write", "facts/keep/one.md"],
        memory("keep me", "precious").as_bytes(),
    );
    repo
}

fn still_there(dir: &Path) {
    assert_eq!(
        git(dir, &["show", "HEAD:facts/keep/one.md"]),
        memory("keep me", "precious")
    );
    assert_sound(dir);
}

#[test]
fn yaml_bombs_and_deep_nesting_are_refused() {
    let repo = store_with_one();
    let dir = repo.path();
    let mut bomb = String::from("---\ntitle: t\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = format!("*a{}", i - 1);
        bomb.push_str(&format!(
            "a{i}: &a{i} [{p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}]\n"
        ));
    }
    bomb.push_str("---\nboom\n");
    let err = refused(
        dir,
        &["write", "facts/x/bomb.md"],
        bomb.as_bytes(),
        "facts/x/bomb.md",
    );
    assert!(err.contains("frontmatter"), "{err}");
    let deep = format!(
        "---\ntitle: t\nx: {}{}\n---\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    refused(
        dir,
        &["write", "facts/x/deep.md"],
        deep.as_bytes(),
        "facts/x/deep.md",
    );
    let deep_map = format!(
        "---\ntitle: t\n{}\n---\n",
        (0..200)
            .map(|i| format!("{}k{i}:", "  ".repeat(i)))
            .collect::<Vec<_>>()
            .join("\n")
    );
    refused(
        dir,
        &["write", "facts/x/deepmap.md"],
        deep_map.as_bytes(),
        "facts/x/deepmap.md",
    );
    still_there(dir);
}

#[test]
fn huge_bodies_and_nul_bytes_are_refused() {
    let repo = store_with_one();
    let dir = repo.path();
    let mut huge = memory("huge", "").into_bytes();
    huge.resize(100 * 1024 * 1024, b'a');
    refused(dir, &["write", "facts/x/huge.md"], &huge, "at most");
    refused(
        dir,
        &["write", "sessions/2026-01-01/huge.md"],
        &huge,
        "at most",
    );
    refused(
        dir,
        &["write", "facts/x/nul-byte.md"],
        b"---\ntitle: t\n---\na\0b\n",
        "NUL",
    );
    refused(
        dir,
        &["write", "facts/x/nul-byte.md"],
        b"---\ntitle: a\0b\n---\n",
        "NUL",
    );
    refused(
        dir,
        &["write", "sessions/2026-01-01/nul-byte.md"],
        b"a\0b",
        "NUL",
    );
    refused(
        dir,
        &["write", "facts/x/bin.md"],
        b"---\ntitle: t\n---\n\xff\xfe",
        "UTF-8",
    );
    still_there(dir);
}

#[test]
fn symlinks_leading_outside_the_store_are_never_followed() {
    let repo = store_with_one();
    let dir = repo.path();
    let outside = tempfile::tempdir().expect("outside");
    // A directory symlink in the work tree pointing outside the store.
    std::os::unix::fs::symlink(outside.path(), dir.join("facts/evil")).expect("symlink");
    refused(
        dir,
        &["write", "facts/evil/x.md"],
        memory("x", "y").as_bytes(),
        "symbolic link",
    );
    // A file symlink where a memory would go.
    std::fs::write(outside.path().join("target.md"), "outside content").expect("w");
    std::os::unix::fs::symlink(
        outside.path().join("target.md"),
        dir.join("facts/keep/link.md"),
    )
    .expect("symlink");
    refused(
        dir,
        &["write", "facts/keep/link.md"],
        memory("x", "y").as_bytes(),
        "symbolic link",
    );
    // An import that contains a symlink pointing outside: not followed.
    let src = tempfile::tempdir().expect("src");
    std::fs::create_dir_all(src.path().join("facts/imp")).expect("mkdir");
    std::fs::write(src.path().join("facts/imp/real.md"), memory("real", "r")).expect("w");
    std::os::unix::fs::symlink(
        outside.path().join("target.md"),
        src.path().join("facts/imp/sneaky.md"),
    )
    .expect("symlink");
    ok(dir, &["import", src.path().to_str().expect("utf-8")], b"");
    let paths = head_paths(dir);
    assert!(paths.contains(&"facts/imp/real.md".to_owned()));
    assert!(
        !paths.contains(&"facts/imp/sneaky.md".to_owned()),
        "import followed a symlink"
    );
    // A directory link inside the store (here into .git) is refused as well.
    std::os::unix::fs::symlink("../.git", dir.join("facts/ing")).expect("symlink");
    refused(
        dir,
        &["write", "facts/ing/hooks/pre-commit.md"],
        memory("x", "y").as_bytes(),
        "symbolic link",
    );
    assert!(!dir.join(".git/hooks/pre-commit.md").exists());
    std::fs::remove_file(dir.join("facts/ing")).expect("rm");
    // Nothing was written outside.
    let mut outside_files: Vec<String> = std::fs::read_dir(outside.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    outside_files.sort();
    assert_eq!(outside_files, ["target.md"]);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("target.md")).expect("r"),
        "outside content"
    );
    // The links are the user's own business in the work tree: remove them, then all is sound.
    std::fs::remove_file(dir.join("facts/evil")).expect("rm");
    std::fs::remove_file(dir.join("facts/keep/link.md")).expect("rm");
    still_there(dir);
}

#[test]
fn a_symlink_committed_by_hand_is_reported_not_followed() {
    let repo = store_with_one();
    let dir = repo.path();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("facts/keep/passwd.md")).expect("symlink");
    git(dir, &["add", "facts/keep/passwd.md"]);
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "evil link",
        ],
    );
    let stats: serde_json::Value =
        serde_json::from_str(&ok(dir, &["--json", "stats"], b"")).expect("json");
    // The link's blob is its target text: not a memory, reported as a problem.
    assert_eq!(stats["files"], 1, "{stats}");
    let body = ok(dir, &["--json", "search", "root"], b"");
    assert!(
        !body.contains("root:x:0:0"),
        "the index read through the symlink"
    );
    // Writing over it is refused (it leads outside the store).
    refused(
        dir,
        &["write", "facts/keep/passwd.md"],
        memory("x", "y").as_bytes(),
        "symbolic link",
    );
}

#[test]
fn control_characters_in_names_are_refused() {
    let repo = store_with_one();
    let dir = repo.path();
    for bad in [
        "facts/x/bell\u{7}.md",
        "facts/x/new\nline.md",
        "facts/x/esc\u{1b}[31m.md",
        "facts/x/tab\t.md",
    ] {
        refused(
            dir,
            &["write", bad],
            memory("x", "y").as_bytes(),
            "control character",
        );
    }
    let src = tempfile::tempdir().expect("src");
    std::fs::create_dir_all(src.path().join("facts/imp")).expect("mkdir");
    std::fs::write(src.path().join("facts/imp/ok.md"), memory("fine", "f")).expect("w");
    std::fs::write(src.path().join("facts/imp/bad\u{7}.md"), memory("bad", "b")).expect("w");
    let err = refused(
        dir,
        &["import", src.path().to_str().expect("utf-8")],
        b"",
        "control character",
    );
    assert!(err.contains("nothing was written"), "{err}");
    still_there(dir);
}

#[test]
fn case_colliding_paths_are_refused() {
    let repo = store_with_one();
    let dir = repo.path();
    // Two paths that are one file on a case-insensitive file system (macOS, Windows).
    refused(
        dir,
        &["write", "facts/keep/One.md"],
        memory("x", "y").as_bytes(),
        "case",
    );
    refused(
        dir,
        &["write", "facts/Keep/two.md"],
        memory("x", "y").as_bytes(),
        "case",
    );
    let src = tempfile::tempdir().expect("src");
    std::fs::create_dir_all(src.path().join("facts/imp")).expect("mkdir");
    std::fs::write(src.path().join("facts/imp/a.md"), memory("a", "a")).expect("w");
    std::fs::write(src.path().join("facts/imp/A.md"), memory("A", "A")).expect("w");
    refused(
        dir,
        &["import", src.path().to_str().expect("utf-8")],
        b"",
        "case",
    );
    // Rewriting the same path with the same case is fine.
    ok(
        dir,
        &["write", "facts/keep/one.md"],
        memory("keep me", "precious").as_bytes(),
    );
    still_there(dir);
}
