//! Plain-text helpers of the offline extractor: sentences, tokens, first-person
//! rewriting and entity spotting. Deterministic and model-free; they trade recall
//! for never inventing a subject that is not in the text.

use std::collections::HashSet;
use std::sync::LazyLock;

use gitloom_model::fold_name;
use regex::Regex;
use unicode_segmentation::UnicodeSegmentation;

/// Abbreviations after which UAX #29 wrongly ends a sentence ("Dr. Weber").
const ABBREVIATIONS: &[&str] = &[
    "dr.", "mr.", "mrs.", "ms.", "prof.", "st.", "e.g.", "i.e.", "vs.", "etc.", "no.", "approx.",
    "jr.", "sr.", "mt.", "ca.",
];

/// Splits text into sentences: UAX #29 boundaries, glued back over abbreviations,
/// split again at line breaks (chat messages use them as sentence ends) and after a
/// `.`, `!` or `?` followed by a lower-case word, which UAX #29 keeps together but
/// chat writes all the time ("rough night. sev1 yesterday").
pub fn sentences(text: &str) -> Vec<String> {
    let text = text.replace(['\u{2019}', '\u{2018}'], "'");
    let mut out: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let mut pending = String::new();
        for s in line.unicode_sentences().flat_map(split_lower) {
            pending.push_str(s);
            let last = pending
                .split_whitespace()
                .last()
                .unwrap_or_default()
                .to_lowercase();
            // "Dr. Weber", "J. Smith": not a sentence end.
            let initial =
                last.len() == 2 && last.ends_with('.') && last.starts_with(char::is_alphabetic);
            if ABBREVIATIONS.contains(&last.as_str()) || initial {
                continue;
            }
            let t = pending.trim();
            if !t.is_empty() {
                out.push(t.to_owned());
            }
            pending.clear();
        }
        let t = pending.trim();
        if !t.is_empty() {
            out.push(t.to_owned());
        }
    }
    out
}

/// Splits one UAX #29 sentence after `.`/`!`/`?` (and closing quotes or brackets)
/// followed by whitespace and a lower-case letter, keeping the whitespace.
fn split_lower(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        if matches!(c, '.' | '!' | '?') {
            // The run of terminators and closers.
            let mut j = i + 1;
            while j < chars.len() && matches!(chars[j].1, '.' | '!' | '?' | '"' | ')' | '\'') {
                j += 1;
            }
            let ws = j < chars.len() && chars[j].1.is_whitespace();
            let mut k = j;
            while k < chars.len() && chars[k].1.is_whitespace() {
                k += 1;
            }
            // UAX #29 already ends a sentence before a capital; chat starts the next
            // one in lower case, with a number or an amount just as often.
            let next_lower = k < chars.len()
                && (chars[k].1.is_lowercase()
                    || chars[k].1.is_ascii_digit()
                    || matches!(chars[k].1, '£' | '$' | '€' | '#' | '@' | '('));
            // Not "2.5", not "e.g." (no whitespace), and something before it.
            if ws && next_lower && at > from {
                let end = chars.get(k).map_or(s.len(), |(b, _)| *b);
                out.push(&s[from..end]);
                from = end;
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    if from < s.len() {
        out.push(&s[from..]);
    }
    out
}

/// Words that begin sentences but are not names. A capitalised first word is a name
/// only if it is not one of these and the session also capitalises it mid-sentence
/// (or the store already knows it).
pub const COMMON: &[&str] = &[
    "a",
    "about",
    "actually",
    "after",
    "again",
    "all",
    "also",
    "although",
    "an",
    "and",
    "another",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "back",
    "because",
    "before",
    "being",
    "big",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "done",
    "during",
    "each",
    "either",
    "even",
    "every",
    "everything",
    "few",
    "first",
    "for",
    "from",
    "generally",
    "good",
    "great",
    "had",
    "has",
    "have",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "last",
    "later",
    "let",
    "like",
    "mainly",
    "many",
    "maybe",
    "me",
    "more",
    "most",
    "mostly",
    "much",
    "my",
    "never",
    "new",
    "next",
    "no",
    "nor",
    "not",
    "nothing",
    "now",
    "of",
    "oh",
    "ok",
    "okay",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "out",
    "over",
    "perfect",
    "please",
    "probably",
    "quite",
    "really",
    "right",
    "same",
    "she",
    "should",
    "since",
    "small",
    "so",
    "some",
    "something",
    "sometimes",
    "still",
    "such",
    "sure",
    "thanks",
    "thank",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "though",
    "through",
    "to",
    "today",
    "tomorrow",
    "tonight",
    "too",
    "two",
    "three",
    "four",
    "five",
    "under",
    "until",
    "up",
    "updates",
    "update",
    "us",
    "very",
    "was",
    "we",
    "well",
    "were",
    "what",
    "when",
    "where",
    "whenever",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "yes",
    "yesterday",
    "yet",
    "you",
    "your",
    "always",
    "big",
    "news",
    "confession",
    "told",
    "bought",
    "grew",
    "got",
    "went",
    "came",
    "booked",
    "started",
    "moved",
    "yeah",
    "hey",
    "hi",
    "hello",
    "wow",
    "sorry",
    "cheap",
    "seven",
    "six",
    "eight",
    "nine",
    "ten",
    "born",
    "anyway",
    "btw",
    "plus",
    "hmm",
    "great",
    "nice",
    "cool",
];

/// True for a calendar word (a weekday or month, folded): a date, never a name.
pub fn is_calendar(norm: &str) -> bool {
    CALENDAR.contains(&norm)
        || matches!(
            norm,
            "mon"
                | "tue"
                | "tues"
                | "wed"
                | "thu"
                | "thur"
                | "thurs"
                | "fri"
                | "sat"
                | "sun"
                | "jan"
                | "feb"
                | "mar"
                | "apr"
                | "jun"
                | "jul"
                | "aug"
                | "sep"
                | "sept"
                | "oct"
                | "nov"
                | "dec"
        )
}

/// Calendar words: dates, never entities.
const CALENDAR: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
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
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
    "user",
];

/// Prepositions after which a name is where or for what, not what a sentence is about.
const PLACE_PREPS: &[&str] = &[
    "in", "to", "near", "for", "into", "around", "about", "via", "during", "than", "like",
];
/// Prepositions after which a name may still be the subject when nothing better is named.
const WEAK_PREPS: &[&str] = &["at", "from", "with", "by", "of"];
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "my", "our", "his", "her", "their", "this", "that",
];

