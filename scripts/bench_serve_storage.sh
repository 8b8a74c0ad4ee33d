#!/usr/bin/env bash
# `gitloom serve --storage` on loopback S3: cold start, warm retrieve (every request
# revalidates) against the same namespace served from a local store, and HTTP write
# throughput on one namespace and across namespaces through two nodes.
#
# Needs an S3-compatible server and wrk, e.g. (as .ci/run does):
#   AWS_ACCESS_KEY_ID=gitloom-ci AWS_SECRET_ACCESS_KEY=gitloom-ci-secret weed mini -dir=/tmp/weed \
#     -ip=127.0.0.1 -ip.bind=127.0.0.1 -admin.ui=false -webdav=false -bucket=gitloom-test &
#   AWS_ENDPOINT_URL=http://127.0.0.1:8333 AWS_ALLOW_HTTP=true AWS_REGION=us-east-1 \
#   AWS_ACCESS_KEY_ID=gitloom-ci AWS_SECRET_ACCESS_KEY=gitloom-ci-secret \
#     scripts/bench_serve_storage.sh [path/to/gitloom]
# SIZE (default 10000) memories in the read namespace; WRITES (default 120) per write run.
set -euo pipefail
BIN=${1:-target/release/gitloom}
SIZE=${SIZE:-10000}
WRITES=${WRITES:-120}
BUCKET=${BUCKET:-gitloom-test}
URL="s3://$BUCKET/bench-serve-$(date +%s)-$$"
W=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"' EXIT
G=("$BIN" --embedder none)

KEY=$("${G[@]}" --storage "$URL" --json admin create-account bench |
  python3 -c "import json,sys;print(json.load(sys.stdin)['api_key'])")
"${G[@]}" synth "$W/corpus" --count "$SIZE" > /dev/null
echo "== seeding $SIZE memories: one push through the CLI, and a local store for comparison"
XDG_CACHE_HOME="$W/seed-cache" "${G[@]}" --storage "$URL/accounts/bench" --namespace big import "$W/corpus" > /dev/null
"${G[@]}" admin --data "$W/local" create-account bench --json > "$W/local-key.json"
LKEY=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['api_key'])" "$W/local-key.json")
mkdir -p "$W/local/accounts/bench/ns/big"
"${G[@]}" init "$W/local/accounts/bench/ns/big" > /dev/null
"${G[@]}" --repo "$W/local/accounts/bench/ns/big" import "$W/corpus" > /dev/null

serve() { # port data [--storage URL]
  "${G[@]}" "${@:3}" serve --addr "127.0.0.1:$1" --data "$2" --rate 1000000 --burst 1000000 2> "$2.err" &
  PIDS+=($!)
  for _ in $(seq 1 200); do curl -sf "127.0.0.1:$1/healthz" > /dev/null && return; sleep 0.05; done
  echo "node on $1 did not start"; cat "$2.err"; exit 1
}
serve 18301 "$W/node1" --storage "$URL"
serve 18302 "$W/node2" --storage "$URL"
serve 18303 "$W/local"

python3 "$(dirname "$0")/bench_queries.py" "$W" big

echo "== cold start: first request for the $SIZE-memory namespace on a node that never saw it"
curl -s -o /dev/null -w "node1 first retrieve: %{time_total} s\n" -H "Authorization: Bearer $KEY" \
  "127.0.0.1:18301/v1/namespaces/big/retrieve?q=warm"
curl -s -o /dev/null -w "node1 second retrieve (warm): %{time_total} s\n" -H "Authorization: Bearer $KEY" \
  "127.0.0.1:18301/v1/namespaces/big/retrieve?q=warm"
curl -s -o /dev/null -H "Authorization: Bearer $LKEY" "127.0.0.1:18303/v1/namespaces/big/retrieve?q=warm"

echo "== warm retrieve, 2 connections, rotating 100 queries: local store"
wrk -t1 -c2 -d10s --latency -s "$W/queries.lua" -H "Authorization: Bearer $LKEY" "http://127.0.0.1:18303" |
  grep -E "Requests/sec|50%|99%"
echo "== warm retrieve, 2 connections: --storage (every request revalidates: one conditional GET)"
wrk -t1 -c2 -d10s --latency -s "$W/queries.lua" -H "Authorization: Bearer $KEY" "http://127.0.0.1:18301" |
  grep -E "Requests/sec|50%|99%"

echo "== HTTP writes through the nodes ($WRITES per run; every write acknowledged by the head)"
python3 - "$KEY" "$WRITES" <<'PY'
import json, sys, threading, time, urllib.request
key, total = sys.argv[1], int(sys.argv[2])
nodes = ["http://127.0.0.1:18301", "http://127.0.0.1:18302"]

def call(method, url, body=None):
    req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.status

def run(label, clients, namespaces):
    for ns in namespaces:
        call("POST", nodes[0] + "/v1/namespaces", {"name": ns})
    per = total // clients
    def work(c):
        node, ns = nodes[c % len(nodes)], namespaces[c % len(namespaces)]
        for i in range(per):
            path = f"facts/bench/c{c}-{i}.md"
            body = {"path": path, "content": f"---\ntitle: Note {c} {i}\n---\nBody {c} {i}.\n"}
            assert call("POST", f"{node}/v1/namespaces/{ns}/memories", body) == 200
    t = time.perf_counter()
    threads = [threading.Thread(target=work, args=(c,)) for c in range(clients)]
    [th.start() for th in threads]
    [th.join() for th in threads]
    dt = time.perf_counter() - t
    print(f"{label}: {per * clients} writes in {dt:.2f} s = {per * clients / dt:.1f} writes/s")

stamp = str(int(time.time()))
run("1 client, 1 node, 1 namespace", 1, [f"w1-{stamp}"])
run("4 clients over 2 nodes, 1 namespace", 4, [f"w4-{stamp}"])
run("4 clients over 2 nodes, 4 namespaces", 4, [f"wa-{stamp}", f"wb-{stamp}", f"wc-{stamp}", f"wd-{stamp}"])
PY
