#!/usr/bin/env python3
"""Word-level support of a question by its top hit (BENCHMARKS.md, "Session 16 (issue 17)").

For every probe persona: the store is imported, each question asked with
`gitloom --json retrieve --explain`, and for the top kept hit every content word of the
question that the hit's file does not contain is embedded alone (MiniLM, NumPy, from
`embed_reference.py`) and scored by its best cosine against the hit's title, cue and
body lines. The question's weakest word is its support. Prints one line per question
(GOOD: top hit gold, BAD: answerable, top hit not gold, UNA: unanswerable) and the
counts under a range of bars. A measurement that was not built into the read path.

With `--mask` (BENCHMARKS.md, "Session 35"), a lacking word's support is instead how much
it adds to the whole question's best cosine against the hit's lines: the question's
cosine less that of the question with the word taken out (a word that pulls the question
towards the hit adds; one the hit does not answer takes away).

    /tmp/ref/bin/python scripts/term_support.py target/release/gitloom ../shared/data [--mask]
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from embed_reference import MiniLm, model_dir  # noqa: E402

PERSONAS = ["probe", "probe-sre", "probe-teacher", "probe-nurse"]
# The product's stopwords (crates/model/src/text.rs), as far as questions use them.
STOP = set("""a an the some any all each every other such do does did doing done is am are
was were be been being have has had having will would can could should shall may might must
get got i me my mine myself you your yours yourself we us our ours he him his she her hers it
its itself they them their theirs this that these those there here what which who whom whose
where when why how of in on at to for with from by about as into onto and or but if than then
so not no nor also just very too up out over s t d ll ve re m don whats whos wheres whens hows
whys thats theres im ive""".split())


def words(s):
    return re.findall(r"[a-z0-9à-ÿ]+", s.lower())


def lines(path):
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line == "---" or re.match(r"^[a-z_]+:\s*\S*$", line):
            continue
        out.append(re.sub(r"^(- |title: |summary: )", "", line)[:300])
    return out


def main():
    gitloom, data = sys.argv[1], sys.argv[2]
    mask = "--mask" in sys.argv[3:]
    model = MiniLm(model_dir())
    cache = {}

    def embed(texts):
        need = [t for t in texts if t not in cache]
        if need:
            for t, v in zip(need, model.embed(need)[0]):
                cache[t] = v
        return np.array([cache[t] for t in texts])

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for persona in PERSONAS:
            repo = os.path.join(tmp, persona)
            subprocess.run([gitloom, "init", repo], check=True, capture_output=True)
            subprocess.run([gitloom, "--repo", repo, "import", os.path.join(data, persona, "memories")],
                           check=True, capture_output=True)
            for line in open(os.path.join(data, persona, "queries.jsonl"), encoding="utf-8"):
                q = json.loads(line)
                out = subprocess.run([gitloom, "--repo", repo, "--json", "retrieve", q["query"], "--explain"],
                                     check=True, capture_output=True, text=True).stdout
                kept = [j for j in json.loads(out)["judged"] if j["verdict"] == "kept"]
                if not kept:
                    continue
                top = kept[0]
                gold = q.get("gold") or []
                label = "UNA" if not gold else ("GOOD" if top["path"] in gold else "BAD")
                path = os.path.join(repo, top["path"])
                held = set(words(open(path, encoding="utf-8").read())) | set(top.get("matched_terms") or [])
                lacking = [w for w in dict.fromkeys(words(q["query"]))
                           if w not in STOP and len(w) > 1 and w not in held]
                unit = embed(lines(path))
                if mask:
                    whole = float((embed([q["query"]]) @ unit.T).max())
                    support = {}
                    for w in lacking:
                        rest = re.sub(r"\s+", " ", re.sub(r"\b" + re.escape(w) + r"\b", " ", q["query"].lower())).strip()
                        support[w] = whole - float((embed([rest]) @ unit.T).max())
                else:
                    support = {w: float((embed([w]) @ unit.T).max()) for w in lacking}
                weakest = min(support.values()) if support else 1.0
                rows.append((label, weakest))
                print(label, persona, q["query"], round(weakest, 3),
                      {w: round(v, 2) for w, v in support.items()}, flush=True)
    for bar in (-0.05, -0.02, 0.0, 0.02) if mask else (0.12, 0.16, 0.20, 0.25):
        c = collections.Counter((label, weakest < bar) for label, weakest in rows)
        print(bar, {f"{label} {'under' if under else 'over'}": n for (label, under), n in sorted(c.items())})


if __name__ == "__main__":
    main()