const PERSON_CUES: &[&str] = &[
    "friend",
    "sister",
    "brother",
    "mother",
    "father",
    "mum",
    "mom",
    "dad",
    "wife",
    "husband",
    "partner",
    "girlfriend",
    "boyfriend",
    "son",
    "daughter",
    "manager",
    "boss",
    "colleague",
    "neighbour",
    "neighbor",
    "landlord",
    "landlady",
    "dr.",
    "mr.",
    "mrs.",
    "ms.",
    "uncle",
    "aunt",
    "cousin",
    "grandma",
    "grandpa",
    "grandmother",
    "grandfather",
    "roommate",
    "flatmate",
    "teacher",
    "coach",
    "doctor",
    "therapist",
    "frau",
    "herr",
    "fiance",
    "fiancee",
    "niece",
    "nephew",
    "mentor",
    "named",
    "name",
];
/// Reporting verbs (speaking, proposing, getting in touch), a closed class of
/// English: only a person does them, so an unknown word right before one is a name
/// ("kasper rang", "birgit proposed"; here and in `offline/names.rs`). Forms that
/// are also common nouns ("texts", "calls", "offers") are left out.
pub(crate) const SPEECH_VERBS: &[&str] = &[
    "said",
    "says",
    "told",
    "tells",
    "asked",
    "asks",
    "replied",
    "answered",
    "mentioned",
    "suggested",
    "suggests",
    "proposed",
    "offered",
    "promised",
    "agreed",
    "explained",
    "insisted",
    "warned",
    "admitted",
    "complained",
    "announced",
    "reckons",
    "reckoned",
    "rang",
    "phoned",
    "texted",
    "emailed",
    "messaged",
    "called",
];
/// More verbs whose subject is a person ("Kit lives in Aarhus", "Halvard retired"): wanting and
/// thinking, living, working and the turns of a life. Things live and work too ("the
/// cluster works"), so these only make a known name a person, never a word a name.
const PERSON_VERBS: &[&str] = &[
    "wants", "wanted", "thinks", "thought", "loves", "hates", "likes", "lives", "lived", "works",
    "worked", "teaches", "taught", "died", "passed", "married", "retired", "turned", "turns",
    "who",
];

