//! Who a sentence is about, and how it reads in the third person.

use gitloom_model::text::{Word, words};

use crate::text::Spotted;

/// Who is speaking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Speaker {
    /// The user, unnamed.
    User,
    /// A named speaker (a message's `name`).
    Named(String),
}

impl Speaker {
    /// How a memory names them.
    pub fn label(&self) -> &str {
        match self {
            Speaker::User => "User",
            Speaker::Named(n) => n,
        }
    }
}

/// What a sentence is about.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// The speaker themselves.
    Speaker,
    /// A named entity.
    Entity(Spotted),
}

const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i've", "i'll", "i'd", "me", "my", "mine", "myself", "we", "we're", "we've",
    "we'll", "we'd", "our", "us", "im", "ive",
];
const THIRD_PERSON: &[&str] = &[
    "he", "he's", "he'll", "he'd", "she", "she's", "she'll", "she'd", "they", "they're", "they've",
    "they'll", "it", "it's", "its", "his", "her", "their", "this", "that", "these", "those",
    "both",
];
/// Words that may come before what a sentence is about without being it: time words,
/// determiners, discourse words.
const LEAD_IN: &[&str] = &[
    "the",
    "a",
    "an",
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "now",
    "then",
    "also",
    "finally",
    "last",
    "next",
    "this",
    "on",
    "in",
    "at",
    "after",
    "before",
    "since",
    "week",
    "weekend",
    "month",
    "year",
    "morning",
    "afternoon",
    "evening",
    "night",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "just",
    "still",
    "apparently",
    "anyway",
    "actually",
    "so",
    "and",
    "but",
    "oh",
    "update",
    "news",
    "good",
    "bad",
    "sad",
    "big",
    "quick",
    "other",
    "thing",
    "one",
];
/// Relations that, between "my" and a name, make the name the subject ("my daughter
/// Clodagh is 41").
const RELATION_HEADS: &[&str] = &[
    "boyfriend",
    "girlfriend",
    "husband",
    "wife",
    "partner",
    "fiance",
    "fiancee",
    "mum",
    "mom",
    "mother",
    "dad",
    "father",
    "brother",
    "sister",
    "son",
    "daughter",
    "aunt",
    "aunty",
    "auntie",
    "uncle",
    "cousin",
    "niece",
    "nephew",
    "grandma",
    "grandpa",
    "nan",
    "friend",
    "mate",
    "flatmate",
    "housemate",
    "roommate",
    "neighbour",
    "neighbor",
    "colleague",
    "boss",
    "manager",
    "coach",
    "tutor",
    "supervisor",
    "doctor",
    "physio",
    "therapist",
    "landlord",
    "landlady",
    "dentist",
    "teacher",
    "cat",
    "dog",
    "puppy",
    "kitten",
    "editor",
    "lawyer",
    "accountant",
    "vet",
    "gp",
    "heart",
    "new",
    "old",
    "best",
    "little",
    "big",
    "younger",
    "older",
    "eldest",
    "youngest",
    "step",
    "ex",
];

/// True for a personal pronoun (with its clitic: `i'm`, `she's`).
pub fn is_pronoun(w: &str) -> bool {
    FIRST_PERSON.contains(&w) || THIRD_PERSON.contains(&w) || matches!(w, "you" | "you're" | "your")
}

