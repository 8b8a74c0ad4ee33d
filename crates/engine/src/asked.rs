//! What a question asks for, where a memory can be checked for it: the answer type.
//!
//! A memory about the right subject is still no answer if it lacks the kind of thing
//! asked: "how much did my RTX 5090 cost" is not answered by a memory about the
//! card's power draw, nor "what's my sister's husband called" by a memory about the
//! sister. Two demands are recognised, both checkable on a memory's text alone:
//!
//! - **a price** ("how much did X cost", "what did I pay for", "my salary"): the
//!   memory must state an amount of money (a currency sign before a number, or a
//!   currency word);
//! - **a relation through a possessive** ("Maya's husband", "my sister's kids"): the
//!   memory must name that relation or a near synonym (husband ~ wife ~ spouse ~
//!   married);
//! - **an identifier** ("what's Robin's phone number", "what's the wifi password",
//!   "what's Robin's email"): the memory must hold something shaped like one — a
//!   token mixing letters and digits that is not a quantity with its unit
//!   ("INC-4821", "AB12 CDE"), a run of seven or more digits (a phone number), or
//!   an email address;
//! - **a time of day** ("what time does the meeting start"): a clock time ("15:00",
//!   "7pm", "7.30 am", "noon");
//! - **an age** ("how old is Robin"): an age or a birth ("six years old", "aged
//!   40", "born in 2019", "turned 30").
//!
//! These are the near-miss unanswerables: a stored person or thing asked for a
//! detail no memory states. Deliberately narrow: a demand is only made where
//! missing evidence is cheap to see and an answer cannot hide behind a paraphrase
//! (an amount is written with digits or a currency, a clock time with digits; a
//! name or a place, which no surface shape marks, demands nothing).

/// Relations, by group: a memory naming any word of the group meets a demand for
/// any other (a question about "Melanie's kids" is answered by "my son").
const RELATIONS: &[&[&str]] = &[
    &[
        "husband", "husbands", "wife", "wives", "spouse", "partner", "married", "marriage",
        "wedding",
    ],
    &[
        "kids",
        "kid",
        "children",
        "child",
        "son",
        "sons",
        "daughter",
        "daughters",
        "baby",
        "babies",
    ],
    &[
        "mother", "mom", "mum", "mothers", "father", "dad", "fathers", "parents", "parent",
    ],
    &[
        "brother", "brothers", "sister", "sisters", "sibling", "siblings",
    ],
    &[
        "boyfriend",
        "girlfriend",
        "partner",
        "fiance",
        "fiancé",
        "fiancee",
        "fiancée",
    ],
    &[
        "grandma",
        "grandmother",
        "grandpa",
        "grandfather",
        "grandparents",
        "grandparent",
    ],
    // "in-law" is three words to the workspace's splitter ("mother-in-law" names a
    // mother), so it is not a word of a group.
    &["aunt", "uncle", "cousin", "cousins", "niece", "nephew"],
];

/// Words that make a "how much" question (or a question naming them) a price question.
const PRICE_VERBS: &[&str] = &[
    "cost", "costs", "costed", "pay", "paid", "pays", "spend", "spent", "charge", "charged",
    "earn", "earned", "earns",
];
const PRICE_NOUNS: &[&str] = &["price", "salary", "fee", "fees", "wage", "wages"];
const CURRENCY_WORDS: &[&str] = &[
    "dollar", "dollars", "euro", "euros", "pound", "pounds", "usd", "eur", "gbp", "inr", "rupee",
    "rupees", "bucks", "yen", "cents", "franc", "francs", "salary",
];
const CURRENCY_SIGNS: &[char] = &['$', '€', '£', '¥', '₹'];

/// Nouns whose answer is an identifier, in a "what" question: "what's the ticket
/// number", "what's the wifi password". ("number one" and "number of" are not.)
const IDENTIFIER_NOUNS: &[&str] = &[
    "number",
    "email",
    "password",
    "passcode",
    "pin",
    "postcode",
    "plate",
    "registration",
];