const PET_CUES: &[&str] = &[
    "cat", "dog", "kitten", "puppy", "pet", "hamster", "parrot", "rabbit", "horse", "bird",
];
const ORG_SUFFIX: &[&str] = &[
    "ai",
    "inc",
    "gmbh",
    "ltd",
    "labs",
    "lab",
    "robotics",
    "vision",
    "systems",
    "technologies",
    "university",
    "bank",
    "corp",
    "company",
    "group",
    "studio",
    "studios",
    "college",
    "school",
    "institute",
    "hospital",
    "agency",
    "foundation",
    "llc",
    "ag",
    "se",
];

/// One entity spotted in a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Spotted {
    pub name: String,
    pub kind: Option<String>,
    /// Word index where the name starts.
    pub at: usize,
    /// The preposition before it (after skipping determiners), if any.
    pub prep: Option<String>,
}

impl Spotted {
    /// Whether a "he" or "she" may stand for it: a person or a pet.
    pub fn is_person(&self) -> bool {
        matches!(self.kind.as_deref(), Some("person" | "pet"))
    }
}

#[cfg(test)]
impl Spotted {
    /// A person's name spotted at word `at`, for tests.
    pub fn person(name: &str, at: usize) -> Spotted {
        Spotted {
            name: name.into(),
            kind: Some("person".into()),
            at,
            prep: None,
        }
    }
}

/// Known names: from the store and from the session itself.
#[derive(Debug, Clone, Default)]
pub struct Lexicon {
    /// (folded name, display name, kind)
    pub known: Vec<(String, String, Option<String>)>,
    /// Words the session capitalises in the middle of a sentence.
    pub mid_caps: HashSet<String>,
    /// Time zones: acronyms the text writes right after a clock time ("08:12 UTC",
    /// "9:30 CET"), lower case. Never names, wherever else they stand ("times in UTC").
    pub zones: HashSet<String>,
}

/// A common word with a clitic ("they're", "it's", "there'll"): a capital at the start
/// of a sentence, never a name's first word ("They're Corvale Aria 3X" names the
/// headphones, not "They're Corvale…").
fn is_contraction(lower: &str) -> bool {
    let lower = lower.replace('\u{2019}', "'");
    lower.split_once('\'').is_some_and(|(stem, clitic)| {
        matches!(clitic, "re" | "ve" | "ll" | "m" | "d" | "s") && COMMON.contains(&stem)
    })
}

fn trim_token(t: &str) -> &str {
    t.trim_matches(|c: char| {
        !(c.is_alphanumeric()
            || c == '+'
            || c == '#'
            || c == '/'
            || c == '.'
            || c == '-'
            || c == '\'')
    })
    .trim_end_matches(['.', '\'', '-'])
    .trim_end_matches("'s")
}

fn ends_phrase(raw: &str) -> bool {
    raw.ends_with([',', ';', ':', '!', '?', ')', '"'])
        || (raw.ends_with('.') && !raw.ends_with(".."))
}

fn is_cap(t: &str) -> bool {
    t.chars().next().is_some_and(char::is_uppercase)
}

/// Two characters or more whose letters are all capitals: "UTC", "SRE", "DBA-4471".
fn is_acronym(t: &str) -> bool {
    t.len() > 1
        && t.chars()
            .filter(|c| c.is_alphabetic())
            .all(char::is_uppercase)
}

/// A clock time as written: "04:40", "9.30", "23:40" (a price, "4.50", reads the
/// same; the acronym after it, "GBP", is no name either).
fn is_clock(t: &str) -> bool {
    t.split_once([':', '.']).is_some_and(|(h, m)| {
        (1..=2).contains(&h.len())
            && m.len() == 2
            && h.chars().chain(m.chars()).all(|c| c.is_ascii_digit())
    })
}

fn has_digit(t: &str) -> bool {
    t.chars().any(|c| c.is_ascii_digit())
}

impl Lexicon {
    /// Learns which words the text capitalises mid-sentence.
    pub fn learn(&mut self, text: &str) {
        for s in sentences(text) {
            let mut before = None;
            for (i, raw) in s.split_whitespace().enumerate() {
                let t = trim_token(raw);
                if i > 0 && is_cap(t) && t != "I" && !t.starts_with("I'") {
                    self.mid_caps.insert(t.to_lowercase());
                }
                if is_acronym(t) && before.is_some_and(is_clock) {
                    self.zones.insert(t.to_lowercase());
                }
                before = Some(t);
            }
        }
    }

