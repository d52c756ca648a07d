"""`python -m tracesight`: the CLI's two commands on the same core.

    python -m tracesight [--json | --markdown] [--csv DIR] [--top N] [--range FROM..TO]
                         [--threads N] [--peak-tflops T] [--peak-tbps B]
                         [--params N --tokens-per-step T] [--what-if TARGET=PCT%] PATH...
    python -m tracesight diff A B [--json | --markdown] [--fail-if LIMIT]...

Exit status: 0, 1 when an input cannot be read, 2 on a usage error, 3 when a --fail-if limit
is crossed (as the CLI)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from . import TracesightError, analyze, diff


def _range(text: str):
    a, sep, b = text.partition("..")
    if not sep:
        raise argparse.ArgumentTypeError(f"`{text}` is not a range: write FROM..TO in milliseconds")
    return (float(a or 0), float(b) if b else float("inf"))


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (v > 0 and v != float("inf")):
        raise argparse.ArgumentTypeError(f"`{text}` is not a positive number")
    return v


def _threads(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 256:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of threads from 1 to 256")
    return int(text)


def _diff_main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m tracesight diff")
    p.add_argument("a")
    p.add_argument("b")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--markdown", action="store_true")
    p.add_argument("--fail-if", action="append", default=[], metavar="LIMIT")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    try:
        d = diff(args.a, args.b, fail_if=args.fail_if, top=args.top)
    except TracesightError as e:
        print(f"tracesight: error: {e}", file=sys.stderr)
        return 1
    if args.json:
        body = {k: v for k, v in d.to_dict().items() if k not in ("checks", "text", "markdown")}
        print(json.dumps({"diff": body, "checks": d.to_dict()["checks"]} if args.fail_if else body, indent=2))
    elif args.markdown or args.fail_if:
        print(d.markdown, end="")
    else:
        print(d.text, end="")
    for c in d.failed:
        print(f"tracesight: limit failed: {c.message}", file=sys.stderr)
    return 3 if d.failed else 0


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["diff"]:
        return _diff_main(argv[1:])
    p = argparse.ArgumentParser(prog="python -m tracesight", description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="+", help="traces, tracesight reports, or directories of them")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the Report as JSON")
    out.add_argument("--markdown", action="store_true", help="print the Markdown summary")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--rules", help="a rules file: kernel names to buckets, first")
    p.add_argument("--range", type=_range, metavar="FROM..TO", help="ms of the GPU timeline")
    p.add_argument("--csv", metavar="DIR", help="also write the tables as CSV files into DIR")
    p.add_argument("--threads", type=_threads, metavar="N", help="threads that parse one large file and build its report (default: all cores)")
    p.add_argument("--peak-tflops", metavar="TFLOPS", help="dense peak TFLOP/s: 989, or bf16=989,fp8=1979")
    p.add_argument("--peak-tbps", type=_positive, metavar="TBPS", help="memory bandwidth in TB/s")
    p.add_argument("--params", type=_positive, metavar="N", help="parameter count, with --tokens-per-step")
    p.add_argument("--tokens-per-step", type=_positive, metavar="T", help="tokens per step, with --params")
    p.add_argument("--what-if", metavar="TARGET=PCT%", help="the step time with a bucket or names made faster")
    args = p.parse_args(argv)
    if (args.params is None) != (args.tokens_per_step is None):
        p.error("--params and --tokens-per-step go together")
    try:
        report = analyze(
            args.paths,
            top=args.top,
            rules=args.rules,
            range_ms=args.range,
            threads=args.threads,
            peak_tflops=args.peak_tflops,
            peak_tbps=args.peak_tbps,
            params=args.params,
            tokens_per_step=args.tokens_per_step,
            what_if=args.what_if,
        )
    except TracesightError as e:
        print(f"tracesight: error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        p.error(str(e))
    if args.csv is not None:
        try:
            report.to_csv(args.csv)
        except OSError as e:
            print(f"tracesight: cannot write CSV files to {args.csv}: {e}", file=sys.stderr)
            return 1
    if args.json:
        print(report.to_json())
    elif args.markdown:
        print(report.markdown())
    else:
        print(report.text(), end="")
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
