//! Query shape: a deterministic reading of what kind of question this is, from its
//! wording alone (no model). The shape sets how deep each arm looks, whether the
//! graph is walked, and which priors apply (plan item R13): "where did I work
//! before" must not have the superseded memory demoted, "was I always…" needs the
//! old and the new one, "how many lenses" needs every lens.

use gitloom_model::when::MONTHS;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// One current fact ("where do I work").
    Lookup,
    /// When something happened, or what held before/after a change.
    Temporal,
    /// Whether something was always / still / ever so: needs old and new states.
    Persistence,
    /// The answer joins two memories ("who am I staying with" → the stay + the person).
    MultiHop,
    /// Counting, summing, listing.
    Aggregation,
    /// Comparing two things.
    Comparative,
    /// "Who is X", "tell me about X", or just a name.
    Entity,
}

impl Shape {
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Lookup => "lookup",
            Shape::Temporal => "temporal",
            Shape::Persistence => "persistence",
            Shape::MultiHop => "multihop",
            Shape::Aggregation => "aggregation",
            Shape::Comparative => "comparative",
            Shape::Entity => "entity",
        }
    }

    /// Whether a memory superseded by another should be demoted (only when the
    /// question asks for the current state; "tell me about Acme" asks about Acme,
    /// current or not).
    pub fn demotes_superseded(self) -> bool {
        matches!(
            self,
            Shape::Lookup | Shape::Aggregation | Shape::Comparative
        )
    }

    /// Whether the link graph is walked from the strongest hits.
    pub fn expands_graph(self) -> bool {
        matches!(
            self,
            Shape::MultiHop
                | Shape::Entity
                | Shape::Aggregation
                | Shape::Comparative
                | Shape::Persistence
        )
    }
}

/// Whether the question asks about a past state ("where did I work before", "my
/// previous flat"): then memories that were superseded or have ended are the
/// answer, not noise.
pub fn asks_about_past(query: &str) -> bool {
    let ws = words(query);
    [
        "before",
        "previous",
        "previously",
        "formerly",
        "earlier",
        "prior",
    ]
    .iter()
    .any(|w| has(&ws, w))
        || has_seq(&ws, &["used", "to"])
        || has_seq(&ws, &["use", "to"])
}

/// Whether a question says outright that it asks about the present, as against an
/// earlier state: "now", "these days", "nowadays", "currently", "at the moment",
/// "at present", "anymore". Who asks "where do I work these days" knows it has
/// changed. ("Still" asks whether something goes on, not what it changed to.)
pub fn says_now(query: &str) -> bool {
    let ws = words(query);
    ["now", "nowadays", "currently", "anymore"]
        .iter()
        .any(|w| has(&ws, w))
        || has_seq(&ws, &["these", "days"])
        || has_seq(&ws, &["at", "the", "moment"])
        || has_seq(&ws, &["at", "present"])
}

/// Which time a question asks about, read from its markers and tense; it decides
/// whether superseded and ended memories sink, rise or stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Orientation {
    /// The current state ("where do I live", "who's my manager now", "am I still…"):
    /// what was superseded or has ended is not the answer.
    Present,
    /// An earlier state, said outright ("before", "previously", "used to", "my old
    /// …"): what was superseded or has ended is the answer.
    Past,
    /// Past tense without such a marker ("when did I sell the car", "what did I pay
    /// for it"): an event, old or new; neither sinks nor rises.
    PastTense,
    /// Whether something held over time ("was I always…", "has it ever…", "the
    /// same … the whole way through"): the old and the new state together.
    Across,
}

/// Auxiliaries and copulas by tense, for [`orientation`].
const PAST_TENSE: &[&str] = &["was", "were", "did", "had", "didn't", "wasn't", "weren't"];
const PRESENT_TENSE: &[&str] = &[
    "is", "are", "am", "do", "does", "has", "have", "can", "will", "isn't", "aren't", "don't",
    "doesn't", "haven't", "hasn't",
];

