//! Titles: a memory's first sentence cut to a title — its first clause, at most
//! [`MAX_WORDS`] words, never ending on a word that leaves it hanging, no final full
//! stop, capitalised.

use gitloom_model::text::{Word, is_stopword, words};

use crate::text::capitalise;

/// The longest title, in words.
pub const MAX_WORDS: usize = 12;

/// Words a title must not end with: it would read as a cut sentence.
const DANGLING: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
    "from", "as", "is", "are", "was", "were", "be", "been", "that", "which", "who", "so", "if",
    "than", "then", "because", "about", "into", "its", "his", "her", "their", "our", "this", "has",
    "have", "had", "will", "would", "can", "could", "do", "does", "did", "very", "just", "also",
    "after", "before", "until", "since", "when", "while", "where", "every", "each", "some", "any",
    "no", "not", "only", "still", "up", "out", "over", "like", "got", "get", "gets", "going",
    "being", "it", "there", "s", "user's", "it's", "he's", "she's",
];

/// Where a clause ends inside a sentence (after at least three words).
const BREAKS: &[&str] = &[
    ", ",
    "; ",
    ": ",
    " - ",
    " — ",
    " – ",
    " (",
    " because ",
    " but ",
    " so ",
];

fn dangling(word: &str) -> bool {
    let w = word
        .trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''))
        .to_lowercase();
    w.is_empty() || DANGLING.contains(&w.as_str())
}

