//! How well a built store holds the facts a conversation states (`facts.jsonl`: every
//! atomic fact the user states, with the message that states it).
//!
//! Words: text is folded (ASCII, lower case), split on anything not a letter or digit,
//! function words ([`STOP`]) are dropped, and a trailing `s` is cut from words longer
//! than three letters (not `ss`). The persona's own name and the word `user` (how the
//! product names a user it does not know) are dropped too: "Dee is 29" and "User is 29"
//! state the same fact. The persona is the name most facts start with.
//!
//! - **Coverage** `cov(f, T)`: the share of the fact's distinct words found in text `T`.
//! - **Fact recall**: a fact is recalled when a memory that cites its message (`sources`
//!   `#m<i>`) states it: `cov(f, title + body) ≥ need(f)`, where
//!   `need(f) = max(0, min(0.75, cov(f, message)) - 0.1)`. The fact list paraphrases
//!   ("been there since march 2022" → "has worked at Tallyline since March 2022"), so a
//!   memory is asked for the fact's words its own message holds (up to 75 % of them), less
//!   a tenth for rewording. Citing the message is not enough, and holding the words in a
//!   memory that cites another message is not either.
//! - **Subject purity**: over every (fact, memory) pair where the memory states the fact
//!   (above), the share where the memory is filed under the fact's subject. A fact's
//!   subject is its first name: a capitalised word that is not a function word, month or
//!   weekday, with the capitalised words right after it; a fact's first word counts only
//!   if the fact list capitalises it somewhere mid-sentence too ("Rent for the flat…" is
//!   no name, "Priya got a job…" is). A memory about the user (its
//!   `subject:` key starts with `user/`, or it is a rule or how-to) agrees with a fact
//!   whose subject is the persona, or that names nobody; a memory about a named subject
//!   agrees with a fact that names it (one of its words of three letters or more). A fact
//!   stated in two memories counts twice, so copying a sentence into every memory it
//!   mentions does not pay.
//!
//!   Where the data has its own hand-written store (a persona's `memories/`), a fact's
//!   name is its subject only when that store types it a person or a pet
//!   ([`super::data::Conversation::beings`]): "The Skoda has about 98,000 km on it",
//!   "Restic restore step 1 is …" and "On-call handoff is at 15:00 UTC" are about the
//!   speaker's car, runbook and rota, and belong in the speaker's memories; "Orla got the
//!   job" does not. The figure by the first name alone, whatever it names, is kept beside it
//!   (`pure_pairs_any_name`): the stricter reading, which counts a runbook step filed in
//!   the speaker's runbook as misfiled.
//! - **Catch-all share**: memories whose topic (last folder) is one of [`CATCH_ALL`], over
//!   all memories.
//! - **Titles**: the share of memories whose title reads as a title ([`reads_as_title`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::data::StatedFact;
use super::{Built, Conversation, Store};

/// Function words, never counted as a fact's content.
pub const STOP: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "but",
    "by",
    "can",
    "could",
    "d",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "ll",
    "m",
    "may",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "ve",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
];

/// Whether the memory at `path` (`facts/general/x.md`) is filed under no topic: in a
/// [`CATCH_ALL`] folder, or right under its tier.
pub fn in_catch_all(path: &str) -> bool {
    let topic = path
        .rsplit_once('/')
        .map(|(dir, _)| dir)
        .and_then(|d| d.rsplit('/').next())
        .unwrap_or_default();
    path.matches('/').count() < 2 || CATCH_ALL.contains(&topic)
}

/// Topic names that mean "no topic": a memory filed there was not placed.
pub const CATCH_ALL: &[&str] = &[
    "general",
    "misc",
    "miscellaneous",
    "other",
    "others",
    "notes",
    "unsorted",
    "uncategorised",
    "uncategorized",
    "unfiled",
    "inbox",
    "said",
    "statements",
    "conversation",
    "conversations",
];

const MONTHS_DAYS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
];

/// The words a title must not end with: it would be a cut sentence.
const DANGLING: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
    "from", "as", "is", "are", "was", "were", "be", "that", "which", "who", "my", "your", "his",
    "her", "their", "our", "its", "so", "if", "than", "then", "because",
];

const FIRST_SECOND_PERSON: &[&str] = &[
    "i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're", "our", "us",
    "you", "your", "you're",
];

/// Folded words of `text` (see the module docs), function words kept; `n't` is `not`.
fn words(text: &str) -> Vec<String> {
    deunicode::deunicode(text)
        .to_lowercase()
        .replace("n't", " not")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn stem(w: &str) -> String {
    // Negations are content ("doesn't eat pork" is not "eats pork"), in any form.
    if matches!(w, "cannot" | "never") {
        return "not".to_owned();
    }
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w[..w.len() - 1].to_owned()
    } else {
        w.to_owned()
    }
}