/// Reads a question's [`Orientation`]: markers of time over time first, then of the
/// past, then the tense of its first auxiliary (a contraction counts: "what's",
/// "who're"); present when nothing says otherwise.
pub fn orientation(query: &str) -> Orientation {
    let ws = words(query);
    if ["always", "ever", "never", "whole"]
        .iter()
        .any(|w| has(&ws, w))
        || has_seq(&ws, &["the", "same"])
    {
        return Orientation::Across;
    }
    if asks_about_past(query)
        || ["originally", "former", "formerly"]
            .iter()
            .any(|w| has(&ws, w))
        || says_old(&ws)
    {
        return Orientation::Past;
    }
    for w in gitloom_model::words(query) {
        let full = w.with_clitic();
        if PAST_TENSE.contains(&full.as_str()) || PAST_TENSE.contains(&w.norm.as_str()) {
            return Orientation::PastTense;
        }
        if PRESENT_TENSE.contains(&full.as_str())
            || PRESENT_TENSE.contains(&w.norm.as_str())
            || matches!(w.clitic.as_deref(), Some("s" | "re" | "m"))
                && !matches!(w.norm.as_str(), "let")
        {
            return Orientation::Present;
        }
    }
    Orientation::Present
}

/// Auxiliaries that follow a question word: "when *did*", "when *is*".
const AUXILIARIES: &[&str] = &[
    "did", "do", "does", "was", "were", "is", "are", "will", "have", "has", "had", "should", "can",
    "could", "would",
];

/// Whether a question asks for a point in time: "when did ...", "what date ...",
/// "which year ..." (not "how long", which asks for a span, nor "what did I say
/// when I left", where "when" joins two clauses).
pub fn asks_when(query: &str) -> bool {
    // "In which month's game…" asks for a month.
    let ws: Vec<String> = words(query)
        .into_iter()
        .map(|w| w.trim_end_matches("'s").to_owned())
        .collect();
    let when = ws.iter().enumerate().any(|(i, w)| {
        w == "when"
            && (i == 0
                || ws
                    .get(i + 1)
                    .is_some_and(|n| AUXILIARIES.contains(&n.as_str())))
    });
    when || ["date", "day", "year", "month", "week", "time"]
        .iter()
        .any(|u| has_seq(&ws, &["what", u]) || has_seq(&ws, &["which", u]))
}

/// The reference point of a "before X" / "after X" question: the words naming X
/// ("where did I work before Acme" → `["acme"]`). The memory about X is where the
/// question starts from, not its answer, so the read path demotes it (an empty
/// result means the question names no reference).
pub fn temporal_reference(query: &str) -> Vec<String> {
    let ws = words(query);
    let Some(at) = ws
        .iter()
        // Not "until"/"since": "how long since I moved to Berlin" asks about the move.
        .position(|w| matches!(w.as_str(), "before" | "after" | "prior"))
    else {
        return Vec::new();
    };
    let mut rest: Vec<String> = ws[at + 1..].to_vec();
    // "prior to X", "before joining X", "after leaving X": skip the link words.
    while rest
        .first()
        .is_some_and(|w| matches!(w.as_str(), "to" | "i" | "we" | "my" | "the" | "a" | "an"))
        || rest
            .first()
            .is_some_and(|w| w.ends_with("ing") && rest.len() > 1)
    {
        rest.remove(0);
    }
    rest.retain(|w| !REFERENCE_NOISE.contains(&w.as_str()));
    rest
}

/// Words after "before" that do not name the reference ("before that", "before now").
const REFERENCE_NOISE: &[&str] = &[
    "that", "this", "then", "now", "it", "i", "we", "you", "he", "she", "they", "was", "were",
    "is", "did", "do", "had", "have", "the", "a", "an", "my", "to", "and", "or",
];

/// The tier a question's form asks for, if it says: "what happened" asks for an
/// incident, "how do I" for a skill, "should I" for a rule, "how much/many" for a
/// fact. `None` for every other form (no tier is preferred).
pub fn tier_hint(query: &str) -> Option<gitloom_model::Tier> {
    use gitloom_model::Tier;
    let ws = words(query);
    let first = ws.first().map(String::as_str);
    if has_seq(&ws, &["what", "happened"])
        || has_seq(&ws, &["what", "went", "wrong"])
        || ["incident", "outage", "broke", "crashed", "failed"]
            .iter()
            .any(|w| has(&ws, w))
    {
        return Some(Tier::Incidents);
    }
    if has_seq(&ws, &["how", "do", "i"])
        || has_seq(&ws, &["how", "to"])
        || has_seq(&ws, &["how", "can", "i"])
        || has_seq(&ws, &["how", "should", "i"])
    {
        return Some(Tier::Skills);
    }
    if first == Some("should")
        || has_seq(&ws, &["am", "i", "allowed"])
        || has_seq(&ws, &["is", "it", "ok"])
    {
        return Some(Tier::Rules);
    }
    if has_seq(&ws, &["how", "much"]) || has_seq(&ws, &["how", "many"]) {
        return Some(Tier::Facts);
    }
    None
}

