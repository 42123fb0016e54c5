"""ember.utils.benchmark: Timer's API, Measurement's statistics against numpy, and printing of
Measurement and Compare against torch.utils.benchmark's on the same times."""

import re

import numpy as np
import pytest

import ember
from ember.utils import benchmark


def _spec(b, **kw):
    base = dict(stmt="x + x", setup="pass", label="ops", sub_label=None, description=None)
    base.update(kw)
    return b.TaskSpec(**base)


def _times(n, scale, spread=0.01):
    return [scale * (1.0 + spread * ((i * 7) % n)) for i in range(n)]


def _measurements(b, spread=0.01, env=False, missing=False):
    out = []
    for threads in (1, 4):
        for size in (10, 1000):
            for desc, stmt in (("add", "x + x"), ("mul", "x * x")):
                if missing and threads == 4 and size == 10 and desc == "mul":
                    continue
                spec = _spec(
                    b,
                    stmt=stmt,
                    sub_label=f"n={size}",
                    description=desc,
                    num_threads=threads,
                    env=("A" if desc == "add" else "B") if env else None,
                )
                raw = _times(9, 3e-5 * size * (2 if desc == "mul" else 1), spread)
                out.append(b.Measurement(100, raw, spec))
    return out


def test_measurement_statistics_against_numpy():
    raw = [3.0, 1.0, 2.0, 10.0, 4.0, 5.5]
    m = benchmark.Measurement(10, raw, _spec(benchmark))
    t = np.array(raw) / 10
    assert m.times == pytest.approx(list(t))
    assert m.median == pytest.approx(np.median(t))
    assert m.mean == pytest.approx(np.mean(t))
    assert m.iqr == pytest.approx(np.percentile(t, 75) - np.percentile(t, 25))
    assert m.has_warnings  # a wide spread
    assert 1 <= m.significant_figures <= 4
    tight = benchmark.Measurement(1, [1.0 + 1e-9 * i for i in range(20)], _spec(benchmark))
    assert tight.significant_figures == 4 and not tight.has_warnings
    assert tight.meets_confidence(0.1)
    assert benchmark.trim_sigfig(3.14159, 2) == pytest.approx(3.1)
    assert benchmark.select_unit(2.5e-6) == ("us", 1e-6)
    assert benchmark.select_unit(0.3) == ("ms", 1e-3)


def test_merge_pools_times_per_task():
    a = benchmark.Measurement(2, [2.0, 4.0], _spec(benchmark))
    b = benchmark.Measurement(1, [3.0], _spec(benchmark))
    c = benchmark.Measurement(1, [9.0], _spec(benchmark, stmt="other"))
    merged = benchmark.Measurement.merge([a, b, c])
    assert [m.times for m in merged] == [[1.0, 2.0, 3.0], [9.0]]
    assert all(m.number_per_run == 1 for m in merged)


def test_timer_api():
    seen = []

    def probe():
        seen.append(ember.get_num_threads())

    before = ember.get_num_threads()
    t = benchmark.Timer(
        "probe(); y = x + x",
        setup="x = torch.ones(8)",
        globals={"probe": probe},
        label="L",
        sub_label="S",
        description="D",
        num_threads=1,
    )
    m = t.timeit(50)
    assert isinstance(m, benchmark.Measurement)
    assert m.number_per_run == 50 and len(m.raw_times) == 1
    assert (m.label, m.sub_label, m.description, m.num_threads) == ("L", "S", "D", 1)
    assert set(seen) == {1} and ember.get_num_threads() == before  # set, then restored
    calls = []
    m = t.blocked_autorange(callback=lambda n, s: calls.append((n, s)), min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and len(calls) == len(m.raw_times)
    assert all(n == m.number_per_run for n, _ in calls)
    m = t.adaptive_autorange(threshold=0.5, max_run_time=0.5)
    assert len(m.raw_times) >= 1 and sum(m.raw_times) <= 0.5 + 2 * max(m.raw_times)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat(3, 10)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.autorange()
    with pytest.raises(ValueError, match="only a `str` stmt"):
        benchmark.Timer(lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("pass", global_setup="int x;")


def test_num_threads_other_than_one_is_applied():
    seen = []
    t = benchmark.Timer(
        "probe()", globals={"probe": lambda: seen.append(ember.get_num_threads())}, num_threads=2
    )
    t.timeit(3)
    assert set(seen) == {2}


def test_measurement_repr_shape():
    m = benchmark.Measurement(100, _times(8, 2e-4), _spec(benchmark, sub_label="s"))
    lines = repr(m).splitlines()
    assert lines[0].startswith("<ember.utils.benchmark.common.Measurement object at 0x")
    assert lines[1] == "ops: s"
    assert re.fullmatch(r"  Median: \d+\.\d\d us", lines[2])
    assert re.fullmatch(r"  IQR:    \d+\.\d\d us \(\d+\.\d\d to \d+\.\d\d\)", lines[3])
    assert lines[4] == "  8 measurements, 100 runs per measurement, 1 thread"
    single = benchmark.Measurement(5, [1e-3], _spec(benchmark))
    assert repr(single).splitlines()[2:] == ["  200.00 us", "  1 measurement, 5 runs , 1 thread"]


def test_compare_layout():
    c = benchmark.Compare(_measurements(benchmark))
    text = str(c)
    assert text.splitlines()[0].startswith("[") and " ops " in text.splitlines()[0]
    assert "1 threads: " in text and "4 threads: " in text
    assert "Times are in microseconds (us)." in text
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1])


def _strip_address(text):
    return re.sub(r"<[\w.]+\.Measurement object at 0x[0-9a-f]+>", "<Measurement>", text)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"trim": True},
        {"colorize": True},
        {"colorize": "rowwise", "trim": True},
        {"highlight": True, "spread": 0.2},
        {"env": True},
        {"missing": True, "trim": True},
    ],
)
def test_compare_and_repr_match_torch(options):
    pytest.importorskip("torch")
    import torch.utils.benchmark as tb

    rendered = []
    for b in (tb, benchmark):
        ms = _measurements(
            b,
            spread=options.get("spread", 0.01),
            env=options.get("env", False),
            missing=options.get("missing", False),
        )
        c = b.Compare(ms)
        if options.get("trim"):
            c.trim_significant_figures()
        if options.get("colorize"):
            c.colorize(rowwise=options["colorize"] == "rowwise")
        if options.get("highlight"):
            c.highlight_warnings()
        reprs = [_strip_address(repr(m)) for m in ms]
        stats = [(m.median, m.mean, m.iqr, m.significant_figures, m.has_warnings) for m in ms]
        rendered.append((str(c), reprs, stats))
    assert rendered[1][0] == rendered[0][0]
    assert rendered[1][1] == rendered[0][1]
    for ours, theirs in zip(rendered[1][2], rendered[0][2]):
        assert ours[:3] == pytest.approx(theirs[:3]) and ours[3:] == theirs[3:]