/// Content words: folded, function words and the persona's name out, stemmed.
fn content(text: &str, persona: &BTreeSet<String>) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|w| !STOP.contains(&w.as_str()) && !persona.contains(w))
        .map(|w| stem(&w))
        .collect()
}

fn coverage(fact: &BTreeSet<String>, text: &BTreeSet<String>) -> f64 {
    if fact.is_empty() {
        return 1.0;
    }
    fact.iter().filter(|w| text.contains(*w)).count() as f64 / fact.len() as f64
}

/// The persona: the capitalised word most facts start with.
pub fn persona_of(facts: &[StatedFact]) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for f in facts {
        if let Some(first) = f.text.split_whitespace().next() {
            let w = first.trim_end_matches("'s").trim_end_matches('\u{2019}');
            let w = w.trim_end_matches(|c: char| !c.is_alphanumeric());
            if w.chars().next().is_some_and(char::is_uppercase)
                && !STOP.contains(&w.to_lowercase().as_str())
            {
                *counts.entry(w.to_owned()).or_default() += 1;
            }
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(w, _)| w)
}

/// Words the fact list capitalises mid-sentence, folded: names.
fn mid_sentence_caps(facts: &[StatedFact]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in facts {
        for (i, raw) in f.text.split_whitespace().enumerate() {
            let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
            let w = w.trim_end_matches("'s").trim_end_matches("\u{2019}s");
            if i > 0 && w.chars().next().is_some_and(char::is_uppercase) {
                out.insert(deunicode::deunicode(w).to_lowercase());
            }
        }
    }
    out
}

/// The fact's subject: its first name, folded (`None`: it names nobody). `names`: the
/// words the fact list capitalises mid-sentence (a first word must be one of them).
fn subject_of_fact(text: &str, names: &BTreeSet<String>) -> Option<String> {
    let mut run: Vec<String> = Vec::new();
    for (i, raw) in text.split_whitespace().enumerate() {
        let w = raw
            .trim_matches(|c: char| !c.is_alphanumeric())
            .trim_end_matches("'s")
            .trim_end_matches("\u{2019}s");
        let folded = deunicode::deunicode(w).to_lowercase();
        let is_name = w.chars().next().is_some_and(char::is_uppercase)
            && !STOP.contains(&folded.as_str())
            && !MONTHS_DAYS.contains(&folded.as_str())
            && (i > 0 || names.contains(&folded));
        if is_name {
            run.push(folded);
            // A possessive or a comma ends the name.
            if raw.ends_with("'s") || raw.ends_with("\u{2019}s") || raw.ends_with(',') {
                break;
            }
        } else if !run.is_empty() {
            break;
        }
    }
    (!run.is_empty()).then(|| run.join(" "))
}

/// Who a memory is about: `None` for the user (and the user's rules and how-tos),
/// else the named subject's words.
fn subject_of_memory(b: &Built) -> Option<BTreeSet<String>> {
    let key = b
        .memory
        .front
        .extra
        .get("subject")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .or_else(|| b.memory.front.entities.first().map(|e| e.name.clone()))?;
    if key.starts_with("user/")
        || key == "user"
        || key.starts_with("rule ")
        || key.starts_with("howto ")
    {
        return None;
    }
    let set = name_words(&key);
    (!set.is_empty()).then_some(set)
}

/// The words of a name that identify it: folded, three letters or more, no function
/// word or honorific ("Dr Ferro" → `ferro`).
pub fn name_words(name: &str) -> BTreeSet<String> {
    const HONORIFICS: &[&str] = &["dr", "mr", "mrs", "ms", "miss", "prof", "st"];
    words(name)
        .into_iter()
        .filter(|w| {
            w.len() >= 3 && !STOP.contains(&w.as_str()) && !HONORIFICS.contains(&w.as_str())
        })
        .collect()
}

/// The fact's subject when it is a being the data's own store knows (see the module
/// docs); any name when the data has no store to ask (`beings` empty).
fn being<'a>(subject: Option<&'a str>, beings: &BTreeSet<String>) -> Option<&'a str> {
    subject.filter(|s| beings.is_empty() || name_words(s).iter().any(|w| beings.contains(w)))
}

/// Whether a memory about `memory` (`None`: the speaker) holds a fact of `subject`
/// (`None`: the speaker, or nobody) whose words are `fact_words`.
fn agrees(
    memory: Option<&BTreeSet<String>>,
    subject: Option<&str>,
    fact_words: &BTreeSet<String>,
) -> bool {
    match (memory, subject) {
        (None, None) => true,
        (None, Some(_)) => false,
        (Some(names), _) => names.iter().any(|n| fact_words.contains(n)),
    }
}