/// The subject of `clause`, and whether the clause names it (`true`) or goes on about
/// the one before (`false`: "she lives in Dublin", "the pills are…"). `before`: the
/// subject of the sentence before it (in this message, else the last one).
pub fn of(
    clause: &str,
    spots: &[Spotted],
    before: Option<&Subject>,
    earlier: Option<&Subject>,
    person: Option<&Spotted>,
    speaker: &Speaker,
) -> (Subject, bool) {
    // A pronoun may point back into an earlier message ("he" is still Arjun); a
    // sentence with no subject at all goes on about this message's subject only.
    let pointed = before.or(earlier);
    let ws = words(clause);
    let name_at = |i: usize| spots.iter().find(|s| s.at == i);
    // Word index in `words` → word index in whitespace tokens (what Spotted counts).
    let token_of = token_index(clause, &ws);
    let mut i = 0;
    while i < ws.len() && i < 8 {
        let w = &ws[i];
        let n = w.with_clitic();
        if let Some(s) = name_at(token_of[i]).filter(|s| s.prep.is_none()) {
            // The speaker's own name is the speaker.
            if matches!(speaker, Speaker::Named(me) if gitloom_model::fold_name(me) == gitloom_model::fold_name(&s.name))
            {
                return (Subject::Speaker, true);
            }
            return (Subject::Entity(s.clone()), true);
        }
        if FIRST_PERSON.contains(&n.as_str()) {
            // "my daughter Clodagh is 41": the relation's name is the subject.
            if matches!(n.as_str(), "my" | "our") {
                let mut j = i + 1;
                while j < ws.len() && j <= i + 3 && RELATION_HEADS.contains(&ws[j].norm.as_str()) {
                    j += 1;
                }
                if j > i + 1
                    && let Some(s) = ws.get(j).and_then(|_| name_at(token_of[j]))
                {
                    return (Subject::Entity(s.clone()), true);
                }
            }
            return (Subject::Speaker, true);
        }
        if THIRD_PERSON.contains(&n.as_str()) {
            // "he", "she": the last person named, if the subject before is not one.
            let personal = matches!(w.norm.as_str(), "he" | "she" | "his" | "her" | "him");
            let before_is_person = matches!(pointed, Some(Subject::Entity(e)) if matches!(e.kind.as_deref(), Some("person" | "pet")));
            if personal
                && !before_is_person
                && let Some(p) = person
            {
                return (Subject::Entity(p.clone()), false);
            }
            return (pointed.cloned().unwrap_or(Subject::Speaker), false);
        }
        if !LEAD_IN.contains(&w.norm.as_str()) && !w.norm.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
        i += 1;
    }
    // No subject up front ("the pills are…", "there are 46 plots"): the sentence goes on
    // about whatever the one before was about.
    (before.cloned().unwrap_or(Subject::Speaker), false)
}

/// Relation words that are no person themselves: they only qualify the one after
/// ("my best friend", "my heart doctor").
const RELATION_MODIFIERS: &[&str] = &[
    "heart", "new", "old", "best", "little", "big", "younger", "older", "eldest", "youngest",
    "step", "ex",
];

/// True when the last person `clause` mentions is one it does not name: a relation
/// ("sent mum her money", "my physio says") with no name after it, later in the clause
/// than any person it names. A "he" or "she" after such a clause is likelier that
/// person than one named before it, so the name before must not take it.
pub fn ends_on_unnamed_person(clause: &str, spots: &[Spotted]) -> bool {
    let ws = words(clause);
    let token_of = token_index(clause, &ws);
    let named_at = |t: usize| spots.iter().any(|s| s.at == t && s.is_person());
    let last_named = spots.iter().filter(|s| s.is_person()).map(|s| s.at).max();
    let last_unnamed = ws
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            RELATION_HEADS.contains(&w.norm.as_str())
                && !RELATION_MODIFIERS.contains(&w.norm.as_str())
                // "my sister Aoife": the relation is named.
                && !ws
                    .get(i + 1)
                    .is_some_and(|_| named_at(token_of[i + 1]))
                && !named_at(token_of[*i])
        })
        .map(|(i, _)| token_of[i])
        .max();
    match (last_unnamed, last_named) {
        (Some(u), Some(n)) => u > n,
        (Some(_), None) => true,
        _ => false,
    }
}

/// A sentence about a person that opens with a pronoun, with their name instead
/// ("She's been User's ward manager…" → "Bernadette Quayle's been…").
pub fn name_pronoun(sentence: &str, name: &str) -> String {
    let ws = words(sentence);
    let Some(first) = ws.first() else {
        return sentence.to_owned();
    };
    if !matches!(first.norm.as_str(), "he" | "she") || first.start > 2 {
        return sentence.to_owned();
    }
    let end = first.end();
    let rest = &sentence[end..];
    format!("{}{name}{rest}", &sentence[..first.start])
}

