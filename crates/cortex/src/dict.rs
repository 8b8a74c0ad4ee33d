//! English words, to tell a word from a name in text that capitalises nothing
//! ("ollie rang to say…"): the lower-case entries of SCOWL's British English list and
//! the American entries it lacks ("mom", "color"; `data/words-en.txt`; licence in
//! `data/SCOWL-COPYRIGHT.txt`). People write either spelling; a word of the other one
//! must not read as a name.
//!
//! Written by hand because no maintained crate ships an English word list of this
//! kind; the lists themselves are the ones Debian packages as `wbritish` and `wamerican`.

use std::collections::HashSet;
use std::sync::LazyLock;

use fnv::FnvBuildHasher;

/// The list's 65,000 words, built once per process and asked about every word of
/// a run's text (more than once: each inflection [`is_word`] tries). With the
/// standard library's SipHash and a set grown by doubling, building the set alone
/// was 2 % of an offline ingestion's CPU (profiled); sized at once and hashed with
/// FNV-1a, which short keys suit. The set never holds anything but the list, so a
/// hash that is cheap to collide on purpose costs nothing here.
static WORDS: LazyLock<HashSet<&'static str, FnvBuildHasher>> = LazyLock::new(|| {
    let list = include_str!("../data/words-en.txt");
    let mut words =
        HashSet::with_capacity_and_hasher(list.lines().count(), FnvBuildHasher::default());
    words.extend(
        list.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty()),
    );
    words
});

/// True when `norm` is in the list exactly (inflections the list holds included).
pub fn is_listed(norm: &str) -> bool {
    WORDS.contains(norm)
}

/// True when `norm` (folded, lower case) is an English word, or a plain inflection of
/// one the list leaves out (`texted`, `flatmates`).
pub fn is_word(norm: &str) -> bool {
    if WORDS.contains(norm) {
        return true;
    }
    let stems = [
        norm.strip_suffix("s"),
        norm.strip_suffix("es"),
        norm.strip_suffix("ed"),
        norm.strip_suffix("d"),
        norm.strip_suffix("ing"),
        norm.strip_suffix("'s"),
    ];
    stems
        .into_iter()
        .flatten()
        .any(|s| s.len() >= 3 && WORDS.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_names() {
        for w in [
            "rang",
            "landlord",
            "sabbatical",
            "walked",
            "kettles",
            "texted",
            "mom",
            "neighbor",
        ] {
            assert!(is_word(w), "{w}");
        }
        for n in ["ollie", "tomasz", "callum", "enugu", "pepita"] {
            assert!(!is_word(n), "{n}");
        }
    }
}
