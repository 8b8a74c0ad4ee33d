//! Query text → FTS5 MATCH strings.
//!
//! Rules (improvement plan R1):
//! - the query is split on non-alphanumerics and lowercased;
//! - stopwords never match: articles, auxiliaries, pronouns, interrogatives, common
//!   prepositions and conjunctions, contraction fragments, and single letters.
//!   `not`/`no` are dropped too: a bag-of-words match cannot express negation, and as
//!   terms they would only match every memory that happens to contain them;
//! - there is no prefix expansion at all (porter stemming covers morphology), and
//!   every term is a quoted FTS5 string, so `"`, `*`, `:`, `-`, `(`, `NEAR`, `AND` in
//!   user input are plain text and can never change the query's meaning.
//! - a query made only of stopwords has no terms and matches nothing.

const STOPWORDS: &[&str] = &[
    // articles, determiners
    "a", "an", "the", "some", "any", "all", "each", "every", "other", "such",
    // auxiliaries
    "do", "does", "did", "doing", "done", "is", "am", "are", "was", "were", "be", "been", "being",
    "have", "has", "had", "having", "will", "would", "can", "could", "should", "shall", "may",
    "might", "must", "get", "got", // pronouns
    "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "we", "us", "our",
    "ours", "he", "him", "his", "she", "her", "hers", "it", "its", "itself", "they", "them",
    "their", "theirs", "this", "that", "these", "those", "there", "here",
    // interrogatives
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
    // prepositions, conjunctions
    "of", "in", "on", "at", "to", "for", "with", "from", "by", "about", "as", "into", "onto", "and",
    "or", "but", "if", "than", "then", "so", "not", "no", "nor", "also", "just", "very", "too",
    "up", "out", "over",
    // contraction fragments (what's → what s, don't → don t, I've → i ve)
    "s", "t", "d", "ll", "ve", "re", "m", "don", "doesn", "didn", "isn", "aren", "wasn", "weren",
    "won", "wouldn", "can't", "cannot", "haven", "hasn", "hadn", "shouldn", "couldn",
];

/// True for a (lowercase) word that never becomes a query term.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
        || (word.chars().count() == 1 && !word.chars().all(|c| c.is_ascii_digit()))
}

/// The content terms of a query and the MATCH strings built from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerms {
    /// Lowercased, deduplicated, in query order; stopwords removed.
    pub terms: Vec<String>,
}

impl QueryTerms {
    pub fn parse(text: &str) -> QueryTerms {
        let mut terms: Vec<String> = Vec::new();
        for w in text.split(|c: char| !c.is_alphanumeric()) {
            if w.is_empty() {
                continue;
            }
            let w = w.to_lowercase();
            if is_stopword(&w) || terms.contains(&w) {
                continue;
            }
            terms.push(w);
        }
        QueryTerms { terms }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Every term must occur (in any column). `None` when there are no terms.
    pub fn match_all(&self) -> Option<String> {
        self.join(" AND ")
    }

    /// Any term may occur. `None` when there are no terms.
    pub fn match_any(&self) -> Option<String> {
        self.join(" OR ")
    }

    /// One term as a MATCH clause, widened by its aliases: `"k8s"` or
    /// `("k8s" OR "kubernetes")` (every alias quoted, so it stays plain text).
    pub fn clause(term: &str, vocab: &crate::Vocab) -> String {
        let aliases = vocab.aliases(term);
        if aliases.is_empty() {
            return quote(term);
        }
        let mut parts = vec![quote(term)];
        parts.extend(aliases.into_iter().map(quote));
        format!("({})", parts.join(" OR "))
    }

    /// [`QueryTerms::match_all`] with every term widened by its aliases.
    pub fn match_all_with(&self, vocab: &crate::Vocab) -> Option<String> {
        self.join_with(" AND ", vocab)
    }

    /// [`QueryTerms::match_any`] with every term widened by its aliases.
    pub fn match_any_with(&self, vocab: &crate::Vocab) -> Option<String> {
        self.join_with(" OR ", vocab)
    }

    fn join_with(&self, op: &str, vocab: &crate::Vocab) -> Option<String> {
        if self.terms.is_empty() {
            return None;
        }
        Some(
            self.terms
                .iter()
                .map(|t| QueryTerms::clause(t, vocab))
                .collect::<Vec<_>>()
                .join(op),
        )
    }

    fn join(&self, op: &str) -> Option<String> {
        if self.terms.is_empty() {
            return None;
        }
        Some(
            self.terms
                .iter()
                .map(|t| quote(t))
                .collect::<Vec<_>>()
                .join(op),
        )
    }
}

/// An FTS5 string literal: the text between double quotes, inner quotes doubled.
pub(crate) fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_person_question() {
        let q = QueryTerms::parse("Where do I work?");
        assert_eq!(q.terms, vec!["work"]);
        assert_eq!(q.match_any().as_deref(), Some("\"work\""));
        let q = QueryTerms::parse("what's my cat called");
        assert_eq!(q.terms, vec!["cat", "called"]);
        assert_eq!(q.match_all().as_deref(), Some("\"cat\" AND \"called\""));
        assert!(QueryTerms::parse("who am I? where is it").is_empty());
        assert!(QueryTerms::parse("").match_any().is_none());
    }

    #[test]
    fn syntax_is_inert() {
        let q = QueryTerms::parse(r#"foo" OR * NEAR(bar: -baz) AND "#);
        assert_eq!(q.terms, vec!["foo", "near", "bar", "baz"]);
        let m = q.match_any().unwrap_or_default();
        assert!(!m.contains('*') && !m.contains(':') && !m.contains('('));
    }
}
