#!/usr/bin/env python3
"""How many rows an exact 4-bit prefilter would leave the int8 pass to score, on real
MiniLM vectors (measured for issue 20; nothing in the product uses it yet).

The idea: each int8 row r8 (per-row scale s, |r8| <= 127) also kept as 4 bits,
r4 = clamp(round(r8 / 17), -7, 7), with its error's norm ||r8 - 17 r4||. For the int8
query q8, q8 . r8 = 17 (q8 . r4) + q8 . e <= 17 (q8 . r4) + ||q8|| ||e|| (Cauchy-Schwarz),
so s times that bound is never below the row's int8 score. A row whose bound is under
the kind's current worst kept int8 score (the scan's `bounds`) cannot be kept, so it
need not be read in int8 at all, and the scan's answer stays the same bit for bit.
This prints the share of rows whose bound still reaches the final 400th best int8
score (OVERSAMPLE x 200, the engine's per-kind cap): the rows the int8 pass would
still read, on top of every row's 192 bytes of nibbles (the scan's bound rises while
it runs, so early pieces keep more).

    python3 scripts/int4_bound.py ~/.cache/gitloom/eval-vectors.db
"""
import sqlite3
import sys

import numpy as np

SIZES = [20000, 40000, 86000]
QUERIES = 100
KEEP = 400
STEP = 17


def main():
    db = sqlite3.connect(sys.argv[1])
    (model,) = db.execute(
        "SELECT model FROM vectors WHERE model LIKE 'minilm%/int8' LIMIT 1"
    ).fetchone()
    rows = db.execute("SELECT vec FROM vectors WHERE model = ? ORDER BY hash", (model,))
    x = np.frombuffer(b"".join(r[0] for r in rows), dtype="<f4").reshape(-1, 384)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    order = np.random.default_rng(1).permutation(len(x))
    # Stored texts stand in for the queries too (the cache keeps no query vectors).
    queries = x[order[:QUERIES]]
    print("| rows | rows the int8 pass still reads: median | p90 | most |")
    print("|---|---|---|---|")
    for n in SIZES:
        r = x[order[QUERIES : QUERIES + n]]
        scale = np.abs(r).max(1) / 127
        r8 = np.clip(np.round(r / scale[:, None]), -127, 127).astype(np.int64)
        r4 = np.clip(np.round(r8 / STEP), -7, 7).astype(np.int64)
        err = np.sqrt(((r8 - STEP * r4) ** 2).sum(1))
        kept = []
        for q in queries:
            q8 = np.clip(np.round(q / (np.abs(q).max() / 127)), -127, 127).astype(np.int64)
            score = scale * (r8 @ q8)
            bound = scale * (STEP * (r4 @ q8) + np.linalg.norm(q8) * err)
            worst = np.sort(score)[-KEEP]
            assert (bound >= score - 1e-9).all()
            kept.append((bound >= worst).mean())
        print(
            f"| {len(r)} | {np.median(kept):.3f} | {np.percentile(kept, 90):.3f} | {max(kept):.3f} |"
        )


if __name__ == "__main__":
    main()
