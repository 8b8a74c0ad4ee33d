//! Topics: the folder a fact is filed under, from the words it uses
//! (`data/topics.txt`), with the kind of its subject as the fallback.

use std::collections::HashMap;
use std::sync::LazyLock;

use gitloom_model::text::words;

/// The topic the extractor files a fact under when nothing places it.
pub const FALLBACK: &str = "general";

struct Lexicon {
    /// Topic names in file order (ties go to the earlier one).
    topics: Vec<&'static str>,
    /// word → topic indexes
    words: HashMap<&'static str, Vec<usize>>,
    /// two-word phrases ("on call") → topic indexes
    phrases: HashMap<(String, String), Vec<usize>>,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let mut lex = Lexicon {
        topics: Vec::new(),
        words: HashMap::new(),
        phrases: HashMap::new(),
    };
    for line in include_str!("../../data/topics.txt").lines() {
        let Some((topic, list)) = line.split_once(':').filter(|_| !line.starts_with('#')) else {
            continue;
        };
        let t = lex.topics.len();
        lex.topics.push(topic.trim());
        for w in list.split_whitespace() {
            match w.split_once('_') {
                Some((a, b)) => lex
                    .phrases
                    .entry((a.to_owned(), b.replace('_', " ")))
                    .or_default()
                    .push(t),
                None => lex.words.entry(w).or_default().push(t),
            }
        }
    }
    lex
});

/// The word as the lexicon lists it: itself, or without a plural or verb ending.
fn lookup(w: &str) -> Option<&'static Vec<usize>> {
    let lex = &*LEXICON;
    lex.words.get(w).or_else(|| {
        [
            w.strip_suffix("es"),
            w.strip_suffix('s'),
            w.strip_suffix("ing"),
            w.strip_suffix("ed"),
            // "-d" is an ending only after a stem in "e" ("hiked" → "hike"), and not
            // after one in "ee": "feed" is no "fee" (a stem in "ee" takes "-d" in a few
            // verbs, "agreed", "freed"; a word in "eed" is mostly a word of its own).
            w.strip_suffix('d')
                .filter(|s| s.ends_with('e') && !s.ends_with("ee")),
        ]
        .into_iter()
        .flatten()
        .filter(|s| s.len() >= 3)
        .find_map(|s| lex.words.get(s))
    })
}

/// The topic `text` uses the most words of, with how many (`None` when none).
pub fn topic_of(text: &str) -> Option<(&'static str, usize)> {
    let lex = &*LEXICON;
    let ws: Vec<String> = words(text).into_iter().map(|w| w.norm).collect();
    let mut counts = vec![0usize; lex.topics.len()];
    for (i, w) in ws.iter().enumerate() {
        if let Some(ts) = lookup(w) {
            for t in ts {
                counts[*t] += 1;
            }
        }
        if let Some(next) = ws.get(i + 1)
            && let Some(ts) = lex.phrases.get(&(w.clone(), next.clone()))
        {
            for t in ts {
                counts[*t] += 2;
            }
        }
    }
    let (best, n) =
        counts.iter().enumerate().fold(
            (0, 0),
            |(bi, bn), (i, n)| if *n > bn { (i, *n) } else { (bi, bn) },
        );
    (n > 0).then(|| (lex.topics[best], n))
}

/// The topic of a subject of this entity kind, when its words place it nowhere.
pub fn of_kind(kind: Option<&str>) -> Option<&'static str> {
    match kind? {
        "person" => Some("people"),
        "pet" => Some("pets"),
        "org" => Some("organisations"),
        "place" => Some("places"),
        "product" => Some("things"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_from_words() {
        assert_eq!(
            topic_of("User takes aspirin 75 in the morning and sees the cardiologist").map(|t| t.0),
            Some("health")
        );
        assert_eq!(
            topic_of("the rent goes up to £1,250 from october").map(|t| t.0),
            Some("home")
        );
        assert_eq!(
            topic_of("primary on call next week with Jonah").map(|t| t.0),
            Some("work")
        );
        assert_eq!(topic_of("nothing here at all"), None);
    }

    #[test]
    fn a_word_in_eed_is_not_a_stem_in_ee_with_its_past_ending() {
        // "feed" is no inflection of "fee": the cat, not money.
        assert_eq!(
            topic_of("Maren will feed the cat while we're away").map(|t| t.0),
            Some("pets")
        );
        // The ending still comes off where it is one: "hiked" is "hike".
        assert_eq!(
            topic_of("Oskar hiked up to the ridge on Sunday").map(|t| t.0),
            Some("fitness")
        );
    }
}
