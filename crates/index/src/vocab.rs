//! Term aliases (the store's `vocab/*.md` files), used to widen lexical queries:
//! a query term that belongs to an alias group matches any member of the group
//! (`k8s` finds memories that say `kubernetes`, and the other way round).
//!
//! The format is meant to be edited by hand. In a `vocab/*.md` file, every list item
//! (`- ` or `* ` at the start of a line) is one group of equivalent terms separated
//! by commas; everything else (headings, prose, frontmatter) is ignored:
//!
//! ```markdown
//! # Infrastructure
//! - k8s, kubernetes, kube
//! - postgres, postgresql, pg
//! - ml, machine learning
//! ```
//!
//! Terms are compared the way queries are tokenised (lowercased, split on
//! non-alphanumerics). A one-word term triggers expansion when it is a query term; a
//! several-word term (`machine learning`) is added to the query as a phrase when
//! another member of its group is a query term. A term may sit in several groups.

use std::collections::HashMap;

use serde::Serialize;

/// One alias group: where it was written, and its terms (normalised).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VocabGroup {
    pub file: String,
    /// 1-based line in that file.
    pub line: usize,
    pub terms: Vec<String>,
}

/// Every alias group of a store.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    groups: Vec<VocabGroup>,
    /// One-word term → indexes of the groups holding it.
    by_term: HashMap<String, Vec<usize>>,
}

/// Folded words joined by one space (`Machine-Learning` → `machine learning`).
fn normalise(term: &str) -> String {
    gitloom_model::norms(term).join(" ")
}

impl Vocab {
    /// The groups of one file. A list item with fewer than two distinct terms is
    /// reported (it would expand nothing), with its file and line.
    pub fn parse_file(file: &str, text: &str) -> (Vec<VocabGroup>, Vec<String>) {
        let mut groups = Vec::new();
        let mut problems = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let Some(item) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) else {
                continue;
            };
            let mut terms: Vec<String> = Vec::new();
            for raw in item.split(',') {
                let n = normalise(raw);
                if !n.is_empty() && !terms.contains(&n) {
                    terms.push(n);
                }
            }
            if terms.len() < 2 {
                problems.push(format!(
                    "{file}:{}: an alias group needs at least two comma-separated terms",
                    i + 1
                ));
                continue;
            }
            groups.push(VocabGroup {
                file: file.to_owned(),
                line: i + 1,
                terms,
            });
        }
        (groups, problems)
    }

    pub fn new(groups: Vec<VocabGroup>) -> Vocab {
        let mut by_term: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, g) in groups.iter().enumerate() {
            for t in &g.terms {
                if !t.contains(' ') {
                    by_term.entry(t.clone()).or_default().push(i);
                }
            }
        }
        Vocab { groups, by_term }
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    pub fn groups(&self) -> &[VocabGroup] {
        &self.groups
    }

    /// The groups holding `term` (normalised first).
    pub fn groups_with(&self, term: &str) -> Vec<VocabGroup> {
        let t = normalise(term);
        self.groups
            .iter()
            .filter(|g| g.terms.contains(&t))
            .cloned()
            .collect()
    }

    /// The other members of every group holding the one-word query term `term`
    /// (already lowercased), without duplicates; empty when it has no aliases.
    pub fn aliases(&self, term: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for &g in self.by_term.get(term).into_iter().flatten() {
            for t in &self.groups[g].terms {
                if t != term && !out.contains(&t.as_str()) {
                    out.push(t);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_are_groups_and_the_rest_is_ignored() {
        let text = "---\ntitle: x\n---\n# Infra\nprose, with commas\n- k8s, Kubernetes , kube\n* Machine-Learning, ML\n- lonely\n";
        let (groups, problems) = Vocab::parse_file("vocab/infra.md", text);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].terms, vec!["k8s", "kubernetes", "kube"]);
        assert_eq!(groups[0].line, 6);
        assert_eq!(groups[1].terms, vec!["machine learning", "ml"]);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("vocab/infra.md:8:"), "{problems:?}");
        let v = Vocab::new(groups);
        assert_eq!(v.aliases("k8s"), vec!["kubernetes", "kube"]);
        assert_eq!(v.aliases("kubernetes"), vec!["k8s", "kube"]);
        assert_eq!(v.aliases("ml"), vec!["machine learning"]);
        // A several-word term is an expansion, never a trigger on its own words.
        assert!(v.aliases("machine").is_empty());
        assert!(v.aliases("docker").is_empty());
        assert_eq!(v.groups_with("Kubernetes").len(), 1);
    }
}
