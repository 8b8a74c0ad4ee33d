//! Query text → FTS5 MATCH strings.
//!
//! Rules (improvement plan R1):
//! - the query is split into words by the workspace's one splitter
//!   (`gitloom_model::words`: runs of letters and digits, lowercased, Latin
//!   diacritics folded as the index's tokenizer folds them);
//! - stopwords never match (`gitloom_model::is_stopword`: articles, auxiliaries,
//!   pronouns, interrogatives, common prepositions and conjunctions, contraction
//!   fragments, `not`/`no`, single letters);
//! - there is no prefix expansion at all (porter stemming covers morphology), and
//!   every term is a quoted FTS5 string, so `"`, `*`, `:`, `-`, `(`, `NEAR`, `AND` in
//!   user input are plain text and can never change the query's meaning.
//! - a query made only of stopwords has no terms and matches nothing.

/// True for a (folded) word that never becomes a query term.
pub use gitloom_model::is_stopword;

/// The content terms of a query and the MATCH strings built from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerms {
    /// Lowercased, deduplicated, in query order; stopwords removed.
    pub terms: Vec<String>,
}

impl QueryTerms {
    pub fn parse(text: &str) -> QueryTerms {
        QueryTerms {
            terms: gitloom_model::content_terms(text),
        }
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