/// Units written with capitals, which still make a number a quantity.
const MEASURE_UNITS: &[&str] = &[
    "GB", "MB", "TB", "KB", "W", "kW", "kWh", "V", "K", "GHz", "MHz",
];

/// Number words an age may be written in ("six years old").
const NUMBER_WORDS: &[&str] = &[
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
];

/// One thing a question asks for that a memory's text must show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Demand {
    Price,
    /// The relation named after a possessive, with its synonym group.
    Relation(&'static [&'static str]),
    /// A number, code or address that identifies something.
    Identifier,
    /// A time of day.
    ClockTime,
    /// How old someone is, or when they were born.
    Age,
}

impl Demand {
    /// Whether `text` (a memory's title, summary, cues and body) meets the demand.
    pub fn met_by(&self, text: &str) -> bool {
        match self {
            Demand::Price => has_money(text),
            Demand::Relation(group) => words(text).any(|w| group.contains(&w.as_str())),
            Demand::Identifier => has_identifier(text),
            Demand::ClockTime => has_clock_time(text),
            Demand::Age => has_age(text),
        }
    }

    /// Whether the demand is for a value of the thing asked about (a price, a time,
    /// an age, an identifier), which that thing's own memory would state; a
    /// relation is stated by the relative's memory instead.
    pub fn is_value(&self) -> bool {
        !matches!(self, Demand::Relation(_))
    }

    pub fn label(&self) -> String {
        match self {
            Demand::Price => "a price".to_owned(),
            Demand::Relation(group) => format!("a {}", group[0]),
            Demand::Identifier => "an identifier".to_owned(),
            Demand::ClockTime => "a time of day".to_owned(),
            Demand::Age => "an age".to_owned(),
        }
    }
}

/// The words of `text` as the whole workspace splits them (`gitloom_model::words`:
/// lowercase, diacritics folded, a possessive or contraction kept apart as a clitic).
fn words(text: &str) -> impl Iterator<Item = String> {
    gitloom_model::norms(text).into_iter()
}

/// A currency sign next to a digit, either side, at most one space between ("$1,200",
/// "€ 40", "1,380 €", "40€"), or a currency word.
fn has_money(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let digit_at = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(char::is_ascii_digit)
    };
    let signed = chars.iter().enumerate().any(|(i, c)| {
        CURRENCY_SIGNS.contains(c)
            && (digit_at(Some(i + 1))
                || (chars.get(i + 1) == Some(&' ') && digit_at(Some(i + 2)))
                || digit_at(i.checked_sub(1))
                || (i >= 2 && chars[i - 1] == ' ' && digit_at(Some(i - 2))))
    });
    signed || words(text).any(|w| CURRENCY_WORDS.contains(&w.as_str()))
}

/// A whitespace-separated token of `text` with the punctuation around it trimmed.
/// Identifiers are read on these rather than on words: their shape ("INC-4821",
/// "j.doe@mail.com") lies in the punctuation the word splitter drops.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split_whitespace()
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|t| !t.is_empty())
}

/// Something shaped like an identifier: an email address; a token with two digits
/// or more and a letter that is not a quantity's unit or an ordinal ("40mg",
/// "1.5km", "7pm", "2nd" are not; "INC-4821", "BA2490", "ab12cde" are); or seven
/// digits or more in a run that spaces or hyphens may break ("0161 555 0123"),
/// which no date or amount is.
fn has_identifier(text: &str) -> bool {
    let toks: Vec<&str> = tokens(text).collect();
    let email = |t: &str| {
        t.split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
    };
    let coded = |t: &str| {
        let digits = t.chars().filter(char::is_ascii_digit).count();
        let letters = t.chars().any(char::is_alphabetic);
        // A path or a link ("[[incidents/2025-05-10-sold.md]]") or a fraction
        // ("30/14/7") is no identifier.
        digits >= 2 && letters && !t.contains('/') && !is_measure(t) && !is_iso_date(t)
    };
    if toks.iter().any(|t| email(t) || coded(t)) {
        return true;
    }
    // A digit run across tokens: "0161 555 0123", "+44 7700-900123".
    let mut run = 0;
    for t in &toks {
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '-') {
            run += t.chars().filter(char::is_ascii_digit).count();
            if run >= 7 && !is_iso_date(t) {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// A number with a unit or an ordinal after it ("40mg", "1.5km", "7pm", "11:59pm",
/// "2nd", "52kWh", "16GB"): a quantity, not an identifier.
fn is_measure(t: &str) -> bool {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | ':')))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    num.starts_with(|c: char| c.is_ascii_digit())
        && unit.chars().count() <= 4
        && unit.chars().all(char::is_alphabetic)
        && (unit.chars().all(char::is_lowercase) || MEASURE_UNITS.contains(&unit))
}

