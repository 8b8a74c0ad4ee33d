//! Cues: the questions a memory answers, asked the way its owner would ask them
//! ("how much … rent", "who is Callum"), so the cue arm can meet a question that
//! shares no word with the memory's body.
//!
//! Three kinds, most specific first: a question per sentence whose answer type it can
//! tell (an amount → "how much", a date → "when", a count → "how many", a place →
//! "where"), made of the sentence in the first person with the answer taken out; the
//! questions about the subject ("who is …"); and the topic's general questions.

use std::sync::LazyLock;

use gitloom_model::Tier;
use regex::Regex;

/// Cues per memory, at most.
pub const MAX: usize = 6;
/// And at least (padded with the topic's questions).
pub const MIN: usize = 3;

pub struct CueInput<'a> {
    pub subject: &'a str,
    pub subject_kind: Option<&'a str>,
    pub about_speaker: bool,
    pub named_speaker: bool,
    pub topic: &'a str,
    pub tier: Tier,
    pub sentences: &'a [String],
    pub employer: bool,
    /// The question the memory answers, as the one before asked it.
    pub asked: Option<&'a str>,
}

/// A job: "works as a …", "trained as a …", or "is a … at / for …" (a role at a place
/// of work; "is a" alone is too often "a great day").
static OCCUPATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:(?:works|worked|working|job|trained|employed)\s+as\s+(?:a|an)\s+[a-z]|(?:is|'s|was)\s+(?:a|an)\s+(?:[a-z-]+\s+){1,3}(?:at|for)\s)")
        .expect("valid occupation pattern")
});

/// Whether `sentence` says what `subject` does for a living: an occupation whose
/// sentence is about them (their name, "User" or a personal pronoun just before it).
fn says_occupation(sentence: &str, subject: &str) -> bool {
    OCCUPATION.find_iter(sentence).any(|m| {
        let before = sentence[..m.start()].trim_end().to_lowercase();
        let last = before.rsplit(' ').next().unwrap_or_default();
        ["he", "she", "user", "i"].contains(&last)
            || (!subject.is_empty() && before.ends_with(&subject.to_lowercase()))
    })
}

static MONEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[£$€¥]\s?\d[\d,.]*k?|\b\d[\d,.]*\s?(?:k\b)?\s*(?:euros?|pounds?|dollars?|quid|eur|gbp|usd|cad)\b")
        .expect("valid money pattern")
});
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b(?:\s+\d{4})?|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s+\d{4})?|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b|\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\bin\s+(?:19|20)\d{2}\b|\bsince\s+(?:19|20)\d{2}\b")
        .expect("valid date pattern")
});
static COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b\d+(?:\.\d+)?\s+(?:[a-z]+\s+)?(?:years?|months?|weeks?|days?|hours?|minutes?|times?|people|kids|children|plots?|cups?|km|miles?|kg|mg|percent|%)\b|\b\d+(?:\.\d+)?%")
        .expect("valid count pattern")
});
static PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:in|at|to|from|near)\s+(?:the\s+)?[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)*")
        .expect("valid place pattern")
});

/// The topic's general questions.
fn topic_questions(topic: &str) -> &'static [&'static str] {
    match topic {
        "work" => &["what is my job", "what is happening at work"],
        "home" => &["where do I live", "what is my home like"],
        "family" => &["who is in my family", "what is going on with my family"],
        "people" => &["who are the people in my life", "who do I know"],
        "health" => &[
            "what health problems do I have",
            "what medication do I take",
        ],
        "money" => &["how much money do I have", "what do I pay for"],
        "food" => &["what do I eat", "what food do I like"],
        "pets" => &["what pets do I have", "who looks after my pet"],
        "travel" => &["what are my travel plans", "where am I travelling"],
        "transport" => &["how do I get around", "what car do I have"],
        "fitness" => &["what exercise do I do", "what sport do I do"],
        "hobbies" => &["what are my hobbies", "what do I do in my free time"],
        "study" => &["what am I studying", "when are my assignments due"],
        "languages" => &["what languages do I speak", "which language am I learning"],
        "tech" => &["what devices do I have", "what is my computer setup"],
        "events" => &["what events are coming up", "what is on my calendar"],
        "admin" => &[
            "what appointments do I have",
            "what paperwork do I have to do",
        ],
        "preferences" => &["how should answers be written", "what are my rules for you"],
        _ => &["what did I say"],
    }
}

fn entity_questions(name: &str, kind: Option<&str>) -> Vec<String> {
    match kind {
        Some("person") => vec![
            format!("who is {name}"),
            format!("what do I know about {name}"),
        ],
        Some("pet") => vec![format!("who is {name}"), format!("how is {name}")],
        Some("org") => vec![
            format!("what is {name}"),
            format!("what do I know about {name}"),
        ],
        Some("place") => vec![
            format!("what about {name}"),
            format!("when was I in {name}"),
        ],
        _ => vec![format!("what do I know about {name}")],
    }
}