    pub fn add_known(&mut self, name: &str, kind: Option<String>) {
        let f = fold_name(name);
        if f.is_empty() || self.known.iter().any(|(k, _, _)| *k == f) {
            return;
        }
        self.known.push((f, name.to_owned(), kind));
    }

    fn known_kind(&self, name: &str) -> Option<Option<String>> {
        let f = fold_name(name);
        self.known
            .iter()
            .find(|(k, _, _)| *k == f)
            .map(|(_, _, kind)| kind.clone())
    }

    /// Names in one sentence, in order.
    pub fn spot(&self, sentence: &str) -> Vec<Spotted> {
        let raw: Vec<&str> = sentence.split_whitespace().collect();
        let words: Vec<&str> = raw.iter().map(|r| trim_token(r)).collect();
        let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let mut out: Vec<Spotted> = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            let l = lower[i].as_str();
            let cap = is_cap(w) && w != "I" && !w.starts_with("I'") && !CALENDAR.contains(&l);
            let initial = i == 0 || raw[i - 1].ends_with(':');
            let acronym = is_acronym(w);
            // SHOUTING ("WE'RE ENGAGED") is words, not names.
            let shouted = acronym && w.len() > 2 && crate::dict::is_listed(&l.replace('\'', ""));
            let zone = self.zones.contains(l);
            let cap = cap && !shouted && !zone && !is_contraction(l);
            let starts = cap
                && if initial {
                    self.initial_is_name(w, words.get(i + 1))
                } else {
                    !COMMON.contains(&l) || acronym
                };
            if !starts {
                i += 1;
                continue;
            }
            let begin = i;
            let mut end = i + 1;
            if !ends_phrase(raw[i]) {
                while end < words.len() {
                    let n = words[end];
                    let l = &lower[end];
                    let connector = matches!(
                        l.as_str(),
                        "of" | "de" | "von" | "van" | "der" | "&" | "du" | "la"
                    ) && words.get(end + 1).is_some_and(|x| is_cap(x));
                    let cont = (is_cap(n)
                        && !CALENDAR.contains(&l.as_str())
                        && !COMMON.contains(&l.as_str()))
                        || (has_digit(n) && !n.contains(','))
                        || connector;
                    if !cont || n.is_empty() {
                        break;
                    }
                    end += 1;
                    if ends_phrase(raw[end - 1]) {
                        break;
                    }
                }
            }
            let name = words[begin..end].join(" ");
            let name = name.trim_end_matches(['.', ',']).to_owned();
            i = end;
            if name.chars().filter(|c| c.is_alphabetic()).count() < 2 {
                continue;
            }
            let mut p = begin;
            while p > 0 && DETERMINERS.contains(&lower[p - 1].as_str()) {
                p -= 1;
            }
            let prep = (p > 0)
                .then(|| lower[p - 1].clone())
                .filter(|x| PLACE_PREPS.contains(&x.as_str()) || WEAK_PREPS.contains(&x.as_str()));
            let kind = self.kind_of(&name, &lower, begin, end, prep.as_deref());
            out.push(Spotted {
                name,
                kind,
                at: begin,
                prep,
            });
        }
        // Known names written in lower case ("mellob") still count.
        let folded = format!(" {} ", fold_name(sentence));
        for (f, display, kind) in &self.known {
            if folded.contains(&format!(" {f} "))
                && !out.iter().any(|s| fold_name(&s.name) == *f)
                && !self.zones.contains(f)
            {
                let first = f.split(' ').next().unwrap_or_default();
                // The token the name starts in; a name inside a token ("ledger-api")
                // is no mention of it.
                let Some(at) = lower
                    .iter()
                    .position(|w| fold_name(w) == first || fold_name(w) == *f)
                else {
                    continue;
                };
                out.push(Spotted {
                    name: display.clone(),
                    kind: kind.clone(),
                    at,
                    prep: None,
                });
            }
        }
        out.sort_by_key(|s| s.at);
        out
    }

    fn initial_is_name(&self, w: &str, next: Option<&&str>) -> bool {
        let l = w.to_lowercase();
        if COMMON.contains(&l.as_str()) {
            return false;
        }
        self.known_kind(w).is_some()
            || self.mid_caps.contains(&l)
            || next.is_some_and(|n| is_cap(n) && !COMMON.contains(&n.to_lowercase().as_str()))
    }

    fn kind_of(
        &self,
        name: &str,
        lower: &[String],
        begin: usize,
        end: usize,
        prep: Option<&str>,
    ) -> Option<String> {
        if let Some(k) = self.known_kind(name).flatten() {
            return Some(k);
        }
        let before: Vec<&str> = lower[begin.saturating_sub(2)..begin]
            .iter()
            .map(String::as_str)
            .collect();
        if before.iter().any(|b| PET_CUES.contains(b)) {
            return Some("pet".into());
        }
        if before.iter().any(|b| PERSON_CUES.contains(b)) {
            return Some("person".into());
        }
        // "Dr Lindgren", "Mrs Adler": a title makes a person.
        let first = fold_name(name.split(' ').next().unwrap_or_default());
        if name.contains(' ')
            && matches!(
                first.as_str(),
                "dr" | "mr"
                    | "mrs"
                    | "ms"
                    | "miss"
                    | "prof"
                    | "professor"
                    | "madame"
                    | "monsieur"
                    | "frau"
                    | "herr"
                    | "aunty"
                    | "auntie"
                    | "uncle"
                    | "sir"
                    | "dame"
            )
        {
            return Some("person".into());
        }
        // Verbs only people do, right after the name.
        if lower.get(end).is_some_and(|n| {
            SPEECH_VERBS.contains(&n.as_str()) || PERSON_VERBS.contains(&n.as_str())
        }) {
            return Some("person".into());
        }
        if lower.get(end).is_some_and(|n| {
            matches!(
                n.as_str(),
                "she" | "he" | "she's" | "he's" | "says" | "said"
            )
        }) {
            return Some("person".into());
        }
        let last = fold_name(name.rsplit(' ').next().unwrap_or_default());
        if name.contains(' ') && ORG_SUFFIX.contains(&last.as_str()) {
            return Some("org".into());
        }
        if before.iter().any(|b| {
            matches!(
                *b,
                "offer" | "joined" | "join" | "job" | "employer" | "company"
            )
        }) {
            return Some("org".into());
        }
        if has_digit(name) {
            return Some("product".into());
        }
        if matches!(prep, Some("in" | "to" | "near" | "from")) {
            return Some("place".into());
        }
        None
    }
}

