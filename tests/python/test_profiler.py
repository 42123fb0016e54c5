"""ember.profiler and ember.autograd.profiler: every op recorded by the dispatcher (forward,
backward, other threads), user ranges, tables, traces, schedules, shapes and memory."""

import concurrent.futures
import json
import threading
import warnings

import pytest

import ember
from ember.autograd import profiler as autograd_profiler
from ember.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

TABLE_COLUMNS = [
    "Name",
    "Self CPU %",
    "Self CPU",
    "CPU total %",
    "CPU total",
    "CPU time avg",
    "# of Calls",
]


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))


def _run_model(lib, model, x, prof_mod):
    with prof_mod.record_function("forward"):
        loss = model(x).sum()
    with prof_mod.record_function("backward"):
        loss.backward()


def _profile_model(**kwargs):
    model = _model(ember)
    x = ember.randn(3, 4)
    with profile(activities=[ProfilerActivity.CPU], **kwargs) as prof:
        _run_model(ember, model, x, ember.profiler)
    return prof


def _ancestors(evt):
    out = []
    while evt.cpu_parent is not None:
        evt = evt.cpu_parent
        out.append(evt.name)
    return out


def _header_columns(table):
    header = table.splitlines()[1]
    return [c.strip() for c in header.split("  ") if c.strip()]


def test_forward_backward_ops_and_counts():
    prof = _profile_model()
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::linear"].count == 2
    assert avg["aten::addmm"].count == 2
    assert avg["aten::relu"].count == 1
    # One sum in the forward; the backward sums the bias gradients.
    fwd_sums = [e for e in prof.events() if e.name == "aten::sum" and "forward" in _ancestors(e)]
    assert len(fwd_sums) == 1
    assert avg["forward"].count == 1 and avg["backward"].count == 1
    # The backward pass: the engine's ranges per node, and the ops the nodes ran.
    assert avg["autograd::engine::evaluate_function: AddmmBackward0"].count == 2
    assert avg["AddmmBackward0"].count == 2
    assert avg["aten::mm"].count >= 3  # weight gradients of both layers, input gradient of one
    for e in prof.events():
        ancestors = _ancestors(e)
        if e.name in ("aten::addmm", "aten::relu", "aten::linear"):
            assert "forward" in ancestors, (e.name, ancestors)
            assert "backward" not in ancestors
        if e.name == "aten::mm":
            assert "backward" in ancestors
            assert any(a.startswith("AddmmBackward0") for a in ancestors)
    # Nested ranges contain their ops: an op's interval lies inside its parent's.
    for e in prof.events():
        if e.cpu_parent is not None:
            assert e.cpu_parent.time_range.start <= e.time_range.start
            assert e.time_range.end <= e.cpu_parent.time_range.end
            assert e in e.cpu_parent.cpu_children
            assert e.thread == e.cpu_parent.thread
    # Self time excludes the children; total includes them.
    fwd = avg["forward"]
    assert fwd.cpu_time_total >= fwd.self_cpu_time_total >= 0
    assert fwd.cpu_time_total >= avg["aten::linear"].cpu_time_total


def test_table_columns_and_row_limit():
    prof = _profile_model()
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    lines = table.splitlines()
    assert _header_columns(table) == TABLE_COLUMNS
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert len(lines) == 3 + 5 + 2
    assert lines[-1].startswith("Self CPU time total: ")
    # Sorted by total CPU time, the user range that holds the forward comes before its ops.
    totals = [
        e.cpu_time_total for e in sorted(prof.key_averages(), key=lambda e: -e.cpu_time_total)
    ]
    assert totals == sorted(totals, reverse=True)
    for key in ("self_cpu_time_total", "cpu_time_total", "count", "cpu_memory_usage"):
        assert prof.key_averages().table(sort_by=key, row_limit=3).count("\n") == 3 + 3 + 2
    assert str(prof.key_averages()) == prof.key_averages().table()


