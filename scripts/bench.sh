#!/usr/bin/env bash
# Speed and memory benchmark: tracesight (plain and gzip input) beside limit probes (the
# parse alone, the structural scan alone, inflate alone), an older binary (BASE=) and the
# Python seed analyser, side by side, on synthetic Kineto traces of the given sizes.
#
#   scripts/bench.sh [SIZE...]          default 500M; e.g. scripts/bench.sh 64M 500M 2G
#   BASE=old/tracesight scripts/bench.sh 300M      the old binary alternating with the new
#   TRACESIGHT=target/pgo/release/tracesight BASE=target/release/tracesight scripts/bench.sh
#                                       the profile-guided build (scripts/build-pgo.sh) against the plain one
#
# For each SIZE it generates bench-data/trace-SIZE-seedN.json and a .json.gz of the same
# trace (GEN=repo: `cargo run --release --example gen_trace`; GEN=shared: the independent
# generator ../shared/tools/gen_trace.py, whose traces the issues' targets refer to; SIZE is
# then taken in MB), kept and reused while the size, seed, GEN_ARGS and generator are
# unchanged, then measures wall time, CPU time (user + sys) and peak RSS of
#   target/release/tracesight --json --threads 1 FILE.json    > /dev/null
#   target/release/tracesight --json --threads 2 FILE.json    > /dev/null   (THREADS2=0 skips)
#   target/release/tracesight --json FILE.json.gz             > /dev/null   (all cores: inflated on one, parsed in parts on the others)
#   $BASE --json --threads 1 and 2 FILE.json, $BASE --json FILE.json.gz     (when BASE is set)
#   target/release/examples/probe events FILE.json       the reader and event scanner alone
#   target/release/examples/probe structural FILE.json   the vectorised structural scan alone
#   target/release/examples/probe inflate FILE.json.gz   inflate alone to nothing
#   python3 scripts/baseline.py FILE.json                      > /dev/null   (the seed, see baseline.py)
# each REPEAT times (all but Python alternating, one of each per round, so that the ratios
# compare runs made side by side on a drifting, shared machine), and prints the best time,
# MB/s of uncompressed JSON (by wall time, and by CPU time, the steadier figure when other
# work shares the cores), the highest peak RSS and the speedup against Python, then the
# ratios: new against BASE, the CLI against its limit probes, 2 threads against 1, gzip
# against plain and, given several sizes, each size's MB/s against the smallest's (whether
# the cost is linear in size). Results are also appended to bench-data/results.tsv.
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
#   GEN=repo         repo | shared (../shared/tools/gen_trace.py, or GEN_PY=path)
#   BASE=            an older tracesight binary to alternate with (e.g. one built from main)
#   PROBE=           the probe example (default target/release/examples/probe); PROBES=0 skips
#   THREADS2=1       0 skips the 2-thread run
#   PROFILE=release  cargo profile to build and measure (test-opt builds faster, no fat LTO)
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
PROFILE=${PROFILE:-release}
TRACESIGHT=${TRACESIGHT:-$ROOT/target/$PROFILE/tracesight}
GEN_TRACE=${GEN_TRACE:-$ROOT/target/$PROFILE/examples/gen_trace}
PROBE=${PROBE:-$ROOT/target/$PROFILE/examples/probe}
PROBES=${PROBES:-1}
THREADS2=${THREADS2:-1}
GEN=${GEN:-repo}
GEN_PY=${GEN_PY:-$ROOT/../shared/tools/gen_trace.py}
BASE=${BASE:-}
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
    log "cargo build --profile $PROFILE (tracesight CLI, gen_trace and probe examples)"
    cargo build --profile "$PROFILE" --quiet --bin tracesight --example gen_trace --example probe \
        || die "cargo build failed"
fi
case "$GEN" in
    repo) [ -x "$GEN_TRACE" ] || die "generator not found: $GEN_TRACE" ;;
    shared) [ -f "$GEN_PY" ] || die "generator not found: $GEN_PY (GEN_PY=)" ;;
    *) die "GEN must be repo or shared" ;;