/// First-person forms and what they become; `\u{1}` stands for the speaker.
static FIRST_PERSON: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let rules: &[(&str, &str)] = &[
        (r"(?i)\bI'm\b|\bI am\b|\bim\b", "\u{1} is"),
        (r"(?i)\bI've\b|\bive\b", "\u{1} has"),
        (r"(?i)\bI'll\b", "\u{1} will"),
        (r"(?i)\bI'd\b", "\u{1} would"),
        (r"(?i)\bI don't\b|\bI do not\b|\bI dont\b", "\u{1} does not"),
        (r"(?i)\bI didn't\b|\bI didnt\b", "\u{1} did not"),
        (r"(?i)\bI can't\b|\bI cant\b", "\u{1} cannot"),
        (r"(?i)\bI was\b", "\u{1} was"),
        (r"(?i)\bI have\b", "\u{1} has"),
        (r"(?i)\bI do\b", "\u{1} does"),
        (r"(?i)\bI\b", "\u{1}"),
        (r"(?i)\bmy\b", "\u{1}'s"),
        (r"(?i)\bmine\b", "\u{1}'s"),
        // An object is followed by no verb of the speaker's: its own marker, so the
        // word after it is not inflected ("cleared me yesterday" is not "cleared
        // User yesterdays").
        (r"(?i)\bmyself\b", "\u{2}"),
        (r"(?i)\bme\b", "\u{2}"),
    ];
    rules
        .iter()
        .map(|(p, r)| (Regex::new(p).expect("valid first-person pattern"), *r))
        .collect()
});

/// A verb right after the speaker, to be inflected ("\u{1} live" → "\u{1} lives"):
/// any lower-case word that is not already a form that needs nothing; also after one
/// adverb of frequency or degree ("\u{1} really appreciate", "\u{1} totally agree",
/// "\u{1} really am"), a closed class, or any adverb in -ly.
static SPEAKER_VERB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\x01 (?:(ever|always|never|just|really|usually|often|still|also|even|sometimes|only|already|rarely|seldom|kinda|sorta|[a-z]{3,}ly) )?([a-z]+)\b",
    )
    .expect("valid verb pattern")
});

