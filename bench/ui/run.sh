#!/usr/bin/env bash
# UI benchmark (not a test): seeds a finished run of EVENTS events (default
# 100,000) into a fresh data directory through the real store, starts
# `agenthub serve` on it, opens the run in the system Chromium and measures
# time to the first painted rows, history load, scrolling, the JS heap after
# scrolling, and opening a 10,000-line diff. Prints a summary and the JSON.
#
#   make build && bench/ui/run.sh            # 100,000 events, 3 runs
#   EVENTS=20000 RUNS=1 bench/ui/run.sh
#
# Env: AGENTHUB_BIN (default build/bin/agenthub), CHROMIUM (/usr/bin/chromium),
# BENCH_ARTIFACTS (screenshots; default artifacts/bench-ui).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
EVENTS=${EVENTS:-100000}
RUNS=${RUNS:-3}
export AGENTHUB_BIN=${AGENTHUB_BIN:-$ROOT/build/bin/agenthub}
export BENCH_ARTIFACTS=${BENCH_ARTIFACTS:-$ROOT/artifacts/bench-ui}
if [[ ! -x $AGENTHUB_BIN ]]; then
  echo "no $AGENTHUB_BIN: run 'make build' first" >&2
  exit 1
fi
[[ -d frontend/node_modules/playwright-core ]] || (cd frontend && npm install --no-audit --no-fund)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/ws" "$BENCH_ARTIFACTS"
go build -tags sqlite_fts5 -o "$scratch/seed" ./bench/ui/seed
t0=$(date +%s%N)
run_id=$("$scratch/seed" -home "$scratch/home" -workspace "$scratch/ws" -events "$EVENTS" 2>/dev/null)
echo "seeded $EVENTS events into $run_id in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
node bench/ui/bench.mjs --home "$scratch/home" --run "$run_id" --events "$EVENTS" --runs "$RUNS"
