#!/usr/bin/env bash
# Speed and memory benchmark: tracesight (plain and gzip input) against the Python seed
# analyser, side by side, on synthetic Kineto traces of the given sizes.
#
#   scripts/bench.sh [SIZE...]          default 500M; e.g. scripts/bench.sh 64M 500M 2G
#
# For each SIZE it generates bench-data/trace-SIZE-seedN.json and a .json.gz of the same
# trace with `cargo run --release --example gen_trace` (kept and reused while the size, seed,
# GEN_ARGS and generator source are unchanged), then measures wall time and peak RSS of
#   target/release/tracesight --json --threads 1 FILE.json    > /dev/null
#   target/release/tracesight --json --threads 2 FILE.json    > /dev/null
#   target/release/tracesight --json FILE.json.gz             > /dev/null
#   python3 scripts/baseline.py FILE.json                      > /dev/null   (the seed, see baseline.py)
# each REPEAT times (the three tracesight runs alternating), and prints the best time, MB/s of
# uncompressed JSON, the highest peak RSS and the speedup against Python, then the ratios:
# 2 threads against 1, gzip against plain (1 thread), in time and in peak RSS. Results are also appended to bench-data/results.tsv.
# Runs are warm-cache (the first run reads the file into the page cache).
#
# Environment:
#   REPEAT=3         runs per measurement (the fastest is reported)
#   PY_REPEAT=       runs of the Python baseline (default: REPEAT)
#   SEED=1           generator seed
#   GEN_ARGS=        extra gen_trace options, e.g. "--backend math" or "--order step"
#   BASELINE=auto    Python baseline: auto = only for traces up to 1 GB (it needs ~5x the file
#                    size in RAM) and when enough memory is free; 1 = always; 0 = never
#   BENCH_DIR=bench-data
#   NO_BUILD=1       skip cargo build and use the binaries already built
#   TRACESIGHT=      CLI to measure (default target/release/tracesight)
#   GEN_TRACE=       generator binary (default target/release/examples/gen_trace)
#   PYTHON=python3
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

REPEAT=${REPEAT:-3}
PY_REPEAT=${PY_REPEAT:-$REPEAT}
SEED=${SEED:-1}
GEN_ARGS=${GEN_ARGS:-}
BASELINE=${BASELINE:-auto}
BENCH_DIR=${BENCH_DIR:-bench-data}
TRACESIGHT=${TRACESIGHT:-$ROOT/target/release/tracesight}
GEN_TRACE=${GEN_TRACE:-$ROOT/target/release/examples/gen_trace}
PYTHON=${PYTHON:-python3}

if [ $# -eq 0 ]; then
    set -- 500M
fi

die() { echo "bench: $*" >&2; exit 1; }
log() { echo "bench: $*" >&2; }

command -v "$PYTHON" >/dev/null || die "$PYTHON not found (needed for the timer and the baseline)"
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive integer"
[[ "$PY_REPEAT" =~ ^[1-9][0-9]*$ ]] || die "PY_REPEAT must be a positive integer"

# ---------------------------------------------------------------------------- build

if [ "${NO_BUILD:-0}" != 1 ]; then
    log "cargo build --release (tracesight CLI + gen_trace example)"
    cargo build --release --quiet --bin tracesight --example gen_trace \
        || die "cargo build failed"
fi
[ -x "$GEN_TRACE" ] || die "generator not found: $GEN_TRACE"
[ -x "$TRACESIGHT" ] || die "tracesight CLI not found: $TRACESIGHT"

mkdir -p "$BENCH_DIR"

# ---------------------------------------------------------------------------- helpers

# measure OUT_PREFIX CMD...: run CMD with stdout to /dev/null, stderr to OUT_PREFIX.err;
# prints "SECONDS PEAK_RSS_KB EXIT_CODE" (wall clock of the child only, its own peak RSS).
TIMER=$(mktemp "${TMPDIR:-/tmp}/bench-timer.XXXXXX.py")
trap 'rm -f "$TIMER"' EXIT
cat > "$TIMER" <<'PY'
import os, subprocess, sys, time
err_path, cmd = sys.argv[1], sys.argv[2:]
with open(os.devnull, "wb") as out, open(err_path, "wb") as err:
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
rss_kb = ru.ru_maxrss / 1024 if sys.platform == "darwin" else ru.ru_maxrss  # bytes on macOS
rc = os.waitstatus_to_exitcode(status)
print(f"{secs:.4f} {rss_kb:.0f} {rc}")
PY

measure() {
    local err=$1
    shift
    "$PYTHON" "$TIMER" "$err" "$@"
}

file_size() { wc -c < "$1" | tr -d ' '; }

# checksum of the generator source, so stale bench data is regenerated
gen_id() {
    local src="$ROOT/examples/gen_trace"
    local sum="unknown"
    [ -d "$src" ] && sum=$(cat "$src"/*.rs "$src"/*/*.rs | cksum | cut -d' ' -f1)
    echo "gen_trace $sum --size $1 --seed $SEED $GEN_ARGS"
}

# size in bytes from "500M", "2G", "300K", "1.5G" (decimal units, like gen_trace)
size_bytes() {
    "$PYTHON" - "$1" <<'PY'
import re, sys
m = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgGtT]?)(i?)[bB]?\s*", sys.argv[1])
if not m:
    sys.exit(f"bad size {sys.argv[1]!r}")