/// Verbs that end in -ly, which the speaker's verb pattern would take for adverbs.
const LY_VERBS: &[&str] = &[
    "apply", "reply", "supply", "comply", "imply", "multiply", "rally", "tally", "bully", "ally",
];

/// Words of degree, which are no verb after an adverb ("I even more…").
const DEGREE: &[&str] = &[
    "more", "less", "most", "least", "much", "so", "too", "very", "well", "better", "worse",
    "enough",
];

/// Irregular past forms that are no present form too ("went", "bought"; not "read",
/// "put", "cut"): no verb to inflect after the speaker, and a clause told in the past
/// (`dates.rs`).
pub(crate) const IRREGULAR_PAST: &[&str] = &[
    "went",
    "got",
    "said",
    "told",
    "made",
    "took",
    "came",
    "saw",
    "bought",
    "brought",
    "sold",
    "left",
    "ran",
    "met",
    "found",
    "gave",
    "kept",
    "felt",
    "thought",
    "knew",
    "wrote",
    "paid",
    "sent",
    "spent",
    "lost",
    "won",
    "became",
    "began",
    "broke",
    "chose",
    "drove",
    "ate",
    "fell",
    "flew",
    "forgot",
    "grew",
    "heard",
    "held",
    "lent",
    "meant",
    "rang",
    "rode",
    "sang",
    "sat",
    "slept",
    "spoke",
    "stood",
    "swam",
    "taught",
    "threw",
    "understood",
    "woke",
    "wore",
];

/// Words in -ed that are not past forms.
const NOT_PAST_ED: &[&str] = &[
    "need", "seed", "feed", "weed", "deed", "heed", "shed", "sled", "speed", "breed", "greed",
    "hundred", "indeed", "exceed", "proceed", "succeed",
];

/// Past auxiliaries.
const PAST_AUX: &[&str] = &["was", "were", "did", "had"];

/// Whether `word` (lower case) is a verb's past form: a past auxiliary, an irregular
/// form ("met", "bought") or a word in -ed that is no present form ("booked"; not
/// "need").
pub(crate) fn is_past_form(word: &str) -> bool {
    PAST_AUX.contains(&word)
        || IRREGULAR_PAST.contains(&word)
        || (word.len() >= 4 && word.ends_with("ed") && !NOT_PAST_ED.contains(&word))
}

/// Whether `word` (lower case) may be a verb in its plain form ("press", "blend",
/// "add"): letters only, and no function word, past form or -ing form. What follows
/// it decides whether it is one.
pub(crate) fn may_be_plain_verb(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_alphabetic())
        && !gitloom_model::text::is_stopword(word)
        && !is_past_form(word)
        && !word.ends_with("ing")
}

/// Words after the speaker that are not present-tense verbs to inflect.
const NOT_INFLECTED: &[&str] = &[
    "is",
    "has",
    "was",
    "will",
    "would",
    "does",
    "did",
    "cannot",
    "can",
    "could",
    "should",
    "must",
    "might",
    "may",
    "had",
    "also",
    "just",
    "still",
    "never",
    "always",
    "really",
    "only",
    "even",
    "already",
    "usually",
    "often",
    "sometimes",
    "then",
    "and",
    "or",
    "but",
    "too",
    "now",
    "to",
    "of",
    "in",
    "on",
    "at",
    "for",
    "with",
    "from",
    "by",
    "as",
    "so",
    "a",
    "an",
    "the",
    "s",
    "read",
    "put",
    "set",
    "let",
    "cut",
    "hit",
    "quit",
    "hurt",
    "finally",
    "probably",
    "definitely",
    "actually",
    "basically",
    "mostly",
    "hardly",
    "barely",
    "rarely",
    "once",
    "twice",
    "myself",
    "herself",
    "himself",
];

/// The verb `v` (lower case) as a third person singular subject takes it ("teach" →
/// "teaches", "have" → "has"), or `None` when `v` is no present form to inflect:
/// an auxiliary, a past form, an adverb, or a word whose inflected form is no word
/// ("drank" → "dranks").
pub(crate) fn third_singular(v: &str) -> Option<String> {
    let inflected = inflect(v);
    let plain = NOT_INFLECTED.contains(&v)
        || IRREGULAR_PAST.contains(&v)
        || v.ends_with("ly") && !LY_VERBS.contains(&v)
        || !crate::dict::is_listed(&inflected);
    (!plain).then_some(inflected)
}

