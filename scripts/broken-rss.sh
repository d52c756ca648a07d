#!/usr/bin/env bash
# Peak RSS and wall time of the CLI on every entry of the broken-input corpus (generated into
# bench-data/broken by examples/broken_corpus.rs; ~600 MB on disk). Each run is limited to
# 300 s (a hang fails). Prints: entry, exit status, peak RSS (MB), seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bench-data/broken}
nice cargo build --release --bin tracesight --example broken_corpus
[ -f "$dir/tiny-events-10m.json" ] || nice target/release/examples/broken_corpus "$dir" >/dev/null
printf '%-40s %5s %9s %8s\n' entry exit rss_mb secs
worst=0
for f in "$dir"/*; do
  log=$(mktemp)
  set +e
  timeout 300 /usr/bin/time -v target/release/tracesight --json "$f" >/dev/null 2>"$log"
  code=$?
  set -e
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  printf '%-40s %5s %9.1f %8s\n' "$(basename "$f")" "$code" "$(echo "${rss:-0} / 1024" | bc -l)" "$wall"
  [ "${rss:-0}" -gt "$worst" ] && worst=$rss
  [ "$code" -le 1 ] || { echo "FAIL: $f exited $code" >&2; exit 1; }
  rm -f "$log"
done
echo "worst peak RSS: $((worst / 1024)) MB"
# The row limit (src/limits.rs) bounds memory; inputs that fill it (a gzip bomb, millions of
# tiny kernels) take about 230 MB. LIMIT_MB changes the bar.
limit=${LIMIT_MB:-300}
[ "$worst" -lt $((limit * 1024)) ] || { echo "FAIL: over $limit MB" >&2; exit 1; }