def test_event_attributes():
    prof = _profile_model(record_shapes=True)
    evt = next(e for e in prof.events() if e.name == "aten::addmm")
    for attr in [
        "id",
        "name",
        "key",
        "thread",
        "count",
        "cpu_time",
        "cpu_time_total",
        "self_cpu_time_total",
        "cpu_children",
        "cpu_parent",
        "input_shapes",
        "cpu_memory_usage",
        "self_cpu_memory_usage",
        "device_type",
        "time_range",
        "is_user_annotation",
        "is_async",
        "device_time_total",
        "stack",
        "flops",
    ]:
        assert hasattr(evt, attr), attr
    assert evt.key == evt.name == "aten::addmm"
    assert evt.count == 1
    assert evt.input_shapes == [[8], [3, 4], [4, 8], [], []]
    assert evt.device_type == autograd_profiler.DeviceType.CPU
    assert evt.time_range.elapsed_us() == evt.cpu_time_total
    assert not evt.is_user_annotation
    rng = next(e for e in prof.events() if e.name == "forward")
    assert rng.is_user_annotation
    avg = next(e for e in prof.key_averages() if e.key == "aten::addmm")
    for attr in ["key", "count", "cpu_time", "cpu_time_total", "self_cpu_time_total"]:
        assert hasattr(avg, attr)
    assert avg.cpu_time == pytest.approx(avg.cpu_time_total / avg.count)


def test_record_shapes_grouping():
    a, b, w = ember.randn(2, 3), ember.randn(5, 3), ember.randn(3, 4)
    with profile(record_shapes=True) as prof:
        for _ in range(2):
            ember.mm(a, w)
        ember.mm(b, w)
    rows = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::mm"]
    assert {str(e.input_shapes): e.count for e in rows} == {
        "[[2, 3], [3, 4]]": 2,
        "[[5, 3], [3, 4]]": 1,
    }
    table = prof.key_averages(group_by_input_shape=True).table()
    assert _header_columns(table)[-1] == "Input Shapes"
    assert "[[5, 3], [3, 4]]" in table
    # Without grouping, one row per name and no shapes column.
    assert [e.count for e in prof.key_averages() if e.key == "aten::mm"] == [3]
    assert "Input Shapes" not in prof.key_averages().table()


def test_profile_memory():
    x, y = ember.ones(256, 1024), ember.ones(256, 1024)
    with profile(profile_memory=True) as prof:
        with record_function("adds"):
            z = x + y
            del z
    avg = {e.key: e for e in prof.key_averages()}
    nbytes = 256 * 1024 * 4
    assert avg["aten::add"].cpu_memory_usage >= nbytes
    assert avg["aten::add"].self_cpu_memory_usage >= nbytes
    # The user range holds the allocation (its child's) and the free (its own).
    assert avg["adds"].cpu_memory_usage <= 0
    assert avg["adds"].self_cpu_memory_usage <= -nbytes
    columns = _header_columns(prof.key_averages().table())
    assert columns[columns.index("CPU time avg") + 1 : columns.index("# of Calls")] == [
        "CPU Mem",
        "Self CPU Mem",
    ]
    assert "1.00 MB" in prof.key_averages().table()
    # Memory instant events in the trace carry the sizes.
    with_mem = prof.profiler.function_events._trace["traceEvents"]
    sizes = [e["args"]["Bytes"] for e in with_mem if e["name"] == "[memory]"]
    assert nbytes in sizes and -nbytes in sizes