/// Prepositions: a person named right after one is its object ("for me", not "for I").
/// ("Before" and "after" are left out: before a pronoun they mostly begin a clause,
/// "before you go".)
const PREPOSITIONS: &[&str] = &[
    "about", "against", "around", "at", "behind", "beside", "between", "by", "for", "from", "in",
    "into", "like", "near", "of", "off", "on", "onto", "over", "past", "than", "through", "to",
    "toward", "towards", "under", "upon", "with", "without",
];

/// "I" or "me" for the speaker at this place in a sentence: the object after a
/// preposition, or after a word other than an auxiliary when it ends the clause
/// ("what did she give you?" → "me"); the subject anywhere else. Between a verb and
/// what follows ("give you exercises") the words alone do not tell an object from a
/// subject ("anything you need"), so the subject stays.
fn speaker_pronoun(before: Option<&str>, after: Option<&str>) -> &'static str {
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let before = before.map(bare);
    let ends_clause = after.is_none_or(|a| bare(a).is_empty());
    match before.as_deref() {
        Some(b) if PREPOSITIONS.contains(&b) => "me",
        Some(b) if ends_clause && !b.is_empty() && !is_auxiliary(b) => "me",
        _ => "I",
    }
}

/// An auxiliary or modal verb, after which a pronoun is the subject ("did you").
fn is_auxiliary(w: &str) -> bool {
    [
        "am", "are", "is", "was", "were", "do", "does", "did", "have", "has", "had", "can",
        "could", "will", "would", "shall", "should", "may", "might", "must",
    ]
    .contains(&w)
}

/// A question the other party asked, as the speaker would ask it ("shall I draft
/// anything for you?" → "shall you draft anything for me"), word by word: "you" is
/// the speaker, "I" the asker; other words that begin with "you" ("young") stay.
fn asked_by_speaker(q: &str) -> String {
    let q = q.replace('\u{2019}', "'");
    let words: Vec<&str> = q.split_whitespace().collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (n, w) in words.iter().enumerate() {
        let core = w.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '\'');
        let tail = &w[core.len()..];
        let lower = core.to_lowercase();
        let said = match lower.as_str() {
            "you're" => "I am".to_owned(),
            "you've" => "I've".to_owned(),
            "you'll" => "I'll".to_owned(),
            "you'd" => "I'd".to_owned(),
            "your" => "my".to_owned(),
            "yours" => "mine".to_owned(),
            "yourself" => "myself".to_owned(),
            // The asker's own words: the assistant is "you" to the speaker.
            "i" | "me" => "you".to_owned(),
            "i'm" => "you're".to_owned(),
            "i've" => "you've".to_owned(),
            "i'll" => "you'll".to_owned(),
            "i'd" => "you'd".to_owned(),
            "my" => "your".to_owned(),
            "mine" => "yours".to_owned(),
            "myself" => "yourself".to_owned(),
            "you" => {
                let before = n.checked_sub(1).map(|b| words[b]);
                // A comma or a question mark after "you" ends its clause too.
                let after = if tail.is_empty() {
                    words.get(n + 1).copied()
                } else {
                    None
                };
                speaker_pronoun(before, after).to_owned()
            }
            _ => core.to_owned(),
        };
        out.push(format!("{said}{tail}"));
    }
    out.join(" ").trim_end_matches('?').trim().to_lowercase()
}

/// The sentence as its speaker would say it: "User" back to "I" (or "me" where it is
/// an object: "for User" → "for me"), "User's" to "my".
fn first_person(s: &str) -> String {
    let s = s
        .replace("User's", "my")
        .replace("User is", "I am")
        .replace("User has", "I have")
        .replace("User does", "I do");
    let s = s.replace("the assistant", "you");
    // "User pays" → "I pay": the verb back to its plain form, where the list knows it.
    let words: Vec<&str> = s.split(' ').collect();
    let mut out: Vec<String> = Vec::new();
    let mut after_user = false;
    for (n, &w) in words.iter().enumerate() {
        if after_user {
            let plain = [
                w.strip_suffix("ies").map(|b| format!("{b}y")),
                w.strip_suffix("es").map(str::to_owned),
                w.strip_suffix('s').map(str::to_owned),
            ]
            .into_iter()
            .flatten()
            .find(|p| p.len() >= 2 && crate::dict::is_listed(p));
            out.push(plain.unwrap_or_else(|| w.to_owned()));
            after_user = false;
        } else if w == "User" {
            let before = n.checked_sub(1).map(|b| words[b]);
            let pronoun = speaker_pronoun(before, words.get(n + 1).copied());
            out.push(pronoun.to_owned());
            // Only a subject's verb follows it.
            after_user = pronoun == "I";
        } else {
            out.push(w.to_owned());
        }
    }
    out.join(" ")
}