/// The question's words, a contraction kept on its word (`what's`, `who's`): the
/// question forms read here are written with them.
fn words(q: &str) -> Vec<String> {
    gitloom_model::words(q)
        .iter()
        .map(gitloom_model::Word::with_clitic)
        .collect()
}

/// The first word without its clitic: "what's hana's email" opens with "what", an
/// interrogative, not with a name. A norm is letters and digits only, so the clitic
/// starts at the word's one apostrophe.
fn bare_first(ws: &[String]) -> &str {
    ws.first().map_or("", |w| {
        w.split_once('\'').map_or(w.as_str(), |(norm, _)| norm)
    })
}

/// "my old car", "the old place": a thing as it was. Not an age: "how old is
/// she", "a ten years old laptop".
fn says_old(ws: &[String]) -> bool {
    ws.iter().enumerate().any(|(i, w)| {
        w == "old"
            && !i.checked_sub(1).is_some_and(|j| {
                matches!(
                    ws[j].as_str(),
                    "how"
                        | "year"
                        | "years"
                        | "month"
                        | "months"
                        | "week"
                        | "weeks"
                        | "day"
                        | "days"
                )
            })
    })
}

fn has(ws: &[String], w: &str) -> bool {
    ws.iter().any(|x| x == w)
}

fn has_seq(ws: &[String], seq: &[&str]) -> bool {
    ws.windows(seq.len())
        .any(|win| win.iter().zip(seq).all(|(a, b)| a == b))
}

/// "Remind me who Odile is", "do you know who Perrin was": a "who is X" question
/// embedded in a request, where English puts the verb after the name. The clause
/// ends the question: `who`, one to three words, then `is` or `was` (the embedded
/// form of the `who is X` of at most four words above).
fn embedded_who(ws: &[String]) -> bool {
    let Some(at) = ws.iter().rposition(|w| w == "who") else {
        return false;
    };
    let clause = &ws[at + 1..];
    at > 0
        && (2..=4).contains(&clause.len())
        && clause.last().is_some_and(|w| w == "is" || w == "was")
        && !clause[..clause.len() - 1]
            .iter()
            .any(|w| INTERROGATIVES.contains(&w.as_str()))
}

const INTERROGATIVES: &[&str] = &[
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "is", "are", "do",
    "does", "did", "was", "were", "can", "should", "will", "have", "has",
];

/// Whether the question asks for advice or suggestions ("can you suggest…", "any
/// ideas…", "what should I…"). Such a question describes the asker's situation in
/// other words than the memory that answers it, and shares mostly generic words
/// ("some", "suggest", "ways") with everything else, so the read path ranks it by
/// meaning rather than by word overlap (`RetrieveConfig::advice_lexical`).
pub fn seeks_advice(query: &str) -> bool {
    let ws = words(query);
    let advice = [
        "suggest",
        "suggestion",
        "suggestions",
        "recommend",
        "recommendation",
        "recommendations",
        "advice",
        "ideas",
        "tips",
    ];
    // Addressed to the assistant ("can you suggest", "any ideas?"), not a question
    // about advice someone gave ("what did Caroline recommend to Melanie").
    let asked = has(&ws, "you") || advice.iter().any(|w| has_seq(&ws, &["any", w]));
    (asked && advice.iter().any(|w| has(&ws, w))) || has_seq(&ws, &["what", "should", "i"])
}

