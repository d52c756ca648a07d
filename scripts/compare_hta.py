#!/usr/bin/env python3
"""Compare tracesight's GPU span/busy/idle with HolisticTraceAnalysis (HTA).

Dev tool, not part of the build or the tests. Run it with the Python of a venv that
has HTA installed (keep the venv outside the repository), e.g.

    python3 -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install HolisticTraceAnalysis
    cargo build --release
    /tmp/hta-venv/bin/python scripts/compare_hta.py [--bin target/release/tracesight] \
        [--traces ../shared/traces] [NAME ...]

Each file in the traces folder is one HTA "trace dir" (a temp dir holding a symlink to it);
a sub-folder (e.g. dlrm-8rank-v100) is a multi-rank trace dir.

What HTA reports (hta/analyzers/breakdown_analysis.py, get_temporal_breakdown):
  rows = trace_df[stream != -1]                       (every row with an integer stream)
  merged = merge_kernel_intervals(rows)               (union of [ts, ts+dur])
  kernel_time(us) = merged.end[-1] - merged.ts[0]     == tracesight span_us
  idle_time(us)   = kernel_time - |union|             == tracesight idle_us
  so HTA busy     = kernel_time - idle_time           == tracesight busy_us
  (tracesight's own kernel_time_us is the SUM of durations; it has no HTA counterpart.)
Before that, HTA's loader changes the data:
  * trace_parser.round_down_time_stamps: float (ns-resolution) ts are rounded inward,
    ts -> ceil(ts), end -> floor(ts+dur)  (off with env HTA_DISABLE_NS_ROUNDING=1);
  * trace.Trace._filter_irrelevant_gpu_kernels: only when the trace has >= 2 distinct
    ProfilerStep names, GPU rows are kept only if their correlation id matches a CPU
    row with ts < start of the last ProfilerStep (default) or ts <= end of the last
    ProfilerStep (include_last_profiler_step=True). Rows whose correlation matches no
    CPU row are dropped either way.
  * python_function events are skipped; rows without dur or cat are dropped.

Rows "ts steps[:-1]" is the sum of tracesight per-step busy without the last step (HTA
default counts the same kernels when none is launched outside the steps).
For each trace the script runs HTA in four configurations (rounding on/off x last step
excluded/included) plus an unfiltered pass over HTA's parsed rows, and attributes the
difference to tracesight step by step:
  round   : HTA's ns rounding                 (default HTA vs no-rounding)
  laststep: HTA dropping the last ProfilerStep (no-rounding, default vs include-last)
  filter  : HTA's correlation filter           (include-last vs unfiltered rows)
  rows    : rows HTA counts that tracesight does not (stream!=-1 but not
            kernel/memcpy/memset: cuda_sync, gpu_user_annotation, ...)
  rest    : whatever is left (unexplained)
"""

import argparse
import copy
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
THRESH_PCT = 1.0  # differences above this (% of span) are flagged "!"
MINOR_PCT = 0.05  # components below this are not listed


def quiet_hta():
    logging.disable(logging.WARNING)
    for name in ("hta", ""):
        logging.getLogger(name).setLevel(logging.ERROR)


def union_stats(df):
    """(span, busy) of the union of [ts, ts+dur] of the rows, HTA's way."""
    if len(df) == 0:
        return 0.0, 0.0
    from hta.utils.utils import merge_kernel_intervals

    # Shift to 0 first, as HTA's _align_all_ranks does: merge_kernel_intervals sums all
    # interval ends/starts, which loses precision (or overflows) with epoch-sized ts.
    d = df[["ts", "dur"]].copy()
    d["ts"] = d["ts"] - d["ts"].min()
    m = merge_kernel_intervals(d)
    span = float(m.iloc[-1]["end"] - m.iloc[0]["ts"])
    busy = float(m.end.sum() - m.ts.sum())
    return span, busy


