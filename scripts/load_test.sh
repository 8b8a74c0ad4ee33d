#!/usr/bin/env bash
# A bounded load test of `gitloom serve` on loopback; stops by itself (each phase has
# a fixed duration or count) and kills the server it started. Figures: BENCHMARKS.md,
# "Server under load".
#
#   scripts/load_test.sh [SECONDS] [CLIENTS] [SEED_MEMORIES] [JOBS]
#   (defaults: 30 s, 8 clients, 1000 memories, 10000 jobs; EMBEDDER=none|default,
#   default: default, the installed MiniLM as `gitloom serve` uses it)
#
# Phases:
#   1. mixed: CLIENTS clients for SECONDS, half writing (remember a new subject, each
#      client its own topic), half retrieving (first cues of the seed memories);
#      requests/s, write and retrieve p50/p90/p99, statuses.
#   2. jobs: JOBS `log` jobs from one key, each polled to its end; the server's
#      resident memory (VmRSS) idle, after the mixed phase, and after the jobs.
# Prints one JSON document per phase and the RSS figures. Needs python3 (stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_RUN=${1:-30}
CLIENTS=${2:-8}
SEED=${3:-1000}
JOBS=${4:-10000}
EMBEDDER=${EMBEDDER:-default}
PORT=${PORT:-18919}
cargo build --release -q -p gitloom -p gitloom-server --example load
BIN=target/release/gitloom
LOAD=target/release/examples/load
W=$(mktemp -d)
PID=""
cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$W"
}
trap cleanup EXIT

rss() { awk '/^VmRSS/ {print $2 " kB"}' "/proc/$PID/status"; }

"$BIN" admin --data "$W/data" --json create-account load > "$W/key.json"
KEY=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['api_key'])" "$W/key.json")
"$BIN" synth "$W/corpus" --count "$SEED" > /dev/null
NS="$W/data/accounts/load/ns/load"
mkdir -p "$NS"
"$BIN" --embedder "$EMBEDDER" init "$NS" > /dev/null
"$BIN" --embedder "$EMBEDDER" --repo "$NS" import "$W/corpus" > /dev/null
python3 - "$W" <<'PY'
import glob, random, re, sys
w = sys.argv[1]
random.seed(7)
qs = []
for f in sorted(glob.glob(f"{w}/corpus/**/*.md", recursive=True)):
    m = re.search(r"cues:\n  - (.*)\n", open(f).read())
    if m:
        qs.append(m.group(1))
random.shuffle(qs)
open(f"{w}/queries.txt", "w").write("\n".join(qs[:200]) + "\n")
PY

# Loopback only; the rate limit is raised so the server, not the limiter, is measured.
"$BIN" --embedder "$EMBEDDER" serve --addr "127.0.0.1:$PORT" --data "$W/data" \
  --rate 100000 --burst 100000 --jobs-running 4 2> "$W/serve.err" &
PID=$!
for _ in $(seq 1 200); do
  curl -sf "127.0.0.1:$PORT/healthz" > /dev/null && break
  sleep 0.1
done
URL="http://127.0.0.1:$PORT"
# Open the namespace (its engines, the embedding model) before measuring.
curl -sf -H "Authorization: Bearer $KEY" "$URL/v1/namespaces/load/retrieve?q=warm" > /dev/null
echo "== idle: server RSS $(rss)"
echo "== mixed: $CLIENTS clients, ${SECONDS_RUN}s, $SEED seed memories, embedder=$EMBEDDER"
"$LOAD" mixed "$URL" "$KEY" load "$CLIENTS" "$SECONDS_RUN" "$W/queries.txt"
echo "== after mixed: server RSS $(rss)"
echo "== jobs: $JOBS log jobs from one key"
"$LOAD" jobs "$URL" "$KEY" load "$JOBS"
echo "== after jobs: server RSS $(rss)"
if grep -m5 -E 'panicked|ERROR' "$W/serve.err"; then echo "== (the server logged the failures above)"; else echo "== server log: no failures"; fi