v, unit, binary = float(m.group(1)), m.group(2).upper(), m.group(3)
exp = " KMGT".index(unit) if unit else 0
print(int(v * ((1024 if binary else 1000) ** exp)))
PY
}

mem_available_kb() {
    awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || true
}

# ---------------------------------------------------------------------------- data

prepare() { # SIZE -> sets JSON GZ
    local size=$1 tag
    tag=$(echo "$GEN_ARGS" | tr -c 'A-Za-z0-9\n' '_' | sed 's/__*/_/g; s/^_//; s/_$//')
    local base="$BENCH_DIR/trace-$size-seed$SEED${tag:+-$tag}"
    JSON="$base.json"
    GZ="$base.json.gz"
    local stamp="$base.stamp" want
    want=$(gen_id "$size")
    if [ -f "$JSON" ] && [ -f "$GZ" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        log "reusing $JSON and $GZ"
        return
    fi
    rm -f "$JSON" "$GZ" "$stamp"
    log "generating $JSON"
    # shellcheck disable=SC2086 # GEN_ARGS is a list of options
    "$GEN_TRACE" --size "$size" --seed "$SEED" $GEN_ARGS "$JSON.tmp" && mv "$JSON.tmp" "$JSON"
    log "generating $GZ (the same trace, gzip)"
    # shellcheck disable=SC2086
    "$GEN_TRACE" --size "$size" --seed "$SEED" $GEN_ARGS --gzip "$GZ.tmp" && mv "$GZ.tmp" "$GZ"
    echo "$want" > "$stamp"
}

# ---------------------------------------------------------------------------- runs

ROWS=()      # input|json_bytes|tool|secs|rss_kb|rc  (secs empty when skipped)
FAILURES=()

# run_best INPUT JSON_BYTES TOOL REPEATS CMD...
run_best() {
    local input=$1 bytes=$2 tool=$3 reps=$4
    shift 4
    local best="" peak=0 rc=0 i secs rss code
    local err="$BENCH_DIR/.last-run.err"
    for ((i = 1; i <= reps; i++)); do
        read -r secs rss code < <(measure "$err" "$@")
        if [ "$code" != 0 ]; then
            rc=$code
            log "  $tool on $(basename "$input"): FAILED (exit $code)"
            FAILURES+=("$tool on $input (exit $code): $(tail -n 5 "$err" | tr '\n' ' ')")
            break
        fi
        log "  $tool on $(basename "$input"): run $i/$reps: ${secs}s, $((rss / 1024)) MB peak"
        if [ -z "$best" ] || awk "BEGIN {exit !($secs < $best)}"; then best=$secs; fi
        if [ "$rss" -gt "$peak" ]; then peak=$rss; fi
    done
    rm -f "$err"
    ROWS+=("$input|$bytes|$tool|$best|$peak|$rc")
}

for size in "$@"; do
    prepare "$size"
    bytes=$(file_size "$JSON")
    want_bytes=$(size_bytes "$size")

    log "measuring $size ($((bytes / 1000000)) MB JSON, $(($(file_size "$GZ") / 1000000)) MB gzip), best of $REPEAT"
    # Alternating runs, so that the ratios compare runs made side by side on a noisy machine.
    for ((rep = 1; rep <= REPEAT; rep++)); do
        run_best "$JSON" "$bytes" "tracesight 1 thread" 1 "$TRACESIGHT" --json --threads 1 "$JSON"
        run_best "$JSON" "$bytes" "tracesight 2 threads" 1 "$TRACESIGHT" --json --threads 2 "$JSON"
        run_best "$GZ" "$bytes" "tracesight gzip" 1 "$TRACESIGHT" --json "$GZ"
    done

    run_py=0
    case "$BASELINE" in
        1 | yes | always) run_py=1 ;;
        0 | no | never) run_py=0 ;;
        *)
            run_py=1
            if [ "$want_bytes" -gt 1000000000 ]; then
                log "  skipping the Python baseline above 1 GB (needs ~5x the file in RAM); BASELINE=1 forces it"
                run_py=0
            else
                avail=$(mem_available_kb)
                if [ -n "$avail" ] && [ "$((bytes / 1024 * 6))" -gt "$avail" ]; then
                    log "  skipping the Python baseline: $((avail / 1024)) MB free, needs ~$((bytes * 6 / 1000000)) MB; BASELINE=1 forces it"
                    run_py=0
                fi
            fi
            ;;
    esac
    if [ "$run_py" = 1 ]; then
        run_best "$JSON" "$bytes" "python seed" "$PY_REPEAT" "$PYTHON" "$ROOT/scripts/baseline.py" "$JSON"
    else
        ROWS+=("$JSON|$bytes|python seed||0|skip")
    fi
