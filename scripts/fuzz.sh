#!/usr/bin/env bash
# Fuzzes every target for SECONDS each (default 60): scripts/fuzz.sh [SECONDS] [TARGET...]
# Targets: report (bytes -> Report), report_gzip (gzip vs plain), split (parts joined vs one
# reading), scanner (scanner vs serde_json), structural (the
# vectorised container scan vs its scalar reference), share (share-link decoder). Seeds come from
# scripts/fuzz-seeds.py (fixtures and the first kilobytes of ../shared/traces when present). Crashes land in fuzz/artifacts/<target>/;
# a fixed one becomes a regression case in tests/broken.rs or src/input/formats/chrome_json/tests.rs.
# Uses cargo-fuzz's instrumentation flags directly (libFuzzer via libfuzzer-sys), so neither
# cargo-fuzz nor a nightly toolchain is required; `cargo fuzz run TARGET` works too.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(report report_gzip split scanner structural share)
toolchain=()
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then toolchain=(+nightly); fi
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-sanitizer-coverage-stack-depth --cfg fuzzing"
# An explicit --target keeps the instrumentation off build scripts (as cargo-fuzz does).
host=$(rustc "${toolchain[@]}" -vV | sed -n 's/^host: //p')
nice cargo "${toolchain[@]}" build --release --manifest-path fuzz/Cargo.toml --target-dir fuzz/target \
  --target "$host" --bins
python3 scripts/fuzz-seeds.py >&2
status=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/artifacts/$t" "fuzz/corpus/$t"
  echo "== $t: ${secs}s" >&2
  nice "fuzz/target/$host/release/$t" "fuzz/corpus/$t" -max_total_time="$secs" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" \
    >"fuzz/artifacts/$t.log" 2>&1 || status=1
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "fuzz/artifacts/$t.log" || true
done
if [ "$status" != 0 ] || [ -n "$(find fuzz/artifacts -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \))" ]; then
  echo "fuzz: a target failed; see fuzz/artifacts/" >&2
  exit 1
fi
