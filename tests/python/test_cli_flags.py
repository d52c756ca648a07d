"""`python -m tracesight` against the CLI for the flags beyond --json/--markdown/--top/--range:
--csv, --threads and the roofline and what-if options give the CLI's output."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tracesight

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CLI = os.environ.get("TRACESIGHT_BIN", str(ROOT / "target" / "release" / "tracesight"))
FIXTURE = FIXTURES / "current_schema.json"
TWO = [FIXTURE, FIXTURES / "math_sdpa.json"]


def both(*args):
    if not os.access(CLI, os.X_OK):
        pytest.fail(f"no CLI at {CLI}: build it (cargo build --release) or set TRACESIGHT_BIN")
    args = [str(a) for a in args]
    c = subprocess.run([CLI, *args], capture_output=True, text=True)
    p = subprocess.run([sys.executable, "-m", "tracesight", *args], capture_output=True, text=True)
    return c, p


FLAGS = [
    ["--threads", "1"],
    ["--threads", "3"],
    ["--peak-tflops", "500", "--peak-tbps", "2"],
    ["--peak-tflops", "bf16=400,fp32=60"],
    ["--params", "7e9", "--tokens-per-step", "4096"],
    ["--what-if", "gemm=30%"],
]


@pytest.mark.parametrize("flags", FLAGS, ids=[" ".join(f) for f in FLAGS])
def test_flags_give_the_clis_json_and_text(flags):
    c, p = both("--json", *flags, *TWO)
    assert p.returncode == c.returncode == 0, p.stderr
    assert json.loads(p.stdout) == json.loads(c.stdout)
    c, p = both(*flags, *TWO)
    assert p.stdout == c.stdout


def test_the_roofline_flags_change_the_report():
    # Not a check that cannot fail: the flags reach the core and move its figures.
    plain = tracesight.analyze(FIXTURE).to_dict()
    peaks = tracesight.analyze(FIXTURE, peak_tflops=500, peak_tbps=2).to_dict()
    model = tracesight.analyze(FIXTURE, params=7e9, tokens_per_step=4096).to_dict()
    assert peaks["traces"][0]["efficiency"] != plain["traces"][0]["efficiency"]
    assert model["traces"][0]["efficiency"] != plain["traces"][0]["efficiency"]
    assert tracesight.analyze(FIXTURE, threads=1).to_dict() == plain


def test_csv_writes_the_clis_files(tmp_path):
    c = subprocess.run([CLI, "--csv", str(tmp_path / "cli"), *map(str, TWO)], capture_output=True, text=True)
    p = subprocess.run([sys.executable, "-m", "tracesight", "--csv", str(tmp_path / "py"), *map(str, TWO)],
                       capture_output=True, text=True)
    assert (c.returncode, p.returncode) == (0, 0), p.stderr
    assert p.stdout == c.stdout
    cli_files = sorted(os.listdir(tmp_path / "cli"))
    assert "ranks.csv" in cli_files and "current_schema.kernels.csv" in cli_files, cli_files
    assert sorted(os.listdir(tmp_path / "py")) == cli_files
    for name in cli_files:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    # The API too.
    written = tracesight.analyze(TWO).to_csv(tmp_path / "api")
    assert sorted(os.path.basename(w) for w in written) == cli_files


def test_usage_errors_exit_2_as_the_cli_does():
    for flags in (["--params", "7e9"], ["--threads", "0"], ["--peak-tbps", "-1"], ["--peak-tflops", "fast"],
                  ["--what-if", "nonsense"]):
        c, p = both(*flags, FIXTURE)
        assert (p.returncode, c.returncode) == (2, 2), (flags, p.stderr)