def run_hta(trace_dir, rounding):
    """Parse once; return {config: {rank: (span, busy, idle)}} and extra per-rank info."""
    if rounding:
        os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    else:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    from hta.analyzers.breakdown_analysis import BreakdownAnalysis
    from hta.common.trace import Trace

    t = Trace(trace_dir=trace_dir)
    t.parse_traces(use_multiprocessing=False)
    parsed = {r: df.copy() for r, df in t.traces.items()}
    sym = t.symbol_table.get_sym_table()
    out = {}
    extra = {}
    # Unfiltered: every parsed row with an integer stream (what temporal breakdown would
    # count if the loader did not filter), and only kernel/memcpy/memset rows.
    for r, df in parsed.items():
        rows = df[df["stream"].ne(-1)]
        cats = rows["cat"].map(lambda c: sym[c])
        gpu = rows[cats.isin(GPU_CATS)]
        other = cats[~cats.isin(GPU_CATS)].value_counts().to_dict()
        from hta.common.trace_filter import CPUOperatorFilter, GPUKernelFilter

        g = GPUKernelFilter()(df, t.symbol_table)
        c = CPUOperatorFilter()(df, t.symbol_table)
        orphans = g[~g["correlation"].isin(set(c["correlation"]))]
        extra[r] = {
            "orphans": (len(orphans), float(orphans["dur"].sum())),
            "raw_all": union_stats(rows),
            "raw_gpu": union_stats(gpu),
            "other_rows": other,
            "n_steps": sum(1 for s in sym if "ProfilerStep" in s),
        }
    for include_last in (False, True):
        t.traces = {r: df.copy() for r, df in parsed.items()}
        t.align_and_filter_trace(include_last)
        for r, df in t.traces.items():
            df = df.set_index("index", drop=False)
            df.index.names = [None]
            t.traces[r] = df
        try:
            bd = BreakdownAnalysis.get_temporal_breakdown(t, visualize=False)
            res = {}
            for _, row in bd.iterrows():
                span = float(row["kernel_time(us)"])
                idle = float(row["idle_time(us)"])
                res[int(row["rank"])] = (span, span - idle, idle)
            out[include_last] = res
        except Exception as e:  # noqa: BLE001
            out[include_last] = f"{type(e).__name__}: {e}"
    return out, extra


def wrap_bare_array(src, tmp):
    """HTA needs a top-level object; the oldest traces are a bare array of events.
    Write a wrapped copy into the temp dir (never into the repository)."""
    import gzip

    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        head = f.read(64).lstrip()
        if not head.startswith("["):
            return None
        f.seek(0)
        events = json.load(f)
    d = os.path.join(tmp, "wrapped")
    os.makedirs(d)
    with gzip.open(os.path.join(d, "trace.json.gz"), "wt") as f:
        json.dump({"traceEvents": events}, f)
    return d