def _check_well_nested(events):
    by_tid = {}
    for e in events:
        by_tid.setdefault(e["tid"], []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-3:
                stack.pop()
            if stack:
                top = stack[-1]
                assert e["ts"] + e["dur"] <= top["ts"] + top["dur"] + 2e-3, (e, top)
            stack.append(e)
    return by_tid


def test_chrome_trace(tmp_path):
    prof = _profile_model(record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert isinstance(trace["traceEvents"], list)
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for e in xs:
        assert {"ts", "dur", "pid", "tid", "name", "args", "cat"} <= set(e)
        assert e["dur"] >= 0
    names = {e["name"] for e in xs}
    assert {"forward", "backward", "aten::addmm", "aten::mm", "AddmmBackward0"} <= names
    assert {e["cat"] for e in xs if e["name"] == "forward"} == {"user_annotation"}
    assert {e["cat"] for e in xs if e["name"] == "aten::addmm"} == {"cpu_op"}
    assert [e["args"]["Input Dims"] for e in xs if e["name"] == "aten::addmm"][0] == [
        [8],
        [3, 4],
        [4, 8],
        [],
        [],
    ]
    _check_well_nested(xs)
    # Thread names for the viewer.
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in trace["traceEvents"])
    # gzip output
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    assert ember.profiler.profiler._open_trace(gz)["traceEvents"] == trace["traceEvents"]


def test_ops_of_other_threads_have_their_thread_ids():
    x = ember.randn(64, 64)
    tids = {}

    def work(i):
        with record_function(f"worker{i}"):
            ember.mm(x, x)
        tids[i] = threading.get_native_id()

    barrier_ops = []
    with profile() as prof:
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            list(ex.map(work, range(4)))
        barrier_ops.append(ember.mm(x, x))
    events = prof.events()
    main = threading.get_native_id()
    for i in range(4):
        rng = [e for e in events if e.name == f"worker{i}"]
        assert len(rng) == 1
        assert rng[0].thread == tids[i] != main
        assert [c.name for c in rng[0].cpu_children] == ["aten::mm"]
        assert rng[0].cpu_children[0].thread == tids[i]
    assert any(e.name == "aten::mm" and e.thread == main for e in events)


def test_pool_worker_events_have_distinct_thread_ids(tmp_path):
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    # The caller takes chunks too: on a loaded machine it may finish an op before the worker wakes,
    # so the op runs often enough for the worker to take part at least once.
    try:
        a, b = ember.randn(1 << 21), ember.randn(1 << 21)
        with profile() as prof:
            for _ in range(20):
                a + b
    finally:
        ember.set_num_threads(threads)
    main = threading.get_native_id()
    adds = [e for e in prof.events() if e.name == "aten::add"]
    assert len(adds) == 20 and {e.thread for e in adds} == {main}
    workers = [e for e in prof.events() if e.name == "ember::parallel_for: aten::add"]
    assert workers, [e.name for e in prof.events()]
    assert all(e.thread != main for e in workers)
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    xs = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    assert len(_check_well_nested(xs)) >= 2


def test_record_function_nesting_and_decorator():
    @record_function("decorated")
    def f(x):
        return x * 2

    x = ember.ones(3)
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                f(x)
            f(x)
    events = prof.events()
    decorated = [e for e in events if e.name == "decorated"]
    assert len(decorated) == 2
    assert _ancestors(decorated[0]) == ["inner", "outer"]
    assert _ancestors(decorated[1]) == ["outer"]
    assert [c.name for c in decorated[0].cpu_children] == ["aten::mul"]
    # An exception closes the range it passes through.
    with profile() as prof:
        with pytest.raises(ValueError):
            with record_function("raises"):
                raise ValueError("x")
        ember.ones(2) + 1
    add = next(e for e in prof.events() if e.name == "aten::add")
    assert add.cpu_parent is None
    # Without a profile, record_function records nothing and costs nothing visible.
    with record_function("idle"):
        pass
    assert not ember._C._profiler_enabled()


def test_start_stop_and_errors():
    prof = profile()
    prof.start()
    ember.ones(2) + 1
    prof.stop()
    assert any(e.key == "aten::add" for e in prof.key_averages())
    with pytest.raises(AssertionError, match="Profiler must be initialized before getting key"):
        profile().key_averages()  # torch's error before start
    with profile():
        with pytest.raises(RuntimeError, match="already recording"):
            ember._C._profiler_start(False, False)
    assert not ember._C._profiler_enabled()


def test_schedule_actions():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    actions = [s(i).name for i in range(11)]
    assert actions == [
        "NONE",
        "NONE",
        "WARMUP",
        "RECORD",
        "RECORD_AND_SAVE",
        "NONE",
        "WARMUP",
        "RECORD",
        "RECORD_AND_SAVE",
        "NONE",
        "NONE",
    ]
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)  # torch's class and text


