"""The Report and Diff as Python objects: the JSON of `tracesight --json` with attribute
access, tables that become pandas DataFrames, and how a report shows itself in Jupyter."""

from __future__ import annotations

import html
import json
import os
from typing import Any, Dict, List

from . import _tracesight


def wrap(v: Any) -> Any:
    """JSON values with attribute access: dicts become Obj, lists of dicts become Table."""
    if isinstance(v, dict):
        return Obj(v)
    if isinstance(v, list):
        return Table(wrap(x) for x in v)
    return v


class Obj:
    """A JSON object with attribute access (`report.gpu.busy_us`); `to_dict()` gives it back."""

    __slots__ = ("_d",)

    def __init__(self, d: Dict[str, Any]):
        object.__setattr__(self, "_d", d)

    def __getattr__(self, name: str) -> Any:
        try:
            return wrap(self._d[name])
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return wrap(self._d[name])

    def __contains__(self, name: str) -> bool:
        return name in self._d

    def __dir__(self):
        return list(self._d)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Obj) and self._d == other._d

    def __repr__(self) -> str:
        return f"Obj({json.dumps(self._d)[:200]})"

    def to_dict(self) -> Dict[str, Any]:
        return self._d


class Table(list):
    """A list of rows (Obj) that becomes a pandas DataFrame with `to_pandas()`."""

    def to_dicts(self) -> List[Any]:
        return [r.to_dict() if isinstance(r, Obj) else r for r in self]

    def to_pandas(self):
        try:
            import pandas as pd
        except ImportError as e:  # pandas is optional: say how to get it
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        return pd.DataFrame(self.to_dicts())


# The columns of the per-trace tables; `file` and `rank` lead each row so the tables of several
# ranks stack into one DataFrame.
_TRACE_TABLES = ("buckets", "kernels", "ops", "steps", "top_kernels", "top_ops", "hints", "diagnostics")


class Report(Obj):
    """A tracesight Report: `traces` (one per file), `errors`, `ranks` and `job` (several
    ranks). The per-trace tables (`buckets`, `kernels`, `ops`, `steps`, `top_kernels`,
    `top_ops`, `hints`, `diagnostics`) stack every trace's rows with `file` and `rank` first."""

    __slots__ = ()

    @classmethod
    def from_json(cls, text: str) -> "Report":
        return cls(json.loads(text))

    def __getattr__(self, name: str) -> Any:
        if name in _TRACE_TABLES:
            return Table(
                Obj({"file": t["file"], "rank": t.get("rank"), **row})
                for t in self._d["traces"]
                for row in t.get(name, [])
            )
        if name == "ranks":
            return wrap(self._d.get("ranks", []))
        return super().__getattr__(name)

    def __repr__(self) -> str:
        files = ", ".join(t["file"] for t in self._d["traces"])
        return f"<tracesight.Report of {len(self._d['traces'])} trace(s): {files}>"

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self._d, indent=indent)

    def text(self) -> str:
        """The text report, as the CLI prints it."""
        return _tracesight.render_text(json.dumps(self._d))

    def to_csv(self, dir_name: Any) -> List[str]:
        """Writes the tables as CSV files into `dir_name` (created if missing), as
        `tracesight --csv DIR` does; returns the files' paths."""
        os.makedirs(dir_name, exist_ok=True)
        written = []
        for name, text in _tracesight.csv_files(self.to_json(indent=None)):
            path = os.path.join(dir_name, name)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            written.append(path)
        return written

    def markdown(self) -> str:
        """The Markdown summary, as `tracesight --markdown` prints it."""
        return _tracesight.render_markdown(json.dumps(self._d))

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def _repr_html_(self) -> str:
        return "".join(_trace_html(t) for t in self._d["traces"]) + _errors_html(self._d.get("errors", []))


def _esc(v: Any) -> str:
    return html.escape(str(v))


def _us(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:.2f} s"
    if v >= 1e3:
        return f"{v / 1e3:.2f} ms"
    return f"{v:.1f} us"


def _bars(buckets: List[Dict[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>{_esc(b['name'])}</td><td style='text-align:right'>{_us(b['time_us'])}</td>"
        f"<td style='text-align:right'>{b['pct']:.1f}%</td><td style='width:220px'>"
        f"<div style='background:#4c78a8;height:10px;width:{max(b['pct'], 0.5):.1f}%'></div></td></tr>"
        for b in buckets
    )
    return f"<table><tr><th>bucket</th><th>GPU time</th><th>share</th><th></th></tr>{rows}</table>"


def _trace_html(t: Dict[str, Any]) -> str:
    g, dev, att = t["gpu"], t["device"], t["attention"]
    head = (
        f"<h4>{_esc(t['file'])}{' (rank ' + _esc(t['rank']) + ')' if t.get('rank') is not None else ''}</h4>"
        f"<p>{_esc(dev.get('name') or 'unknown device')}: kernel time {_us(g['kernel_time_us'])}, "
        f"busy {_us(g['busy_us'])} of a {_us(g['span_us'])} span (idle {_us(g['idle_us'])}), "
        f"{g['kernel_count']} kernels. Attention: <b>{_esc(att['backend'])}</b>"
        f"{' (' + _esc(att['library']) + ')' if att.get('library') else ''}.</p>"
    )
    tops = "".join(
        f"<tr><td><code>{_esc(k['short'])}</code></td><td>{_esc(k['bucket'])}</td>"
        f"<td style='text-align:right'>{_us(k['time_us'])}</td><td style='text-align:right'>{k['pct']:.1f}%</td></tr>"
        for k in t["top_kernels"][:10]
    )
    hints = "".join(
        f"<li><b>{_esc(h['severity'])}</b> {_esc(h['message'])} "
        f"<i>({_us(h.get('stake_us', 0.0))} at stake)</i></li>"
        for h in t["hints"]
    )
    return (
        f"<div class='tracesight'>{head}{_bars(t['buckets'])}"
        f"<table><tr><th>top kernel</th><th>bucket</th><th>time</th><th>share</th></tr>{tops}</table>"
        f"<ul>{hints}</ul></div>"
    )


def _errors_html(errors: List[Dict[str, Any]]) -> str:
    if not errors:
        return ""
    items = "".join(f"<li>{_esc(e['file'])}: {_esc(e['message'])}</li>" for e in errors)
    return f"<p>Files that could not be read:</p><ul>{items}</ul>"


class Diff(Obj):
    """What changed between two runs, as `tracesight diff --json` gives it (`verdict`,
    `metrics`, `buckets`, `kernels`, `ops`), with the CI limits checked (`checks`, `failed`)
    and the CLI's text (`text`) and Markdown (`markdown`)."""

    __slots__ = ()

    @classmethod
    def from_parts(cls, diff: str, checks: str, text: str, md: str) -> "Diff":
        d = json.loads(diff)
        d["checks"] = json.loads(checks)
        d["text"], d["markdown"] = text, md
        return cls(d)

    @property
    def failed(self) -> Table:
        return Table(c for c in self.checks if not c.passed)

    def __repr__(self) -> str:
        return f"<tracesight.Diff: {self._d['verdict']}>"

    def _repr_markdown_(self) -> str:
        return self._d["markdown"]