def tracesight(binary, path):
    p = subprocess.run([binary, "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[:300])
    return json.loads(p.stdout)["traces"]


def pct(d, span):
    return 100.0 * d / span if span else 0.0


def fmt(v):
    return f"{v:12.1f}" if isinstance(v, (int, float)) else f"{str(v):>12}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(here, "..", "target", "release", "tracesight"))
    ap.add_argument("--traces", default=os.path.join(here, "..", "..", "shared", "traces"))
    ap.add_argument("names", nargs="*", help="only these entries of the traces folder")
    args = ap.parse_args()
    quiet_hta()

    entries = sorted(e for e in os.listdir(args.traces) if e != "README.md")
    if args.names:
        entries = [e for e in entries if any(n in e for n in args.names)]

    for entry in entries:
        src = os.path.abspath(os.path.join(args.traces, entry))
        print(f"\n=== {entry}")
        try:
            ts_traces = tracesight(args.bin, src)
        except Exception as e:  # noqa: BLE001
            print(f"  tracesight failed: {e}")
            continue
        with tempfile.TemporaryDirectory(prefix="hta-") as tmp:
            if os.path.isdir(src):
                trace_dir = src
            else:
                name = entry if entry.endswith((".json", ".gz")) else entry + ".json"
                os.symlink(src, os.path.join(tmp, name))
                trace_dir = tmp
            hta = {}
            try:
                for rounding in (True, False):
                    hta[rounding] = run_hta(trace_dir, rounding)
            except Exception as e:  # noqa: BLE001
                print(f"  HTA cannot load it: {type(e).__name__}: {str(e)[:200]}")
                wrapped = wrap_bare_array(src, tmp)
                if not wrapped:
                    continue
                print("  (bare top-level array: retrying with a temp copy wrapped in "
                      "{\"traceEvents\": [...]} for HTA)")
                try:
                    for rounding in (True, False):
                        hta[rounding] = run_hta(wrapped, rounding)
                except Exception as e2:  # noqa: BLE001
                    print(f"  HTA still cannot load it: {type(e2).__name__}: {str(e2)[:200]}")
                    continue
            finally:
                os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)

        (def_r, extra_r), (def_n, extra_n) = hta[True], hta[False]
        # Map tracesight traces to HTA ranks: by rank, else the single one.
        by_rank = {}
        for tr in ts_traces:
            by_rank[tr["rank"] if tr.get("rank") is not None else 0] = tr
        ranks = sorted(extra_n.keys())
        for r in ranks:
            tr = by_rank.get(r) or (ts_traces[0] if len(ts_traces) == 1 else None)
            if tr is None:
                print(f"  rank {r}: no tracesight trace with that rank")
                continue
            g = tr["gpu"]
            ts_vals = (g["span_us"], g["busy_us"], g["idle_us"])
            label = f"rank {r}" + (f" ({tr['file']})" if len(ranks) > 1 else "")
            if not tr.get("has_gpu") or g["span_us"] == 0:
                hta_note = def_r[False] if isinstance(def_r[False], str) else def_r[False].get(r)
                print(f"  {label}: tracesight: no GPU rows; HTA default: {hta_note}")
                continue
            ndev = len(tr.get("devices") or []) or 1
            span = ts_vals[0]

            def get(conf, inc):
                v = conf[inc]
                return v if isinstance(v, str) else v.get(r, "no rank")

            rows = [
                ("tracesight", ts_vals),
                ("HTA default", get(def_r, False)),
                ("HTA all steps", get(def_r, True)),
                ("HTA no-round", get(def_n, False)),
                ("HTA all,no-round", get(def_n, True)),
            ]
            raw_all = extra_n[r]["raw_all"]
            raw_gpu = extra_n[r]["raw_gpu"]
            rows.append(("HTA rows unfilt.", (raw_all[0], raw_all[1], raw_all[0] - raw_all[1])))
            rows.append(("  kern/mem only", (raw_gpu[0], raw_gpu[1], raw_gpu[0] - raw_gpu[1])))
            steps = tr.get("steps") or []
            if len(steps) >= 2:
                b = sum(st["busy_us"] for st in steps[:-1])
                rows.insert(1, ("ts steps[:-1]", ("-", b, "-")))
            print(f"  {label}" + (f"  [{ndev} devices in one rank; HTA merges them]" if ndev > 1 else ""))
            print(f"    {'':18}{'span_us':>12}{'busy_us':>12}{'idle_us':>12}{'dspan%':>9}{'dbusy%':>9}")
            for name, v in rows:
                if isinstance(v, str):
                    print(f"    {name:18}{v}")
                    continue
                if name == "tracesight":
                    d = ""
                elif name == "ts steps[:-1]":
                    d = f"{'':9}{pct(v[1] - ts_vals[1], span):9.2f}"
                else:
                    ds, db = pct(v[0] - span, span), pct(v[1] - ts_vals[1], span)
                    d = f"{ds:9.2f}{db:9.2f}"
                print(f"    {name:18}{fmt(v[0])}{fmt(v[1])}{fmt(v[2])}{d}")

            # Attribution chain, in % of tracesight span (span, busy).
            chain = [get(def_r, False), get(def_n, False), get(def_n, True),
                     (raw_all[0], raw_all[1]), (raw_gpu[0], raw_gpu[1]), ts_vals]
            names = ["round", "laststep", "filter", "rows", "rest"]
            why = []
            for i, nm in enumerate(names):
                a, b = chain[i], chain[i + 1]
                if isinstance(a, str) or isinstance(b, str):
                    continue
                dsp, dbu = pct(a[0] - b[0], span), pct(a[1] - b[1], span)
                if abs(dsp) >= MINOR_PCT or abs(dbu) >= MINOR_PCT:
                    why.append((nm, dsp, dbu))
            hd = chain[0]
            if isinstance(hd, str):
                print(f"    why: HTA default failed ({hd})")
            elif not why:
                print("    why: agree (every component < 0.05% of span)")
            for nm, dsp, dbu in why:
                text = {
                    "round": "HTA rounds float ns timestamps inward (ceil ts, floor end)",
                    "laststep": f"HTA drops kernels launched in the last ProfilerStep "
                                f"({extra_n[r]['n_steps']} step names)",
                    "filter": "HTA's correlation filter dropped GPU rows: {} rows ({:.0f} us summed) "
                              "have no CPU row with their correlation id (launch not in the trace); "
                              "the rest, if any, were launched after the last step's end"
                              .format(*extra_n[r]["orphans"]),
                    "rows": f"HTA counts non-kernel rows with an integer stream: {extra_n[r]['other_rows']}",
                    "rest": "unexplained: HTA's parsed kernel/memcpy/memset rows differ from tracesight's",
                }[nm]
                flag = "!" if max(abs(dsp), abs(dbu)) > THRESH_PCT else " "
                print(f"   {flag}why {nm:8} span {dsp:+7.2f}%  busy {dbu:+7.2f}%  {text}")


if __name__ == "__main__":
    main()
