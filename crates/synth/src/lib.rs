//! gitloom-synth: a deterministic synthetic corpus for benchmarks and scale tests.
//!
//! Same `(n, seed)`, same files, byte for byte, on every machine: benchmark figures
//! in BENCHMARKS.md can be reproduced. Files are valid memories laid out in nested
//! topics (`facts/<area>/<sub>/<slug>.md`) with titles, cues, entities, links and a
//! body drawn from a fixed vocabulary with a Zipf-like skew, so BM25 sees realistic
//! term statistics.
//!
//! Not for quality measurement: the text means nothing. Use `gitloom eval` for that.
#![forbid(unsafe_code)]

use fastrand::Rng;

const AREAS: &[&str] = &[
    "work", "health", "home", "travel", "people", "hobbies", "finance", "gear", "food", "learning",
    "projects", "pets", "cars", "music", "garden", "family",
];
const SUBS: &[&str] = &[
    "current", "past", "plans", "notes", "contacts", "details", "history", "ideas",
];
const TIERS: &[(&str, u32)] = &[
    ("facts", 70),
    ("incidents", 10),
    ("rules", 10),
    ("skills", 10),
];

const WORDS: &[&str] = &[
    "project",
    "meeting",
    "deadline",
    "camera",
    "lens",
    "kubernetes",
    "cluster",
    "database",
    "replication",
    "backup",
    "invoice",
    "salary",
    "doctor",
    "allergy",
    "pollen",
    "flight",
    "hotel",
    "visa",
    "passport",
    "train",
    "bicycle",
    "commute",
    "garden",
    "tomato",
    "recipe",
    "pasta",
    "coffee",
    "espresso",
    "guitar",
    "piano",
    "concert",
    "ticket",
    "birthday",
    "present",
    "sister",
    "brother",
    "manager",
    "colleague",
    "office",
    "remote",
    "laptop",
    "monitor",
    "keyboard",
    "battery",
    "charger",
    "router",
    "network",
    "latency",
    "throughput",
    "quantisation",
    "inference",
    "training",
    "dataset",
    "benchmark",
    "paper",
    "conference",
    "talk",
    "slides",
    "deadline",
    "budget",
    "rent",
    "deposit",
    "landlord",
    "heating",
    "electricity",
    "insurance",
    "dentist",
    "appointment",
    "vaccine",
    "running",
    "marathon",
    "climbing",
    "bouldering",
    "swimming",
    "yoga",
    "japanese",
    "german",
    "lesson",
    "vocabulary",
    "grammar",
    "novel",
    "author",
    "library",
    "podcast",
    "episode",
    "series",
    "movie",
    "cinema",
    "museum",
    "exhibition",
    "painting",
    "photo",
    "album",
    "holiday",
    "beach",
    "mountain",
    "hiking",
    "tent",
    "weather",
    "storm",
    "repair",
    "plumber",
    "kitchen",
    "fridge",
    "oven",
    "cat",
    "dog",
    "veterinarian",
    "food",
    "market",
    "bakery",
    "bread",
    "cheese",
    "wine",
    "tea",
    "walk",
    "park",
    "river",
    "bridge",
    "station",
    "airport",
];
const FIRST: &[&str] = &[
    "Anna", "Ben", "Chen", "Dara", "Emil", "Fatima", "Goran", "Hana", "Ivo", "Jana", "Kai", "Lea",
    "Milo", "Nia", "Oskar", "Priya",
];
const LAST: &[&str] = &[
    "Berg", "Costa", "Dietz", "Eriksen", "Fujita", "Greco", "Haas", "Ito", "Jansen", "Kovac",
    "Lund", "Moreau",
];

/// One generated file: its store path and its full text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthFile {
    pub path: String,
    pub content: String,
}

/// Size of the vocabulary: the common words above, then made-up rare words.
const VOCAB: usize = 30_000;
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe", "gu", "hi", "jo", "ke",
    "la", "mo", "ni", "pe", "qua", "ri", "so", "tu", "ve", "wa", "xi", "yo", "zu", "bra",
];

/// Word of rank `r` (0-based): the listed common words first, then pseudo-words
/// spelled from syllables, distinct for every rank.
fn word(r: usize) -> String {
    if let Some(w) = WORDS.get(r) {
        return (*w).to_owned();
    }
    let mut n = r - WORDS.len();
    let mut out = String::new();
    loop {
        out.push_str(SYLLABLES[n % SYLLABLES.len()]);
        n /= SYLLABLES.len();
        if n == 0 {
            break;
        }
    }
    out.push_str("ix");
    out
}

/// A word drawn with Zipf's law (probability ∝ 1/rank): log-uniform ranks. A few
/// words are in most documents, most words in very few, as in real text.
fn zipf_word(rng: &mut Rng) -> String {
    let r = (rng.f64() * (VOCAB as f64).ln()).exp() as usize;
    word(r.saturating_sub(1).min(VOCAB - 1))
}

