#!/usr/bin/env bash
# Tests scripts/build-pgo.sh end to end on a small training set with the test-opt profile
# (no fat LTO, so it builds in minutes): the instrumented build, the training, the merged
# profile (the script itself fails when the event scanner has no counts in it), the
# profile-guided build; then the profile-guided CLI must give the plain build's output byte
# for byte on the fixtures and on a generated trace (text, --json, --markdown), and
# scripts/package.sh must pack it as the release workflow does: an archive whose .sha256
# verifies and whose binary runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PGO_DIR="$ROOT/target/pgo-test"
status=0
PROFILE=test-opt TRAIN_MB=8 PGO_DIR="$PGO_DIR" scripts/build-pgo.sh || status=$?
if [ "$status" = 3 ]; then
  echo "test-pgo: SKIPPED: no llvm-profdata of rustc's LLVM could be found or installed (see above)"
  exit 0
fi
[ "$status" = 0 ] || exit "$status"
pgo="$PGO_DIR/test-opt/tracesight"
cargo build --quiet --profile test-opt --bin tracesight --example gen_trace
plain="$ROOT/target/test-opt/tracesight"
trace="$PGO_DIR/check.json"
"$ROOT/target/test-opt/examples/gen_trace" --quiet --size 4M --seed 3 --backend math "$trace"
checked=0
for f in tests/fixtures/*.json "$trace"; do
  for mode in "" --json --markdown; do
    a=$("$plain" $mode "$f" 2>&1 || true)
    b=$("$pgo" $mode "$f" 2>&1 || true)
    if [ "$a" != "$b" ]; then
      echo "test-pgo: the profile-guided CLI's ${mode:-text} output differs on $f" >&2
      diff <(echo "$a") <(echo "$b") | head -20 >&2
      exit 1
    fi
    checked=$((checked + 1))
  done
done
rm -f "$trace"
echo "test-pgo: ok ($checked outputs the same as the plain build's)"

packed="$PGO_DIR/package"
rm -rf "$packed"
archive=$(scripts/package.sh "$pgo" "$packed")
(cd "$packed" && sha256sum -c --quiet "$(basename "$archive").sha256")
tar -C "$packed" -xzf "$archive"
dir="$packed/$(basename "$archive" .tar.gz)"
for f in tracesight README.md LICENSE; do
  [ -s "$dir/$f" ] || { echo "test-pgo: $archive has no $f" >&2; exit 1; }
done
a=$("$plain" --json tests/fixtures/current_schema.json)
b=$("$dir/tracesight" --json tests/fixtures/current_schema.json)
[ "$a" = "$b" ] || { echo "test-pgo: the packed binary's report differs from the plain build's" >&2; exit 1; }
echo "test-pgo: packed $(basename "$archive") ($(du -k "$archive" | cut -f1) KB), its sum verified, its binary runs"
rm -rf "$packed"