fn inflect(v: &str) -> String {
    if v.ends_with("ed") && v.len() > 4 {
        return v.to_owned();
    }
    if v == "have" {
        return "has".to_owned();
    }
    if v == "am" || v == "are" {
        return "is".to_owned();
    }
    if v == "do" {
        return "does".to_owned();
    }
    if v == "go" {
        return "goes".to_owned();
    }
    let b = v.as_bytes();
    if v.len() > 2 && v.ends_with('y') && !b"aeiou".contains(&b[b.len() - 2]) {
        return format!("{}ies", &v[..v.len() - 1]);
    }
    if v.ends_with('o')
        || v.ends_with("ch")
        || v.ends_with("sh")
        || v.ends_with('s')
        || v.ends_with('x')
        || v.ends_with('z')
    {
        return format!("{v}es");
    }
    format!("{v}s")
}

/// Rewrites first person into third ("I'm vegetarian" → "User is vegetarian") so a
/// memory reads the same whoever retrieves it.
pub fn third_person(sentence: &str) -> String {
    third_person_as(sentence, "User")
}

/// [`third_person`] with the speaker named `who` ("Caroline", or "User").
pub fn third_person_as(sentence: &str, who: &str) -> String {
    let mut s = sentence.replace(['\u{2019}', '\u{2018}'], "'");
    for (re, rep) in FIRST_PERSON.iter() {
        s = re.replace_all(&s, *rep).into_owned();
    }
    s = SPEAKER_VERB
        .replace_all(&s, |c: &regex::Captures| {
            let adverb = c
                .get(1)
                .map_or(String::new(), |a| format!("{} ", a.as_str()));
            let v = &c[2];
            // "Bram and I are going": the speaker and another, a plural subject; no
            // clause joined by "and" has "I are".
            let joined = c.get(0).is_some_and(|m| s[..m.start()].ends_with("and "));
            // A verb in -ly ("I apply", "I reply") is the speaker's verb, not an
            // adverb before the word after it: it agrees, and that word stays.
            if let Some(a) = c
                .get(1)
                .map(|a| a.as_str())
                .filter(|a| LY_VERBS.contains(a))
            {
                let verb = third_singular(a).unwrap_or_else(|| a.to_owned());
                return format!("\u{1} {verb} {v}");
            }
            // "I just sort of…", "I really kind of…": a hedge, no verb.
            let hedge = c.get(0).is_some_and(|m| s[m.end()..].starts_with(" of "));
            // After an adverb, a function word (not the auxiliaries the speaker's
            // verb may be: "I really am", "I just have", "I just get") or a word of
            // degree is no verb ("I even more…", "I just so…").
            let no_verb = !adverb.is_empty()
                && (gitloom_model::text::is_stopword(v)
                    && !matches!(v, "am" | "are" | "have" | "do" | "get")
                    || DEGREE.contains(&v)
                    || hedge);
            if joined && matches!(v, "are" | "were") || no_verb {
                return format!("\u{1} {adverb}{v}");
            }
            match third_singular(v) {
                Some(inflected) => format!("\u{1} {adverb}{inflected}"),
                None => format!("\u{1} {adverb}{v}"),
            }
        })
        .into_owned();
    s.replace(['\u{1}', '\u{2}'], who)
}

/// `s` with its first letter a capital ("june" → "June", "the week after …" → "The
/// week after …"), the rest as written.
pub(crate) fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_lowercase() => f.to_uppercase().chain(c).collect(),
        _ => s.to_owned(),
    }
}

/// Lowercase content words (no stopwords, at least 3 letters), for overlap tests.
pub fn content_words(text: &str) -> HashSet<String> {
    fold_name(text)
        .split(' ')
        .filter(|w| w.len() >= 3 && !COMMON.contains(w) && !STOP.contains(w))
        .map(str::to_owned)
        .collect()
}

const STOP: &[&str] = &[
    "user", "users", "the", "and", "for", "with", "was", "has", "had", "are", "not", "but",
];

/// Content words in order of appearance, each once.
pub fn content_words_ordered(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    fold_name(text)
        .split(' ')
        .filter(|w| w.len() >= 3 && !COMMON.contains(w) && !STOP.contains(w))
        .filter(|w| seen.insert(w.to_string()))
        .map(str::to_owned)
        .collect()
}

