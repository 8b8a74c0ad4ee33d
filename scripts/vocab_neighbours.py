#!/usr/bin/env python3
"""Measures one idea for paraphrased questions (BENCHMARKS.md, "Session 34"): a query
word that no memory of the store holds is widened, in the lexical arm, to the store's
own words nearest to it by MiniLM (each word embedded alone).

It writes a copy of a probe corpus with those pairs as alias groups
(`memories/vocab/auto.md`, the format `gitloom_index::Vocab` reads: the product's own
widening), so `gitloom eval probe --corpus OUT` measures the idea without new Rust.
Only words of the corpus's questions are widened: this is an upper bound of what the
mechanism could do, not a product.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install numpy scipy safetensors tokenizers
    /tmp/ref/bin/python scripts/vocab_neighbours.py ../shared/data/probe-teacher 0.6 /tmp/v60-teacher
    gitloom --json eval probe --corpus /tmp/v60-teacher
"""

import glob
import json
import os
import re
import shutil
import sys

STOP = set(
    """a about after again all also am an and any are as at be been before being but by can
    could did do does doing down during each for from had has have having he her here hers
    him his how i i'm if in into is it its just me more most my no nor not now of off on once
    only or other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your whats whens wheres whos ive im got
    get""".split()
)
NEIGHBOURS = 3


def words(text):
    return re.findall(r"[a-zà-ÿ0-9']+", text.lower())


def document_frequencies(store):
    """How many of the corpus's memory files hold each word."""
    df = {}
    for f in glob.glob(os.path.join(store, "memories", "**", "*.md"), recursive=True):
        for w in set(words(open(f, encoding="utf-8").read())):
            df[w] = df.get(w, 0) + 1
    return df


def write_aliases(store, out, header, groups):
    """A copy of the corpus at `out` whose `memories/vocab/auto.md` holds `groups`
    (a word and the words it is widened to) as the product's alias groups; returns
    how many pairs were written."""
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(store, out)
    os.makedirs(os.path.join(out, "memories", "vocab"), exist_ok=True)
    pairs = 0
    with open(os.path.join(out, "memories", "vocab", "auto.md"), "w", encoding="utf-8") as f:
        f.write(f"# {header}\n")
        for word, widened in groups:
            if widened:
                f.write("- " + ", ".join([word] + widened) + "\n")
                pairs += len(widened)
    return pairs


def main():
    store, bar, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    df = document_frequencies(store)
    usable = lambda w: len(w) >= 3 and w not in STOP and not w.isdigit() and "'" not in w
    vocab = [w for w in df if usable(w)]
    queries = [json.loads(l) for l in open(os.path.join(store, "queries.jsonl"), encoding="utf-8")]
    unseen = sorted({w for q in queries for w in words(q["query"]) if usable(w) and w not in df})
    # NumPy and the reference model only here: `thesaurus_aliases.py` imports this
    # module's word splitting without them.
    import numpy as np

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from embed_reference import MiniLm, model_dir

    model = MiniLm(model_dir())
    v, _ = model.embed(vocab)
    q, _ = model.embed(unseen)
    sims = q @ v.T
    groups = []
    for i, w in enumerate(unseen):
        # One pair per neighbour, as first measured.
        for j in np.argsort(-sims[i])[:NEIGHBOURS]:
            if sims[i, j] >= bar:
                groups.append((w, [vocab[j]]))
        print(w, " ".join(f"{vocab[j]}:{sims[i, j]:.2f}" for j in np.argsort(-sims[i])[:5]))
    pairs = write_aliases(store, out, "nearest store words of the questions' unseen words", groups)
    print(json.dumps({"unseen_words": len(unseen), "vocabulary": len(vocab), "pairs": pairs}))


if __name__ == "__main__":
    main()
