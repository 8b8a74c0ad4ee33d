//! Stage 5b: gates that refuse or demote a candidate the floor admitted, for what
//! the question asks beyond its words' scores: the entity it names (the entity
//! anchor), a name asked about (`who is X`), an answer type (`asked.rs`).

use crate::shape::Shape;

/// The entities of `named` that are the question's subject: the first named and
/// any joined to it ("Jon and Gina", "Jon & Gina"). In an English question the
/// first name is its subject ("What did Jon say about Gina's store?", "What does
/// Gina say to Jon?"); a second name not joined to it is an object or an owner.
pub(crate) fn subject(named: &[&gitloom_index::EntityMatch], query: &str) -> Vec<i64> {
    let folded = gitloom_model::fold_name(query);
    let words: Vec<&str> = folded.split(' ').collect();
    let mut in_order = named.to_vec();
    in_order.sort_by_key(|m| m.at);
    let mut out = Vec::new();
    // Where the last name taken starts and ends, in words.
    let mut last: Option<(usize, usize)> = None;
    for m in in_order {
        let joined = match last {
            None => true,
            // Several entities can share one name.
            Some((start, _)) if start == m.at => true,
            // `fold_name` drops "&", which leaves the names side by side.
            Some((_, end)) => matches!(words.get(end..m.at), Some([] | ["and"] | ["or"])),
        };
        if !joined {
            break;
        }
        last = Some((m.at, m.at + m.alias.split(' ').count()));
        out.push(m.id);
    }
    out
}

/// The entities a query names and the content words it asks about them.
pub(crate) struct Anchor {
    /// Words of the names of the entities a hit must name: those the question names
    /// that pick memories out, or, when it names only common ones, those.
    pub aliases: Vec<String>,
    /// Only common entities were named (speakers of a conversation, the user): the
    /// check then demotes instead of refusing, since such names are in most memories
    /// and refusing would cost recall.
    pub soft: bool,
    /// The query's other content words (a common entity's name among them when the
    /// question also names one that picks memories out).
    pub rest: Vec<String>,
    /// Words of the common entities' names when they are not what a hit must name:
    /// a memory that names only such an entity is at best partly anchored.
    pub common: Vec<String>,
}

/// Words that ask about an entity without saying what about it.
const GENERIC: &[&str] = &[
    "know",
    "tell",
    "everything",
    "anything",
    "info",
    "information",
    "called",
    "name",
    "named",
];

/// The words of an entity's alias and name.
fn name_words(m: &gitloom_index::EntityMatch) -> Vec<String> {
    m.alias
        .split(' ')
        .chain(gitloom_model::fold_name(&m.name).split(' '))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Anchor {
    /// The anchor of a question naming `found`. With `specific`, a question that
    /// names both a common entity (a speaker of the conversation, in most of its
    /// memories) and one that picks memories out is anchored on the latter: "When
    /// will Tim leave for Ireland?" asks for a memory about Ireland, and Tim's name
    /// is part of what it should hold, not a name that anchors any memory of his.
    pub fn new(
        found: &[gitloom_index::EntityMatch],
        terms: &[String],
        shape: Shape,
        specific: bool,
    ) -> Anchor {
        let soft = found.iter().all(|m| m.common);
        let only_specific = specific && !soft;
        let mut aliases: Vec<String> = Vec::new();
        let mut common: Vec<String> = Vec::new();
        for m in found {
            let into = if only_specific && m.common {
                &mut common
            } else {
                &mut aliases
            };
            for w in name_words(m) {
                if !into.contains(&w) {
                    into.push(w);
                }
            }
        }
        let rest = if shape == Shape::Entity {
            Vec::new()
        } else {
            terms
                .iter()
                .filter(|t| !aliases.iter().any(|a| a == *t) && !GENERIC.contains(&t.as_str()))
                .cloned()
                .collect()
        };
        Anchor {
            aliases,
            soft,
            rest,
            common,
        }
    }

    pub fn mentions(&self, matched: &[String]) -> bool {
        matched.iter().any(|m| self.aliases.contains(m))
    }

    /// Whether `matched` names one of the common entities the anchor set aside.
    pub fn mentions_common(&self, matched: &[String]) -> bool {
        matched.iter().any(|m| self.common.contains(m))
    }

    pub fn rest_share(&self, matched: &[String]) -> f64 {
        if self.rest.is_empty() {
            return 1.0;
        }
        let got = self.rest.iter().filter(|t| matched.contains(t)).count();
        got as f64 / self.rest.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subject_is_the_first_name_and_those_joined_to_it() {
        let named = |query: &str, names: &[&str]| {
            let words: Vec<String> = gitloom_model::fold_name(query)
                .split(' ')
                .map(str::to_owned)
                .collect();
            let found: Vec<gitloom_index::EntityMatch> = names
                .iter()
                .enumerate()
                .map(|(i, n)| gitloom_index::EntityMatch {
                    id: i as i64,
                    name: (*n).to_owned(),
                    kind: Some("person".to_owned()),
                    alias: n.to_lowercase(),
                    at: words
                        .iter()
                        .position(|w| *w == n.to_lowercase())
                        .expect("the name is in the query"),
                    mentions: 100,
                    common: true,
                })
                .collect();
            let refs: Vec<&gitloom_index::EntityMatch> = found.iter().collect();
            subject(&refs, query)
                .into_iter()
                .map(|id| names[id as usize].to_owned())
                .collect::<Vec<String>>()
        };
        // Found in any order, the first in the question is its subject.
        assert_eq!(
            named("What did Jon say about Gina's progress?", &["Gina", "Jon"]),
            ["Jon"]
        );
        assert_eq!(
            named(
                "What does Gina say to Jon about the opening?",
                &["Jon", "Gina"]
            ),
            ["Gina"]
        );
        assert_eq!(
            named(
                "How do Jon and Gina both like to destress?",
                &["Gina", "Jon"]
            ),
            ["Jon", "Gina"]
        );
        assert_eq!(
            named("What do Jon & Gina cook?", &["Jon", "Gina"]),
            ["Jon", "Gina"]
        );
        assert_eq!(named("What did Melanie paint?", &["Melanie"]), ["Melanie"]);
        assert!(named("What did I paint?", &[]).is_empty());
    }
}
