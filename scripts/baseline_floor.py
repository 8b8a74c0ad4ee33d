#!/usr/bin/env python3
"""The floor of several gate baselines, section by section: for every rate the lowest
value any of them holds, for a rise-is-worse figure (corpus_return_ratio,
false_abstentions, catch_all_share) the highest. Counts and strings must agree.

MiniLM embeds stored texts in int8 on CPUs with AVX-512 VNNI and in f32 elsewhere
(BENCHMARKS.md, "Session 38"), and CI may run on either; the committed baseline is the
floor of the two precisions' figures, so the gate catches a regression on both:

    cargo run -p gitloom -- --embedder minilm-f32 eval gate --update --baseline /tmp/f32.json
    cargo run -p gitloom -- --embedder minilm-int8 eval gate --update --baseline /tmp/int8.json
    python3 scripts/baseline_floor.py /tmp/f32.json /tmp/int8.json > eval/baseline.json
"""
import json
import sys

LOWER_IS_BETTER = {"corpus_return_ratio", "false_abstentions", "catch_all_share"}
EXACT = {"queries", "answerable", "unanswerable", "skipped"}


def floor(values, key, path):
    first = values[0]
    if isinstance(first, dict):
        keys = [k for k in first if all(isinstance(v, dict) and k in v for v in values)]
        return {k: floor([v[k] for v in values], k, f"{path}.{k}") for k in keys}
    if isinstance(first, bool) or not isinstance(first, (int, float)):
        return first
    if key in EXACT:
        if any(v != first for v in values):
            sys.exit(f"{path}: counts differ between baselines: {values}")
        return first
    return max(values) if key in LOWER_IS_BETTER else min(values)


def main():
    files = sys.argv[1:]
    if len(files) < 2:
        sys.exit("usage: baseline_floor.py BASELINE BASELINE [...]")
    docs = [json.load(open(f)) for f in files]
    out = {}
    for section in docs[0]:
        have = [d[section] for d in docs if section in d]
        out[section] = floor(have, section, section)
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
