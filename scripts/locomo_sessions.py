#!/usr/bin/env python3
"""Writes each LoCoMo conversation as a `gitloom ingest` sessions file: one session
per LoCoMo session, dated by its `session_N_date_time`, every turn a user message
named by its speaker (the OpenAI `name` field), an image's caption appended as the
eval harness does (`crates/eval/src/e2e/data.rs`). Backs the ingestion throughput
figures in BENCHMARKS.md, measured with the product's own command.

usage: scripts/locomo_sessions.py LOCOMO_JSON OUT_DIR
       -> OUT_DIR/loc0.json … one file per conversation
"""
import datetime
import json
import os
import re
import sys


def main():
    data = json.load(open(sys.argv[1]))
    out_dir = sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for ci, c in enumerate(data):
        conv = c["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k)
        )
        sessions = []
        for n in numbers:
            raw = conv[f"session_{n}_date_time"]
            day = datetime.datetime.strptime(raw, "%I:%M %p on %d %B, %Y")
            messages = []
            for t in conv[f"session_{n}"]:
                text = t["text"]
                if t.get("blip_caption"):
                    text += f" (image: {t['blip_caption']})"
                messages.append({"role": "user", "name": t["speaker"], "content": text})
            sessions.append(
                {"id": f"c{ci}-s{n:02}", "date": day.strftime("%Y-%m-%d"), "messages": messages}
            )
        path = os.path.join(out_dir, f"loc{ci}.json")
        with open(path, "w") as f:
            json.dump(sessions, f)
        turns = sum(len(s["messages"]) for s in sessions)
        print(f"{path}: {len(sessions)} sessions, {turns} turns")


if __name__ == "__main__":
    main()