/// A token that opens on a `YYYY-MM-DD` date (a time may follow it).
fn is_iso_date(t: &str) -> bool {
    t.get(..10)
        .is_some_and(|d| d.parse::<jiff::civil::Date>().is_ok())
}

/// A clock time: hours and minutes joined by `:` or `.` or `h` ("15:00", "7.30
/// am", "9h30"), an hour with am or pm ("7pm", "7 p.m."), noon, midnight, or
/// o'clock.
fn has_clock_time(text: &str) -> bool {
    let ws = gitloom_model::words(text);
    let hour = |w: &str| w.len() <= 2 && w.parse::<u8>().is_ok_and(|h| h <= 24);
    ws.iter().enumerate().any(|(i, w)| {
        let next = ws.get(i + 1);
        let joined = |sep: &[char]| {
            next.is_some_and(|n| {
                n.norm.len() == 2
                    && n.norm.chars().all(|c| c.is_ascii_digit())
                    && text[w.end()..n.start].chars().count() == 1
                    && text[w.end()..n.start].starts_with(sep)
            })
        };
        let meridiem = |s: &str| matches!(s, "am" | "pm");
        let suffixed = |s: &str| {
            s.strip_suffix("am")
                .or_else(|| s.strip_suffix("pm"))
                .is_some_and(hour)
        };
        // "£27.50" is an amount, not half past.
        let priced = text[..w.start]
            .chars()
            .next_back()
            .is_some_and(|c| CURRENCY_SIGNS.contains(&c));
        (hour(&w.norm)
            && !priced
            && (joined(&[':', '.']) || next.is_some_and(|n| meridiem(&n.norm))))
            || (hour(&w.norm) && next.is_some_and(|n| n.norm == "a" || n.norm == "p") && {
                // "7 p.m.": the words "p" and "m".
                ws.get(i + 2).is_some_and(|m| m.norm == "m")
            })
            || suffixed(&w.norm)
            || w.norm.split_once('h').is_some_and(|(h, m)| {
                hour(h) && m.len() == 2 && m.parse::<u8>().is_ok_and(|m| m < 60)
            })
            || matches!(w.norm.as_str(), "noon" | "midday" | "midnight")
            || (w.norm == "o" && next.is_some_and(|n| n.norm == "clock"))
    })
}

/// An age or a birth: "six years old", "a 7-year-old", "aged 40", "age 7", "born",
/// "turned 30", "her 5th birthday".
fn has_age(text: &str) -> bool {
    let ws = gitloom_model::norms(text);
    let number = |w: &str| w.parse::<u16>().is_ok() || NUMBER_WORDS.contains(&w);
    let ordinal = |w: &str| {
        ["st", "nd", "rd", "th"]
            .iter()
            .any(|s| w.strip_suffix(s).is_some_and(|n| n.parse::<u16>().is_ok()))
    };
    ws.iter().enumerate().any(|(i, w)| {
        let at = |k: usize| ws.get(i + k).map(String::as_str);
        let unit = |s: Option<&str>| {
            s.is_some_and(|s| matches!(s, "year" | "years" | "month" | "months" | "yo"))
        };
        (number(w) && unit(at(1)) && (at(1) == Some("yo") || at(2) == Some("old")))
            || (matches!(w.as_str(), "aged" | "age" | "turned" | "turns" | "turning")
                && at(1).is_some_and(number))
            || w == "born"
            || (ordinal(w) && at(1) == Some("birthday"))
    })
}

