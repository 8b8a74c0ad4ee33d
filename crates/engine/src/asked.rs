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
//!   married).
//!
//! Deliberately narrow: a demand is only made where missing evidence is cheap to see
//! and an answer cannot hide behind a paraphrase the groups below do not cover.

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

/// One thing a question asks for that a memory's text must show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Demand {
    Price,
    /// The relation named after a possessive, with its synonym group.
    Relation(&'static [&'static str]),
}

impl Demand {
    /// Whether `text` (a memory's title, summary, cues and body) meets the demand.
    pub fn met_by(&self, text: &str) -> bool {
        match self {
            Demand::Price => has_money(text),
            Demand::Relation(group) => words(text).any(|w| group.contains(&w.as_str())),
        }
    }

    pub fn label(&self) -> String {
        match self {
            Demand::Price => "a price".to_owned(),
            Demand::Relation(group) => format!("a {}", group[0]),
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

/// What `query` asks for that a memory must show (usually nothing).
pub fn demands(query: &str) -> Vec<Demand> {
    let lower = query.to_lowercase().replace('’', "'");
    let split = gitloom_model::words(query);
    let tokens: Vec<&str> = split.iter().map(|w| w.norm.as_str()).collect();
    let mut out = Vec::new();
    let how_much = lower.contains("how much");
    // "who pays my salary" asks for a payer, not an amount.
    let asks_other = tokens
        .first()
        .is_some_and(|t| ["who", "whom", "whose", "where", "when", "which", "why"].contains(t));
    let price = tokens.iter().any(|t| PRICE_NOUNS.contains(t))
        || (how_much && tokens.iter().any(|t| PRICE_VERBS.contains(t)))
        || lower.contains("what did i pay")
        || lower.contains("what does it cost");
    if price && !asks_other && !lower.contains("how many") {
        out.push(Demand::Price);
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
        ] {
            assert_eq!(demands(q), vec![Demand::Price], "{q}");
        }
        for q in [
            "how much power does my graphics card pull",
            "how many days did I spend camping",
            "where do I work",
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
}
