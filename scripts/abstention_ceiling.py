#!/usr/bin/env python3
"""How far one bar on the first hit could take abstention (issue 17, failure class 4).

Reads the per-query files of `gitloom --json eval probe --per-query FILE` (read path,
`explain` on every query), one per persona, and asks: if the read path abstained
whenever its first hit scored under a bar `t`, what abstention F1 would each store
reach, for the best `t` chosen on that store itself (an oracle, the ceiling of any such
bar) and for `t` chosen on the other stores (leave one persona out)? Three scores of
the first hit are tried: its fused score, its best cosine (cue or body) and that cosine
plus half its lexical coverage. A bar of 0 is the shipped behaviour: the judge's own
floor has already refused what it refuses.

    for p in probe probe-sre probe-teacher probe-nurse; do
      gitloom --json eval probe --corpus ../shared/data/$p --per-query /tmp/rp/$p.jsonl
    done
    python3 scripts/abstention_ceiling.py /tmp/rp/*.jsonl

A store's abstention F1 counts an unanswerable question that returned nothing as a
true positive, an answerable one that returned nothing as a false positive (a false
abstention) and an unanswerable one that returned hits as a false negative.
"""
import json
import os
import sys

BARS = [i / 100 for i in range(0, 151)]


def first_hit(q):
    hits = (q.get("explain") or {}).get("hits") or []
    if not hits:
        return None
    h = hits[0]
    arms = h.get("arms", {})
    cosine = max(arms.get("cues", {}).get("score", 0.0), arms.get("bodies", {}).get("score", 0.0))
    coverage = h.get("coverage") or 0.0
    return {"fused": h["score"], "cosine": cosine, "cosine+coverage/2": cosine + 0.5 * coverage}


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            q = json.loads(line)
            rows.append((q["label"] != "answerable", first_hit(q)))
    return rows


def f1(rows, feature, bar):
    tp = fp = fn = 0
    for unanswerable, hit in rows:
        abstains = hit is None or hit[feature] < bar
        if unanswerable and abstains:
            tp += 1
        elif abstains:
            fp += 1
        elif unanswerable:
            fn += 1
    return (2 * tp / (2 * tp + fp + fn) if tp else 0.0), fp


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    stores = {os.path.basename(p).removesuffix(".jsonl"): load(p) for p in sys.argv[1:]}
    for feature in ["fused", "cosine", "cosine+coverage/2"]:
        print(f"first hit's {feature}")
        print("| store | shipped F1 (false abst.) | best bar on the store | its F1 (false abst.) | bar from the others | its F1 (false abst.) |")
        print("|---|---|---|---|---|---|")
        for name, rows in stores.items():
            now = f1(rows, feature, 0.0)
            best = max(BARS, key=lambda t: (f1(rows, feature, t)[0], -t))
            others = [r for n, r in stores.items() if n != name]
            lopo = max(BARS, key=lambda t: (sum(f1(r, feature, t)[0] for r in others), -t))
            b, lo = f1(rows, feature, best), f1(rows, feature, lopo)
            print(f"| {name} | {now[0]:.3f} ({now[1]}) | {best:.2f} | {b[0]:.3f} ({b[1]}) | {lopo:.2f} | {lo[0]:.3f} ({lo[1]}) |")
        print()


if __name__ == "__main__":
    main()