def test_schedule_fires_on_trace_ready():
    traces = []

    def ready(p):
        steps = {e.name for e in p.events() if e.name.startswith("ProfilerStep")}
        traces.append((p.step_num, sorted(steps)))
        numbered = {e.trace_name for e in p.events() if e.name.startswith("ProfilerStep")}
        assert numbered == {f"ProfilerStep#{p.step_num - 2}", f"ProfilerStep#{p.step_num - 1}"}

    x = ember.ones(4)
    with profile(
        schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready
    ) as p:
        for _ in range(10):
            x + 1
            p.step()
    # on_trace_ready runs as step() enters the step after the cycle's last active one; the
    # steps show as "ProfilerStep*" in events (their trace names keep the number).
    assert traces == [(4, ["ProfilerStep*"]), (8, ["ProfilerStep*"])]
    # repeat=0 cycles until the end; the trace cut by stop() is saved too.
    count = []
    with profile(
        schedule=schedule(wait=0, warmup=1, active=1), on_trace_ready=lambda p: count.append(1)
    ) as p:
        for _ in range(5):
            x + 1
            p.step()
    assert len(count) == 3  # steps 1 and 3, and step 5, being recorded when the profile stops
    # Without a schedule, stop() hands the one trace over.
    count.clear()
    with profile(on_trace_ready=lambda p: count.append(len(p.events()))):
        x + 1
    assert count and count[0] >= 1


def test_tensorboard_trace_handler(tmp_path):
    x = ember.ones(4)
    handler = tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0")
    with profile(
        schedule=schedule(wait=0, warmup=1, active=1, repeat=3), on_trace_ready=handler
    ) as p:
        for _ in range(8):
            x * 2
            p.step()
    files = sorted((tmp_path / "tb").iterdir())
    assert len(files) == 3
    for f in files:
        assert f.name.startswith("w0.") and f.name.endswith(".pt.trace.json")
        trace = json.loads(f.read_text())
        assert any(e["name"] == "aten::mul" for e in trace["traceEvents"])
    gz = tensorboard_trace_handler(str(tmp_path / "gz"), use_gzip=True)
    with profile(on_trace_ready=gz):
        x * 2
    (f,) = (tmp_path / "gz").iterdir()
    assert f.name.endswith(".pt.trace.json.gz")
    assert ember.profiler.profiler._open_trace(f)["traceEvents"]


def test_autograd_profiler_api():
    x = ember.ones(3, requires_grad=True)
    with autograd_profiler.profile(record_shapes=True) as prof:
        with autograd_profiler.record_function("step"):
            (x * x).sum().backward()
    names = {e.key for e in prof.key_averages()}
    assert {"step", "aten::mul", "aten::sum", "MulBackward0"} <= names
    assert prof.table().startswith("-")
    assert isinstance(prof.function_events, autograd_profiler.EventList)
    total = prof.function_events.total_average()
    assert total.key == "Total" and total.count == len(prof.function_events)
    with autograd_profiler.profile(enabled=False) as off:
        x * 2
    assert off.function_events is None
    # NVTX is CUDA's: as torch built without CUDA, an enabled block fails on entry
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        with autograd_profiler.emit_nvtx():
            x * 2
    with autograd_profiler.emit_nvtx(enabled=False), autograd_profiler.profile() as p2:
        x * 2
    assert any(e.name == "aten::mul" for e in p2.events())


def test_with_flops():
    a, b = ember.randn(8, 16), ember.randn(16, 4)
    with profile(with_flops=True) as prof:
        ember.mm(a, b)
    (mm,) = [e for e in prof.events() if e.name == "aten::mm"]
    assert mm.flops == 2 * 8 * 16 * 4
    assert "FLOPs" in _header_columns(prof.key_averages().table())[-1]


def test_op_names_are_atens():
    names = {
        autograd_profiler._op_display_name(op["name"])
        for op in ember._C._op_schemas()
        if "::" not in op["name"]  # custom ops other tests define keep their own namespace
    }
    assert autograd_profiler._op_display_name("mylib::foo.out") == "mylib::foo"
    assert "aten::add" in names and "aten::mm" in names and "aten::_softmax" in names
    assert all(n.startswith(("aten::", "ember::")) for n in names)
    torch = pytest.importorskip("torch")
    for n in names:
        if n.startswith("aten::"):
            assert hasattr(torch.ops.aten, n[len("aten::") :]), n