/// For each word of `ws`, the index of the whitespace token it sits in.
fn token_index(text: &str, ws: &[Word]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut in_token = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_token = false;
        } else if !in_token {
            starts.push(i);
            in_token = true;
        }
    }
    ws.iter()
        .map(|w| starts.iter().rposition(|s| *s <= w.start).unwrap_or(0))
        .collect()
}

/// The clause in the third person: the speaker by their label ("User", "Caroline"),
/// "you" as the assistant (or, between two named people, the other one).
pub fn third_person(
    clause: &str,
    speaker: &Speaker,
    other: Option<&str>,
    addressed: bool,
) -> String {
    let who = speaker.label();
    let you = match other {
        Some(o) => o.to_owned(),
        None if addressed => "the assistant".to_owned(),
        None => "you".to_owned(),
    };
    let s = crate::text::third_person_as(clause, who);
    replace_you(&s, &you)
}

fn replace_you(s: &str, you: &str) -> String {
    if you == "you" {
        return s.to_owned();
    }
    let ws = words(s);
    let mut out = String::with_capacity(s.len() + 16);
    let mut last = 0;
    for w in &ws {
        let rep = match (w.norm.as_str(), w.clitic.as_deref()) {
            ("you", None) | ("u", None) => Some(you.to_owned()),
            ("your", None) | ("yours", None) => Some(format!("{you}'s")),
            ("yourself", None) => Some(you.to_owned()),
            _ => None,
        };
        if let Some(r) = rep {
            out.push_str(&s[last..w.start]);
            out.push_str(&r);
            last = w.end();
        }
    }
    out.push_str(&s[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spot(name: &str, at: usize) -> Spotted {
        Spotted {
            name: name.into(),
            kind: Some("person".into()),
            at,
            prep: None,
        }
    }

    #[test]
    fn subjects() {
        let me = Speaker::User;
        let of = |c: &str, s: &[Spotted], b: Option<&Subject>, me: &Speaker| {
            of(c, s, b, None, None, me).0
        };
        assert_eq!(of("i'm 29 and a nurse", &[], None, &me), Subject::Speaker);
        let c = spot("Clodagh", 2);
        assert_eq!(
            of(
                "my daughter Clodagh is 41.",
                std::slice::from_ref(&c),
                None,
                &me
            ),
            Subject::Entity(c.clone())
        );
        let before = Subject::Entity(c.clone());
        assert_eq!(of("she lives in Dublin.", &[], Some(&before), &me), before);
        let t = spot("Tomasz", 1);
        assert_eq!(
            of(
                "yesterday Tomasz rang to offer it",
                std::slice::from_ref(&t),
                None,
                &me
            ),
            Subject::Entity(t)
        );
        assert_eq!(
            of("the pills are: aspirin 75", &[], Some(&before), &me),
            before
        );
        let arjun = spot("Arjun", 3);
        assert_eq!(
            super::of(
                "he's been in Kyoto since 2023",
                &[],
                Some(&Subject::Speaker),
                None,
                Some(&arjun),
                &me
            )
            .0,
            Subject::Entity(arjun)
        );
    }

    #[test]
    fn a_clause_may_end_on_someone_it_does_not_name() {
        assert!(ends_on_unnamed_person("sent mum her money", &[]));
        assert!(ends_on_unnamed_person(
            "Aoife rang my dad",
            &[spot("Aoife", 0)]
        ));
        // "my sister Aoife": the relation is named.
        assert!(!ends_on_unnamed_person(
            "my sister Aoife rang",
            &[spot("Aoife", 2)]
        ));
        assert!(!ends_on_unnamed_person(
            "mum and Aoife came over",
            &[spot("Aoife", 2)]
        ));
        // A modifier is no one: "my best friend" is one person, the friend.
        assert!(!ends_on_unnamed_person("the old bridge is shut", &[]));
    }

    #[test]
    fn third_person_names_the_speaker() {
        let c = Speaker::Named("Caroline".into());
        assert_eq!(
            third_person(
                "I went to a support group, you should come",
                &c,
                Some("Melanie"),
                false
            ),
            "Caroline went to a support group, Melanie should come"
        );
        assert_eq!(
            third_person("don't message me before 2pm", &Speaker::User, None, true),
            "don't message User before 2pm"
        );
    }
}