/// Share of the smaller set's words found in the other (0 when either is empty).
pub fn overlap(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_survive_abbreviations() {
        let s = sentences(
            "rough night. sev1 yesterday, pg went sideways. I took her to Dr. Weber this morning. Just a hairball! Ok?\nNew line",
        );
        assert_eq!(
            s,
            vec![
                "rough night.",
                "sev1 yesterday, pg went sideways.",
                "I took her to Dr. Weber this morning.",
                "Just a hairball!",
                "Ok?",
                "New line"
            ]
        );
    }

    #[test]
    fn first_person_becomes_user() {
        assert_eq!(
            third_person("I'm vegetarian and my cat eats fish"),
            "User is vegetarian and User's cat eats fish"
        );
        assert_eq!(
            third_person("I start on 10 June, I live alone"),
            "User starts on 10 June, User lives alone"
        );
        // The object is no subject: the word after it keeps its form.
        assert_eq!(
            third_person("Hana cleared me yesterday morning, I did it myself"),
            "Hana cleared User yesterday morning, User did it User"
        );
        // The speaker beside another is a plural subject; "and I" that joins two
        // clauses is not.
        assert_eq!(
            third_person("Bram and I are going to Ghent, Ana and i were not"),
            "Bram and User are going to Ghent, Ana and User were not"
        );
        assert_eq!(
            third_person("I love it and I go every week"),
            "User loves it and User goes every week"
        );
        // An adverb between the speaker and the verb.
        assert_eq!(
            third_person(
                "I really appreciate it, I totally agree, I really am, I honestly think so"
            ),
            "User really appreciates it, User totally agrees, User really is, User honestly thinks so"
        );
        assert_eq!(
            third_person("I just have to, I really do, I just get deep in thought"),
            "User just has to, User really does, User just gets deep in thought"
        );
        assert_eq!(
            third_person("I never went, I just had lunch, I even more so"),
            "User never went, User just had lunch, User even more so"
        );
        assert_eq!(
            third_person("I just sort of froze"),
            "User just sort of froze"
        );
        assert_eq!(
            third_person("I apply sunscreen daily, and I reply"),
            "User applies sunscreen daily, and User replies"
        );
    }

    #[test]
    fn a_zone_written_after_a_clock_time_is_never_a_name() {
        let mut lex = Lexicon::default();
        lex.learn("Times in QST please. The node hung at 08:12 QST and again at 9.30 QST.");
        assert!(lex.zones.contains("qst"));
        for sentence in ["Times in QST please.", "The node hung at 08:12 QST."] {
            assert!(lex.spot(sentence).is_empty(), "{sentence}");
        }
        // Known from the store, it is still no name.
        lex.add_known("QST", Some("place".into()));
        assert!(lex.spot("all times in qst").is_empty());
        // An acronym nowhere after a clock time stays a name.
        let s = lex.spot("Paged the DBA at 08:25, Oona from DBX answered.");
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, vec!["DBA", "Oona", "DBX"]);
        assert!(is_clock("04:40") && is_clock("9.30") && !is_clock("1,900") && !is_clock("4.690"));
    }

    #[test]
    fn names_are_spotted_with_kinds() {
        let mut lex = Lexicon::default();
        lex.learn("Today I bought a Sony a7 III at Calumet. Told my friend Arjun about Japan.");
        let s = lex.spot("Today I bought a Sony a7 III with the kit lens at Calumet, 1,549 euros.");
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, vec!["Sony a7 III", "Calumet"]);
        assert_eq!(s[0].kind.as_deref(), Some("product"));
        assert_eq!(s[1].prep.as_deref(), Some("at"));
        let s = lex.spot("Told my friend Arjun about the Japan trip, he was thrilled.");
        assert_eq!(s[0].name, "Arjun");
        assert_eq!(s[0].kind.as_deref(), Some("person"));
        assert_eq!(s[1].prep.as_deref(), Some("about"));
        // A pronoun's contraction opening the sentence is no part of the name after it.
        let s = lex.spot("They're Corvale Aria 3X, the over-ear ones.");
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, vec!["Corvale Aria 3X"]);
        let s = lex.spot("It's Ondine's recital on Thursday.");
        assert_eq!(s.first().map(|x| x.name.as_str()), Some("Ondine"));
        let s = lex.spot("I accepted an offer from Orbital AI this morning.");
        assert_eq!(
            (s[0].name.as_str(), s[0].kind.as_deref()),
            ("Orbital AI", Some("org"))
        );
    }
}
