#!/usr/bin/env python3
"""A reference implementation of all-MiniLM-L6-v2 in NumPy, to compare gitloom's
embedding throughput and vectors against (BENCHMARKS.md, "Speed").

The same safetensors weights and tokenizer as `gitloom model install` puts under
~/.local/share/gitloom/models/minilm-l6-v2; BERT forward pass in float32 on NumPy's
BLAS (OpenBLAS in the PyPI wheel, threaded over every core), batches of 32 texts
sorted by length and padded to the longest with an attention mask, mean pooling over
real tokens, L2 normalisation (as sentence-transformers does for this model).

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install numpy scipy safetensors tokenizers
    /tmp/ref/bin/python scripts/embed_reference.py TEXTS.jsonl [--out V.npy] [--raw-out V.f32] [--limit N]

TEXTS.jsonl: one JSON object per line with a "text" field, or one JSON string per
line (`cargo bench -p gitloom-embed --bench embed` runs this script itself when
GITLOOM_BENCH_PYTHON names a Python with these packages). Prints one JSON line: texts, tokens, wall and CPU seconds (all threads), texts/s.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
from safetensors.numpy import load_file
from scipy.special import erf
from tokenizers import Tokenizer

MAX_TOKENS = 256
BATCH = 32


def model_dir():
    base = os.environ.get("GITLOOM_MODEL_DIR")
    if base:
        return os.path.join(base, "minilm-l6-v2")
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.environ["HOME"], ".local", "share")
    return os.path.join(data, "gitloom", "models", "minilm-l6-v2")


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    # The exact (erf) GELU this model was trained with, vectorised by SciPy.
    return 0.5 * x * (1.0 + erf(x / np.float32(math.sqrt(2.0))))


class MiniLm:
    def __init__(self, d):
        self.w = load_file(os.path.join(d, "model.safetensors"))
        self.cfg = json.load(open(os.path.join(d, "config.json")))
        self.tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()
        self.heads = self.cfg["num_attention_heads"]
        self.eps = self.cfg["layer_norm_eps"]

    def t(self, name):
        return self.w[name]

    def forward(self, ids, mask):
        b, n = ids.shape
        w = self.t
        x = (
            w("embeddings.word_embeddings.weight")[ids]
            + w("embeddings.position_embeddings.weight")[np.arange(n)][None, :, :]
            + w("embeddings.token_type_embeddings.weight")[0][None, None, :]
        )
        x = layer_norm(x, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"), self.eps)
        h = self.heads
        dh = x.shape[-1] // h
        bias = ((1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32)
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def lin(v, name):
                return v @ w(p + name + ".weight").T + w(p + name + ".bias")

            q = lin(x, "attention.self.query").reshape(b, n, h, dh).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(b, n, h, dh).transpose(0, 2, 1, 3)
            v = lin(x, "attention.self.value").reshape(b, n, h, dh).transpose(0, 2, 1, 3)
            s = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(dh)) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, h * dh)
            x = layer_norm(
                lin(a, "attention.output.dense") + x,
                w(p + "attention.output.LayerNorm.weight"),
                w(p + "attention.output.LayerNorm.bias"),
                self.eps,
            )
            f = gelu(lin(x, "intermediate.dense"))
            x = layer_norm(
                lin(f, "output.dense") + x,
                w(p + "output.LayerNorm.weight"),
                w(p + "output.LayerNorm.bias"),
                self.eps,
            )
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed(self, texts):
        enc = self.tok.encode_batch(texts)
        seqs = [e.ids for e in enc]
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        out = np.zeros((len(seqs), self.cfg["hidden_size"]), dtype=np.float32)
        for s in range(0, len(order), BATCH):
            group = order[s : s + BATCH]
            n = max(len(seqs[i]) for i in group)
            ids = np.zeros((len(group), n), dtype=np.int64)
            mask = np.zeros((len(group), n), dtype=np.int64)
            for r, i in enumerate(group):
                ids[r, : len(seqs[i])] = seqs[i]
                mask[r, : len(seqs[i])] = 1
            out[group] = self.forward(ids, mask)
        return out, sum(len(s) for s in seqs)


def read_texts(path, limit):
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            v = json.loads(line)
            texts.append(v["text"] if isinstance(v, dict) else v)
            if limit and len(texts) >= limit:
                break
    return texts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("texts")
    ap.add_argument("--out", help="write the vectors as a .npy file")
    ap.add_argument("--raw-out", help="write the vectors as little-endian f32, row after row")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    texts = read_texts(args.texts, args.limit)
    m = MiniLm(model_dir())
    m.embed(texts[:8])  # warm up BLAS threads and caches
    t, c = time.perf_counter(), time.process_time()
    vecs, tokens = m.embed(texts)
    secs, cpu = time.perf_counter() - t, max(time.process_time() - c, 1e-3)
    if args.out:
        np.save(args.out, vecs)
    if args.raw_out:
        vecs.astype("<f4").tofile(args.raw_out)
    print(json.dumps({"impl": "numpy", "texts": len(texts), "tokens": tokens,
                      "seconds": round(secs, 3), "cpu_seconds": round(cpu, 3),
                      "texts_per_s": round(len(texts) / secs, 1),
                      "texts_per_cpu_s": round(len(texts) / cpu, 1)}))


if __name__ == "__main__":
    sys.exit(main())