fn sentence(rng: &mut Rng, words: usize) -> String {
    let s: Vec<String> = (0..words).map(|_| zipf_word(rng)).collect();
    let mut out = s.join(" ");
    if let Some(c) = out.get(..1) {
        out = c.to_uppercase() + &out[1..];
    }
    out.push('.');
    out
}

fn person(rng: &mut Rng) -> String {
    format!(
        "{} {}",
        FIRST[rng.usize(..FIRST.len())],
        LAST[rng.usize(..LAST.len())]
    )
}

fn tier(rng: &mut Rng) -> &'static str {
    let mut roll = rng.u32(..100);
    for (t, w) in TIERS {
        if roll < *w {
            return t;
        }
        roll -= w;
    }
    "facts"
}

/// The path of file `i` of a corpus (stable, independent of content).
fn path_for(i: usize, rng: &mut Rng) -> String {
    let t = tier(rng);
    let area = AREAS[rng.usize(..AREAS.len())];
    let sub = SUBS[rng.usize(..SUBS.len())];
    format!("{t}/{area}/{sub}/m{i:06}.md")
}

fn content_for(i: usize, rng: &mut Rng, all_paths: &[String], version: u32) -> String {
    let a = zipf_word(rng);
    let b = zipf_word(rng);
    let who = person(rng);
    let title = format!(
        "{} {a} and {b} with {who} #{i}",
        if version > 0 { "Updated" } else { "Note on" }
    );
    let mut s = String::with_capacity(600);
    s.push_str("---\n");
    s.push_str(&format!("title: \"{title}\"\n"));
    s.push_str(&format!("summary: \"{}\"\n", sentence(rng, 8)));
    s.push_str("cues:\n");
    for _ in 0..rng.usize(2..5) {
        let (x, y) = (zipf_word(rng), zipf_word(rng));
        s.push_str(&format!("  - what about the {x} {y}\n"));
    }
    s.push_str(&format!("entities:\n  - {who} (person)\n"));
    if i > 0 && rng.bool() {
        let target = &all_paths[rng.usize(..i.min(all_paths.len()))];
        s.push_str(&format!("related:\n  - \"see-also: {target}\"\n"));
    }
    let day = 1 + (i % 28);
    let month = 1 + (i / 28) % 12;
    s.push_str(&format!("created: 2025-{month:02}-{day:02}T10:00:00Z\n"));
    s.push_str("---\n");
    for _ in 0..rng.usize(2..6) {
        let words = rng.usize(6..16);
        s.push_str(&sentence(rng, words));
        s.push(' ');
    }
    s.push('\n');
    if rng.u32(..5) == 0 {
        s.push_str(&format!("\n## Details\n{}\n", sentence(rng, 12)));
    }
    if version > 0 {
        s.push_str(&format!("\nRevision {version}.\n"));
    }
    s
}

/// `n` memory files, deterministic in `(n, seed)`.
pub fn corpus(n: usize, seed: u64) -> Vec<SynthFile> {
    let mut rng = Rng::with_seed(seed);
    let paths: Vec<String> = (0..n).map(|i| path_for(i, &mut rng)).collect();
    (0..n)
        .map(|i| {
            let mut frng = Rng::with_seed(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            SynthFile {
                path: paths[i].clone(),
                content: content_for(i, &mut frng, &paths, 0),
            }
        })
        .collect()
}

/// New contents for `k` distinct files of `files` (a "session" of edits), deterministic in `seed`.
pub fn edits(files: &[SynthFile], k: usize, seed: u64, version: u32) -> Vec<SynthFile> {
    let mut rng = Rng::with_seed(seed);
    let mut picked: Vec<usize> = (0..files.len()).collect();
    rng.shuffle(&mut picked);
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    picked
        .into_iter()
        .take(k)
        .map(|i| {
            let mut frng = Rng::with_seed(seed ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
            SynthFile {
                path: files[i].path.clone(),
                content: content_for(i, &mut frng, &paths, version),
            }
        })
        .collect()
}

/// Query strings drawn from the same vocabulary.
pub fn queries(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng::with_seed(seed);
    (0..n)
        .map(|_| match rng.u32(..3) {
            0 => format!(
                "what about the {} {}",
                zipf_word(&mut rng),
                zipf_word(&mut rng)
            ),
            1 => format!("where is my {}", zipf_word(&mut rng)),
            _ => format!(
                "{} {} {}",
                zipf_word(&mut rng),
                zipf_word(&mut rng),
                person(&mut rng)
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_valid() {
        let a = corpus(300, 7);
        assert_eq!(a, corpus(300, 7));
        assert_ne!(a, corpus(300, 8));
        let mut seen = std::collections::HashSet::new();
        for f in &a {
            assert!(seen.insert(f.path.clone()), "duplicate path {}", f.path);
            gitloom_model::StorePath::parse(&f.path).expect("valid path");
            gitloom_model::Memory::parse(&f.path, f.content.as_bytes())
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let e = edits(&a, 50, 1, 1);
        assert_eq!(e.len(), 50);
        assert!(
            e.iter()
                .all(|f| a.iter().any(|g| g.path == f.path && g.content != f.content))
        );
    }
}
