"""The capabilities torch.profiler's documentation and profiler recipe show, run under ember (and,
where torch is installed, under torch with the same code, the results compared): record_function
ranges, key_averages tables (columns, sort keys, group_by_input_shape, profile_memory, stacks),
schedules with on_trace_ready, tensorboard_trace_handler, export_chrome_trace, the legacy
torch.autograd.profiler API. Timings differ by nature; names, columns and structure must not."""

import importlib
import json
import os
import re

import pytest
from _docs_check import _each

import ember


def _prof(T):
    return importlib.import_module(f"{T.__name__}.profiler")


def _table(text):
    """(header columns, first-column names of the rows, footer with times masked) of a table."""
    lines = text.strip("\n").split("\n")
    seps = [i for i, line in enumerate(lines) if line and set(line) <= {"-", " "}]
    header = re.split(r"\s{2,}", lines[seps[0] + 1].strip())
    rows = [re.split(r"\s{2,}", line.strip())[0] for line in lines[seps[1] + 1 : seps[2]]]
    footer = [re.sub(r"[\d.]+\s*(us|ms|s)$", "<t>", line) for line in lines[seps[-1] + 1 :]]
    return header, rows, footer


def _net(T):
    T.manual_seed(0)
    return T.nn.Sequential(
        T.nn.Conv2d(3, 4, 3), T.nn.ReLU(), T.nn.Flatten(), T.nn.Linear(4 * 6 * 6, 5)
    )


# Ops of the recipe's model both profilers name the same way (each records more internals).
_MODEL_OPS = {
    "aten::conv2d",
    "aten::convolution",
    "aten::relu",
    "aten::flatten",
    "aten::view",
    "aten::linear",
    "aten::t",
    "aten::transpose",
    "aten::addmm",
}


def test_recipe_table_with_record_function():
    def case(T):
        P = _prof(T)
        m, x = _net(T), T.randn(2, 3, 8, 8)
        with P.profile(activities=[P.ProfilerActivity.CPU], record_shapes=True) as prof:
            with P.record_function("model_inference"):
                m(x)
        header, rows, footer = _table(
            prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
        )
        names = {e.key for e in prof.key_averages()}
        return (
            header,
            len(rows),
            rows[0],
            footer,
            sorted(names & (_MODEL_OPS | {"model_inference"})),
        )

    header, n, first, footer, names = _each(case)
    assert header[:2] == ["Name", "Self CPU %"] and header[-1] == "# of Calls"
    assert n == 10 and first == "model_inference" and footer == ["Self CPU time total: <t>"]
    assert len(names) == len(_MODEL_OPS) + 1


def test_group_by_input_shape_and_memory_columns():
    def case(T):
        P = _prof(T)
        m, x = _net(T), T.randn(2, 3, 8, 8)
        with P.profile(record_shapes=True, profile_memory=True) as prof:
            m(x)
        shaped = prof.key_averages(group_by_input_shape=True)
        relu = [
            str(e.input_shapes)
            for e in shaped
            if e.key in ("aten::relu", "aten::conv2d", "aten::linear")
        ]
        return (
            _table(shaped.table(sort_by="cpu_time_total", row_limit=5))[0],
            _table(prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=5))[0],
            relu,
            [e.cpu_memory_usage for e in prof.key_averages() if e.key == "aten::relu"],
        )

    shape_cols, mem_cols, relu, relu_mem = _each(case)
    assert shape_cols[-1] == "Input Shapes" and "Self CPU Mem" in mem_cols
    assert "[[2, 144], [5, 144], [5]]" in relu and relu_mem == [2 * 4 * 6 * 6 * 4]


def test_factories_are_ops_with_their_allocation_inside():
    def case(T):
        P = _prof(T)
        x = T.ones(2)
        out = []
        for make in (
            lambda: T.ones(2),
            lambda: T.zeros(2),
            lambda: T.empty(2),
            lambda: T.full((2,), 3.0),
            lambda: T.randn(2),
            lambda: T.rand(2),
            lambda: T.ones_like(x),
            lambda: T.empty_like(x),
        ):
            with P.profile() as prof:
                make()
            events = prof.events()
            top = [e.name for e in events if e.cpu_parent is None]
            inner = [(e.cpu_parent.name, e.name) for e in events if e.cpu_parent is not None]
            out.append((top, sorted(i for i in inner if "empty" in i[1])))
        return out

    res = _each(case)
    assert res[0] == (["aten::ones"], [("aten::ones", "aten::empty")])
    assert res[2] == (["aten::empty"], [])