esac
[ -x "$TRACESIGHT" ] || die "tracesight CLI not found: $TRACESIGHT"
[ -z "$BASE" ] || [ -x "$BASE" ] || die "BASE binary not found: $BASE"
[ "$PROBES" = 0 ] || [ -x "$PROBE" ] || die "probe not found: $PROBE (PROBES=0 skips the probes)"

mkdir -p "$BENCH_DIR"

# ---------------------------------------------------------------------------- helpers

# measure OUT_PREFIX CMD...: run CMD with stdout to /dev/null, stderr to OUT_PREFIX.err;
# prints "SECONDS PEAK_RSS_KB EXIT_CODE CPU_SECONDS" (wall clock of the child only, its own
# peak RSS, its user + system CPU time).
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
print(f"{secs:.4f} {rss_kb:.0f} {rc} {ru.ru_utime + ru.ru_stime:.4f}")
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
    if [ "$GEN" = shared ]; then
        sum=$(cksum < "$GEN_PY" | cut -d' ' -f1)
        echo "gen_trace.py $sum --mb $(mb_of "$1") --seed $SEED $GEN_ARGS"
        return
    fi
    [ -d "$src" ] && sum=$(cat "$src"/*.rs "$src"/*/*.rs | cksum | cut -d' ' -f1)
    echo "gen_trace $sum --size $1 --seed $SEED $GEN_ARGS"
}

# whole decimal MB of a size ("500M" -> 500, "2G" -> 2000), for gen_trace.py's --mb
mb_of() { echo $(($(size_bytes "$1") / 1000000)); }

# generate OUT: the trace of the current size in OUT (.json.gz compresses)
generate() {
    local out=$1
    if [ "$GEN" = shared ]; then
        # shellcheck disable=SC2086 # GEN_ARGS is a list of options
        "$PYTHON" "$GEN_PY" "$out" --mb "$(mb_of "$size")" $GEN_ARGS > /dev/null
        return
    fi
    local gz=()
    [[ $out == *.gz ]] && gz=(--gzip)
    # shellcheck disable=SC2086
    "$GEN_TRACE" --size "$size" --seed "$SEED" $GEN_ARGS "${gz[@]}" "$out"
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
    [ "$GEN" = shared ] && base="$BENCH_DIR/gt-$size${tag:+-$tag}"
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
    generate "$JSON.tmp.json" && mv "$JSON.tmp.json" "$JSON"
    log "generating $GZ (the same trace, gzip)"
    generate "$GZ.tmp.json.gz" && mv "$GZ.tmp.json.gz" "$GZ"
    echo "$want" > "$stamp"
}

# ---------------------------------------------------------------------------- runs

ROWS=()      # input|json_bytes|tool|secs|rss_kb|rc|cpu_secs  (secs empty when skipped)
FAILURES=()

# run_best INPUT JSON_BYTES TOOL REPEATS CMD...
run_best() {
    local input=$1 bytes=$2 tool=$3 reps=$4
    shift 4
    local best="" peak=0 rc=0 i secs rss code cpu best_cpu=""
    local err="$BENCH_DIR/.last-run.err"
    for ((i = 1; i <= reps; i++)); do
        read -r secs rss code cpu < <(measure "$err" "$@")
        if [ "$code" != 0 ]; then
            rc=$code
            log "  $tool on $(basename "$input"): FAILED (exit $code)"
            FAILURES+=("$tool on $input (exit $code): $(tail -n 5 "$err" | tr '\n' ' ')")
            break
        fi
        log "  $tool on $(basename "$input"): run $i/$reps: ${secs}s (cpu ${cpu}s), $((rss / 1024)) MB peak"
        if [ -z "$best" ] || awk "BEGIN {exit !($secs < $best)}"; then best=$secs; fi
        if [ -z "$best_cpu" ] || awk "BEGIN {exit !($cpu < $best_cpu)}"; then best_cpu=$cpu; fi
        if [ "$rss" -gt "$peak" ]; then peak=$rss; fi
    done
    rm -f "$err"
    ROWS+=("$input|$bytes|$tool|$best|$peak|$rc|$best_cpu")
}

