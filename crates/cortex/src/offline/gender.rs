//! Whom a "she" or a "he" may stand for: the grammatical gender a conversation gives a
//! name, read from the kin word or title it puts beside it ("my daughter Ines", "her
//! husband Halvard", "Birgit, Callan's mum", "Monsieur Lind").
//!
//! Only what the text says is used: a name the conversation never puts beside a
//! gendered word has no gender, and any pronoun may stand for it. A name given both
//! genders has none. No list of first names: a name's gender is the text's to say.

use std::collections::HashMap;

use gitloom_model::fold_name;

use crate::text::Spotted;

/// A grammatical gender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gender {
    Female,
    Male,
}

impl Gender {
    /// The gender a personal pronoun asks for (`she`, `her`, `he`, `his`, …).
    pub fn of_pronoun(norm: &str) -> Option<Gender> {
        match norm {
            "she" | "her" | "hers" | "herself" => Some(Gender::Female),
            "he" | "him" | "his" | "himself" => Some(Gender::Male),
            _ => None,
        }
    }

    /// The gender of an English kin word or title: a closed class of the language.
    fn of_word(norm: &str) -> Option<Gender> {
        match norm {
            "mum" | "mom" | "mam" | "mother" | "daughter" | "sister" | "wife" | "girlfriend"
            | "fiancee" | "aunt" | "aunty" | "auntie" | "niece" | "grandma" | "grandmother"
            | "nan" | "nana" | "nanna" | "granny" | "gran" | "granddaughter" | "stepmum"
            | "stepmom" | "stepmother" | "stepdaughter" | "stepsister" | "widow" | "mrs" | "ms"
            | "miss" | "madam" | "madame" | "mme" | "lady" | "queen" | "goddaughter" => {
                Some(Gender::Female)
            }
            "dad" | "father" | "son" | "brother" | "husband" | "boyfriend" | "fiance" | "uncle"
            | "nephew" | "grandpa" | "grandfather" | "grandad" | "granddad" | "grandson"
            | "stepdad" | "stepfather" | "stepson" | "stepbrother" | "widower" | "mr" | "sir"
            | "monsieur" | "king" | "godson" => Some(Gender::Male),
            _ => None,
        }
    }
}

/// The genders a conversation has given names so far.
#[derive(Debug, Default, Clone)]
pub struct Genders {
    /// Folded name → its gender; `None` once the text has given it both.
    of: HashMap<String, Option<Gender>>,
}

impl Genders {
    /// Learns from one sentence and the names spotted in it: the word right before a
    /// name ("daughter Ines"), or a kin word after it in apposition ("Birgit,
    /// Callan's mum").
    pub fn learn(&mut self, sentence: &str, spots: &[Spotted]) {
        if !spots.iter().any(Spotted::is_person) {
            return;
        }
        let tokens: Vec<String> = sentence.split_whitespace().map(token_norm).collect();
        let raw: Vec<&str> = sentence.split_whitespace().collect();
        for s in spots.iter().filter(|s| s.is_person()) {
            let before =
                s.at.checked_sub(1)
                    .and_then(|i| tokens.get(i))
                    .and_then(|t| gender_of_token(t));
            let last = s.at + s.name.split_whitespace().count().max(1) - 1;
            let after = raw
                .get(last)
                .filter(|t| t.ends_with(','))
                .and_then(|_| apposition(&tokens[(last + 1).min(tokens.len())..]));
            if let Some(g) = before.or(after) {
                self.add(&s.name, g);
            }
        }
    }

    /// Learns that the text called `name` by a pronoun of gender `g` ("Piotr Nowak …
    /// he showed me round": he is Piotr). Weaker than a kin word or title: it gives a
    /// name no gender yet one, and never takes away one the text gave otherwise (a
    /// pronoun read to the wrong name must not cancel "my sister").
    pub fn referred(&mut self, name: &str, g: Gender) {
        self.of.entry(fold_name(name)).or_insert(Some(g));
    }

    fn add(&mut self, name: &str, g: Gender) {
        let slot = self.of.entry(fold_name(name)).or_insert(Some(g));
        if *slot != Some(g) {
            *slot = None;
        }
    }

    /// The gender the text has given `name`, if one.
    pub fn of(&self, name: &str) -> Option<Gender> {
        self.of.get(&fold_name(name)).copied().flatten()
    }

    /// True when a pronoun asking for `wanted` may stand for `name`.
    pub fn fits(&self, name: &str, wanted: Option<Gender>) -> bool {
        match (wanted, self.of(name)) {
            (Some(w), Some(g)) => w == g,
            _ => true,
        }
    }
}

/// A kin word opening what follows a name and its comma: "my mum", "Callan's mum",
/// "the landlady".
fn apposition(after: &[String]) -> Option<Gender> {
    let mut it = after.iter().take(3);
    let first = it.next()?;
    if let Some(g) = gender_of_token(first) {
        return Some(g);
    }
    let owner = matches!(
        first.as_str(),
        "my" | "our" | "his" | "her" | "their" | "your" | "the"
    ) || first.ends_with("'s");
    owner.then(|| it.next().and_then(|w| gender_of_token(w)))?
}

/// A whitespace token folded for the lists: ASCII, lower case, no punctuation around
/// it (a possessive `'s` stays: "Callan's mum").
fn token_norm(t: &str) -> String {
    let t = deunicode::deunicode(t).to_lowercase();
    t.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
        .to_owned()
}

/// The gender of a token's word, a clitic `'s` aside ("my boyfriend's Callan").
fn gender_of_token(t: &str) -> Option<Gender> {
    Gender::of_word(t.strip_suffix("'s").unwrap_or(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kin_words_before_and_after_a_name() {
        let mut g = Genders::default();
        g.learn(
            "She lives in Aarhus with her husband Halvard Lind, who's Swedish",
            &[Spotted::person("Halvard Lind", 7)],
        );
        g.learn("My daughter Ines is 35.", &[Spotted::person("Ines", 2)]);
        g.learn(
            "Birgit, Callan's mum, rang",
            &[Spotted::person("Birgit", 0)],
        );
        assert_eq!(g.of("Halvard Lind"), Some(Gender::Male));
        assert_eq!(g.of("ines"), Some(Gender::Female));
        assert_eq!(g.of("Birgit"), Some(Gender::Female));
        assert!(!g.fits("Halvard Lind", Gender::of_pronoun("she")));
        assert!(g.fits("Ines", Gender::of_pronoun("her")));
    }

    #[test]
    fn a_pronoun_gives_a_name_a_gender_only_where_nothing_else_did() {
        let mut g = Genders::default();
        g.referred("Piotr Nowak", Gender::Male);
        assert!(!g.fits("piotr nowak", Gender::of_pronoun("she")));
        g.learn("my sister Kit", &[Spotted::person("Kit", 2)]);
        g.referred("Kit", Gender::Male);
        assert_eq!(g.of("Kit"), Some(Gender::Female), "the kin word stands");
    }

    #[test]
    fn a_name_the_text_gives_no_gender_fits_any_pronoun() {
        let mut g = Genders::default();
        g.learn("Kit walks the dog", &[Spotted::person("Kit", 0)]);
        assert!(g.fits("Kit", Gender::of_pronoun("she")));
        assert!(g.fits("Kit", Gender::of_pronoun("he")));
        // Given both, it has neither.
        g.learn("my son Kit", &[Spotted::person("Kit", 2)]);
        g.learn("my daughter Kit", &[Spotted::person("Kit", 2)]);
        assert_eq!(g.of("Kit"), None);
    }
}
