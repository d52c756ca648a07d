"""The Python package, installed in a virtual environment (scripts/test-python.sh), against the
CLI built from the same tree ($TRACESIGHT_BIN): the same figures, field by field."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tracesight

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared" / "traces"
CLI = os.environ.get("TRACESIGHT_BIN", str(ROOT / "target" / "release" / "tracesight"))
FIXTURE = FIXTURES / "current_schema.json"


def cli(*args, check=True):
    if not os.access(CLI, os.X_OK):
        pytest.fail(f"no CLI at {CLI}: build it (cargo build --release) or set TRACESIGHT_BIN")
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check and p.returncode not in (0, 1, 3):
        raise AssertionError(p.stderr)
    return p


def cli_json(*args):
    return json.loads(cli("--json", *args).stdout)


def shared(name):
    p = SHARED / name
    if not p.exists():
        pytest.skip(f"{p} is absent (real traces live outside the repository)")
    return p


TRACES = sorted(p.name for p in FIXTURES.glob("*.json"))


@pytest.mark.parametrize("name", TRACES)
def test_analyze_equals_the_cli_on_every_fixture(name):
    r = tracesight.analyze(FIXTURES / name)
    assert r.to_dict() == cli_json(FIXTURES / name)


@pytest.mark.parametrize(
    "name", ["h100-bert-small-flash.json.gz", "a100-nccl-2rank-rank0.json.gz", "mi300x-ddp-resnet18.json.gz"]
)
def test_analyze_equals_the_cli_on_real_traces(name):
    path = shared(name)
    assert tracesight.analyze(path).to_dict() == cli_json(path)


def test_a_directory_of_ranks_equals_the_cli_with_its_ranks_table():
    d = shared("dlrm-8rank-v100")
    r = tracesight.analyze(d)
    assert r.to_dict() == cli_json(d)
    df = r.ranks.to_pandas()
    assert len(df) == 8 and {"rank", "busy_us", "idle_us", "exposed_comm_us", "mfu_pct"} <= set(df.columns)
    assert sorted(df["rank"]) == list(range(8))


def test_options_reach_the_core_as_the_cli_flags_do():
    r = tracesight.analyze(FIXTURE, top=2, range_ms=(0.1, 0.6))
    assert r.to_dict() == cli_json("--top", 2, "--range", "0.1..0.6", FIXTURE)
    assert len(r.traces[0].top_kernels) == 2
    assert r.traces[0].window.start_ns > 0


def test_tables_become_dataframes_with_their_documented_columns():
    r = tracesight.analyze([FIXTURE, FIXTURES / "math_sdpa.json"])
    cols = {
        "buckets": {"file", "rank", "id", "name", "time_us", "pct", "count", "rule"},
        "kernels": {"file", "rank", "name", "bucket", "time_us", "count"},
        "ops": {"file", "rank", "name", "time_us", "count"},
        "steps": {"file", "rank", "name", "span_us", "busy_us", "idle_us", "kernel_time_us", "cpu_us"},
        "hints": {"file", "rank", "id", "severity", "message", "evidence", "fix", "stake_us"},
    }
    for table, want in cols.items():
        df = getattr(r, table).to_pandas()
        assert want <= set(df.columns), (table, sorted(df.columns))
        # Rows of both traces, each labelled with its file.
        assert set(df["file"]) <= {"current_schema.json", "math_sdpa.json"}
    buckets = r.buckets.to_pandas()
    one = buckets[buckets.file == "current_schema.json"]
    assert abs(one.pct.sum() - 100.0) < 1e-6
    assert one.time_us.sum() == pytest.approx(r.traces[0].gpu.kernel_time_us)


def test_attribute_access_and_round_trips():
    r = tracesight.analyze(FIXTURE)
    t = r.traces[0]
    assert t.device.name == "NVIDIA H100 80GB HBM3"
    assert t.attention.backend == "flash"
    assert json.loads(r.to_json()) == r.to_dict()
    with pytest.raises(AttributeError):
        t.no_such_field


def test_text_and_markdown_are_the_clis():
    r = tracesight.analyze(FIXTURE)
    assert r.text() == cli(FIXTURE).stdout
    assert r.markdown() + "\n" == cli("--markdown", FIXTURE).stdout
    assert r._repr_markdown_() == r.markdown()


def test_the_html_repr_shows_the_headline_buckets_verdict_kernels_and_hints():
    r = tracesight.analyze(FIXTURE)
    t = r.traces[0]
    h = r._repr_html_()
    assert "current_schema.json" in h and "NVIDIA H100 80GB HBM3" in h
    assert "<b>flash</b> (PyTorch FA2)" in h
    for b in t.buckets:
        assert b.name.replace("/", "/") in h.replace("&amp;", "&")
    assert t.top_kernels[0].short[:40] in h
    for hint in t.hints:
        assert hint.message[:40].replace("'", "&#x27;") in h.replace("&gt;", ">")
    # Well formed enough for a notebook: every opened tag is closed.
    for tag in ("div", "table", "tr", "td", "ul", "li", "p", "h4"):
        assert h.count(f"<{tag}") == h.count(f"</{tag}>"), tag


def test_a_broken_file_raises_with_the_diagnostics_id_and_message(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(tracesight.TracesightError) as e:
        tracesight.analyze(empty)
    assert e.value.id == "empty" and e.value.file == "empty.json"
    readme = tmp_path / "notes.json"
    readme.write_text("# not a trace")
    with pytest.raises(tracesight.TracesightError) as e:
        tracesight.analyze(readme)
    assert e.value.id == "not_json" and "not JSON at byte 0" in e.value.message
    assert str(e.value).startswith("notes.json: not JSON")


def test_a_cut_trace_keeps_what_was_read_with_a_diagnostic(tmp_path):
    data = FIXTURE.read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(data)[:-40])
    r = tracesight.analyze(cut)
    assert r.traces[0].events > 0
    assert any(d.severity == "error" for d in r.traces[0].diagnostics)
    assert r.to_dict()["traces"][0]["diagnostics"] == cli_json(cut)["traces"][0]["diagnostics"]


def test_one_unreadable_file_beside_good_ones_is_listed_and_warned(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1,")
    with pytest.warns(UserWarning, match="bad.json"):
        r = tracesight.analyze([FIXTURE, bad])
    assert len(r.traces) == 1 and [e.file for e in r.errors] == ["bad.json"]
    assert r.errors.to_dicts() == cli_json(FIXTURE, bad)["errors"]


def test_diff_has_the_clis_verdict_and_gates():
    a, b = FIXTURE, FIXTURES / "math_sdpa.json"
    d = tracesight.diff(a, b)
    want = json.loads(cli("diff", "--json", a, b).stdout)
    got = {k: v for k, v in d.to_dict().items() if k not in ("checks", "text", "markdown")}
    assert got == want
    assert d.verdict.startswith("B is") and d.text == cli("diff", a, b).stdout
    g = tracesight.diff(a, b, fail_if=["gemm>+10%", "gemm<-10%"])
    crossed = [c.limit.text for c in g.failed]
    assert crossed == ["gemm<-10%"]
    p = subprocess.run([sys.executable, "-m", "tracesight", "diff", str(a), str(b), "--fail-if", "gemm<-10%"],
                       capture_output=True, text=True)
    assert p.returncode == 3 == cli("diff", a, b, "--fail-if", "gemm<-10%").returncode
    assert p.stdout == cli("diff", a, b, "--fail-if", "gemm<-10%").stdout


def test_python_m_tracesight_prints_what_the_cli_prints():
    for flags in ([], ["--json"], ["--markdown"], ["--top", "3"]):
        p = subprocess.run([sys.executable, "-m", "tracesight", *flags, str(FIXTURE)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        want = cli(*flags, FIXTURE).stdout
        if "--json" in flags:
            assert json.loads(p.stdout) == json.loads(want)
        else:
            assert p.stdout == want


class FakeProfiler:
    """What on_trace_ready needs of torch.profiler.profile: export_chrome_trace(path)."""

    def __init__(self, source):
        self.source = source

    def export_chrome_trace(self, path):
        data = self.source.read_bytes()
        if path.endswith(".gz"):
            data = gzip.compress(data)
        Path(path).write_bytes(data)


@pytest.mark.parametrize("use_gzip", [False, True])
def test_on_trace_ready_writes_as_tensorboard_does_and_prints_the_summary(tmp_path, use_gzip):
    printed = []
    handler = tracesight.on_trace_ready(tmp_path / "prof", worker_name="w0", use_gzip=use_gzip, printer=printed.append)
    handler(FakeProfiler(FIXTURE))
    files = os.listdir(tmp_path / "prof")
    assert len(files) == 1
    assert re.fullmatch(r"w0\.\d+\.pt\.trace\.json" + (r"\.gz" if use_gzip else ""), files[0])
    assert printed == [handler.last_report.text()]
    assert handler.last_report.traces[0].gpu.to_dict() == cli_json(FIXTURE)["traces"][0]["gpu"]


def test_on_trace_ready_with_a_real_torch_profiler(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed in this environment")
    printed = []
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        on_trace_ready=tracesight.on_trace_ready(tmp_path, printer=printed.append),
    ) as prof:
        torch.randn(64, 64) @ torch.randn(64, 64)
    assert prof is not None and len(printed) == 1 and len(os.listdir(tmp_path)) == 1


def test_a_notebook_shows_the_report(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="nbformat/nbclient are not installed")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import tracesight\ntracesight.analyze({str(FIXTURE)!r})")]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    out = nb.cells[0].outputs[0]["data"]
    assert "text/html" in out and "current_schema.json" in out["text/html"]
    assert "text/markdown" in out