for size in "$@"; do
    prepare "$size"
    bytes=$(file_size "$JSON")
    want_bytes=$(size_bytes "$size")

    log "measuring $size ($((bytes / 1000000)) MB JSON, $(($(file_size "$GZ") / 1000000)) MB gzip), best of $REPEAT"
    # Alternating runs, so that the ratios compare runs made side by side on a noisy machine.
    for ((rep = 1; rep <= REPEAT; rep++)); do
        run_best "$JSON" "$bytes" "tracesight 1 thread" 1 "$TRACESIGHT" --json --threads 1 "$JSON"
        if [ -n "$BASE" ]; then
            run_best "$JSON" "$bytes" "base 1 thread" 1 "$BASE" --json --threads 1 "$JSON"
        fi
        if [ "$THREADS2" != 0 ]; then
            run_best "$JSON" "$bytes" "tracesight 2 threads" 1 "$TRACESIGHT" --json --threads 2 "$JSON"
            if [ -n "$BASE" ]; then
                run_best "$JSON" "$bytes" "base 2 threads" 1 "$BASE" --json --threads 2 "$JSON"
            fi
        fi
        run_best "$GZ" "$bytes" "tracesight gzip" 1 "$TRACESIGHT" --json "$GZ"
        if [ -n "$BASE" ]; then
            run_best "$GZ" "$bytes" "base gzip" 1 "$BASE" --json "$GZ"
        fi
        if [ "$PROBES" != 0 ]; then
            run_best "$JSON" "$bytes" "probe: parse alone" 1 "$PROBE" events "$JSON"
            run_best "$JSON" "$bytes" "probe: structural scan" 1 "$PROBE" structural "$JSON"
            run_best "$GZ" "$bytes" "probe: inflate alone" 1 "$PROBE" inflate "$GZ"
        fi
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
        ROWS+=("$JSON|$bytes|python seed||0|skip|")
    fi
done

# ---------------------------------------------------------------------------- report

"$PYTHON" - "$REPEAT" "$BENCH_DIR/results.tsv" "$(git rev-parse --short HEAD 2>/dev/null || echo -)" "${ROWS[@]}" <<'PY'
import os, sys, time
repeat, tsv, rev, rows = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
parsed, runs = [], []
for r in rows:
    inp, nbytes, tool, secs, rss, rc, cpu = r.split("|")
    run = dict(inp=inp, bytes=int(nbytes), tool=tool, secs=float(secs) if secs else None, rss=int(rss), rc=rc,
               cpu=float(cpu) if cpu else None)
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
    if run["cpu"] is not None and (same["cpu"] is None or run["cpu"] < same["cpu"]):
        same["cpu"] = run["cpu"]
    same["rss"] = max(same["rss"], run["rss"])
py = {p["bytes"]: p["secs"] for p in parsed if p["tool"] == "python seed" and p["secs"]}
head = ("input", "size MB", "tool", "seconds", "MB/s", "cpu s", "MB/s cpu", "peak RSS MB", "vs python")
lines = []
for p in parsed:
    name = os.path.basename(p["inp"])
    size = f'{p["bytes"] / 1e6:.1f}'
    if p["rc"] == "skip":
        lines.append((name, size, p["tool"], "skipped", "", "", "", "", ""))
        continue
    if p["rc"] != "0" or p["secs"] is None:
        lines.append((name, size, p["tool"], f'FAILED (exit {p["rc"]})', "", "", "", "", ""))
        continue
    mbs = p["bytes"] / 1e6 / p["secs"]
    base = py.get(p["bytes"])
    speed = f'{base / p["secs"]:.1f}x' if base else "-"
    cpu = p["cpu"] or 0.0
    mbs_cpu = f'{p["bytes"] / 1e6 / cpu:.1f}' if cpu > 0 else "-"
    lines.append((name, size, p["tool"], f'{p["secs"]:.3f}', f"{mbs:.1f}", f"{cpu:.3f}", mbs_cpu,
                  f'{p["rss"] / 1024:.1f}', speed))