/// Drops brackets and quotes left open by a cut.
fn balance(s: &str) -> String {
    let mut out = s.to_owned();
    for (open, close) in [('(', ')'), ('[', ']')] {
        let opens = out.matches(open).count();
        let closes = out.matches(close).count();
        if opens != closes {
            out = out.replace([open, close], "");
        }
    }
    if out.matches('"').count() % 2 == 1 {
        out = out.replace('"', "");
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `clause` can stand as a title: three words or more, two of them content
/// words ("From now on" and "User is on it" say nothing alone). A date's words are
/// no content: "On 30 August 2023" and "In the week before 16 July 2023" say when,
/// not what, and a question naming that day would match such a title on the date alone.
fn stands_alone(clause: &str) -> bool {
    let ws = words(clause);
    let dated = date_words(&ws);
    ws.len() >= 3
        && ws
            .iter()
            .zip(&dated)
            .filter(|(w, d)| !**d && !is_stopword(&w.norm))
            .count()
            >= 2
}

/// Which of `ws` only say when, as resolved dates read ("30 August 2023", "Friday
/// 15 December", "the week before 16 July 2023"): a weekday or month; a number or
/// ordinal beside one ("£58 a month" holds no date); and, in a clause that names a
/// day or month, the words that place a date against it.
fn date_words(ws: &[Word<'_>]) -> Vec<bool> {
    const PLACING: &[&str] = &["week", "weekend", "before", "after"];
    let calendar: Vec<bool> = ws
        .iter()
        .map(|w| crate::text::is_calendar(&w.norm))
        .collect();
    let named = calendar.iter().any(|c| *c);
    ws.iter()
        .enumerate()
        .map(|(i, w)| {
            let digits = w.norm.len()
                - w.norm
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len();
            let number = digits > 0 && matches!(&w.norm[digits..], "" | "st" | "nd" | "rd" | "th");
            let beside = |j: Option<usize>| j.and_then(|j| calendar.get(j)).is_some_and(|c| *c);
            calendar[i]
                || number && (beside(i.checked_sub(1)) || beside(Some(i + 1)))
                || named && PLACING.contains(&w.norm.as_str())
        })
        .collect()
}

/// The first clause of `s` that can stand as a title, and whether it was cut before a
/// conjunction or a bracket (so may end on a word that leaves it hanging); the whole
/// of `s` when no clause can.
fn first_clause(s: &str) -> (&str, bool) {
    let mut cuts: Vec<(usize, bool)> = BREAKS
        .iter()
        .flat_map(|b| {
            let punctuation = b.trim().chars().count() == 1;
            s.match_indices(b).map(move |(i, _)| (i, !punctuation))
        })
        .collect();
    cuts.sort_unstable();
    cuts.into_iter()
        .find(|(i, _)| stands_alone(&s[..*i]))
        .map_or((s, false), |(i, conjunction)| (&s[..i], conjunction))
}

/// A title for a memory whose first sentence (third person, dates resolved) is
/// `sentence`.
pub fn title(sentence: &str) -> String {
    let mut s = sentence.trim();
    // A label before a colon ("Big change: …", "Rule #1: …") is no part of the title.
    if let Some((label, rest)) = s.split_once(": ")
        && words(label).len() <= 2
        && words(rest).len() >= 3
    {
        s = rest.trim();
    }
    let (cut, conjunction) = first_clause(s);
    let mut ws: Vec<&str> = cut.split_whitespace().collect();
    let truncated = ws.len() > MAX_WORDS;
    ws.truncate(MAX_WORDS);
    // A clause that ended at its own punctuation is whole ("User will miss it"); one
    // cut short may end on a word that needs what was cut.
    if truncated || conjunction {
        while ws.len() > 1 && ws.last().is_some_and(|w| dangling(w)) {
            ws.pop();
        }
    }
    let t = ws
        .join(" ")
        .trim_end_matches(|c: char| {
            matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '-' | '—' | '–')
        })
        .to_owned();
    let t = balance(&t);
    let t = t
        .trim_end_matches(['.', ',', ';', ':', '!', '?', '-'])
        .trim()
        .to_owned();
    if t.is_empty() {
        return capitalise(s);
    }
    capitalise(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_first_clauses() {
        assert_eq!(
            title("User's boyfriend is Callum Reid, he teaches geography at a secondary school."),
            "User's boyfriend is Callum Reid"
        );
        assert_eq!(
            title("pepita starts at bark & bloor wednesday (2026-06-03)."),
            "Pepita starts at bark & bloor wednesday"
        );
        assert_eq!(
            title(
                "User has had plot 14 at the Jardins de la Boucle since 2016, the allotments down by the Rhône"
            ),
            "User has had plot 14 at the Jardins de la Boucle"
        );
        let long = title(
            "the committee wants to raise the fee to 70 euros because the water bill went up by almost half",
        );
        assert!(long.split_whitespace().count() <= MAX_WORDS, "{long}");
        assert!(!long.ends_with(" to"), "{long}");
    }

    #[test]
    fn a_clause_that_says_nothing_alone_takes_the_next() {
        assert_eq!(
            title("User is on it, with Odile and Perrin from plot 22."),
            "User is on it, with Odile and Perrin from plot 22"
        );
        assert_eq!(
            title("From now on, anything User sends about fees goes to Odile as well."),
            "From now on, anything User sends about fees goes to Odile"
        );
        // A whole sentence keeps its last word.
        assert_eq!(title("User will miss it."), "User will miss it");
    }

    #[test]
    fn a_date_alone_is_no_title() {
        assert_eq!(
            title(
                "On 30 August 2023, Orla tackled something new - Orla gave a presentation in class."
            ),
            "On 30 August 2023, Orla tackled something new"
        );
        assert_eq!(
            title("In the week before 16 July 2023, Orla's studio opened."),
            "In the week before 16 July 2023, Orla's studio opened"
        );
        assert_eq!(
            title("Sunday 9 February 2025, the plumber came round about the boiler."),
            "Sunday 9 February 2025, the plumber came round about the boiler"
        );
        // What the date is about still makes a title of its own.
        assert_eq!(
            title("Rent went up to 1,180 on 1 March 2026, the landlord wrote."),
            "Rent went up to 1,180 on 1 March 2026"
        );
        // An amount is no date, nor a rate's unit.
        assert_eq!(
            title("£58 a month now, bit more than the fiat."),
            "£58 a month now"
        );
        let dated = |s: &str| date_words(&words(s));
        assert_eq!(
            dated("on 30th august 2023 the 4x4 went"),
            [false, true, true, true, false, false, false]
        );
        assert_eq!(dated("the week before the trip"), [false; 5]);
    }
}
