//! Stable replay of the fuzz targets: runs every file of `corpus/<target>/` (or the
//! paths given) through the target bodies, plus `--random N` inputs mutated from
//! them with a fixed seed. No libFuzzer, no sanitizers, no nightly: this is what CI
//! runs, and what the machine can run when cargo-fuzz cannot build.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

type Target = fn(&[u8]);

const TARGETS: &[(&str, Target)] = &[
    ("memory_parse", gitloom_fuzz::memory_parse),
    ("store_path", gitloom_fuzz::store_path),
    ("query", gitloom_fuzz::query),
];

/// A tiny xorshift PRNG: reproducible mutations without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&[u8]] = &[
    b"---\n",
    b"title: ",
    b"\n",
    b": ",
    b"- ",
    b"[",
    b"]",
    b"{",
    b"}",
    b"&a ",
    b"*a",
    b"\"",
    b"'",
    b"\\",
    b"\0",
    b"\xff",
    b"..",
    b"/",
    b"facts/",
    b".md",
    b"NEAR(",
    b"OR ",
    b"*",
    b"^",
    b"## ",
    b"[[",
    b"]]",
    b"supersedes: ",
    b"created: 2026-01-01",
    b"ttl: 3d",
    b"\t",
    b"\r\n",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        let pos = rng.below(v.len() + 1);
        match rng.below(4) {
            0 if !v.is_empty() => {
                let end = (pos + rng.below(16)).min(v.len());
                v.drain(pos.min(v.len())..end);
            }
            1 => v.insert(pos, rng.next() as u8),
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(pos..pos, t.iter().copied());
            }
            _ if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            _ => v.push(b'x'),
        }
    }
    v
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let random: usize = args
        .iter()
        .position(|a| a == "--random")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut total = 0usize;
    for (name, target) in TARGETS {
        let seeds: Vec<Vec<u8>> = files(&root.join(name))
            .iter()
            .filter_map(|p| std::fs::read(p).ok())
            .collect();
        for s in &seeds {
            target(s);
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
        for i in 0..random {
            let base = seeds
                .get(i % seeds.len().max(1))
                .cloned()
                .unwrap_or_default();
            let input = mutate(&mut rng, &base);
            target(&input);
        }
        total += seeds.len() + random;
        println!("{name}: {} seeds + {random} mutated inputs ok", seeds.len());
    }
    println!("{total} passed, 0 failed");
}
