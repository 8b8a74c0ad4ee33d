//! A statement that a state changed or ended, and the thing it changed.
//!
//! "Cancelled the gym", "not renewing on Elm Street", "sold the Volvo", "I won't be
//! fetching Robin on Tuesdays any more", "card's down to £650": English says an end
//! or a replacement with a small closed set of forms (verbs of ending, leaving and
//! moving, "no longer", a negated "any more", an amount gone "up/down to"). The word
//! beside such a form names what changed. Reconciliation ([`crate::reconcile`]) then
//! looks for the one earlier memory of the same subject whose *title* names that
//! thing, and marks it superseded: "where do I live now" sinks the old address, "where
//! did I live before" lifts it.
//!
//! What this does not do: decide that two statements conflict by their meaning (a
//! reader model's work), or supersede anything on a word many titles share (the word
//! must single out one or two earlier memories).

use std::collections::BTreeSet;

use gitloom_model::text::{Word, is_stopword, words};

/// The user as the product writes them ("User lives in …"): a word of every title
/// about the user, so it names nothing that changed.
const USER: &str = "user";

/// Words after a form of change that lead to its object ("moved *out of the* flat").
const LEADS: &[&str] = &[
    "out", "to", "into", "from", "away", "over", "off", "up", "down",
];

/// How many words before a form of change its object may stand ("the hotel
/// cancelled", "fetching Robin on Tuesdays any more").
const BEFORE: usize = 4;
/// How many words after it ("cancelled the gym", "moved out of the flat").
const AFTER: usize = 4;

/// What a statement says changed: for every form of change in `sentence`, in order,
/// the nearest term on the side where its object stands (see [`Object`]). Empty when
/// the sentence says no change.
pub(crate) fn changed_things(sentence: &str) -> Vec<String> {
    let ws = words(sentence);
    let negated = ws.iter().any(is_negation);
    let mut out: Vec<String> = Vec::new();
    for i in 0..ws.len() {
        let Some((span, object)) = change_at(&ws, i, negated) else {
            continue;
        };
        let before = || {
            ws[..i]
                .iter()
                .rev()
                .take(BEFORE)
                .find_map(|w| term(&w.norm))
        };
        let after = || {
            ws[i + span..]
                .iter()
                .take(AFTER)
                .find_map(|w| term(&w.norm))
        };
        // A verb's object follows it ("cancelled the gym"), and with none there its
        // subject ended ("the host cancelled"); "no longer", "any more" and an amount
        // "down to £650" close their clause, so what changed comes before.
        let found = match object {
            Object::After => after().or_else(before),
            Object::Before => before(),
        };
        if let Some(t) = found
            && !out.contains(&t)
        {
            out.push(t);
        }
    }
    out
}

/// The terms of a title that can name a thing: folded content words of three letters
/// or more, not a number, a month or a weekday, a trailing plural `s` cut.
pub(crate) fn title_terms(title: &str) -> BTreeSet<String> {
    words(title).iter().filter_map(|w| term(&w.norm)).collect()
}

/// One word as a term that may name what changed, if it can.
fn term(norm: &str) -> Option<String> {
    if is_stopword(norm)
        || norm == USER
        || norm.chars().count() < 3
        || norm.starts_with(|c: char| c.is_ascii_digit())
        || crate::dates::is_calendar_word(norm)
        || is_form_of_change(norm)
    {
        return None;
    }
    let t = match norm.strip_suffix('s') {
        Some(stem) if norm.len() > 3 && !stem.ends_with('s') => stem,
        _ => norm,
    };
    // "Tuesdays" is a weekday too.
    (!crate::dates::is_calendar_word(t)).then(|| t.to_owned())
}

fn is_negation(w: &Word<'_>) -> bool {
    matches!(w.norm.as_str(), "not" | "no" | "never") || w.clitic.as_deref() == Some("t")
}

/// Verbs that end or give up what they name, whatever follows them.
const ENDING: &[&str] = &[
    "cancel",
    "cancelled",
    "canceled",
    "cancelling",
    "canceling",
    "quit",
    "quitting",
    "sold",
    "replaced",
    "replacing",
    "dropping",
    "ended",
    "leaving",
];

/// Verbs of moving and switching: a change only with a direction or an object.
const MOVING: &[&str] = &["moved", "moving", "switched", "switching"];

