"""benchmarks/suite.py runs end to end and prints a table that parses; no timing is asserted."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

HAVE_TORCH = importlib.util.find_spec("torch") is not None

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")
NAMES = ["add (4 floats)", "sum"]
TIME = re.compile(r"^(\d+(?:\.\d+)?) (µs|ms|s)$")


def table_rows(text):
    """{workload: {column: cell}} from the suite's markdown table."""
    lines = [l for l in text.splitlines() if l.startswith("| group | workload")]
    assert len(lines) == 1, text
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    start = text.splitlines().index(lines[0]) + 2  # past the header and its |---| line
    for line in text.splitlines()[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(header), line
        rows[cells[1]] = dict(zip(header, cells))
    return rows


def seconds(cell):
    match = TIME.match(cell)
    assert match, cell
    return float(match.group(1)) * {"µs": 1e-6, "ms": 1e-3, "s": 1.0}[match.group(2)]


def test_quick_profile_prints_a_table_that_parses(tmp_path):
    only = "^(" + "|".join(re.escape(n) for n in NAMES) + ")$"
    out = subprocess.run(
        [
            sys.executable,
            os.path.join(BENCHMARKS, "suite.py"),
            "--quick",
            "--rounds",
            "1",
            "--threads",
            "1",
            "--only",
            only,
            "--json",
            str(tmp_path / "suite.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    rows = table_rows(out.stdout)
    assert sorted(rows) == sorted(NAMES)
    for name, row in rows.items():
        assert seconds(row["ember"]) > 0, row
        if HAVE_TORCH:
            assert seconds(row["torch"]) > 0, row
            assert float(row["ember/torch"]) > 0, row
        else:
            assert row["torch"] == "n/a" and row["ember/torch"] == "", row
    assert rows["sum"]["ember rate"].endswith("GB/s")  # a memory-bound row has a bandwidth
    assert re.search(r"STREAM triad \d+\.\d GB/s", out.stdout)
    if HAVE_TORCH:
        overall = re.search(r"^\| overall \| (\d+\.\d+) \| 2 \|$", out.stdout, re.M)
        assert overall and float(overall.group(1)) > 0, out.stdout
    assert (tmp_path / "suite.json").stat().st_size > 0


@pytest.fixture
def suite(monkeypatch):
    monkeypatch.syspath_prepend(BENCHMARKS)
    import suite

    return suite


def test_a_failing_workload_prints_its_error_and_the_rest_still_report(suite, capsys):
    rows = suite.Rows()
    rows.add("compute", "matmul 64", "s", "torch", 2e-6, work=["flop", 2 * 64**3])
    rows.add("compute", "matmul 64", "s", "ember", 1e-6, work=["flop", 2 * 64**3])
    rows.add("compute", "conv", "s", "torch", 1e-3)
    rows.add("compute", "conv", "s", "ember", error="RuntimeError: [conv2d] expected 4-D input")
    limits = {
        "fma_gflops": 100.0,
        "fma_core_gflops": 50.0,
        "isa": "avx2",
        "triad_gbs": 10.0,
        "triad_mib": 24,
        "notes": [],
    }
    summary = suite.summarize(rows, limits)
    args = suite.parse_args(["--threads", "1"])
    suite.print_report(args, limits, summary, ["ember", "torch"], [0.0, 0.0])
    table = table_rows(capsys.readouterr().out)
    assert table["conv"]["ember"] == "ember error: RuntimeError: [conv2d] expected 4-D input"
    assert table["conv"]["ember/torch"] == ""
    assert float(table["matmul 64"]["ember/torch"]) == pytest.approx(0.5)
    # 2*64^3 flops in 1 µs is 524.3 GFLOP/s: 524% of a 100 GFLOP/s peak, 262% for torch.
    assert table["matmul 64"]["ember rate"] == "524.3 GFLOP/s"
    assert (table["matmul 64"]["ember % peak"], table["matmul 64"]["torch % peak"]) == (
        "524%",
        "262%",
    )
    assert suite.geomeans(summary) == {
        "overall": (pytest.approx(0.5), 1),
        "compute": (pytest.approx(0.5), 1),
    }