/// What `query` asks for that a memory must show (usually nothing).
pub fn demands(query: &str) -> Vec<Demand> {
    let lower = query.to_lowercase().replace('’', "'");
    let split = gitloom_model::words(query);
    let tokens: Vec<&str> = split.iter().map(|w| w.norm.as_str()).collect();
    let mut out = Vec::new();
    // "how many grandkids have I and how old are they": two questions in one, each
    // answered by its own memory, so no one memory must show either's answer type.
    let compound = tokens.windows(2).any(|p| {
        p[0] == "and"
            && matches!(
                p[1],
                "how" | "what" | "whats" | "when" | "where" | "who" | "which"
            )
    });
    if compound {
        return out;
    }
    let how_much = lower.contains("how much");
    // "who pays my salary" asks for a payer, not an amount.
    let asks_other = tokens
        .first()
        .is_some_and(|t| ["who", "whom", "whose", "where", "when", "which", "why"].contains(t));
    // A price noun alone makes a price question only when no other question word
    // asks for something else: "the man who called the fee rise robbery, who's got
    // his plot now" asks for a person.
    let wh_other = tokens
        .iter()
        .any(|t| ["who", "whom", "whose", "where", "when", "which", "why"].contains(t));
    let price = (tokens.iter().any(|t| PRICE_NOUNS.contains(t)) && !wh_other)
        || (how_much && tokens.iter().any(|t| PRICE_VERBS.contains(t)))
        || lower.contains("what did i pay")
        || lower.contains("what does it cost");
    if price && !asks_other && !lower.contains("how many") {
        out.push(Demand::Price);
    }
    let first = tokens.first().copied().unwrap_or_default();
    // "what's the ticket number", "what is Robin's email": a "what" question whose
    // thing asked is an identifier ("number one", "number of" are not).
    let identifier = tokens.iter().enumerate().any(|(i, t)| {
        IDENTIFIER_NOUNS.contains(t)
            && !(*t == "number"
                && tokens
                    .get(i + 1)
                    .is_some_and(|n| matches!(*n, "one" | "of")))
    });
    if matches!(first, "what" | "whats") && identifier && !lower.contains("how many") {
        out.push(Demand::Identifier);
    }
    if tokens.windows(2).any(|p| p == ["what", "time"]) {
        out.push(Demand::ClockTime);
    }
    if tokens.windows(2).any(|p| p == ["how", "old"]) {
        out.push(Demand::Age);
    }
    // "X's R": the relation after a possessive (not "my R": "where does my sister
    // live" asks about the sister, whom a memory names as Maya).
    for pair in split.windows(2) {
        // A possessive: "Ana's husband". Not a contraction ("what's mum…", "it's
        // husband…" is no owner), and not a relation that is itself an owner
        // ("Ana's mum's dose" asks about the dose).
        let owner = pair[0].clitic.as_deref() == Some("s")
            && !gitloom_model::is_stopword(&pair[0].norm)
            && pair[1].clitic.is_none();
        if !owner {
            continue;
        }
        if let Some(group) = RELATIONS
            .iter()
            .find(|g| g.contains(&pair[1].norm.as_str()))
        {
            let d = Demand::Relation(group);
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn price_questions_demand_money() {
        for q in [
            "how much did my rtx 5090 cost",
            "What is my salary at Orbital AI?",
            "how much did I spend on the vet",
            "what was the price of the flat",
            "what's the stall fee this year",
            "how much did I pay when we were in Porto",
        ] {
            assert_eq!(demands(q), vec![Demand::Price], "{q}");
        }
        for q in [
            "how much power does my graphics card pull",
            "how many days did I spend camping",
            "where do I work",
            // A price noun, but the question asks for a person.
            "the woman who set the stall fee, who's taken her pitch now",
        ] {
            assert!(!demands(q).contains(&Demand::Price), "{q}");
        }
        assert!(Demand::Price.met_by("Paid $1,999 at launch."));
        assert!(Demand::Price.met_by("Rent is 1,380 € a month"));
        assert!(demands("who pays my salary").is_empty());
        assert!(Demand::Price.met_by("it was 40 € in the end") || has_money("40€"));
        assert!(Demand::Price.met_by("about two hundred dollars"));
        assert!(!Demand::Price.met_by("Costs roughly 5-8 % throughput at 450 W."));
    }

    #[test]
    fn a_possessive_relation_must_be_named() {
        let d = demands("what's my sister's husband called");
        assert_eq!(d.len(), 1);
        assert!(!d[0].met_by("Maya is Rohan's older sister. She is an architect."));
        assert!(d[0].met_by("Maya married Tom in 2020."));
        let kids = demands("What did Melanie's kids make?");
        assert!(kids[0].met_by("My son painted a bird."));
        // "my sister" alone demands nothing: the memory may name her.
        assert!(demands("where does my sister live").is_empty());
        assert!(demands("What is Caroline's identity?").is_empty());
        // Split as everywhere else: a typographic apostrophe, a hyphenated relation.
        assert_eq!(demands("who is Ana’s husband"), d);
        // A contraction is no possessive, nor is a relation that owns the thing asked.
        assert!(demands("what's mum's dose").is_empty());
        assert!(demands("what's Ana's mum's dose").is_empty());
        let mum = demands("where does Tom's mother live");
        assert!(mum[0].met_by("His mother-in-law lives in Aarhus."));
    }

    #[test]
    fn an_identifier_is_asked_by_a_what_question_and_shaped_like_one() {
        for q in [
            "whats karim's phone number",
            "what's the ticket number for the cert follow-ups",
            "what is Hana's email",
            "what's the wifi password",
            "whats the number plate on the renault",
        ] {
            assert_eq!(demands(q), vec![Demand::Identifier], "{q}");
        }
        for q in [
            "What is John's number one goal in his basketball career?",
            "what number of people came",
            "how many numbers did I dial",
            "who has my phone number",
            "Which event happened first, losing the phone charger or the new phone case?",
        ] {
            assert!(!demands(q).contains(&Demand::Identifier), "{q}");
        }
        for text in [
            "Ticket INC-4821 tracks it.",
            "Plate AB12 CDE.",
            "call 0161 555 0123",
            "mail j.doe@example.com",
            "flight ba2490 at noon",
        ] {
            assert!(Demand::Identifier.met_by(text), "{text}");
        }
        for text in [
            "52 kWh battery, 400 km, €27,000 after the bonus",
            "40mg at night since 2025-03-01, 1.5km swims, deadlines at 11:59pm",
            "Sold in May 2025 ([[incidents/vehicles/2025-05-10-peugeot-sold.md]])",
            "alerts at 30/14/7 days; 12k declines; on the 2nd of May",
        ] {
            assert!(!Demand::Identifier.met_by(text), "{text}");
        }
    }

    #[test]
    fn a_time_of_day_is_a_clock_time() {
        assert_eq!(
            demands("what time does the february agm start"),
            vec![Demand::ClockTime]
        );
        assert!(!demands("how much time did I spend").contains(&Demand::ClockTime));
        assert!(demands("what's the time limit").is_empty());
        for text in [
            "handoff Mondays at 15:00 UTC",
            "out by 6.45 pm",
            "starts at 7pm",
            "doors at 9 a.m.",
            "meet at noon",
            "at 9h30",
            "at ten o'clock",
        ] {
            assert!(Demand::ClockTime.met_by(text), "{text}");
        }
        for text in [
            "the AGM is Saturday 14 February 2026",
            "£27.50 a month",
            "1.5 km on Friday",
        ] {
            assert!(!Demand::ClockTime.met_by(text), "{text}");
        }
    }

    #[test]
    fn an_age_is_stated_or_a_birth() {
        assert_eq!(demands("how old is sophie"), vec![Demand::Age]);
        assert!(demands("how many grandkids have I and how old are they").is_empty());
        for text in [
            "Noé is six years old",
            "a 7-year-old boy",
            "aged 40",
            "born in March 2019",
            "she turned 30 in June",
            "his 5th birthday party",
        ] {
            assert!(Demand::Age.met_by(text), "{text}");
        }
        for text in [
            "teaches in a primary school since 2019",
            "an old friend of six years",
        ] {
            assert!(!Demand::Age.met_by(text), "{text}");
        }
    }
}
