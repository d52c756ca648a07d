#!/usr/bin/env python3
"""Compare tracesight's idle causes (host wait, kernel wait, other) with HolisticTraceAnalysis'
idle time breakdown (hta/analyzers/breakdown_analysis.py, get_idle_time_breakdown).

Dev tool, not part of the build or the tests. Run it with the Python of a venv that has HTA
(keep the venv outside the repository), e.g.

    python3 -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install HolisticTraceAnalysis==0.5.0
    cargo build --release
    /tmp/hta-venv/bin/python scripts/compare_hta_idle.py [--bin target/release/tracesight] \
        [--traces ../shared/traces] [NAME ...]

HTA classifies, per stream, the gap before each GPU row (kernel, memcpy, memset) as host wait
when the row's launch call began after the previous row ended, else kernel wait when shorter
than `consecutive_kernel_delay` (in the trace's microseconds; HTA's default is 30, tracesight's
threshold is 50 us, so this script passes 50), else other. HTA is run with its ns rounding off
(HTA_DISABLE_NS_ROUNDING=1) and the last ProfilerStep kept, so both read the same rows; see
scripts/compare_hta.py for what its loader otherwise changes. Known differences that remain:
HTA's "previous row" is the previous row by start time, tracesight's is the latest end so far
(they differ only where rows overlap on one stream), and HTA drops rows whose correlation
matches no CPU row.
"""

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
CATEGORIES = ("host_wait", "kernel_wait", "other")


def hta_idle(trace_dir, delay_us):
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    logging.disable(logging.WARNING)
    from hta.analyzers.breakdown_analysis import BreakdownAnalysis
    from hta.common.trace import Trace

    t = Trace(trace_dir=trace_dir)
    t.parse_traces(use_multiprocessing=False)
    t.align_and_filter_trace(True)
    for r, df in t.traces.items():
        df = df.set_index("index", drop=False)
        df.index.names = [None]
        t.traces[r] = df
    rank = next(iter(t.traces))
    df, _ = BreakdownAnalysis.get_idle_time_breakdown(t, delay_us, rank=rank, visualize=False)
    out = {c: 0.0 for c in CATEGORIES}
    for _, row in df.iterrows():
        out[row["idle_category"]] += float(row["idle_time"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/tracesight")
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    names = a.names or sorted(n for n in os.listdir(a.traces) if n.endswith((".json", ".json.gz")))
    print(f"{'trace':44} {'cause':12} {'HTA us':>12} {'tracesight us':>14} {'diff % of idle':>15}")
    for name in names:
        src = os.path.abspath(os.path.join(a.traces, name))
        p = subprocess.run([a.bin, "--json", src], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{name:44} tracesight failed: {p.stderr.strip()[:60]}")
            continue
        t = json.loads(p.stdout)["traces"][0]
        ours = {
            # HTA sums every stream's own gaps: tracesight's per-stream figures (its totals
            # split the device's idle instead).
            "host_wait": sum(s["host_wait_us"] for s in t["idle"]["streams"]),
            "kernel_wait": sum(s["kernel_wait_us"] for s in t["idle"]["streams"]),
            "other": sum(s["other_us"] for s in t["idle"]["streams"]),
        }
        with tempfile.TemporaryDirectory(prefix="hta-idle-") as tmp:
            os.symlink(src, os.path.join(tmp, name))
            try:
                theirs = hta_idle(tmp, 50)
            except Exception as e:  # noqa: BLE001
                print(f"{name:44} HTA failed: {type(e).__name__}: {str(e)[:60]}")
                continue
        total = sum(ours.values()) or 1.0
        for c in CATEGORIES:
            d = (ours[c] - theirs[c]) / total * 100
            flag = " !" if abs(d) > 1.0 else ""
            print(f"{name:44} {c:12} {theirs[c]:12.1f} {ours[c]:14.1f} {d:14.2f}%{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
