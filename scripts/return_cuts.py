#!/usr/bin/env python3
"""Simulates cuts of an answer's tail on per-query files (`eval ... --per-query`), for
issue 17's "return <= 5 %" target (BENCHMARKS.md, "Session 40 (issue 17)").

Each file's hits, fused scores and evidence are read from `explain`; a rule keeps some of
them; the kept list is scored as `gitloom-eval` scores it: P@1, R@5, R@10, R_all@5 in
questions (as changes against keeping everything) and return = mean of min(hits, 10) /
corpus size.

    python3 scripts/return_cuts.py NAME=FILE.jsonl ...
"""
import json
import sys

LIMIT = 10


def score(rows, rule):
    p1 = r5 = r10 = ra5 = 0
    ret = 0.0
    for r in rows:
        hits = (r.get("explain") or {}).get("hits") or []
        kept = rule(hits, r) if hits else []
        ret += min(len(kept), LIMIT) / max(r["corpus_size"], 1)
        if r["label"] != "answerable":
            continue
        gold = set(r["gold"])
        paths = [h["path"] for h in kept]
        p1 += bool(paths) and paths[0] in gold
        r5 += any(p in gold for p in paths[:5])
        r10 += any(p in gold for p in paths[:10])
        ra5 += gold <= set(paths[:5])
    return (p1, r5, r10, ra5, round(100 * ret / max(len(rows), 1), 2))


def share_of_top(r):
    """Keep a hit scoring at least r x the first hit's fused score."""
    return lambda hs, _: [h for h in hs if h["score"] >= r * hs[0]["score"]]


def context_below(r):
    """Drop a context hit (one weak bar) scoring below r x the first's."""
    return lambda hs, _: [
        h for h in hs
        if not h["evidence"].startswith("context") or h["score"] >= r * hs[0]["score"]
    ]


def arm_span(theta, coverage):
    """Keep a hit whose cue or body cosine lies at >= theta of the span between its
    arm's 50th candidate and its first, or whose lexical coverage is >= coverage."""
    def rule(hs, row):
        arms = {a["arm"]: [c[1] for c in a["candidates"]] for a in row["explain"]["arms"]}
        span = {}
        for a in ("cues", "bodies"):
            c = arms.get(a, [])
            span[a] = (c[0], c[-1]) if len(c) >= 2 and c[0] > c[-1] else None
        out = []
        for h in hs:
            ok = (h.get("coverage") or 0) >= coverage
            for a in ("cues", "bodies"):
                if a in h["arms"] and span[a]:
                    top, low = span[a]
                    ok = ok or (h["arms"][a]["score"] - low) / (top - low) >= theta
            if ok:
                out.append(h)
        return out
    return rule


RULES = (
    [(f"share {r}", share_of_top(r)) for r in (0.3, 0.35, 0.4, 0.45, 0.5)]
    + [(f"context below {r}", context_below(r)) for r in (0.5, 0.6, 0.7, 0.8, 1.01)]
    + [(f"arm span {t} cov {c}", arm_span(t, c)) for c in (0.5, 0.7, 1.01) for t in (0.3, 0.4, 0.5, 0.6)]
)


def main():
    stores = {}
    for arg in sys.argv[1:]:
        name, path = arg.split("=", 1)
        with open(path) as f:
            stores[name] = [json.loads(line) for line in f]
    print("rule | " + " | ".join(stores) + "   (dP@1, dR@5, dR@10, dR_all@5, return %)")
    base = {n: score(rows, lambda hs, _: hs) for n, rows in stores.items()}
    print("keep all | " + " | ".join(str(b) for b in base.values()))
    for label, rule in RULES:
        cells = []
        for n, rows in stores.items():
            m = score(rows, rule)
            cells.append(str(tuple(m[i] - base[n][i] for i in range(4)) + (m[4],)))
        print(f"{label} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