def test_schedule_and_on_trace_ready():
    def case(T):
        P = _prof(T)
        calls = []

        def handler(p):
            calls.append((p.step_num, sorted(e.key for e in p.key_averages() if "step" in e.key)))

        x = T.ones(2)
        sched = P.schedule(wait=1, warmup=1, active=2, repeat=1)
        with P.profile(schedule=sched, on_trace_ready=handler) as prof:
            for i in range(8):
                with P.record_function(f"step{i}"):
                    x = x * 2
                prof.step()
        actions = P.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
        return calls, [str(actions(i)).split(".")[-1] for i in range(12)]

    calls, actions = _each(case)
    assert calls == [(4, ["step2", "step3"])]
    assert actions[:6] == ["NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE"]


def test_tensorboard_trace_handler_and_chrome_trace(tmp_path):
    def case(T):
        P = _prof(T)
        d = tmp_path / T.__name__
        x = T.ones(2)
        sched = P.schedule(wait=0, warmup=0, active=1, repeat=1)
        handler = P.tensorboard_trace_handler(str(d), worker_name="w")
        with P.profile(schedule=sched, on_trace_ready=handler) as prof:
            for _ in range(3):
                x = x + 1
                prof.step()
        files = [re.sub(r"\d+", "N", f) for f in os.listdir(d)]
        m = _net(T)
        with P.profile() as prof:
            with P.record_function("model_inference"):
                m(T.randn(1, 3, 8, 8))
        path = tmp_path / f"{T.__name__}.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
        spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
        keys = sorted({k for e in spans if e["cat"] == "cpu_op" for k in e})
        user = [e["cat"] for e in spans if e["name"] == "model_inference"]
        ops = sorted({e["name"] for e in spans if e["cat"] == "cpu_op"} & _MODEL_OPS)
        return files, sorted({e["cat"] for e in spans}), keys, user, ops

    files, cats, keys, user, ops = _each(case)
    assert files == ["w.N.pt.trace.json"] and cats == ["Trace", "cpu_op", "user_annotation"]
    assert keys == ["args", "cat", "dur", "name", "ph", "pid", "tid", "ts"]
    assert user == ["user_annotation"] and len(ops) == len(_MODEL_OPS)


def test_backward_ops_and_record_function_decorator():
    def case(T):
        P = _prof(T)

        @P.record_function("my_fn")
        def f(x):
            return x * 2

        T.manual_seed(0)
        lin = T.nn.Linear(4, 3)
        with P.profile() as prof:
            f(T.ones(2))
            f(T.ones(2))
            lin(T.randn(2, 4)).sum().backward()
        counts = {e.key: e.count for e in prof.key_averages()}
        engine = sorted(
            k for k in counts if "AccumulateGrad" in k or "SumBackward" in k or "TBackward" in k
        )
        return counts["my_fn"], engine

    calls, engine = _each(case)
    assert calls == 2
    assert "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad" in engine
    assert "TBackward0" in engine  # the node of weight.t() in Linear


def test_legacy_autograd_profiler_and_nvtx():
    def case(T):
        with T.autograd.profiler.profile(record_shapes=True) as prof:
            with T.autograd.profiler.record_function("label-z"):
                T.ones(2, 2).mm(T.ones(2, 2))
        names = [e.name for e in prof.function_events][:4]
        cols = _table(prof.key_averages().table(sort_by="self_cpu_time_total"))[0]
        try:
            with T.autograd.profiler.emit_nvtx():
                pass
            nvtx = "ran"
        except AssertionError as e:
            nvtx = str(e)
        with T.autograd.profiler.emit_itt():
            itt = float(T.ones(2).sum())
        return names, cols, type(prof.key_averages()).__name__, nvtx, itt

    names, cols, kind, nvtx, itt = _each(case)
    assert names == ["label-z", "aten::ones", "aten::empty", "aten::fill_"]
    assert cols[-1] == "# of Calls" and kind == "EventList" and itt == 2.0
    assert nvtx == "Torch not compiled with CUDA enabled"


def test_flops_column():
    def case(T):
        P = _prof(T)
        with P.profile(with_flops=True, record_shapes=True) as prof:
            T.ones(4, 5).mm(T.ones(5, 6))
        mm = [e.flops for e in prof.key_averages() if e.key == "aten::mm"]
        return mm, _table(prof.key_averages().table(sort_by="cpu_time_total"))[0][-1]

    assert _each(case) == ([240], "Total FLOPs")


def test_sort_by_unknown_key_is_an_error():
    for T in [ember] + ([pytest.importorskip("torch")] if _has_torch() else []):
        P = _prof(T)
        with P.profile() as prof:
            T.ones(2).add(1)
        with pytest.raises(AttributeError):
            prof.key_averages().table(sort_by="nonsense")


def _has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True
