#!/usr/bin/env python3
"""Measures one idea for paraphrased questions (BENCHMARKS.md, "Session 35"): a question
word that no memory of the store holds is widened to its thesaurus synonyms (WordNet, as
the `thesaurus` crate 0.5 embeds it) that the store does hold.

Like `vocab_neighbours.py`, it writes a copy of a probe corpus with those pairs as the
product's own alias groups (`memories/vocab/auto.md`), so `gitloom eval probe --corpus
OUT` measures the idea without new Rust, and only the corpus's questions' words are
widened: an upper bound of what the mechanism could add. The synonyms come from a
ten-line program over the crate, one word per line in, `word<TAB>syn|syn|…` out:

    cargo new thes && cd thes && cargo add thesaurus@0.5
    # src/main.rs:
    #   use std::io::BufRead;
    #   fn main() {
    #       for w in std::io::stdin().lock().lines().map_while(Result::ok) {
    #           println!("{}\\t{}", w, thesaurus::synonyms(&w).join("|"));
    #       }
    #   }
    cargo build --release
    python3 scripts/thesaurus_aliases.py thes/target/release/thes ../shared/data/probe-teacher /tmp/wn-probe-teacher
    gitloom --json eval probe --corpus /tmp/wn-probe-teacher
"""

import json
import os
import re
import subprocess
import sys

from vocab_neighbours import STOP, document_frequencies, words, write_aliases


def held_by(df, w):
    return w in df or (w + "s") in df


def forms(w):
    """The word and the base forms a plural or a tense could stand for."""
    out = [w]
    if w.endswith("ies"):
        out.append(w[:-3] + "y")
    if w.endswith("es"):
        out.append(w[:-2])
    if w.endswith("s"):
        out.append(w[:-1])
    if w.endswith("ed"):
        out += [w[:-2], w[:-1]]
    if w.endswith("ing"):
        out += [w[:-3], w[:-3] + "e"]
    return out


def main():
    dumper, store, out = sys.argv[1], sys.argv[2], sys.argv[3]
    df = document_frequencies(store)
    usable = lambda w: len(w) >= 3 and w not in STOP and not w.isdigit() and "'" not in w
    queries = [json.loads(l) for l in open(os.path.join(store, "queries.jsonl"), encoding="utf-8")]
    unseen = sorted({w for q in queries for w in words(q["query"]) if usable(w) and not held_by(df, w)})
    asked = sorted({f for w in unseen for f in forms(w)})
    dump = subprocess.run([dumper], input="\n".join(asked) + "\n", capture_output=True, text=True, check=True).stdout
    synonyms = {}
    for line in dump.splitlines():
        word, _, syns = line.partition("\t")
        synonyms[word] = [s.lower() for s in syns.split("|") if s]
    groups = []
    for w in unseen:
        keep = []
        for s in (s for form in forms(w) for s in synonyms.get(form, [])):
            # One word the store holds; a phrase of several is left out.
            if re.search(r"[\s-]", s) or s in STOP or not held_by(df, s) or s == w or s in keep:
                continue
            keep.append(s)
        if keep:
            groups.append((w, keep))
            print(w, "->", " ".join(keep))
    header = "thesaurus synonyms of the questions' unseen words that the store holds"
    pairs = write_aliases(store, out, header, groups)
    print(json.dumps({"unseen_words": len(unseen), "pairs": pairs}))


if __name__ == "__main__":
    main()
