//! Who a sentence is about, and how it reads in the third person.

use gitloom_model::text::{Word, words};

use super::gender::{Gender, Genders};
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

/// How a sentence comes by its subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// It names it ("my daughter Ines is 35", "I'm 29").
    Named,
    /// A pronoun points back to it ("she lives in Aarhus"), with the gender the
    /// pronoun asks for (none for "who", "they").
    Pronoun(Option<Gender>),
    /// It has none up front and goes on about the one before ("the pills are…").
    Continued,
}

impl Link {
    /// True when the sentence names its subject itself.
    pub fn opens(self) -> bool {
        self == Link::Named
    }
}

/// What a sentence is about.
#[derive(Debug, Clone)]
pub enum Subject {
    /// The speaker themselves.
    Speaker,
    /// A named entity.
    Entity(Spotted),
}

impl Subject {
    /// The same person named in full once and by one of those names once ("Marta
    /// downstairs will feed the cat. Marta Kowalski, on the ground floor, has my
    /// key"): a one-word name that is the first or last word of the other, both
    /// persons (or of no known kind). For clauses said one after the other only:
    /// further apart, two people may share a first name.
    pub fn same_person(&self, other: &Subject) -> bool {
        let (Subject::Entity(a), Subject::Entity(b)) = (self, other) else {
            return false;
        };
        let personal = |e: &Spotted| e.kind.is_none() || e.is_person();
        if !personal(a) || !personal(b) {
            return false;
        }
        let (fa, fb) = (
            gitloom_model::fold_name(&a.name),
            gitloom_model::fold_name(&b.name),
        );
        let (short, long) = if fa.len() <= fb.len() {
            (fa, fb)
        } else {
            (fb, fa)
        };
        let words: Vec<&str> = long.split(' ').collect();
        !short.contains(' ')
            && words.len() > 1
            && (words.first() == Some(&short.as_str()) || words.last() == Some(&short.as_str()))
    }

    /// Of two names for one person, the fuller.
    pub fn fuller(self, other: Subject) -> Subject {
        match (&self, &other) {
            (Subject::Entity(a), Subject::Entity(b)) if b.name.len() > a.name.len() => other,
            _ => self,
        }
    }
}

/// One subject is another when it names the same entity, wherever in its sentence
/// the name stood: "Marta will feed the cat. Then Marta takes the key" is about one
/// person, though the name is the first word of one clause and the second of the other.
impl PartialEq for Subject {
    fn eq(&self, other: &Subject) -> bool {
        match (self, other) {
            (Subject::Speaker, Subject::Speaker) => true,
            (Subject::Entity(a), Subject::Entity(b)) => {
                gitloom_model::fold_name(&a.name) == gitloom_model::fold_name(&b.name)
            }
            _ => false,
        }
    }
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
/// Ines is 35"), words of the language's kinship and roles.
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
    "ex",
];

/// How many words may qualify a relation between "my" and it ("my best friend", "my
/// heart doctor", "my little brother"): any word that is no function word or name.
const RELATION_QUALIFIERS: usize = 2;

/// True for a personal pronoun (with its clitic: `i'm`, `she's`).
pub fn is_pronoun(w: &str) -> bool {
    FIRST_PERSON.contains(&w) || THIRD_PERSON.contains(&w) || matches!(w, "you" | "you're" | "your")
}

/// What a clause's subject is read against: what was said before it.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The subject of the sentence before, in this message.
    pub before: Option<&'a Subject>,
    /// The subject of the last sentence of an earlier message, within a pronoun's reach.
    pub earlier: Option<&'a Subject>,
    /// The persons named lately, within a pronoun's reach, the last one last.
    pub persons: &'a [&'a Spotted],
    /// The names of the clause right before, in this message ("Ximena" for ", who's 9").
    pub antecedents: &'a [Spotted],
    pub genders: &'a Genders,
    pub speaker: &'a Speaker,
}

