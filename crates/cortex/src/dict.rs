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

static WORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    include_str!("../data/words-en.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect()
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
