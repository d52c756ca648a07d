#!/usr/bin/env bash
# Browser benchmark (not a test): the analysis workers' throughput in headless Chromium on a
# synthetic trace from examples/gen_trace/, as plain .json and .json.gz, read by one worker
# and by WORKERS workers (default 3: the page reads in parts from three cores), beside the CLI
# on one thread in the same run (ratios), with the peak memory of the renderer (page + workers) to show it stays bounded.
#   scripts/bench-web.sh [SIZE]      SIZE defaults to 500M; 3G shows bounded memory
# SKIP_BUILD=1 reuses dist/; RUNS=N repeats each file; traces are kept in bench-data/.
# PICK_AFTER_MS (picking the file that long after the page is ready) and THREADS=1 (CPU time by
# thread) pass through to tests/browser/bench.mjs.
# Writing gzip is slow (~10 MB/s of JSON), so for sizes in G the .json.gz run is skipped
# unless GZIP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-500M}
[ "${SKIP_BUILD:-}" = 1 ] || { scripts/build-web.sh && cargo build --release --bin tracesight; }
mkdir -p bench-data
json=bench-data/web-$SIZE.json
gz=bench-data/web-$SIZE.json.gz
[ -s "$json" ] || cargo run --release --example gen_trace -- --size "$SIZE" "$json"
files=("../../$json")
if [[ "$SIZE" != *G || "${GZIP:-}" = 1 ]]; then
  [ -s "$gz" ] || cargo run --release --example gen_trace -- --size "$SIZE" --gzip "$gz"
  files+=("../../$gz")
fi
cd tests/browser
[ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund
exec node bench.mjs "${files[@]}"
