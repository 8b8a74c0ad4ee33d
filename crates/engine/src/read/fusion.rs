//! Weighted reciprocal-rank fusion of peer arms.
//!
//! Each arm contributes `weight / (k + rank)` for every candidate it ranked; an arm
//! runs once and is counted once (improvement plan R5). The fused score orders the
//! hits; whether a hit is *evidence* is decided on raw arm scores (see `evidence.rs`).

use std::collections::BTreeMap;

use super::arm::Arm;

/// One arm's ranked candidates: key (a path) and raw score, best first.
#[derive(Debug, Clone)]
pub struct ArmList {
    pub arm: Arm,
    pub weight: f64,
    pub items: Vec<(String, f64)>,
}

/// A fused candidate: its fused score and, per arm, (raw score, 1-based rank).
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub key: String,
    pub score: f64,
    pub arms: BTreeMap<Arm, (f64, usize)>,
}

/// Fuses arm lists. Ties break on the key so the order is deterministic.
pub fn fuse(arms: &[ArmList], k: f64) -> Vec<Fused> {
    let mut by_key: BTreeMap<&str, Fused> = BTreeMap::new();
    for arm in arms {
        for (i, (key, raw)) in arm.items.iter().enumerate() {
            let rank = i + 1;
            let entry = by_key.entry(key.as_str()).or_insert_with(|| Fused {
                key: key.clone(),
                score: 0.0,
                arms: BTreeMap::new(),
            });
            // A key listed twice by one arm counts once, at its best rank.
            if entry.arms.contains_key(&arm.arm) {
                continue;
            }
            entry.score += arm.weight / (k + rank as f64);
            entry.arms.insert(arm.arm, (*raw, rank));
        }
    }
    let mut out: Vec<Fused> = by_key.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(arm: Arm, weight: f64, keys: &[&str]) -> ArmList {
        ArmList {
            arm,
            weight,
            items: keys.iter().map(|k| ((*k).to_owned(), 1.0)).collect(),
        }
    }

    #[test]
    fn arithmetic() {
        let f = fuse(
            &[
                list(Arm::Lexical, 1.0, &["x", "y"]),
                list(Arm::Cues, 2.0, &["y"]),
            ],
            60.0,
        );
        assert_eq!(f[0].key, "y");
        assert!((f[0].score - (1.0 / 62.0 + 2.0 / 61.0)).abs() < 1e-12);
        assert!((f[1].score - 1.0 / 61.0).abs() < 1e-12);
        assert_eq!(f[0].arms[&Arm::Lexical], (1.0, 2));
    }

    #[test]
    fn ties_are_deterministic_and_duplicates_count_once() {
        let f = fuse(
            &[
                list(Arm::Lexical, 1.0, &["b", "b"]),
                list(Arm::Cues, 1.0, &["a"]),
            ],
            60.0,
        );
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].key, "a");
        assert!((f[1].score - 1.0 / 61.0).abs() < 1e-12);
    }
}
