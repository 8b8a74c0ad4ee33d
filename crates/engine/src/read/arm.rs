//! The retrieval arms, as a closed set, and numbers kept per arm.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One retrieval arm. Declared in the alphabetical order of their names, so the
/// derived order agrees with the order of the names ([`Arm::as_str`]) and a map
/// keyed by `Arm` can be looked up by name too (`Borrow<str>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    /// Cosine of the query against section and body vectors.
    Bodies,
    /// Cosine of the query against question-shaped cue vectors.
    Cues,
    /// Memories mentioning entities the query names.
    Entities,
    /// Neighbours (links, `related:`, `supersedes`) of the strongest hits.
    Graph,
    /// FTS5 BM25 over titles, cues, bodies (raw score: BM25 made positive;
    /// evidence: IDF-weighted coverage of the query's terms).
    Lexical,
}

impl Arm {
    /// Every arm, in name order.
    pub const ALL: [Arm; 5] = [
        Arm::Bodies,
        Arm::Cues,
        Arm::Entities,
        Arm::Graph,
        Arm::Lexical,
    ];

    /// The arms whose raw scores can make a hit evidence on their own, in the order
    /// the floor tries their strong bars.
    pub const EVIDENCE: [Arm; 4] = [Arm::Cues, Arm::Bodies, Arm::Lexical, Arm::Entities];

    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Bodies => "bodies",
            Arm::Cues => "cues",
            Arm::Entities => "entities",
            Arm::Graph => "graph",
            Arm::Lexical => "lexical",
        }
    }
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::borrow::Borrow<str> for Arm {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

/// A number per arm (a fusion weight, an evidence bar).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct PerArm {
    pub lexical: f64,
    pub cues: f64,
    pub bodies: f64,
    pub entities: f64,
    pub graph: f64,
}

impl PerArm {
    pub fn get(&self, arm: Arm) -> f64 {
        match arm {
            Arm::Lexical => self.lexical,
            Arm::Cues => self.cues,
            Arm::Bodies => self.bodies,
            Arm::Entities => self.entities,
            Arm::Graph => self.graph,
        }
    }

    pub fn set(&mut self, arm: Arm, value: f64) {
        match arm {
            Arm::Lexical => self.lexical = value,
            Arm::Cues => self.cues = value,
            Arm::Bodies => self.bodies = value,
            Arm::Entities => self.entities = value,
            Arm::Graph => self.graph = value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_agrees_with_names() {
        let mut names: Vec<&str> = Arm::ALL.iter().map(|a| a.as_str()).collect();
        names.sort_unstable();
        let ordered: Vec<&str> = Arm::ALL.iter().map(|a| a.as_str()).collect();
        assert_eq!(names, ordered);
        let m: std::collections::BTreeMap<Arm, u8> = Arm::ALL.iter().map(|a| (*a, 1)).collect();
        assert!(m.contains_key("lexical") && !m.contains_key("vectors"));
        assert_eq!(
            serde_json::to_string(&Arm::Cues).expect("serialises"),
            "\"cues\""
        );
    }

    #[test]
    fn per_arm_get_and_set_agree() {
        let mut p = PerArm {
            lexical: 0.0,
            cues: 0.0,
            bodies: 0.0,
            entities: 0.0,
            graph: 0.0,
        };
        for (i, a) in Arm::ALL.iter().enumerate() {
            p.set(*a, i as f64);
        }
        for (i, a) in Arm::ALL.iter().enumerate() {
            assert_eq!(p.get(*a), i as f64);
        }
    }
}
