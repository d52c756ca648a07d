#!/usr/bin/env bash
# Builds the CLI with profile-guided optimisation, for the fastest binary: an instrumented
# build reads synthetic traces of several shapes (examples/gen_trace: both event orders, two
# attention backends, gzip, a two-rank directory; one and two threads), and the build after it
# lays out and inlines the code by the counts that reading left (LLVM's PGO). The same results
# byte for byte as `cargo build --release`, with 12-16% less CPU time (docs/performance.md).
#
#   scripts/build-pgo.sh                  -> target/pgo/release/tracesight
#   INSTALL=1 scripts/build-pgo.sh        ... and copies it to ~/.cargo/bin/tracesight
#
# Needs llvm-profdata of the LLVM that rustc uses (`rustc -vV`): rustup's llvm-tools component,
# llvm-profdata-N on the PATH, or LLVM_PROFDATA=path; on Debian it installs llvm-N when none is
# found. Env: PROFILE=release (the cargo profile of both builds; test-opt builds faster),
# TRAIN_MB=60 (the largest training trace; the others are half of it), PGO_DIR=target/pgo.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PROFILE=${PROFILE:-release}
TRAIN_MB=${TRAIN_MB:-60}
PGO_DIR=${PGO_DIR:-$ROOT/target/pgo}
say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }
# Stops with a message and exit status $1 (3: no llvm-profdata, which scripts/test-pgo.sh skips on).
fail() { local status=$1; shift; echo "build-pgo: $*" >&2; exit "$status"; }
die() { fail 1 "$@"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
[[ "$TRAIN_MB" =~ ^[1-9][0-9]*$ ]] || die "TRAIN_MB must be a positive whole number of MB"

# 1. An llvm-profdata whose profile format the compiler reads: the same LLVM major version.
version=$(rustc -vV)
host=$(sed -n 's/^host: //p' <<<"$version")
major=$(sed -n 's/^LLVM version: \([0-9]*\).*/\1/p' <<<"$version")
[ -n "$major" ] || die "rustc -vV names no LLVM version"
profdata_of_llvm() {
  local c
  for c in "${LLVM_PROFDATA:-}" "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata" "llvm-profdata-$major" llvm-profdata; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 || continue
    if "$c" --version 2>/dev/null | grep -q "LLVM version $major\."; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}
if ! PROFDATA=$(profdata_of_llvm); then
  if command -v apt-get >/dev/null; then
    say "installing Debian's llvm-$major (llvm-profdata for rustc's LLVM $major)"
    as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends "llvm-$major" >&2 || true
  fi
  PROFDATA=$(profdata_of_llvm) || fail 3 "no llvm-profdata of LLVM $major: 'rustup component add llvm-tools', or set LLVM_PROFDATA"
fi
say "llvm-profdata: $PROFDATA"

# 2. The training traces, from the repository's own generator (not the benchmarks' traces).
say "cargo build --profile $PROFILE --example gen_trace"
cargo build --quiet --profile "$PROFILE" --example gen_trace
gen="$ROOT/target/$PROFILE/examples/gen_trace"
train="$PGO_DIR/train"
raw="$PGO_DIR/profraw"
rm -rf "$train" "$raw"
mkdir -p "$train" "$raw"
half=$(( (TRAIN_MB + 1) / 2 ))
"$gen" --quiet --size "${TRAIN_MB}M" --seed 7 "$train/kineto.json"
"$gen" --quiet --size "${half}M" --seed 8 --backend efficient --order step "$train/step-order.json"
"$gen" --quiet --size "${half}M" --seed 9 --gzip "$train/gzipped.json.gz"
"$gen" --quiet --size "${half}M" --seed 10 --ranks 2 "$train/ranks"

# 3. The instrumented CLI reads them; its counts are merged into one profile.
export CARGO_TARGET_DIR="$PGO_DIR/target"
say "cargo build --profile $PROFILE (instrumented)"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" cargo build --quiet --profile "$PROFILE" --target "$host" --bin tracesight
instrumented="$CARGO_TARGET_DIR/$host/$PROFILE/tracesight"
say "training: $(du -sh "$train" | cut -f1) of traces, one and two threads"
for threads in 1 2; do
  for t in "$train"/*; do
    "$instrumented" --threads "$threads" --json "$t" >/dev/null || die "the instrumented CLI failed on $t"
  done
done
"$instrumented" --markdown "$train/kineto.json" >/dev/null
"$PROFDATA" merge -o "$PGO_DIR/merged.profdata" "$raw"
# A training that counted nothing would give a plain build: the event scanner must have run.
count=$("$PROFDATA" show --counts --function=chrome_json4scan5event "$PGO_DIR/merged.profdata" |
  sed -n 's/^ *Block counts: //p' | tr -c '0-9\n' ' ' | awk '{for (i = 1; i <= NF; i++) if ($i > m) m = $i} END {print m + 0}')
[ "$count" -gt 0 ] || die "the profile has no counts for the event scanner (did the training run?)"
say "profile: the event scanner's busiest block ran $count times"

# 4. The release build, laid out by the profile. (A target directory of its own: the flags
#    differ, and the plain build's cache stays as it is. --target keeps both flags off the
#    build scripts.)
say "cargo build --profile $PROFILE (profile-guided)"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$PGO_DIR/merged.profdata" cargo build --quiet --profile "$PROFILE" --target "$host" --bin tracesight
mkdir -p "$PGO_DIR/$PROFILE"
cp "$CARGO_TARGET_DIR/$host/$PROFILE/tracesight" "$PGO_DIR/$PROFILE/tracesight"
rm -rf "$train" "$raw"
if [ "${INSTALL:-0}" = 1 ]; then
  mkdir -p "$HOME/.cargo/bin"
  cp "$PGO_DIR/$PROFILE/tracesight" "$HOME/.cargo/bin/tracesight"
  say "installed $HOME/.cargo/bin/tracesight"
fi
say "built $PGO_DIR/$PROFILE/tracesight"
