#!/usr/bin/env python3
"""Counts the ways the memories of ingested stores garble what was said, and, given a
second set of stores built from the same sessions, how many memories read differently.
Backs the counts of "Session 53" in BENCHMARKS.md.

Only a memory's own words are read: the turn a reply quotes (`In reply to X ("…"):`)
and other quoted text are what someone else said, as written.

usage: scripts/memory_text.py STORE... [--against STORE...]
       (stores paired in order with --against: the same sessions, another build)
"""
import os
import re
import sys

COUNTS = {
    "double preposition ('from in July')": re.compile(
        r"\b(from|till|until|since|for|to|of|by|before|after|during|at) (in|on) (?=[A-Z0-9])"
    ),
    "'the on' / 'the in' before a date": re.compile(r"\bthe (on|in) (?=[A-Z0-9])"),
    "'about around' before a date": re.compile(
        r"\b(about|around|roughly|nearly|almost) (around|on) (?=[0-9])"
    ),
    "a date opening its clause with 'on' or 'in'": re.compile(
        r"(?:^|[.!?] )(?:[Oo]n|[Ii]n) [0-9][^.]{0,30}? (?:is|was|will) "
    ),
    "a name twice in a row": re.compile(r"\b([A-Z][a-z]{2,}) \1\b"),
    "'you' with a verb joined to it": re.compile(r"\b[Yy]ou['\u2019](re|ve|ll|d)\b"),
}
FIRST_SECOND = set(
    "i i'm i've i'd i'll me my mine myself we we're our us you your you're".split()
)


def memories(store):
    """(key, title, body) of every memory file of `store` (transcripts left out), keyed
    by its `subject:` (who, tier, topic, session and message: the same memory in
    another build, whose title and so file name may differ), else its path."""
    for d, dirs, files in os.walk(store):
        dirs[:] = [x for x in dirs if x not in (".git", ".gitloom", "sessions")]
        for f in sorted(files):
            if not f.endswith(".md"):
                continue
            path = os.path.join(d, f)
            text = open(path, encoding="utf-8").read()
            front, _, body = text.partition("\n---\n")
            title = re.search(r"^title: (.*)$", front, re.M)
            title = title.group(1).strip().strip('"') if title else ""
            key = re.search(r"^subject: (.*)$", front, re.M)
            yield key.group(1) if key else os.path.relpath(path, store), title, body


def own_words(body):
    body = re.sub(r'\("[^"]*"\)', "", body)
    return re.sub(r'"[^"]*"', "", body)


def count(stores):
    totals = {k: 0 for k in COUNTS}
    titles = person_titles = 0
    for store in stores:
        for _, title, body in memories(store):
            said = own_words(body)
            for k, pattern in COUNTS.items():
                totals[k] += len(pattern.findall(said))
            titles += 1
            words = {re.sub(r"[^\w']", "", w.replace("\u2019", "'")).lower() for w in title.split()}
            person_titles += bool(words & FIRST_SECOND)
    print(f"{titles} memories")
    for k, n in totals.items():
        print(f"  {k}: {n}")
    print(f"  titles with a first- or second-person word: {person_titles}")


def compare(before, after):
    changed = stops_only = 0
    for a, b in zip(before, after):
        old = {p: body for p, _, body in memories(a)}
        new = {p: body for p, _, body in memories(b)}
        for p in old.keys() & new.keys():
            if old[p] != new[p]:
                changed += 1
                stops_only += old[p].replace(".", "") == new[p].replace(".", "")
    print(f"memories that read differently: {changed} ({stops_only} only by full stops)")


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        sys.exit(__doc__)
    if "--against" in args:
        i = args.index("--against")
        stores, against = args[:i], args[i + 1 :]
        if len(stores) != len(against):
            sys.exit("memory_text.py: give as many stores after --against as before it")
        count(stores)
        compare(against, stores)
    else:
        count(args)


if __name__ == "__main__":
    main()