/// True when a title reads as a title: 1 to 12 words and at most 90 characters, it
/// starts with a capital letter or a digit, it is not cut (no `…` or `...`, it does not
/// end with a function word or with `,;:-`), it is not a sentence or question (no final
/// `.`, `?` or `!`), it does not speak in the first or second person, and its brackets
/// and quotes are balanced.
pub fn reads_as_title(title: &str) -> bool {
    let t = title.trim();
    let ws: Vec<&str> = t.split_whitespace().collect();
    if ws.is_empty() || ws.len() > 12 || t.chars().count() > 90 {
        return false;
    }
    if !t
        .chars()
        .next()
        .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
    {
        return false;
    }
    if t.contains('…') || t.contains("...") {
        return false;
    }
    if t.ends_with(['.', '?', '!', ',', ';', ':', '-']) {
        return false;
    }
    let last = ws[ws.len() - 1]
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if DANGLING.contains(&last.as_str()) {
        return false;
    }
    if ws.iter().any(|w| {
        let w = w
            .trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''))
            .replace('\u{2019}', "'")
            .to_lowercase();
        FIRST_SECOND_PERSON.contains(&w.as_str())
    }) {
        return false;
    }
    let count = |c: char| t.chars().filter(|x| *x == c).count();
    count('(') == count(')') && count('[') == count(']') && count('"') % 2 == 0
}

/// The fact figures of one store.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FactScores {
    pub facts: usize,
    pub recalled: usize,
    /// (fact, memory) pairs where the memory states the fact.
    pub stated_pairs: usize,
    /// Of those, pairs filed under the fact's subject.
    pub pure_pairs: usize,
    /// Of those, pairs filed under the fact's first name, whatever it names.
    pub pure_pairs_any_name: usize,
    pub memories: usize,
    pub catch_all: usize,
    pub titles_ok: usize,
    /// Facts not recalled: (id, text), for reading.
    pub missed: Vec<(String, String)>,
    /// Titles that do not read as titles, for reading.
    pub bad_titles: Vec<String>,
    /// Per fact: what happened to it, for reading (`--per-query` writes them).
    pub log: Vec<serde_json::Value>,
}

