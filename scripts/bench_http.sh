#!/usr/bin/env bash
# retrieve over HTTP on a 10k-memory namespace, under wrk (apt-get install wrk).
# Usage: [CONNS=8] scripts/bench_http.sh [path/to/gitloom] [embedder]   (default: release binary, none)
# Prints wrk's summary and latency distribution for rotating retrieve queries, and a
# /healthz baseline (the HTTP stack alone).
set -euo pipefail
BIN=${1:-target/release/gitloom}
EMBEDDER=${2:-none}
PORT=${PORT:-18181}
CONNS=${CONNS:-8}
W=$(mktemp -d)
trap 'kill "${PID:-0}" 2>/dev/null || true; rm -rf "$W"' EXIT
"$BIN" admin --data "$W/data" create-account bench --json > "$W/key.json"
KEY=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['api_key'])" "$W/key.json")
"$BIN" synth "$W/corpus" --count 10000 > /dev/null
NS="$W/data/accounts/bench/ns/bench"
mkdir -p "$NS"
"$BIN" --embedder "$EMBEDDER" init "$NS" > /dev/null
"$BIN" --embedder "$EMBEDDER" --repo "$NS" import "$W/corpus" > /dev/null
"$BIN" --embedder "$EMBEDDER" serve --addr "127.0.0.1:$PORT" --data "$W/data" --rate 100000 --burst 100000 2> "$W/serve.err" &
PID=$!
for _ in $(seq 1 100); do curl -sf "127.0.0.1:$PORT/healthz" > /dev/null && break; sleep 0.1; done
# 100 queries: the first cue of 100 memories picked with a fixed seed.
python3 "$(dirname "$0")/bench_queries.py" "$W" bench
# Warm the namespace (open its engines) before measuring.
curl -sf -H "Authorization: Bearer $KEY" "127.0.0.1:$PORT/v1/namespaces/bench/retrieve?q=warm" > /dev/null
echo "== retrieve (rotating 100 queries), 10k memories, embedder=$EMBEDDER"
wrk -t2 -c"$CONNS" -d15s --latency -s "$W/queries.lua" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT"
echo "== /healthz (HTTP stack alone)"
wrk -t2 -c8 -d5s --latency "http://127.0.0.1:$PORT/healthz"