done

# ---------------------------------------------------------------------------- report

"$PYTHON" - "$REPEAT" "$BENCH_DIR/results.tsv" "$(git rev-parse --short HEAD 2>/dev/null || echo -)" "${ROWS[@]}" <<'PY'
import os, sys, time
repeat, tsv, rev, rows = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
parsed, runs = [], []
for r in rows:
    inp, nbytes, tool, secs, rss, rc = r.split("|")
    run = dict(inp=inp, bytes=int(nbytes), tool=tool, secs=float(secs) if secs else None, rss=int(rss), rc=rc)
    runs.append(run)
    # One row per input and tool: the best time, the highest peak RSS, the first failure.
    same = next((p for p in parsed if p["inp"] == inp and p["tool"] == tool), None)
    if same is None:
        parsed.append(dict(run))
        continue
    if same["rc"] == "0" and run["rc"] != "0":
        same["rc"] = run["rc"]
    if run["secs"] is not None and (same["secs"] is None or run["secs"] < same["secs"]):
        same["secs"] = run["secs"]
    same["rss"] = max(same["rss"], run["rss"])
py = {p["bytes"]: p["secs"] for p in parsed if p["tool"] == "python seed" and p["secs"]}
head = ("input", "size MB", "tool", "seconds", "MB/s", "peak RSS MB", "vs python")
lines = []
for p in parsed:
    name = os.path.basename(p["inp"])
    size = f'{p["bytes"] / 1e6:.1f}'
    if p["rc"] == "skip":
        lines.append((name, size, p["tool"], "skipped", "", "", ""))
        continue
    if p["rc"] != "0" or p["secs"] is None:
        lines.append((name, size, p["tool"], f'FAILED (exit {p["rc"]})', "", "", ""))
        continue
    mbs = p["bytes"] / 1e6 / p["secs"]
    base = py.get(p["bytes"])
    speed = f'{base / p["secs"]:.1f}x' if base else "-"
    lines.append((name, size, p["tool"], f'{p["secs"]:.3f}', f"{mbs:.1f}", f'{p["rss"] / 1024:.1f}', speed))
w = [max(len(str(x[i])) for x in [head] + lines) for i in range(len(head))]
left = {0, 2}
fmt = lambda row: "  ".join(str(c).ljust(w[i]) if i in left else str(c).rjust(w[i]) for i, c in enumerate(row)).rstrip()
print()
print(f"best of {repeat} runs (warm page cache); MB/s = uncompressed JSON MB per second; MB = 10^6 bytes")
print(fmt(head))
print("  ".join("-" * x for x in w))
for l in lines:
    print(fmt(l))
by = {(p["bytes"], p["tool"]): p for p in parsed if p["rc"] == "0" and p["secs"]}
ratios = []
for nbytes in sorted({p["bytes"] for p in parsed}):
    one, two, gz = (by.get((nbytes, t)) for t in ("tracesight 1 thread", "tracesight 2 threads", "tracesight gzip"))
    size = f"{nbytes / 1e6:.0f} MB"
    if one and two:
        ratios.append(f"{size}: 2 threads vs 1: {one['secs'] / two['secs']:.2f}x faster, peak RSS {two['rss'] / one['rss']:.2f}x")
    if one and gz:
        ratios.append(f"{size}: gzip vs plain (1 thread): {one['secs'] / gz['secs']:.2f}x the speed, peak RSS {gz['rss'] / one['rss']:.2f}x")
if ratios:
    print()
    print("ratios (best times, highest peak RSS):")
    for r in ratios:
        print("  " + r)
new = not os.path.exists(tsv)
with open(tsv, "a") as f:
    if new:
        f.write("date\tgit\tinput\tjson_bytes\ttool\tseconds\tpeak_rss_kb\texit\n")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for p in runs:
        f.write(f'{stamp}\t{rev}\t{os.path.basename(p["inp"])}\t{p["bytes"]}\t{p["tool"]}\t'
                f'{"" if p["secs"] is None else p["secs"]}\t{p["rss"]}\t{p["rc"]}\n')
PY

if [ ${#FAILURES[@]} -gt 0 ]; then
    echo
    echo "failures:"
    for f in "${FAILURES[@]}"; do echo "  $f"; done
    exit 1
fi