fn is_form_of_change(norm: &str) -> bool {
    ENDING.contains(&norm)
        || MOVING.contains(&norm)
        || matches!(
            norm,
            "stopped" | "stopping" | "renewing" | "anymore" | "longer"
        )
}

/// Where a form of change has the word naming what changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Object {
    /// After it, else before ("cancelled the gym", "the host cancelled").
    After,
    /// Before it ("the card's down to £650", "Tuesdays any more").
    Before,
}

/// The number of words of a form of change starting at `ws[i]` and where its object
/// stands, if one starts there.
fn change_at(ws: &[Word<'_>], i: usize, negated: bool) -> Option<(usize, Object)> {
    let w = ws[i].norm.as_str();
    let next = ws.get(i + 1).map(|w| w.norm.as_str());
    let prev = i.checked_sub(1).map(|p| ws[p].norm.as_str());
    // "won't quit", "never moved", "didn't cancel": no change.
    let denied = ws[i.saturating_sub(2)..i].iter().any(is_negation);
    let found = if ENDING.contains(&w) {
        // Not "ended up laughing".
        let ended_up = w == "ended" && next == Some("up");
        !(denied || ended_up)
    } else if MOVING.contains(&w) {
        !denied &&
        // "moved to Leeds", "switching teams"; not "switched on", "moving on".
        next.is_some_and(|n| n != "on" && (LEADS.contains(&n) || term(n).is_some()))
    } else {
        match w {
            // "stopped the clopidogrel"; not "stopped to charge".
            "stopped" | "stopping" => !denied && next.is_some_and(|n| n != "to" && n != "by"),
            "longer" => prev == Some("no"),
            "anymore" => negated,
            "more" => prev == Some("any") && negated,
            // "not renewing the lease".
            "renewing" | "renew" => denied,
            // An amount gone up or down: "down to £650", "up to £220".
            "up" | "down" => {
                next == Some("to")
                    && ws
                        .get(i + 2)
                        .is_some_and(|n| n.norm.starts_with(|c: char| c.is_ascii_digit()))
            }
            _ => false,
        }
    };
    found.then_some(match w {
        "up" | "down" => (2, Object::Before),
        "longer" | "anymore" | "more" => (1, Object::Before),
        _ => (1, Object::After),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ending_names_what_it_ends() {
        assert_eq!(
            changed_things("Cancelled pulsefit, last day is may 31")[0],
            "pulsefit"
        );
        assert_eq!(changed_things("Sold the volvo on Saturday")[0], "volvo");
        assert!(
            changed_things("Not renewing on Elm Street, lease ends").contains(&"elm".to_owned())
        );
        assert!(
            changed_things("She won't be fetching Zoë on Tuesdays any more")
                .contains(&"zoe".to_owned())
        );
        assert!(changed_things("Work news: I'm switching teams").contains(&"team".to_owned()));
        assert_eq!(
            changed_things("The card's down to £650! and the saver")[0],
            "card"
        );
        // The object, not the news that brought it.
        assert_eq!(
            changed_things("Good news: she's stopped the clopidogrel"),
            ["clopidogrel"]
        );
        assert_eq!(
            changed_things("The hotel manager cancelled on us"),
            ["manager"]
        );
    }

    #[test]
    fn words_of_change_in_other_senses_say_none() {
        assert!(changed_things("We stopped to charge at Reading").is_empty());
        assert!(changed_things("Switched on the heating").is_empty());
        assert!(changed_things("Any more questions, just ask").is_empty());
        assert!(changed_things("Fees have gone up to twelve").is_empty());
        assert!(changed_things("I live on Elm Street").is_empty());
        assert!(changed_things("Jon won't quit his dance studio").is_empty());
        assert!(changed_things("Don't quit, remember the dream").is_empty());
        assert!(changed_things("We ended up laughing all night").is_empty());
        assert!(changed_things("She started selling her jewelry").is_empty());
    }

    #[test]
    fn a_title_term_is_a_content_word_that_can_name_a_thing() {
        let t = title_terms("User lives on Elm Street, 12th floor, from March");
        assert_eq!(
            t.into_iter().collect::<Vec<_>>(),
            ["elm", "floor", "live", "street"]
        );
    }
}