w = [max(len(str(x[i])) for x in [head] + lines) for i in range(len(head))]
left = {0, 2}
fmt = lambda row: "  ".join(str(c).ljust(w[i]) if i in left else str(c).rjust(w[i]) for i, c in enumerate(row)).rstrip()
print()
print(f"best of {repeat} alternating runs (warm page cache); MB/s = uncompressed JSON MB per second of wall time,")
print("MB/s cpu = per second of the process's user + system CPU time; MB = 10^6 bytes")
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
        ratios.append(f"{size}: gzip (all cores) vs plain (1 thread): {one['secs'] / gz['secs']:.2f}x the speed, peak RSS {gz['rss'] / one['rss']:.2f}x")
    speed = lambda a, b: f"{b['secs'] / a['secs']:.2f}x wall, {b['cpu'] / a['cpu']:.2f}x cpu"
    pairs = [("tracesight 1 thread", "base 1 thread", "new vs base (1 thread): speed"),
             ("tracesight 2 threads", "base 2 threads", "new vs base (2 threads): speed"),
             ("tracesight gzip", "base gzip", "new vs base (gzip): speed"),
             ("tracesight 1 thread", "probe: parse alone", "CLI 1 thread vs the parse alone: speed"),
             ("tracesight 1 thread", "probe: structural scan", "CLI 1 thread vs the structural scan alone: speed"),
             ("probe: parse alone", "probe: structural scan", "the parse alone vs the structural scan alone: speed"),
             ("tracesight gzip", "probe: inflate alone", "CLI gzip vs inflate alone: speed")]
    for a, b, what in pairs:
        a, b = by.get((nbytes, a)), by.get((nbytes, b))
        if a and b and a["cpu"] and b["cpu"]:
            ratios.append(f"{size}: {what} {speed(a, b)}")
# The cost linear in size: each larger size's MB/s (by CPU time, steadier than the clock here)
# against the smallest size's, per tool.
sizes = sorted({p["bytes"] for p in parsed})
per_cpu = lambda p: p["bytes"] / p["cpu"]
per_wall = lambda p: p["bytes"] / p["secs"]
for tool in ("tracesight 1 thread", "tracesight 2 threads", "tracesight gzip", "base 1 thread"):
    small = by.get((sizes[0], tool)) if sizes else None
    for nbytes in sizes[1:]:
        big = by.get((nbytes, tool))
        if small and big and small["cpu"] and big["cpu"]:
            ratios.append(f"{tool}: MB/s at {nbytes / 1e6:.0f} MB vs {sizes[0] / 1e6:.0f} MB: "
                          f"{per_cpu(big) / per_cpu(small):.2f}x cpu, {per_wall(big) / per_wall(small):.2f}x wall")
if ratios:
    print()
    print("ratios (best times, highest peak RSS):")
    for r in ratios:
        print("  " + r)
new = not os.path.exists(tsv)
with open(tsv, "a") as f:
    if new:
        f.write("date\tgit\tinput\tjson_bytes\ttool\tseconds\tpeak_rss_kb\texit\tcpu_seconds\n")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for p in runs:
        f.write(f'{stamp}\t{rev}\t{os.path.basename(p["inp"])}\t{p["bytes"]}\t{p["tool"]}\t'
                f'{"" if p["secs"] is None else p["secs"]}\t{p["rss"]}\t{p["rc"]}\t{"" if p["cpu"] is None else p["cpu"]}\n')
PY

if [ ${#FAILURES[@]} -gt 0 ]; then
    echo
    echo "failures:"
    for f in "${FAILURES[@]}"; do echo "  $f"; done
    exit 1
fi
