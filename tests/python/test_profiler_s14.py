"""torch 2.13's profiler details (session 14): the Python function and `nn.Module:` rows of a
with_stack profile, and benchmark.Compare tables. Each case checks the expectation written here
under ember and, where torch is installed, under torch with the same code."""

import json

from _docs_check import _libs

import ember


def _model(T):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = T.nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x).relu()

    return Net()


def _ancestors(e):
    out = []
    while e.cpu_parent is not None:
        e = e.cpu_parent
        out.append(e.name)
    return out


def _run_model(m, x):
    return m(x).sum()


def test_with_stack_records_python_calls_and_module_rows():
    for T in _libs():
        m, x = _model(T), T.ones(3, 4)
        with T.profiler.profile(with_stack=True) as prof:
            _run_model(m, x)
        events = prof.events()
        names = [e.name for e in events]
        assert "nn.Module: Net_0" in names and "nn.Module: Linear_0" in names, T.__name__
        mine = [n for n in names if "test_profiler_s14.py(" in n]
        assert any(n.endswith(": _run_model") for n in mine), T.__name__
        assert any(n.endswith(": forward") for n in mine), T.__name__
        (linear,) = [e for e in events if e.name == "aten::linear"]
        up = _ancestors(linear)
        assert up.index("nn.Module: Linear_0") < up.index("nn.Module: Net_0"), T.__name__
        (relu,) = [e for e in events if e.name == "aten::relu"]
        assert "nn.Module: Linear_0" not in _ancestors(relu), T.__name__
        module_rows = [e for e in events if e.name.startswith("nn.Module: ")]
        assert all(e.is_python_function and e.python_module_id == 0 for e in module_rows)
        # ops keep no stack of their own in torch 2.13: the calls are rows
        assert all(e.stack == [] for e in events), T.__name__


def test_with_stack_key_averages_and_trace(tmp_path):
    for T in _libs():
        m, x = _model(T), T.ones(3, 4)
        with T.profiler.profile(with_stack=True) as prof:
            m(x)
        table = prof.key_averages(group_by_stack_n=5).table(sort_by="self_cpu_time_total")
        assert "Source Location" not in table.splitlines()[1], T.__name__
        keys = {e.key for e in prof.key_averages(group_by_stack_n=5)}
        assert {"nn.Module: Net_0", "nn.Module: Linear_0", "aten::linear"} <= keys
        path = tmp_path / "py.json"
        prof.export_chrome_trace(str(path))
        py = [
            e
            for e in json.loads(path.read_text())["traceEvents"]
            if e.get("cat") == "python_function"
        ]
        ids = {e["args"]["Python id"]: e for e in py}
        assert sorted(ids) == list(range(1, len(py) + 1)), T.__name__
        lin = next(e for e in py if e["name"] == "nn.Module: Linear_0")
        assert list(lin["args"]) == ["Python parent id", "Python id", "Python module id", "Ev Idx"]
        parent = ids[lin["args"]["Python parent id"]]
        assert parent["name"].endswith(": forward"), T.__name__
        roots = [e for e in py if e["args"]["Python parent id"] is None]
        assert roots and all("Python module id" not in e["args"] for e in roots)
        stacks = tmp_path / "stacks.txt"
        prof.export_stacks(str(stacks))
        assert stacks.read_text() == "", T.__name__


def test_with_stack_off_records_no_python_rows():
    m, x = _model(ember), ember.ones(3, 4)
    with ember.profiler.profile() as prof:
        m(x)
    assert not any(e.is_python_function for e in prof.events())
    assert not any(e.name.startswith("nn.Module") for e in prof.events())


def _measurements(B):
    out = []
    for desc, sub, times in [
        ("ember", "[1, 64]", [1.2e-6, 1.3e-6, 1.25e-6]),
        ("torch", "[1, 64]", [2.5e-6, 2.4e-6, 2.6e-6]),
        ("ember", "[64, 64]", [12.5e-6, 13.0e-6]),
        ("torch", "[64, 64]", [30.5e-6, 31.0e-6, 29.0e-6]),
    ]:
        spec = B.TaskSpec(
            stmt="f(x)", setup="", label="add", sub_label=sub, description=desc, num_threads=1
        )
        out.append(
            B.Measurement(number_per_run=10, raw_times=[t * 10 for t in times], task_spec=spec)
        )
    return out


def test_compare_tables_of_fixed_measurements():
    import importlib

    expected = None
    for T in _libs():
        B = importlib.import_module(T.__name__ + ".utils.benchmark")
        c = B.Compare(_measurements(B))
        plain = str(c)
        c.trim_significant_figures()
        trimmed = str(c)
        c.colorize()
        got = (plain, trimmed, str(c))
        if expected is None:
            expected = got
        assert got == expected, T.__name__
    plain, trimmed, coloured = expected
    assert plain.splitlines()[:5] == [
        "[------------- add --------------]",
        "                |  ember  |  torch",
        "1 threads: -----------------------",
        "      [1, 64]   |    1.3  |    2.5",
        "      [64, 64]  |   12.8  |   30.5",
    ]
    assert "Times are in microseconds (us)." in plain and "\x1b[92m" in coloured