/// The subject of `clause`, and how the clause comes by it: it names it, a pronoun
/// points back to it ("she lives in Aarhus"), or it goes on about the one before ("the
/// pills are…").
pub fn of(clause: &str, spots: &[Spotted], cx: &Context) -> (Subject, Link) {
    let Context {
        before,
        earlier,
        persons,
        antecedents,
        genders,
        speaker,
    } = *cx;
    // A pronoun may point back into an earlier message ("he" is still Callan); a
    // sentence with no subject at all goes on about this message's subject only.
    let pointed = before.or(earlier);
    let ws = words(clause);
    let name_at = |i: usize| spots.iter().find(|s| s.at == i);
    // Word index in `words` → word index in whitespace tokens (what Spotted counts).
    let token_of = token_index(clause, &ws);
    let start = label_end(&ws, clause, |k| name_at(token_of[k]).is_some()).unwrap_or(0);
    let mut i = start;
    while i < ws.len() && i < start + 8 {
        let w = &ws[i];
        let n = w.with_clitic();
        if let Some(s) = name_at(token_of[i]).filter(|s| s.prep.is_none()) {
            // "The Danish pension came through": the noun the name qualifies is what
            // the clause is about, and it is no name.
            if qualifies_next(&ws, i, s, clause) {
                break;
            }
            // "Bram and I got the keys": the speaker is in it.
            let after = i + words(&s.name).len();
            if ws.get(after).is_some_and(|w| w.norm == "and")
                && ws
                    .get(after + 1)
                    .is_some_and(|w| matches!(w.norm.as_str(), "i" | "me"))
            {
                return (Subject::Speaker, Link::Named);
            }
            // The speaker's own name is the speaker.
            if matches!(speaker, Speaker::Named(me) if gitloom_model::fold_name(me) == gitloom_model::fold_name(&s.name))
            {
                return (Subject::Speaker, Link::Named);
            }
            return (Subject::Entity(s.clone()), Link::Named);
        }
        if FIRST_PERSON.contains(&n.as_str()) {
            // "my daughter Ines is 35": the relation's name is the subject.
            if matches!(n.as_str(), "my" | "our")
                && let Some(j) = relation_end(&ws, i + 1, |k| name_at(token_of[k]).is_some())
                && let Some(s) = ws.get(j).and_then(|_| name_at(token_of[j]))
            {
                return (Subject::Entity(s.clone()), Link::Named);
            }
            return (Subject::Speaker, Link::Named);
        }
        // "Halvard Lind, who's Swedish": a relative clause is about the name it follows
        // (a person, or a name of no known kind: "who" says it is one).
        if i == 0 && w.norm == "who" {
            if let Some(p) = antecedents
                .iter()
                .rev()
                .find(|s| s.is_person() || s.kind.is_none())
            {
                let mut p = p.clone();
                p.kind.get_or_insert_with(|| "person".to_owned());
                return (Subject::Entity(p), Link::Pronoun(None));
            }
            return (
                pointed.cloned().unwrap_or(Subject::Speaker),
                Link::Continued,
            );
        }
        if THIRD_PERSON.contains(&n.as_str()) {
            // "he", "she": the subject before when it is a person the pronoun fits, else
            // the last person named that it fits.
            let wanted = Gender::of_pronoun(&w.norm);
            let fits = |e: &Spotted| e.is_person() && genders.fits(&e.name, wanted);
            let before_fits = matches!(pointed, Some(Subject::Entity(e)) if fits(e));
            if wanted.is_some()
                && !before_fits
                && let Some(p) = persons.iter().rev().find(|p| fits(p))
            {
                return (Subject::Entity((*p).clone()), Link::Pronoun(wanted));
            }
            return (
                pointed.cloned().unwrap_or(Subject::Speaker),
                Link::Pronoun(wanted),
            );
        }
        if !LEAD_IN.contains(&w.norm.as_str()) && !w.norm.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
        i += 1;
    }
    // No subject up front ("the pills are…", "there are 46 plots"): the sentence goes on
    // about whatever the one before was about.
    (before.cloned().unwrap_or(Subject::Speaker), Link::Continued)
}

/// True when the name spotted at word `i` stands between an article and a common
/// noun ("the Danish pension", "a Vetro grant"): it qualifies the noun, which is the
/// head of the phrase. The noun is a lower-case content word that reads as no verb
/// after a singular subject (no past, -ing or -s form, no adverb in -ly: "the Korvan
/// arrived", "the Korvan needs", "the Korvan finally…" keep the name).
fn qualifies_next(ws: &[Word], i: usize, name: &Spotted, clause: &str) -> bool {
    let after = i + words(&name.name).len();
    i > 0
        && matches!(ws[i - 1].norm.as_str(), "the" | "a" | "an")
        && ws.get(after).is_some_and(|n| {
            clause[ws[after - 1].end()..n.start].trim().is_empty()
                && n.clitic.is_none()
                && !n.capitalised()
                && crate::text::may_be_plain_verb(&n.norm)
                && !n.norm.ends_with("ly")
                && (!n.norm.ends_with('s') || n.norm.ends_with("ss"))
        })
}

