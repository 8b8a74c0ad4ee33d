#!/usr/bin/env python3
"""How many int8 candidates the arena must rescore for its answer to be exact, on real
MiniLM vectors: per query, whether the int8 estimate's best K rows hold every one of
the exact (f32 cosine) best 200 and best 50, for several K. Backs `OVERSAMPLE` in
crates/embed/src/arena.rs (the engine asks for 200 rows per kind; OVERSAMPLE = 2 means
K = 400). Random unit vectors are a harsher case than texts and are not what it is
chosen on.

The vectors are the eval harness's shared vector cache (every text `gitloom eval`
embedded: LongMemEval sessions, LoCoMo turns, the probe personas' memories), read
straight from its SQLite file; stored texts (the int8 encoder's vectors) are the rows,
query vectors (f32) the queries. Needs numpy.

    python3 scripts/arena_recall.py ~/.cache/gitloom/eval-vectors.db
"""
import sqlite3
import sys

import numpy as np

SIZES = [30000, 87000]
QUERIES = 300
KS = [200, 250, 300, 400, 800]


def vectors(db, model, limit=None):
    sql = "SELECT vec FROM vectors WHERE model = ? ORDER BY hash"
    rows = db.execute(sql + (f" LIMIT {int(limit)}" if limit else ""), (model,)).fetchall()
    x = np.frombuffer(b"".join(r[0] for r in rows), dtype="<f4").reshape(len(rows), -1)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main():
    db = sqlite3.connect(sys.argv[1])
    models = [m for (m,) in db.execute("SELECT DISTINCT model FROM vectors")]
    stored = next(m for m in models if m.startswith("minilm") and m.endswith("/int8"))
    query_model = stored[: -len("/int8")]
    rows, queries = vectors(db, stored), vectors(db, query_model, QUERIES)
    rng = np.random.default_rng(2)
    print("| rows | K | exact best 200 all in int8's best K | exact best 50 |")
    print("|---|---|---|---|")
    for n in [s for s in SIZES if s <= len(rows)] or [len(rows)]:
        c = rows[rng.permutation(len(rows))[:n]]
        scale = np.abs(c).max(1, keepdims=True) / 127
        c8 = np.round(c / scale).astype(np.float32)
        held = {k: [] for k in KS}
        for q in queries:
            exact = np.argsort(-(c @ q), kind="stable")
            q8 = np.round(q / (np.abs(q).max() / 127)).astype(np.float32)
            est = np.argsort(-((c8 @ q8) * scale[:, 0]), kind="stable")
            for k in KS:
                cand = set(est[:k].tolist())
                held[k].append((cand >= set(exact[:200].tolist()), cand >= set(exact[:50].tolist())))
        for k in KS:
            h = np.array(held[k])
            print(f"| {n} | {k} | {h[:, 0].mean():.3f} | {h[:, 1].mean():.3f} |")


if __name__ == "__main__":
    main()