/// Classifies a query. Rules are checked from the most specific to the least; the
/// first that matches wins, and `Lookup` is the default.
pub fn classify(query: &str) -> Shape {
    let ws = words(query);
    if ws.is_empty() {
        return Shape::Lookup;
    }
    let first = ws[0].as_str();

    // "was I always…", "have I ever…", "do I still…"
    if ["always", "ever", "still", "anymore", "never"]
        .iter()
        .any(|w| has(&ws, w))
        && [
            "was", "were", "have", "has", "did", "do", "does", "am", "is", "are",
        ]
        .contains(&first)
    {
        return Shape::Persistence;
    }
    if has_seq(&ws, &["how", "many"])
        || (has_seq(&ws, &["how", "much"])
            && [
                "spent",
                "spend",
                "pay",
                "paid",
                "total",
                "all",
                "altogether",
                "each",
                "per",
                "cost",
                "costs",
            ]
            .iter()
            .any(|w| has(&ws, w)))
        || ["list", "total", "sum", "altogether", "every"]
            .iter()
            .any(|w| has(&ws, w))
        || has_seq(&ws, &["all", "my"])
        || has_seq(&ws, &["all", "the"])
    {
        return Shape::Aggregation;
    }
    if first == "when"
        || has_seq(&ws, &["how", "long"])
        || has_seq(&ws, &["what", "year"])
        || has_seq(&ws, &["what", "month"])
        || has_seq(&ws, &["what", "date"])
        || has_seq(&ws, &["what", "day"])
        || has_seq(&ws, &["used", "to"])
        || [
            "before",
            "after",
            "previous",
            "previously",
            "earlier",
            "since",
            "until",
            "ago",
            "formerly",
        ]
        .iter()
        .any(|w| has(&ws, w))
    {
        return Shape::Temporal;
    }
    if [
        "than", "compared", "versus", "vs", "enough", "better", "worse", "bigger", "smaller",
        "larger",
    ]
    .iter()
    .any(|w| has(&ws, w))
    {
        return Shape::Comparative;
    }
    // "who is X", "tell me about X", "what do you know about X", or a bare name.
    if (first == "who" && ws.len() <= 4 && (has(&ws, "is") || has(&ws, "lives") || has(&ws, "was")))
        // "who's X again" is "who is X again", one word shorter; "who's X's vet" asks
        // something of X.
        || (first == "who's" && ws.len() <= 3 && !ws[1..].iter().any(|w| w.ends_with("'s")))
        || embedded_who(&ws)
        || has_seq(&ws, &["tell", "me", "about"])
        || has_seq(&ws, &["know", "about"])
        || has_seq(&ws, &["everything", "about"])
        || (ws.len() <= 3 && !INTERROGATIVES.contains(&bare_first(&ws)))
    {
        return Shape::Entity;
    }
    // A relation through another person or event: "my sister's husband", "staying
    // with", "during the trip", "for my X".
    if ws
        .iter()
        .any(|w| w.ends_with("'s") && w != "what's" && w != "who's" && w != "it's" && w != "that's")
        || has(&ws, "during")
        || has_seq(&ws, &["staying", "with"])
        || has_seq(&ws, &["stay", "with"])
        || (has(&ws, "for") && has(&ws, "my") && ws.len() > 6)
    {
        return Shape::MultiHop;
    }
    if MONTHS.iter().any(|m| has(&ws, m)) && first == "what" && has(&ws, "happened") {
        return Shape::Temporal;
    }
    Shape::Lookup
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_that_says_now_outright() {
        for q in [
            "who's my uni tutor now",
            "what do i drive these days",
            "what am i driving at the moment",
            "what neighbourhood am i in nowadays",
            "how far am i allowed to run right now",
            "where do I currently work",
        ] {
            assert!(says_now(q), "{q}");
        }
        for q in [
            "who is my tutor",
            "am i still taking those language classes",
            "what did i drive before the renault",
            "what happened at the known issue",
        ] {
            assert!(!says_now(q), "{q}");
        }
    }

    #[test]
    fn orientation_reads_markers_then_tense() {
        use Orientation::*;
        for (q, want) in [
            ("where do I live", Present),
            ("who's my manager now", Present),
            ("am I still paying for the gym", Present),
            ("what car", Present),
            ("who was my manager before Mags", Past),
            ("where did I use to live", Past),
            ("what was my old car", Past),
            ("how old are they", Present),
            ("how old was she when she moved", PastTense),
            ("is my ten years old laptop still under warranty", Present),
            ("what was the due date originally", Past),
            ("when did I sell the car", PastTense),
            ("what did Pepita's vet say", PastTense),
            ("was I always vegetarian", Across),
            ("has the same person been my tutor", Across),
            ("have I ever been to Lisbon", Across),
        ] {
            assert_eq!(orientation(q), want, "{q}");
        }
    }

    #[test]
    fn advice_questions() {
        for q in [
            "Can you suggest some activities that I can do in the evening?",
            "I've been thinking about ways to stay connected with my colleagues. Any suggestions?",
            "Do you have any ideas on how I can get unstuck?",
            "what should i cook tonight",
        ] {
            assert!(seeks_advice(q), "{q}");
        }
        for q in [
            "where do i work",
            "how do i limit my gpu power",
            "who is bruno",
            "What book did Caroline recommend to Melanie?",
            "How often does Audrey meet up with other dog owners for tips and playdates?",
        ] {
            assert!(!seeks_advice(q), "{q}");
        }
    }

    #[test]
    fn the_reference_point_is_what_follows_before_or_after() {
        assert_eq!(
            temporal_reference("where was I working before Acme"),
            ["acme"]
        );
        assert_eq!(
            temporal_reference("what did I do after leaving Helio Vision?"),
            ["helio", "vision"]
        );
        assert_eq!(
            temporal_reference("where did I live prior to Berlin"),
            ["berlin"]
        );
        assert!(temporal_reference("where did I work before").is_empty());
        assert!(temporal_reference("how long since I moved to Berlin").is_empty());
    }

    #[test]
    fn past_questions() {
        assert!(asks_about_past("where did i work before"));
        assert!(asks_about_past("what did I use to eat"));
        assert!(!asks_about_past("where do i work"));
    }

    #[test]
    fn typical_questions() {
        assert_eq!(classify("where do i work"), Shape::Lookup);
        assert_eq!(classify("where did i work before"), Shape::Temporal);
        assert_eq!(classify("when did i start eating fish"), Shape::Temporal);
        assert_eq!(classify("was i always non vegetarian"), Shape::Persistence);
        assert_eq!(
            classify("have i always lived in berlin"),
            Shape::Persistence
        );
        assert_eq!(classify("how many lenses do i own"), Shape::Aggregation);
        assert_eq!(
            classify("how much have i spent on camera gear"),
            Shape::Aggregation
        );
        assert_eq!(
            classify("how much power does my graphics card pull"),
            Shape::Lookup
        );
        assert_eq!(classify("who is lena"), Shape::Entity);
        assert_eq!(classify("jonas"), Shape::Entity);
        // The same question embedded in a request: the verb after the name.
        assert_eq!(classify("remind me who lena is"), Shape::Entity);
        assert_eq!(classify("do you know who lena maria was"), Shape::Entity);
        assert_ne!(classify("the man who sold it, where is"), Shape::Entity);
        assert_ne!(classify("remind me who said what it is"), Shape::Entity);
        // Three words opening with a contracted interrogative ask something of a
        // name; they are not the name itself.
        for q in [
            "what's hana's email",
            "when's ollie's birthday",
            "who's pepita's vet",
        ] {
            assert_ne!(classify(q), Shape::Entity, "{q}");
        }
        assert_eq!(classify("tell me about acme robotics"), Shape::Entity);
        assert_eq!(classify("who's odile again"), Shape::Entity);
        assert_eq!(classify("who's my manager"), classify("who is my manager"));
        assert_eq!(classify("who am i staying with"), Shape::MultiHop);
        assert_eq!(
            classify("what's my sister's husband called"),
            Shape::MultiHop
        );
        assert_eq!(
            classify("is my power supply big enough for my gpu"),
            Shape::Comparative
        );
        assert_eq!(classify(""), Shape::Lookup);
    }

    #[test]
    fn questions_that_ask_when() {
        assert!(asks_when("When did Jon receive mentorship?"));
        assert!(asks_when("In which year did Audrey adopt her dogs?"));
        assert!(asks_when("what date is the party"));
        assert!(!asks_when("How long have I been using my Fitbit?"));
        assert!(!asks_when("What did Melanie paint?"));
        assert!(asks_when("So when did I last see the vet?"));
        assert!(!asks_when("What did I say when I left Acme?"));
        assert!(asks_when(
            "In which month's game did John achieve a career-high score?"
        ));
    }
}
