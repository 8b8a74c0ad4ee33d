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


def main():
    store, bar, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    df = {}
    for f in glob.glob(os.path.join(store, "memories", "**", "*.md"), recursive=True):
        for w in set(words(open(f, encoding="utf-8").read())):
            df[w] = df.get(w, 0) + 1
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
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(store, out)
    os.makedirs(os.path.join(out, "memories", "vocab"), exist_ok=True)
    pairs = 0
    with open(os.path.join(out, "memories", "vocab", "auto.md"), "w", encoding="utf-8") as f:
        f.write("# nearest store words of the questions' unseen words\n")
        for i, w in enumerate(unseen):
            for j in np.argsort(-sims[i])[:NEIGHBOURS]:
                if sims[i, j] >= bar:
                    f.write(f"- {w}, {vocab[j]}\n")
                    pairs += 1
            print(w, " ".join(f"{vocab[j]}:{sims[i, j]:.2f}" for j in np.argsort(-sims[i])[:5]))
    print(json.dumps({"unseen_words": len(unseen), "vocabulary": len(vocab), "pairs": pairs}))


if __name__ == "__main__":
    main()
