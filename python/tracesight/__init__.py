"""tracesight: where does my GPU time go? PyTorch profiler (Kineto) traces, analysed by the
same Rust core as the tracesight CLI and page.

    import tracesight
    report = tracesight.analyze("trace.json.gz")      # a trace, a report, or a directory
    report                                             # in Jupyter: the summary
    report.kernels.to_pandas()                         # every kernel, as a DataFrame
    tracesight.diff("before.json.gz", "after.json.gz").verdict

The figures are exactly those of `tracesight --json`: the report is that JSON, read into
Python objects with attribute access.
"""

from __future__ import annotations

import os
import socket
import time
import warnings
from typing import Callable, Iterable, Optional, Sequence, Tuple, Union

from . import _tracesight
from ._report import Diff, Report, Table
from ._tracesight import TOOL_VERSION


class TracesightError(Exception):
    """An input that could not be read: `id` (`not_json`, `truncated`, `empty`, ...), `file`
    and `message`, as the CLI names them."""

    def __init__(self, id: str, file: str, message: str):
        super().__init__(id, file, message)
        self.id, self.file, self.message = id, file, message

    def __str__(self) -> str:
        return f"{self.file}: {self.message} [{self.id}]"


def _core(f, *args):
    try:
        return f(*args)
    except _tracesight.TracesightError as e:
        raise TracesightError(*e.args) from None

__all__ = ["analyze", "diff", "on_trace_ready", "Report", "Diff", "Table", "TracesightError", "__version__"]
__version__ = TOOL_VERSION

PathLike = Union[str, "os.PathLike[str]"]


def _paths(p: Union[PathLike, Iterable[PathLike]]) -> list:
    if isinstance(p, (str, os.PathLike)):
        return [os.fspath(p)]
    return [os.fspath(x) for x in p]


def analyze(
    path_or_paths: Union[PathLike, Iterable[PathLike]],
    top: int = 25,
    rules: Optional[str] = None,
    range_ms: Optional[Tuple[float, float]] = None,
    *,
    threads: Optional[int] = None,
    peak_tflops: Union[None, float, str] = None,
    peak_tbps: Optional[float] = None,
    params: Optional[float] = None,
    tokens_per_step: Optional[float] = None,
    what_if: Optional[str] = None,
) -> Report:
    """Analyses traces (plain or gzip JSON), tracesight JSON reports, or directories of them
    (one file per rank), into one Report.

    `top`: rows of the top-kernel and top-op tables; `rules`: a rules file (or its text) that
    puts kernel names in buckets first; `range_ms`: (from, to) in ms of the trace's GPU
    timeline, to restrict the analysis to. The CLI's other flags as keywords: `threads`
    (`--threads`, default every core; the report is the same whatever the number),
    `peak_tflops` (`989` or `"bf16=989,fp8=1979"`), `peak_tbps`, `params` with
    `tokens_per_step` (the analytic 6·N·T MFU), `what_if` (`"gemm=30%"`). Raises
    TracesightError (`.id`, `.file`, `.message`) when no input can be read; files that fail
    beside readable ones are listed in `report.errors`, with a warning.
    """
    if range_ms is not None:
        range_ms = (float(range_ms[0]), float(range_ms[1]))
    peaks = None if peak_tflops is None else str(peak_tflops)
    json_text = _core(
        _tracesight.analyze_json,
        _paths(path_or_paths),
        top,
        rules,
        range_ms,
        threads,
        peaks,
        peak_tbps,
        params,
        tokens_per_step,
        what_if,
    )
    report = Report.from_json(json_text)
    for e in report.errors:
        warnings.warn(f"tracesight: {e.file}: {e.message}", stacklevel=2)
    return report


def diff(a: PathLike, b: PathLike, fail_if: Sequence[str] = (), top: int = 25) -> Diff:
    """What changed from `a` to `b` (each a trace, a report, or a directory of ranks), with
    the same verdict as `tracesight diff`. `fail_if` takes the CLI's limits
    (`"step_time>+5%"`, `"gemm>+10%"`); `Diff.failed` lists those crossed."""
    d, checks, text, md = _core(_tracesight.diff_json, os.fspath(a), os.fspath(b), list(fail_if), top)
    return Diff.from_parts(d, checks, text, md)


def on_trace_ready(
    dir_name: PathLike,
    worker_name: Optional[str] = None,
    use_gzip: bool = False,
    summary: bool = True,
    printer: Callable[[str], None] = print,
) -> Callable[[object], None]:
    """A handler for `torch.profiler.profile(on_trace_ready=...)`: writes each trace as
    `torch.profiler.tensorboard_trace_handler` does (`{worker}.{time_ns}.pt.trace.json[.gz]`
    in `dir_name`) and prints tracesight's text summary of it, so a training script reports
    its profile as it runs. The handler's `last_report` holds the latest Report."""
    dir_name = os.fspath(dir_name)

    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        report = analyze(path)
        handler.last_report = report
        handler.last_path = path
        if summary:
            printer(report.text())

    handler.last_report = None
    handler.last_path = None
    return handler
