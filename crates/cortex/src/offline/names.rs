//! Names the run's text gives away even where it does not capitalise them: a word
//! that is no English word, right after a relation ("my boyfriend callum", "aunty
//! chioma"), before a verb only people do ("tomasz rang"), or as a first and last
//! name before a comma ("ollie brennan, 31"); and every name the run capitalises
//! mid-sentence somewhere, so its lower-case mentions elsewhere are found too.

use std::collections::BTreeMap;

use gitloom_model::text::words;

use crate::dict::is_word;
use crate::text::{self, Lexicon, capitalise};

/// Relations after which a name follows: (word, kind of the name).
const RELATIONS: &[(&str, &str)] = &[
    ("boyfriend", "person"),
    ("girlfriend", "person"),
    ("husband", "person"),
    ("wife", "person"),
    ("partner", "person"),
    ("fiance", "person"),
    ("fiancee", "person"),
    ("mum", "person"),
    ("mom", "person"),
    ("mother", "person"),
    ("dad", "person"),
    ("father", "person"),
    ("brother", "person"),
    ("sister", "person"),
    ("son", "person"),
    ("daughter", "person"),
    ("aunt", "person"),
    ("aunty", "person"),
    ("auntie", "person"),
    ("uncle", "person"),
    ("cousin", "person"),
    ("niece", "person"),
    ("nephew", "person"),
    ("grandma", "person"),
    ("grandpa", "person"),
    ("granny", "person"),
    ("nan", "person"),
    ("friend", "person"),
    ("mate", "person"),
    ("flatmate", "person"),
    ("housemate", "person"),
    ("roommate", "person"),
    ("neighbour", "person"),
    ("neighbor", "person"),
    ("colleague", "person"),
    ("boss", "person"),
    ("manager", "person"),
    ("coach", "person"),
    ("tutor", "person"),
    ("supervisor", "person"),
    ("doctor", "person"),
    ("dr", "person"),
    ("physio", "person"),
    ("therapist", "person"),
    ("landlord", "person"),
    ("landlady", "person"),
    ("dentist", "person"),
    ("teacher", "person"),
    ("mr", "person"),
    ("mrs", "person"),
    ("ms", "person"),
    ("cat", "pet"),
    ("dog", "pet"),
    ("puppy", "pet"),
    ("kitten", "pet"),
];

/// Chat words that are not English words and not names either.
const SLANG: &[&str] = &[
    "lol", "haha", "hahaha", "omg", "tbh", "rn", "btw", "imo", "idk", "ngl", "lmao", "yeah", "yep",
    "nah", "gonna", "wanna", "gotta", "kinda", "sorta", "dunno", "ok", "okay", "hiya", "til",
    "tho", "thx", "pls", "plz", "ur", "bc", "cos", "coz", "bday", "yay", "ugh", "hmm", "aww",
    "ooh", "xx", "xox", "uni", "info", "vs", "etc", "eg", "ie",
];

fn plain(norm: &str) -> bool {
    norm.len() >= 3
        && norm.chars().all(|c| c.is_ascii_alphabetic())
        && !is_word(norm)
        && !SLANG.contains(&norm)
        && !text::is_calendar(norm)
        && !gitloom_model::text::is_stopword(norm)
}

/// Teaches `lex` the names in `text` (the run's words) that capitalisation alone would
/// miss. Returns them, for tests.
#[cfg(test)]
pub fn learn(lex: &mut Lexicon, text: &str) -> Vec<(String, Option<String>)> {
    teach(lex, scan(text))
}

/// The names `text` gives away by the words around them (a relation before, a
/// reporting verb after, a first and last name before a comma), with their kind.
/// Depends on the text alone, so a run's text is scanned once for all its sessions
/// (see `crate::extract::RunText`).
pub fn scan(text: &str) -> BTreeMap<String, Option<String>> {
    let mut found: BTreeMap<String, Option<String>> = BTreeMap::new();
    for s in text::sentences(text) {
        let ws = words(&s);
        // A word written in lower case (or capitalised plainly) that stands alone, not
        // part of "ledger-api" or an acronym like "SLOs".
        let alone = |w: &gitloom_model::text::Word| {
            let joined = s[..w.start].ends_with(['-', '/', '_', '.', '@'])
                || s[w.end()..].starts_with(['-', '/', '_', '@']);
            let mixed = w.raw.chars().skip(1).any(char::is_uppercase);
            !joined && !mixed
        };
        for (i, w) in ws.iter().enumerate() {
            if !plain(&w.norm) || !alone(w) {
                continue;
            }
            let before = i.checked_sub(1).map(|j| ws[j].norm.as_str());
            let after = ws.get(i + 1);
            let rel = before.and_then(|b| RELATIONS.iter().find(|(r, _)| *r == b));
            // First and last name: two such words, then a comma, a possessive or the end.
            let pair = after.is_some_and(|a| {
                plain(&a.norm)
                    && alone(a)
                    && (s[a.end()..].trim_start().starts_with([',', '.', '!', '?'])
                        || a.clitic.as_deref() == Some("s")
                        || a.end() >= s.trim_end().len())
            });
            let verb = after.is_some_and(|a| text::SPEECH_VERBS.contains(&a.norm.as_str()));
            let kind = match (rel, pair || verb) {
                (Some((_, k)), _) => Some((*k).to_owned()),
                (None, true) => Some("person".to_owned()),
                _ => continue,
            };
            if pair && let Some(a) = after {
                found.insert(
                    format!("{} {}", capitalise(w.raw), capitalise(a.raw)),
                    kind.clone(),
                );
            }
            found.entry(capitalise(w.raw)).or_insert(kind);
        }
    }
    found
}

/// Teaches `lex` the names [`scan`] found and every word `lex` has seen capitalised
/// mid-sentence that is no English word. Returns what it taught.
pub fn teach(
    lex: &mut Lexicon,
    mut found: BTreeMap<String, Option<String>>,
) -> Vec<(String, Option<String>)> {
    // Words the run capitalises mid-sentence and that are no English word: names
    // wherever they appear, also in lower case.
    let caps: Vec<String> = lex.mid_caps.iter().cloned().collect();
    for c in caps {
        if plain(&c) && !found.keys().any(|k| k.to_lowercase() == c) {
            found.insert(capitalise(&c), None);
        }
    }
    let out: Vec<(String, Option<String>)> = found.into_iter().collect();
    for (name, kind) in &out {
        lex.add_known(name, kind.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_case_names() {
        let mut lex = Lexicon::default();
        let got = learn(
            &mut lex,
            "aunty chioma took her to the clinic. ollie brennan, 31, he's a sound engineer. tomasz rang yesterday. the kafka lag was bad lol",
        );
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"Chioma"), "{names:?}");
        assert!(names.contains(&"Ollie Brennan"), "{names:?}");
        assert!(names.contains(&"Tomasz"), "{names:?}");
        assert!(
            !names.iter().any(|n| n.eq_ignore_ascii_case("kafka")),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|n| n.eq_ignore_ascii_case("lol")),
            "{names:?}"
        );
    }

    #[test]
    fn a_reporting_verb_makes_a_name_and_other_verbs_do_not() {
        let mut lex = Lexicon::default();
        let got = learn(
            &mut lex,
            "ximena suggested we split the bill. kubelet works fine now. halvard retired in may",
        );
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["Ximena"],
            "only a reporting verb makes a name: {names:?}"
        );
    }
}
