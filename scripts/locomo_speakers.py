#!/usr/bin/env python3
"""How often a LoCoMo question that names one speaker is answered in that speaker's
turns, and (given a `--per-query` file from `gitloom eval locomo`) what share of the
top-10 hits of such questions are that speaker's turns. Backs the `priors.named`
figures in BENCHMARKS.md.

usage: scripts/locomo_speakers.py LOCOMO_JSON [PER_QUERY_JSONL]
"""
import json
import sys


def main():
    data = json.load(open(sys.argv[1]))
    speaker, names, named_of = {}, {}, {}
    for c in data:
        conv = c["conversation"]
        names[c["sample_id"]] = [conv["speaker_a"], conv["speaker_b"]]
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    speaker[(c["sample_id"], t["dia_id"])] = t["speaker"]
        for i, qa in enumerate(c["qa"]):
            q = qa["question"].lower()
            named = [n for n in names[c["sample_id"]] if n.lower() in q]
            if qa.get("category") != 5 and qa.get("evidence") and len(named) == 1:
                named_of[f"{c['sample_id']}:q{i}"] = (named[0], qa["evidence"])
    said = sum(
        1
        for key, (name, evidence) in named_of.items()
        if any(
            speaker.get((key.split(":")[0], e.strip())) == name
            for ev in evidence
            for e in ev.split(";")
        )
    )
    print(f"answerable questions naming one speaker: {len(named_of)}")
    print(f"  with evidence spoken by that speaker: {said}")
    if len(sys.argv) > 2:
        own = other = 0
        for line in open(sys.argv[2]):
            r = json.loads(line)
            if r["id"] not in named_of:
                continue
            name = named_of[r["id"]][0]
            for h in r["hits"][:10]:
                if speaker.get((r["group"], h.get("id"))) == name:
                    own += 1
                else:
                    other += 1
        print(f"top-10 hits of those questions by the named speaker: {own / max(own + other, 1):.1%}")


if __name__ == "__main__":
    main()