def test_structure_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.profiler as tprof

    tmodel = _model(torch)
    tx = torch.randn(3, 4)
    with tprof.profile(
        activities=[tprof.ProfilerActivity.CPU], record_shapes=True, profile_memory=True
    ) as tp:
        _run_model(torch, tmodel, tx, tprof)
    ep = _profile_model(record_shapes=True, profile_memory=True)
    for group in (False, True):
        t_table = tp.key_averages(group_by_input_shape=group).table(row_limit=5)
        e_table = ep.key_averages(group_by_input_shape=group).table(row_limit=5)
        assert _header_columns(e_table) == _header_columns(t_table)
        assert e_table.splitlines()[-1].split(":")[0] == t_table.splitlines()[-1].split(":")[0]
    t_avg, e_avg = tp.key_averages()[0], ep.key_averages()[0]
    public = lambda o: {a for a in dir(o) if not a.startswith("_")}  # noqa: E731
    assert public(t_avg) - public(e_avg) <= {"add", "node_id", "is_legacy"} | public(e_avg)
    missing_evt = public(tp.events()[0]) - public(ep.events()[0])
    # Device-side details (flow ids, python ids, kernels' correlation) have no CPU meaning here.
    assert missing_evt <= {
        "activity_type",
        "event_metadata",
        "external_id",
        "flow_id",
        "flow_start",
        "flow_type",
        "input_dtypes",
        "is_python_function",
        "linked_correlation_id",
        "python_id",
        "python_module_id",
        "python_parent_id",
        "structured_input_shapes",
        "structured_input_strides",
    }, missing_evt
    t_names = {e.key for e in tp.key_averages()}
    e_names = {e.key for e in ep.key_averages()}
    common = {
        "forward",
        "backward",
        "aten::linear",
        "aten::addmm",
        "aten::relu",
        "aten::sum",
        "aten::mm",
        "AddmmBackward0",
        "autograd::engine::evaluate_function: AddmmBackward0",
    }
    assert common <= t_names and common <= e_names
    t_counts = {e.key: e.count for e in tp.key_averages()}
    e_counts = {e.key: e.count for e in ep.key_averages()}
    for k in ("aten::linear", "aten::addmm", "aten::relu", "AddmmBackward0"):
        assert e_counts[k] == t_counts[k], k
    # Both schedules agree.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in (
            dict(wait=1, warmup=1, active=2, repeat=2, skip_first=3),
            dict(wait=0, warmup=0, active=1),
            dict(wait=2, warmup=1, active=3, repeat=0, skip_first=0),
        ):
            ts, es = tprof.schedule(**kw), schedule(**kw)
            assert [ts(i).name for i in range(30)] == [es(i).name for i in range(30)]
    assert ProfilerAction.RECORD_AND_SAVE.name == tprof.ProfilerAction.RECORD_AND_SAVE.name


def test_acc_events_keeps_earlier_cycles():
    x = ember.ones(4)
    seen = []
    with profile(
        schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
        on_trace_ready=lambda p: seen.append(
            sum(e.count for e in p.key_averages() if e.key == "aten::mul")
        ),
        acc_events=True,
    ) as p:
        for _ in range(6):
            x * 2
            p.step()
    assert seen == [1, 2]
    assert sum(e.count for e in p.key_averages() if e.key == "aten::mul") == 2


def test_a_range_open_when_the_profile_stops_is_closed_at_stop():
    a = ember.ones(2)
    prof = profile()
    prof.start()
    rf = record_function("open")
    rf.__enter__()
    a + a
    prof.stop()
    rf.__exit__(None, None, None)  # after the profile: ignored
    (evt,) = [e for e in prof.events() if e.name == "open"]
    assert [c.name for c in evt.cpu_children] == ["aten::add"]
    assert evt.time_range.end >= evt.cpu_children[0].time_range.end


def _ranged():
    with record_function("ranged"):
        ember.ones(2) + 1


def test_with_stack_records_python_calls_as_rows(tmp_path):
    # torch 2.13: with_stack gives no per-event stacks (export_stacks writes nothing); each
    # Python call is a row of its own with the ranges and ops it ran nested inside.
    with profile(with_stack=True) as prof:
        _ranged()
    (evt,) = [e for e in prof.events() if e.name == "ranged"]
    assert evt.stack == []
    assert evt.cpu_parent.is_python_function and evt.cpu_parent.name.endswith(": _ranged")
    assert "test_profiler.py(" in evt.cpu_parent.name
    assert "Source Location" not in prof.key_averages(group_by_stack_n=1).table()
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    assert path.read_text() == ""