/// A clause that opens on a label and a colon ("Problem: Oskar only works in…", "The
/// garden: Ines did what she said", "Work news: I'm changing desks"): the index of
/// the first word after the colon, where the subject is to be read. A label is one
/// or two content words, an article allowed; a name, a pronoun or a verb before the
/// colon makes it a clause of its own ("Liesel rang: …", and a name alone,
/// "Easter: …", stays what it was).
fn label_end(ws: &[Word], clause: &str, is_name: impl Fn(usize) -> bool) -> Option<usize> {
    let colon = (0..ws.len().min(3)).find(|&k| {
        let to = ws.get(k + 1).map_or(clause.len(), |n| n.start);
        clause[ws[k].end()..to].contains(':')
    })?;
    let article = |w: &Word| matches!(w.norm.as_str(), "the" | "a" | "an");
    let content = ws[..=colon].iter().filter(|w| !article(w)).count();
    let plain = ws[..=colon].iter().enumerate().all(|(k, w)| {
        article(w)
            || (!is_name(k)
                && w.clitic.is_none()
                && !gitloom_model::text::is_stopword(&w.norm)
                && !crate::text::is_past_form(&w.norm)
                && !is_pronoun(&w.norm))
    });
    (plain && (1..=2).contains(&content) && colon + 1 < ws.len()).then_some(colon + 1)
}

/// Where the relation that starts at word `from` ends ("my best friend Aoife": after
/// "friend"), the words that qualify it included; `None` when no relation starts there.
/// The relation runs on over heads ("my step mum", "my sister's friend" is not one).
fn relation_end(ws: &[Word], from: usize, is_name: impl Fn(usize) -> bool) -> Option<usize> {
    let head = (from..ws.len().min(from + RELATION_QUALIFIERS + 1)).find(|&k| {
        RELATION_HEADS.contains(&ws[k].norm.as_str())
            && ws[from..k]
                .iter()
                .enumerate()
                .all(|(q, w)| qualifies(w) && !is_name(from + q))
    })?;
    let mut j = head + 1;
    while j < ws.len() && RELATION_HEADS.contains(&ws[j].norm.as_str()) {
        j += 1;
    }
    Some(j)
}