/// One question for `sentence` when its answer type shows, else `None`.
fn question(sentence: &str, keep_subject: bool) -> Option<String> {
    let said = if keep_subject {
        sentence.to_owned()
    } else {
        first_person(sentence)
    };
    let (wh, re): (&str, &Regex) = if MONEY.is_match(&said) {
        ("how much", &MONEY)
    } else if COUNT.is_match(&said) {
        ("how many", &COUNT)
    } else if DATE.is_match(&said) {
        ("when", &DATE)
    } else if PLACE.is_match(&said) {
        ("where", &PLACE)
    } else {
        return None;
    };
    let stripped = re.replace_all(&said, " ");
    let words: Vec<&str> = stripped
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'')))
        .filter(|w| !w.is_empty())
        .take(12)
        .collect();
    if words.len() < 2 {
        return None;
    }
    Some(format!("{wh} {}", words.join(" ").to_lowercase()))
}

/// The cues of one memory: see the module docs.
pub fn cues(i: &CueInput) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |c: String, out: &mut Vec<String>| {
        let c = c.trim().to_owned();
        if !c.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(&c)) && out.len() < MAX {
            out.push(c);
        }
    };
    if i.employer {
        for c in [
            "where do I work",
            "who is my employer",
            "what company do I work for",
        ] {
            push(c.to_owned(), &mut out);
        }
    }
    if let Some(q) = i.asked {
        // Asked to the speaker: "you" is them.
        push(asked_by_speaker(q), &mut out);
    }
    for s in i.sentences.iter().take(2) {
        if let Some(q) = question(s, i.named_speaker) {
            push(q, &mut out);
        }
    }
    if i.sentences
        .iter()
        .take(2)
        .any(|s| says_occupation(s, i.subject))
    {
        if i.about_speaker && !i.named_speaker {
            push("what do I do for a living".to_owned(), &mut out);
        } else {
            push(format!("what does {} do for a living", i.subject), &mut out);
        }
    }
    if !i.about_speaker || i.named_speaker {
        for c in entity_questions(i.subject, i.subject_kind) {
            push(c, &mut out);
        }
    }
    if i.tier == Tier::Skills {
        push("how do I do this".to_owned(), &mut out);
        push("what are the steps".to_owned(), &mut out);
    }
    for c in topic_questions(if i.tier == Tier::Rules {
        "preferences"
    } else {
        i.topic
    }) {
        push((*c).to_owned(), &mut out);
    }
    if out.len() < MIN {
        push(
            format!("what do I know about {}", i.topic.replace('-', " ")),
            &mut out,
        );
        push(
            format!("what did I say about {}", i.topic.replace('-', " ")),
            &mut out,
        );
        push("what did I tell you".to_owned(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_speaker_is_me_where_they_are_an_object() {
        assert_eq!(
            asked_by_speaker("What did she give you?"),
            "what did she give me"
        );
        assert_eq!(
            asked_by_speaker("Shall I draft anything for you before you go?"),
            "shall you draft anything for me before i go"
        );
        assert_eq!(
            asked_by_speaker("Do you want me to remind you?"),
            "do i want you to remind me"
        );
        assert_eq!(
            asked_by_speaker("How's your youngest getting on?"),
            "how's my youngest getting on"
        );
        assert_eq!(
            asked_by_speaker("Are you sure that's yours?"),
            "are i sure that's mine"
        );
        assert_eq!(
            first_person("Idris set this up on the laptop for User and"),
            "Idris set this up on the laptop for me and"
        );
        assert_eq!(
            first_person("Tamsin says User should rest"),
            "Tamsin says I should rest"
        );
        assert_eq!(first_person("User pays the rent"), "I pay the rent");
    }

    #[test]
    fn questions_by_answer_type() {
        assert_eq!(
            question("User pays £625 each for the flat from October.", false).as_deref(),
            Some("how much i pay each for the flat from october")
        );
        assert!(
            question("User's next cardiology appointment is 3 June.", false)
                .is_some_and(|q| q.starts_with("when my next cardiology appointment"))
        );
        assert_eq!(question("User likes tea.", false), None);
    }

    #[test]
    fn an_occupation_asks_what_they_do_for_a_living() {
        let said = ["User's sister Ada is a nurse at the Royal.".to_owned()];
        let input = |about_speaker| CueInput {
            subject: if about_speaker { "User" } else { "Ada" },
            subject_kind: Some("person"),
            about_speaker,
            named_speaker: false,
            topic: "work",
            tier: Tier::Facts,
            sentences: &said,
            employer: false,
            asked: None,
        };
        assert!(
            cues(&input(false)).contains(&"what does Ada do for a living".to_owned()),
            "{:?}",
            cues(&input(false))
        );
        // The user's sister's job is not the user's.
        assert!(!cues(&input(true)).contains(&"what do I do for a living".to_owned()));
        assert!(says_occupation("User is a nurse at the Royal", "User"));
        assert!(says_occupation(
            "Fenna Quill's a sound engineer at a studio",
            "Fenna Quill"
        ));
        assert!(says_occupation("he works as a paramedic", "Fenna Quill"));
        // Not a job: no place of work, or not said of the subject.
        assert!(!says_occupation(
            "Melanie is a big fan of pottery",
            "Melanie"
        ));
        assert!(!says_occupation(
            "It was a great day at the lake",
            "Melanie"
        ));
        assert!(!says_occupation(
            "This is a great place for kids",
            "Melanie"
        ));
    }
}
