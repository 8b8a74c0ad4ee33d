#!/usr/bin/env python3
"""What a snippet costs on the main full-text table against a scratch copy of the rows.

The constant `POSTINGS_PER_ROW` in crates/index/src/snippets.rs comes from this script
(BENCHMARKS.md, "Session 46"). For 40 queries of one to three terms drawn from the
index's vocabulary (terms in more than MIN_DF files), ten rows at random among those a
query matches: the median time of the MATCH over the main table in the rows' rowid
range (the walk), and of copying the rows into `temp.snip` and running the MATCH there
(the copy; Python's own cost for its statements taken out). Prints one line a query
and a least-squares fit of the walk against the query terms' summed document
frequencies.

    gitloom synth --count 10000 /tmp/syn && gitloom --repo /tmp/s init
    GITLOOM_EMBEDDER=none gitloom --repo /tmp/s import /tmp/syn
    python3 scripts/snippet_cost.py /tmp/s/.gitloom/index.db [MIN_DF]

Needs numpy. Reads the index; writes only to the connection's temporary tables.
"""

import random
import sqlite3
import statistics
import sys
import time

import numpy as np

TOKENIZER = "porter unicode61 remove_diacritics 2"
SNIPPETS = (
    "snippet({t},5,'[',']','…',24), snippet({t},1,'[',']','…',24), "
    "snippet({t},0,'[',']','…',24), summary, title"
)


def median_us(f, n=15):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


def main():
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    min_df = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    db.executescript(
        f"""CREATE TEMP VIEW IF NOT EXISTS snip_rows AS
              SELECT rowid AS id, title, summary, cues, entities, tags, body FROM main.fts;
            CREATE VIRTUAL TABLE IF NOT EXISTS temp.snip USING fts5(
              title, summary, cues, entities, tags, body,
              content='snip_rows', content_rowid='id', tokenize='{TOKENIZER}');
            CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, fts, 'row');"""
    )
    vocab = db.execute("SELECT term, doc FROM temp.v WHERE doc > ?", (min_df,)).fetchall()
    random.seed(1)
    rows = []
    for _ in range(40):
        terms = random.sample(vocab, random.choice([1, 2, 3]))
        match = " OR ".join(f'"{t}"' for t, _ in terms)
        df = sum(d for _, d in terms)
        ids = [
            r[0]
            for r in db.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY random() LIMIT 10", (match,)
            )
        ]
        if len(ids) < 10:
            continue
        marks = ",".join("?" * len(ids))
        walk_sql = (
            f"SELECT rowid, {SNIPPETS.format(t='fts')} FROM fts WHERE fts MATCH ? "
            f"AND rowid BETWEEN ? AND ? AND +rowid IN ({marks})"
        )

        def walk():
            db.execute(walk_sql, [match, min(ids), max(ids)] + ids).fetchall()

        def copy():
            db.execute("BEGIN")
            for i in ids:
                db.execute(
                    "INSERT INTO temp.snip(rowid, title, summary, cues, entities, tags, body) "
                    "SELECT rowid, title, summary, cues, entities, tags, body "
                    "FROM main.fts WHERE rowid = ?",
                    (i,),
                )
            db.execute(
                f"SELECT rowid, {SNIPPETS.format(t='snip')} FROM snip WHERE snip MATCH ?", (match,)
            ).fetchall()
            db.execute("INSERT INTO temp.snip(snip) VALUES('delete-all')")
            db.execute("COMMIT")

        def overhead():
            db.execute("BEGIN")
            for i in ids:
                db.execute("SELECT ?", (i,)).fetchall()
            db.execute("COMMIT")

        rows.append((df, median_us(walk), median_us(copy) - median_us(overhead)))
    rows.sort()
    for df, w, c in rows:
        print(f"postings {df:6d}  walk {w:7.0f} us  copy {c:7.0f} us")
    fit = np.linalg.lstsq(
        np.array([[1.0, r[0]] for r in rows]), np.array([r[1] for r in rows]), rcond=None
    )[0]
    print(
        f"walk = {fit[0]:.0f} us + {fit[1]:.4f} us a posting; "
        f"copy median {statistics.median(r[2] for r in rows):.0f} us"
    )


if __name__ == "__main__":
    main()