/// Scores `store` against `conv.facts`.
pub fn score(conv: &Conversation, store: &Store) -> FactScores {
    let persona_name = persona_of(&conv.facts);
    let names = mid_sentence_caps(&conv.facts);
    let mut persona: BTreeSet<String> = BTreeSet::new();
    persona.insert("user".into());
    if let Some(p) = &persona_name {
        persona.extend(words(p));
    }
    let messages: BTreeMap<(String, usize), String> = conv
        .sessions
        .iter()
        .flat_map(|s| {
            s.messages
                .iter()
                .enumerate()
                .map(|(i, m)| ((s.id.clone(), i), m.content.clone()))
        })
        .collect();
    let texts: BTreeMap<&str, BTreeSet<String>> = store
        .memories
        .values()
        .map(|b| {
            (
                b.path.as_str(),
                content(
                    &format!("{}\n{}", b.memory.front.title, b.memory.body),
                    &persona,
                ),
            )
        })
        .collect();
    let mut out = FactScores {
        facts: conv.facts.len(),
        memories: store.memories.len(),
        ..Default::default()
    };
    for f in &conv.facts {
        let words_of_fact = content(&f.text, &persona);
        let said = messages
            .get(&(f.message.session.clone(), f.message.index))
            .map(|m| content(m, &persona))
            .unwrap_or_default();
        let need = (coverage(&words_of_fact, &said).min(0.75) - 0.1).max(0.0);
        let subject = subject_of_fact(&f.text, &names).filter(|s| {
            persona_name
                .as_deref()
                .is_none_or(|p| !words(p).iter().any(|w| s.split(' ').next() == Some(w)))
        });
        let being = being(subject.as_deref(), &conv.beings);
        let fact_words: BTreeSet<String> = words(&f.text).into_iter().collect();
        let mut recalled = false;
        let mut stated_in = Vec::new();
        for b in store.memories.values() {
            if !b.cites.contains(&f.message) {
                continue;
            }
            if coverage(&words_of_fact, &texts[b.path.as_str()]) < need {
                continue;
            }
            recalled = true;
            out.stated_pairs += 1;
            let about = subject_of_memory(b);
            let pure = agrees(about.as_ref(), being, &fact_words);
            if pure {
                out.pure_pairs += 1;
            }
            let pure_any_name = agrees(about.as_ref(), subject.as_deref(), &fact_words);
            if pure_any_name {
                out.pure_pairs_any_name += 1;
            }
            stated_in.push(
                serde_json::json!({"path": b.path, "title": b.memory.front.title,
                "agrees": pure, "agrees_any_name": pure_any_name}),
            );
        }
        let citing: Vec<&str> = store
            .memories
            .values()
            .filter(|b| b.cites.contains(&f.message))
            .map(|b| b.path.as_str())
            .collect();
        out.log.push(serde_json::json!({
            "id": f.id, "fact": f.text, "message": f.message.to_string(), "subject": subject, "being": being,
            "need": need, "recalled": recalled, "stated_in": stated_in, "citing": citing,
        }));
        if recalled {
            out.recalled += 1;
        } else {
            out.missed.push((f.id.clone(), f.text.clone()));
        }
    }
    for b in store.memories.values() {
        if in_catch_all(&b.path) {
            out.catch_all += 1;
        }
        if reads_as_title(&b.memory.front.title) {
            out.titles_ok += 1;
        } else {
            out.bad_titles.push(b.memory.front.title.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_under_no_topic_is_in_the_catch_all() {
        assert!(in_catch_all("facts/general/x-1234abcd.md"));
        assert!(in_catch_all("facts/misc/x.md"));
        assert!(in_catch_all("facts/x.md"));
        assert!(!in_catch_all("facts/pets/suya.md"));
        assert!(!in_catch_all("facts/family/kerry/padraig.md"));
    }

    #[test]
    fn titles() {
        for ok in [
            "Bisoprolol 1.25 mg in the morning",
            "Dee doesn't eat pork",
            "Mortgage pre-approval for $620k at 4.69%",
            "Callum Reid, Dee's partner (fiancé since April 2026)",
        ] {
            assert!(reads_as_title(ok), "{ok}");
        }
        for bad in [
            "rough night. sev1 on 2026-02-17, ledger pg failover went sideways. help User draft the postmortem",
            "we're in",
            "Pepita starts at bark & bloor wednesday (june 3, 2026",
            "Exercises she gave User once a day: clamshells…",
            "I live in Berlin",
            "Sold the Civic on",
            "Is it cold?",
            "She moved to Nantes.",
        ] {
            assert!(!reads_as_title(bad), "{bad}");
        }
    }

    #[test]
    fn a_fact_about_a_thing_belongs_with_the_speaker_where_the_data_knows_its_beings() {
        let beings: BTreeSet<String> = ["orla", "ferro"].map(str::to_owned).into();
        let fact = |t: &str| -> BTreeSet<String> { words(t).into_iter().collect() };
        let orla: BTreeSet<String> = ["orla".to_owned()].into();
        // A car, a runbook's tool, a time zone: the speaker's memory holds them.
        for thing in ["skoda", "restic", "utc"] {
            let s = being(Some(thing), &beings);
            assert_eq!(s, None, "{thing}");
            assert!(agrees(None, s, &fact("The Skoda has 98,000 km on it")));
        }
        // A person stays a subject: in the speaker's memory the fact is misfiled.
        assert_eq!(being(Some("dr ferro"), &beings), Some("dr ferro"));
        assert!(!agrees(
            None,
            being(Some("orla"), &beings),
            &fact("Orla got the job")
        ));
        assert!(agrees(
            Some(&orla),
            being(Some("orla"), &beings),
            &fact("Orla got the job")
        ));
        // A memory about someone holds only facts that name them.
        assert!(!agrees(Some(&orla), None, &fact("The new rate is 4.39%")));
        // With no store to ask, any first name is the subject.
        assert_eq!(being(Some("skoda"), &BTreeSet::new()), Some("skoda"));
    }

    #[test]
    fn fact_subjects() {
        let names: BTreeSet<String> = [
            "dee", "bernard", "monique", "ravel", "gerard", "pontet", "noe",
        ]
        .map(str::to_owned)
        .into();
        let subject_of_fact = |t: &str| subject_of_fact(t, &names);
        assert_eq!(
            subject_of_fact("Rent for the flat is £1,180 a month."),
            None
        );
        assert_eq!(
            subject_of_fact("Dee's mum lives in Enugu."),
            Some("dee".into())
        );
        assert_eq!(
            subject_of_fact("On Tuesdays Bernard fetches Noé from the crèche."),
            Some("bernard".into())
        );
        assert_eq!(
            subject_of_fact("The association's president is Monique Ravel."),
            Some("monique ravel".into())
        );
        assert_eq!(
            subject_of_fact("An engineer is booked for Thursday 29 January."),
            None
        );
        assert_eq!(
            subject_of_fact("Gérard Pontet, of plot 7, sent a letter."),
            Some("gerard pontet".into())
        );
    }

    #[test]
    fn coverage_ignores_function_words_and_the_persona() {
        let p: BTreeSet<String> = ["dee".to_owned(), "user".to_owned()].into();
        let f = content("Dee doesn't eat pork.", &p);
        let m = content("User doesn't eat pork", &p);
        assert_eq!(coverage(&f, &m), 1.0);
        let other = content("User eats fish", &p);
        assert!(coverage(&f, &other) < 0.5);
    }
}