/// A word that may qualify a relation: a content word without a clitic ("best",
/// "heart", "new"), not a function word or a number.
fn qualifies(w: &Word) -> bool {
    w.clitic.is_none()
        && !gitloom_model::text::is_stopword(&w.norm)
        && w.norm.chars().all(char::is_alphabetic)
}

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
/// ("She's been User's ward manager…" → "Birgit Lind's been…", "who's Swedish" →
/// "Halvard Lind's Swedish").
pub fn name_pronoun(sentence: &str, name: &str) -> String {
    let ws = words(sentence);
    let Some(first) = ws.first() else {
        return sentence.to_owned();
    };
    if !matches!(first.norm.as_str(), "he" | "she" | "who") || first.start > 2 {
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
///
/// A statement that opens on a generic "you" ("you press the button on the right
/// aid", "apparently you apply three months before") describes what anyone does, not
/// what the listener does: with `statement`, that "you" is kept as said.
pub fn third_person(
    clause: &str,
    speaker: &Speaker,
    other: Option<&str>,
    addressed: bool,
    statement: bool,
) -> String {
    let who = speaker.label();
    let you = match other {
        Some(o) => o.to_owned(),
        None if addressed => "the assistant".to_owned(),
        None => "you".to_owned(),
    };
    let s = crate::text::third_person_as(clause, who);
    // Between people a "you" that opens a statement is nearly always the other
    // ("you both looked great", "you look so happy"); said to an assistant, one
    // before a verb in the present tells how something works.
    if statement && other.is_none() && addressed && opens_on_generic_you(&s) {
        return s;
    }
    replace_you(&s, &you)
}

/// Sentence adverbs a generic "you" may follow ("apparently you apply…", "or you
/// can do it in the app").
const GENERIC_YOU_LEADS: &[&str] = &[
    "apparently",
    "usually",
    "normally",
    "generally",
    "basically",
    "then",
    "first",
    "or",
];

/// Verbs after a "you" that speak to the listener whatever the sentence ("you know",
/// "you mean"); a past ("you said") does too, and is told apart by its form.
const ADDRESSING_VERBS: &[&str] = &[
    "know",
    "think",
    "remember",
    "mean",
    "see",
    "guess",
    "understand",
];

/// Whether `clause` opens on "you" (or a sentence adverb and "you") followed by a
/// verb in the present ("you press", "you get", "you can"): the generic "you" of an
/// instruction or a fact about how things work, not the listener.
fn opens_on_generic_you(clause: &str) -> bool {
    let ws = words(clause);
    let at = match ws.first() {
        Some(w) if w.norm == "you" && w.clitic.is_none() => 0,
        Some(w) if GENERIC_YOU_LEADS.contains(&w.norm.as_str()) && w.clitic.is_none() => 1,
        _ => return false,
    };
    if ws
        .get(at)
        .is_none_or(|w| w.norm != "you" || w.clitic.is_some())
    {
        return false;
    }
    let Some(verb) = ws.get(at + 1) else {
        return false;
    };
    let v = verb.norm.as_str();
    verb.clitic.is_none()
        && (v == "can" || crate::text::may_be_plain_verb(v) && !ADDRESSING_VERBS.contains(&v))
}

/// Words after which a "you" opens a clause as its subject ("when you write…").
const CLAUSE_OPENERS: &[&str] = &[
    "when", "whenever", "if", "once", "unless", "until", "while", "before", "after", "that", "and",
    "but", "so", "because", "or",
];

/// Words after which a "you" is the subject of a clause they embed: question words
/// ("what you think", "wherever you go") and words of feeling or hope ("glad you
/// like it", "hope you enjoy it", "sure you take a break").
const EMBEDDING: &[&str] = &[
    "what",
    "how",
    "where",
    "why",
    "wherever",
    "whatever",
    "however",
    "anytime",
    "everywhere",
    "glad",
    "hope",
    "sure",
];

/// Words before a "you" that leave the verb after it bare: an auxiliary or modal of
/// a question ("do you have", "are you going") or a verb whose object takes a bare
/// verb ("let you have it", "made you do it").
const BARE_AFTER: &[&str] = &[
    "do", "does", "did", "can", "could", "will", "would", "should", "shall", "may", "might",
    "must", "are", "were", "is", "was", "have", "has", "had", "let", "make", "made", "makes",
    "help", "helped", "helps", "see", "saw", "watch", "watched", "hear", "heard",
];

/// A form of "be", "have" or "do" written right after a "you" (`are`, `weren't`): that
/// "you" is its subject, wherever it stands ("how patient you are").
fn is_you_verb(w: &gitloom_model::text::Word<'_>) -> bool {
    match w.clitic.as_deref() {
        None => matches!(w.norm.as_str(), "are" | "were" | "have" | "do"),
        Some("t") => matches!(w.norm.as_str(), "aren" | "weren" | "haven" | "don"),
        Some(_) => false,
    }
}

/// The verb after a "you" made third person singular: `were` → `was`, `don't` →
/// `doesn't` (the clitic stays as written), else the regular inflection.
fn agreeing(w: &gitloom_model::text::Word<'_>) -> Option<String> {
    match (w.norm.as_str(), w.clitic.as_deref()) {
        ("were", None) => Some("was".to_owned()),
        ("weren", Some("t")) => Some("wasn".to_owned()),
        ("aren", Some("t")) => Some("isn".to_owned()),
        ("haven", Some("t")) => Some("hasn".to_owned()),
        ("don", Some("t")) => Some("doesn".to_owned()),
        (v, None) => crate::text::third_singular(v),
        _ => None,
    }
}

fn replace_you(s: &str, you: &str) -> String {
    if you == "you" {
        return s.to_owned();
    }
    let ws = words(s);
    let mut out = String::with_capacity(s.len() + 16);
    let mut last = 0;
    // The verb of a "you" replaced as a clause's subject, to agree with its new one
    // ("when you draft…" → "when the assistant drafts…").
    let mut agree: Option<usize> = None;
    for (i, w) in ws.iter().enumerate() {
        // Where the replaced text ends: the word, or the word and its clitic.
        let mut end = w.end();
        let rep = match (w.norm.as_str(), w.clitic.as_deref()) {
            // "you're" is the other's "is": "You've come a long way" → "Maren has
            // come a long way" (the clitic goes with the word it joins).
            ("you", Some(c @ ("re" | "ve" | "ll" | "d"))) => {
                end = clitic_end(s, w);
                let verb = match c {
                    "re" => "is",
                    "ve" => "has",
                    "ll" => "will",
                    _ => "would",
                };
                Some(format!("{you} {verb}"))
            }
            ("you", None) | ("u", None) => {
                let before = i.checked_sub(1).map(|p| &ws[p]);
                let opens = match before {
                    None => true,
                    Some(p) => {
                        CLAUSE_OPENERS.contains(&p.norm.as_str()) && p.clitic.is_none()
                            || s[p.end()..w.start].contains([',', ';', ':'])
                    }
                };
                let bare = before
                    .is_some_and(|p| p.clitic.is_none() && BARE_AFTER.contains(&p.norm.as_str()));
                let verb_next = ws.get(i + 1).is_some_and(|n| is_you_verb(n));
                // "what you think", "glad you like it": a clause that is the object
                // of a question word or of a feeling, when a plain verb follows.
                let embedded = before
                    .is_some_and(|p| p.clitic.is_none() && EMBEDDING.contains(&p.norm.as_str()))
                    && ws.get(i + 1).is_some_and(|n| {
                        n.clitic.is_none() && crate::text::may_be_plain_verb(&n.norm)
                    });
                if opens || embedded || verb_next && !bare {
                    agree = Some(i + 1);
                }
                Some(you.to_owned())
            }
            ("your", None) | ("yours", None) => Some(format!("{you}'s")),
            ("yourself", None) => Some(you.to_owned()),
            _ if agree == Some(i) && w.raw == w.norm => agreeing(w),
            _ => None,
        };
        if let Some(r) = rep {
            out.push_str(&s[last..w.start]);
            out.push_str(&r);
            last = end;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// Byte offset just past `w`'s clitic in `s`: its apostrophe (straight or curly) and
/// the letters after it.
fn clitic_end(s: &str, w: &gitloom_model::text::Word<'_>) -> usize {
    let rest = &s[w.end()..];
    let mut chars = rest.char_indices();
    match chars.next() {
        Some((_, '\'' | '\u{2019}')) => chars
            .find(|(_, c)| !c.is_alphanumeric())
            .map_or(s.len(), |(i, _)| w.end() + i),
        _ => w.end(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        let me = Speaker::User;
        let genders = Genders::default();
        let of = |c: &str, s: &[Spotted], b: Option<&Subject>, me: &Speaker| {
            let cx = Context {
                before: b,
                earlier: None,
                persons: &[],
                antecedents: &[],
                genders: &genders,
                speaker: me,
            };
            of(c, s, &cx).0
        };
        assert_eq!(of("i'm 29 and a nurse", &[], None, &me), Subject::Speaker);
        let c = Spotted::person("Ines", 2);
        assert_eq!(
            of(
                "my daughter Ines is 41.",
                std::slice::from_ref(&c),
                None,
                &me
            ),
            Subject::Entity(c.clone())
        );
        let before = Subject::Entity(c.clone());
        assert_eq!(of("she lives in Aarhus.", &[], Some(&before), &me), before);
        let t = Spotted::person("Kasper", 1);
        assert_eq!(
            of(
                "yesterday Kasper rang to offer it",
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
        let callan = Spotted::person("Callan", 3);
        assert_eq!(
            super::of(
                "he's been in Aarhus since 2023",
                &[],
                &Context {
                    before: Some(&Subject::Speaker),
                    earlier: None,
                    persons: &[&callan],
                    antecedents: &[],
                    genders: &genders,
                    speaker: &me,
                }
            )
            .0,
            Subject::Entity(callan)
        );
    }

    /// What `of` reads against, with nothing said before but `before`.
    fn context<'a>(
        before: Option<&'a Subject>,
        genders: &'a Genders,
        speaker: &'a Speaker,
    ) -> Context<'a> {
        Context {
            before,
            earlier: None,
            persons: &[],
            antecedents: &[],
            genders,
            speaker,
        }
    }

    #[test]
    fn a_name_that_qualifies_the_noun_after_it_is_not_the_subject() {
        let (me, genders) = (Speaker::User, Genders::default());
        let cx = context(None, &genders, &me);
        let thing = |name: &str, at: usize| Spotted {
            name: name.into(),
            kind: None,
            at,
            prep: None,
        };
        let subject = |clause: &str, name: Spotted| of(clause, &[name], &cx).0;
        // The pension is the speaker's; "Danish" says which one.
        assert_eq!(
            subject("The Danish pension came through!", thing("Danish", 1)),
            Subject::Speaker
        );
        assert_eq!(
            subject("a Vetro grant paid for the roof", thing("Vetro", 1)),
            Subject::Speaker
        );
        // Before a verb, an adverb or a preposition the name is the subject.
        for clause in [
            "The Korvan is here!",
            "The Korvan arrived on Monday",
            "The Korvan needs new tyres",
            "The Korvan finally came",
            "The Korvan, the electric one, came",
        ] {
            let r = thing("Korvan", 1);
            assert_eq!(subject(clause, r.clone()), Subject::Entity(r), "{clause}");
        }
        let fair = thing("FAIR", 1);
        assert_eq!(
            subject("The FAIR on Saturday was a circus", fair.clone()),
            Subject::Entity(fair)
        );
        // Without an article a name before a noun is read as before ("Kasper rang").
        let k = Spotted::person("Kasper", 0);
        assert_eq!(subject("Kasper rang", k.clone()), Subject::Entity(k));
    }

    #[test]
    fn a_label_before_a_colon_is_not_the_subject_and_the_speaker_beside_a_name_is() {
        let (me, genders) = (Speaker::User, Genders::default());
        let before = Subject::Entity(Spotted::person("Kasper", 0));
        let cx = context(Some(&before), &genders, &me);
        let subject = |clause: &str, spots: &[Spotted]| of(clause, spots, &cx).0;
        // The person named at word `at` is whom the clause is about.
        let about = |clause: &str, name: &str, at: usize| {
            let p = Spotted::person(name, at);
            assert_eq!(
                subject(clause, std::slice::from_ref(&p)),
                Subject::Entity(p),
                "{clause}"
            );
        };
        // What follows the label says whom the clause is about.
        about("Problem: Oskar only works in the mornings", "Oskar", 1);
        about("The garden: Ines did what she said", "Ines", 2);
        assert_eq!(
            subject("Work news: I'm changing desks", &[]),
            Subject::Speaker
        );
        // A name or a verb before the colon: the clause's own subject.
        about("Liesel rang: the deadline moved", "Liesel", 0);
        let ana = Spotted::person("Ana", 4);
        assert_eq!(
            subject("we agreed on this: Ana pays", std::slice::from_ref(&ana)),
            Subject::Speaker
        );
        // Three words are no label: the clause goes on about the one before.
        assert_eq!(subject("note to self: buy stamps", &[]), before);
        // The speaker named beside someone: the fact is the speaker's too.
        let bram = Spotted::person("Bram", 0);
        assert_eq!(
            subject(
                "Bram and I got the keys on Friday",
                std::slice::from_ref(&bram)
            ),
            Subject::Speaker
        );
        let two = [bram.clone(), Spotted::person("Kemal", 2)];
        assert_eq!(
            subject("Bram and Kemal are coming too", &two),
            Subject::Entity(bram)
        );
    }

    #[test]
    fn a_clause_may_end_on_someone_it_does_not_name() {
        assert!(ends_on_unnamed_person("sent mum her money", &[]));
        assert!(ends_on_unnamed_person(
            "Aoife rang my dad",
            &[Spotted::person("Aoife", 0)]
        ));
        // "my sister Aoife": the relation is named.
        assert!(!ends_on_unnamed_person(
            "my sister Aoife rang",
            &[Spotted::person("Aoife", 2)]
        ));
        assert!(!ends_on_unnamed_person(
            "mum and Aoife came over",
            &[Spotted::person("Aoife", 2)]
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
                false,
                false
            ),
            "Caroline went to a support group, Melanie should come"
        );
        assert_eq!(
            third_person(
                "don't message me before 2pm",
                &Speaker::User,
                None,
                true,
                false
            ),
            "don't message User before 2pm"
        );
        // A "you" that opens a clause takes the verb's agreement with it; one that is
        // an object leaves the verb alone.
        assert_eq!(
            third_person(
                "when you draft texts to Ana keep it casual",
                &Speaker::User,
                None,
                true,
                false
            ),
            "when the assistant drafts texts to Ana keep it casual"
        );
        assert_eq!(
            third_person("I paint, you sing", &c, Some("Melanie"), false, false),
            "Caroline paints, Melanie sings"
        );
        assert_eq!(
            third_person("can you make me a plan", &Speaker::User, None, true, false),
            "can the assistant make User a plan"
        );
        assert_eq!(
            third_person(
                "if you ever see it, tell you what",
                &Speaker::User,
                None,
                true,
                false
            ),
            "if the assistant ever see it, tell the assistant what"
        );
    }

    #[test]
    fn a_statement_to_an_assistant_that_opens_on_a_generic_you_keeps_it() {
        let me = Speaker::User;
        let stated = |clause: &str| third_person(clause, &me, None, true, true);
        // How something works, told to an assistant: anyone's "you".
        assert_eq!(
            stated("you press the button on the left earpiece to change the volume"),
            "you press the button on the left earpiece to change the volume"
        );
        assert_eq!(
            stated("apparently you renew it two months before"),
            "apparently you renew it two months before"
        );
        assert_eq!(
            stated("or you can do it all in the app"),
            "or you can do it all in the app"
        );
        // The listener, all the same: a verb that speaks to them, a past, a "you"
        // further in, and anything that is not a statement.
        assert_eq!(
            stated("you know I hate parsnips"),
            "the assistant knows User hates parsnips"
        );
        assert_eq!(
            stated("you said the train was at six"),
            "the assistant said the train was at six"
        );
        assert_eq!(
            stated("I hope you had a good weekend"),
            "User hopes the assistant had a good weekend"
        );
        assert_eq!(
            third_person("you press the button for me", &me, None, true, false),
            "the assistant presses the button for User"
        );
        // Between people, an opening "you" is the other one.
        assert_eq!(
            third_person(
                "you look so happy when you dance",
                &Speaker::Named("Tamsin".into()),
                Some("Halvor"),
                false,
                true
            ),
            "Halvor looks so happy when Halvor dances"
        );
    }

    #[test]
    fn a_you_before_a_form_of_be_have_or_do_is_its_subject_wherever_it_stands() {
        let c = Speaker::Named("Ana".into());
        let said = |clause: &str| third_person(clause, &c, Some("Ben"), false, false);
        assert_eq!(
            said("it's great how patient you are with them"),
            "it's great how patient Ben is with them"
        );
        assert_eq!(
            said("glad you were at the match"),
            "glad Ben was at the match"
        );
        assert_eq!(
            said("good thing you don't need a car"),
            "good thing Ben doesn't need a car"
        );
        assert_eq!(
            said("glad you have that support"),
            "glad Ben has that support"
        );
        assert_eq!(said("I know you weren't sure"), "Ana knows Ben wasn't sure");
        // A question's auxiliary, or a verb whose object takes a bare verb, leaves it.
        assert_eq!(said("do you have any advice"), "do Ben have any advice");
        assert_eq!(
            said("I'll let you have the last one"),
            "Ana will let Ben have the last one"
        );
        // Not a form of be, have or do: an object "you" leaves the verb alone.
        assert_eq!(said("I told you sing well"), "Ana told Ben sing well");
        // Embedded by a question word or a feeling, before a plain verb.
        assert_eq!(
            said("glad you like it, I know what you mean"),
            "glad Ben likes it, Ana knows what Ben means"
        );
        assert_eq!(
            said("wherever you go, how you doing, what you guys did"),
            "wherever Ben goes, how Ben doing, what Ben guys did"
        );
        // "you" with a verb joined to it, straight or curly.
        assert_eq!(
            said("You've come a long way and you\u{2019}re so brave"),
            "Ben has come a long way and Ben is so brave"
        );
        assert_eq!(
            said("you'll love it, you'd be great"),
            "Ben will love it, Ben would be great"
        );
    }
}
