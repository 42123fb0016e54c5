"""torch 2.13's profiler links between forward ops and backward nodes, and rows of backward
kernels (session 17): the "Sequence number" and "Fwd thread id" of the Chrome trace's args and of
FunctionEvent, nll_loss_backward's argument list, bmm's resolve_conj rows. Each case checks the
expectation written here under ember and, where torch is installed, under torch with the same
code."""

import json

import pytest
from _docs_check import _libs


def _trace(T, prof, path):
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("cat") == "cpu_op"]


def _linked_program(T):
    x = T.ones(2, 3, requires_grad=True)
    w = T.ones(3, 4)
    with T.profiler.profile(record_shapes=True) as prof:
        y = T.mm(x, w)
        with T.no_grad():
            T.mm(x, w)  # no graph, no number
        s = y.add(1.5, alpha=2).sum()
        s.backward()
    return prof


@pytest.fixture(scope="module", params=_libs(), ids=lambda T: T.__name__)
def linked(request, tmp_path_factory):
    T = request.param
    prof = _linked_program(T)
    return T, prof, _trace(T, prof, tmp_path_factory.mktemp(T.__name__) / "t.json")


def _seq(args):
    return args.get("Sequence number")


def test_forward_ops_and_their_backward_nodes_share_a_sequence_number(linked):
    T, prof, evs = linked
    by_name = {}
    for e in evs:
        by_name.setdefault(e["name"], []).append(e["args"])
    mm, mm_no_grad, mm_backward = by_name["aten::mm"]
    add, (total, *_) = by_name["aten::add"][0], by_name["aten::sum"]
    forward = [_seq(mm), _seq(add), _seq(total)]
    assert None not in forward and forward == sorted(set(forward)), T.__name__
    assert [a["Fwd thread id"] for a in (mm, add, total)] == [0, 0, 0], T.__name__
    # under no_grad, inside a kernel, and in the backward pass: none
    assert _seq(mm_no_grad) is None and _seq(mm_backward) is None, T.__name__
    assert all(_seq(a) is None for a in by_name["aten::resolve_conj"]), T.__name__
    for op, node in ((mm, "MmBackward0"), (add, "AddBackward0"), (total, "SumBackward0")):
        for name in (node, "autograd::engine::evaluate_function: " + node):
            (args,) = by_name[name]
            assert _seq(args) == _seq(op), (T.__name__, name)
            assert args["Fwd thread id"] >= 1, (T.__name__, name)
    # the forward thread of each node is the one that ran the forward
    assert len({by_name[n][0]["Fwd thread id"] for n in ("MmBackward0", "SumBackward0")}) == 1
    for name in (
        "torch::autograd::AccumulateGrad",
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
    ):
        assert _seq(by_name[name][0]) is None, (T.__name__, name)
    # FunctionEvent carries the same numbers
    events = {e.name: e for e in prof.events() if e.name.endswith("Backward0")}
    assert events["MmBackward0"].sequence_nr == _seq(mm), T.__name__
    assert events["MmBackward0"].fwd_thread == by_name["MmBackward0"][0]["Fwd thread id"]
    first = next(e for e in prof.events() if e.name == "aten::resolve_conj")
    assert (first.sequence_nr, first.fwd_thread) == (-1, 0), T.__name__


def test_the_number_comes_before_the_record_function_id_in_rows_with_inputs(linked, tmp_path):
    T, _, evs = linked
    order = ("External id", "Sequence number", "Fwd thread id", "Record function id")
    for e in evs:
        keys = [k for k in e["args"] if k in order]
        if e["name"].startswith("autograd::engine::evaluate_function: "):
            assert keys[:2] == ["External id", "Record function id"], (T.__name__, keys)
            assert "Input Dims" not in e["args"], T.__name__
        elif e["name"] == "aten::mm" and "Sequence number" in e["args"]:
            assert keys == list(order), (T.__name__, keys)
            assert list(e["args"])[-2:] == ["Input Dims", "Ev Idx"], T.__name__
    # without record_shapes, after it
    with T.profiler.profile() as prof:
        T.ones(2, requires_grad=True).mul(2)
    (mul,) = [e for e in _trace(T, prof, tmp_path / "t.json") if e["name"] == "aten::mul"]
    keys = list(mul["args"])
    assert keys == [
        "External id",
        "Record function id",
        "Sequence number",
        "Fwd thread id",
        "Ev Idx",
    ]


def _rows(prof):
    return [
        (e.name, e.input_shapes, e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()
    ]


def test_nll_loss_backward_lists_torchs_arguments():
    for T in _libs():
        x = T.zeros(4, 5, requires_grad=True)
        target = T.tensor([0, 2, 1, 4])
        loss = T.nn.functional.nll_loss(x, target)
        with T.profiler.profile(record_shapes=True) as prof:
            loss.backward(retain_graph=True)
        rows = _rows(prof)
        row = ("aten::nll_loss_backward", [[], [4, 5], [4], [], [], [], []], "NllLossBackward0")
        assert row in rows, (T.__name__, rows)
        assert ("aten::zero_", [[4, 5]], "aten::nll_loss_backward") in rows, T.__name__
        assert [r[0] for r in rows].count("aten::nll_loss_backward") == 1, T.__name__
        with T.profiler.profile() as prof:
            loss.backward()
        (row,) = [r for r in _rows(prof) if r[0] == "aten::nll_loss_backward"]
        assert row[1] == [], T.__name__


def test_bmm_passes_each_operand_through_resolve_conj():
    for T in _libs():
        a = T.ones(2, 4, 3).transpose(1, 2)  # strides neither row- nor column-major matter
        b = T.ones(2, 4, 5)
        with T.profiler.profile(record_shapes=True) as prof:
            T.bmm(a, b)
        assert _rows(prof) == [
            ("aten::bmm", [[2, 3, 4], [2, 4, 5]], None),
            ("aten::resolve_conj", [[2, 4, 5]], "aten::bmm"),
            ("aten::resolve_conj", [[2, 3, 4]], "aten::bmm"),
        ], T.__name__


def test_backward_rows_of_sum_and_accumulate_grad():
    for T in _libs():
        x = T.ones(4, 5, requires_grad=True)
        with T.profiler.profile(record_shapes=True) as prof:
            (x * 2).sum().backward()
        rows = _rows(prof)
        # a full sum's gradient expands as it is: no unsqueeze rows
        assert ("aten::expand", [[], [], []], "SumBackward0") in rows, (T.__name__, rows)
        assert not [r for r in rows if r[0] == "aten::unsqueeze"], (T.__name__, rows)
        # the stolen gradient (mul's fresh result) has two detach rows, both listing it
        assert ("detach", [[4, 5]], "aten::detach") in rows, (T.__name__, rows)


def test_python_ops_record_numbers_factories_none(tmp_path):
    for T in _libs():
        x = T.ones(1, 1, 4, 4, requires_grad=True)
        logp = T.zeros(2, 3, requires_grad=True)
        with T.profiler.profile(record_shapes=True) as prof:
            T.nn.functional.max_pool2d(x, 2)
            T.nn.functional.nll_loss(logp, T.tensor([0, 2]))
            T.zeros(3)
            T.ones_like(x)
        evs = _trace(T, prof, tmp_path / f"{T.__name__}.json")
        seq = {e["name"]: "Sequence number" in e["args"] for e in evs}
        assert seq["aten::max_pool2d"] and seq["aten::max_pool2d_with_indices"], T.__name__
        assert seq["aten::nll_loss_nd"] and seq["aten::nll_loss"], T.__name__
        factories = ("aten::zeros", "aten::zero_", "aten::ones_like", "aten::fill_")
        assert not any(seq[n] for n in factories), (T.__name__, seq)
        (nd,) = [e for e in evs if e["name"] == "aten::nll_loss_nd"]
        assert nd["args"]["Input Dims"] == [[2, 3], [2], [], [], []], T.__name__
        rows = _rows(prof)
        assert ("aten::nll_loss", [[2, 3], [2], [], [], []], "aten::nll_loss_nd") in rows


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_toggle_collection_dynamic_leaves_out_what_starts_while_off(T):
    P = T.profiler
    cpu = [P.ProfilerActivity.CPU]
    x = T.ones(3)
    with P.profile(activities=cpu) as prof:
        x.sin()
        prof.toggle_collection_dynamic(False, cpu)
        x.cos()
        with P.record_function("hidden"):
            x.tan()
        prof.toggle_collection_dynamic(True, cpu)
        with P.record_function("shown"):
            x.neg()
    keys = {e.key for e in prof.key_averages()}
    assert {"aten::sin", "shown", "aten::neg"} <= keys
    assert not keys & {"aten::cos", "hidden", "aten::tan"}
    with P.profile(activities=cpu) as prof:
        with P.record_function("outer"):  # open when collection stops: kept
            x.sin()
            prof.toggle_collection_dynamic(False, cpu)
            x.cos()
    keys = {e.key for e in prof.key_averages()}
    assert {"outer", "aten::sin"} <= keys and "aten::cos" not in keys


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_tensorboard_trace_handler_names_files_by_worker_and_ns(T, tmp_path):
    P = T.profiler
    handler = P.tensorboard_trace_handler(str(tmp_path), worker_name="w0", use_python_export=True)
    with P.profile(
        activities=[P.ProfilerActivity.CPU],
        schedule=P.schedule(wait=1, warmup=1, active=1, repeat=1),
        on_trace_ready=handler,
    ) as prof:
        for _ in range(4):
            T.ones(2).sin()
            prof.step()
    (name,) = [p.name for p in tmp_path.iterdir()]
    worker, stamp, rest = name.split(".", 2)
    assert (worker, rest) == ("w0", "pt.trace.json") and len(stamp) >= 19, name
    with open(tmp_path / name) as f:
        names = {e["name"] for e in json.load(f)["traceEvents"]}
    assert {"ProfilerStep#2", "aten::sin"} <= names


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_export_stacks_format_metrics_and_device_type(T, tmp_path):
    util = T.autograd.profiler_util
    evt = util.FunctionEvent(0, "aten::mm", 1, 0.0, 7.0, stack=["a.py(1): f", "b.py(2): g h"])
    quiet = util.FunctionEvent(1, "aten::add", 1, 8.0, 8.0, stack=["a.py(3): k"])  # 0 us
    events = util.EventList([evt, quiet])
    events.export_stacks(str(tmp_path / "s.txt"), "self_cpu_time_total")
    assert (tmp_path / "s.txt").read_text() == "b.py(2):_g_h;a.py(1):_f 7\n"
    events.export_stacks(str(tmp_path / "d.txt"), "self_privateuse1_time_total")  # device time
    assert (tmp_path / "d.txt").read_text() == ""
    with pytest.raises(ValueError, match=r"metric should be one of: \['self_cpu_time_total', "):
        events.export_stacks(str(tmp_path / "x.txt"), "self_device_time_total")
    assert str(evt.device_type) == "DeviceType.CPU" and evt.device_type != 0


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_profiler_errors_and_results_before_stop(T):
    P, AP = T.profiler, T.autograd.profiler
    for kw in (dict(wait=-1, warmup=1, active=1), dict(wait=1, warmup=1, active=0)):
        with pytest.raises(AssertionError, match="Invalid profiler schedule arguments. Got wait="):
            P.schedule(**kw)
    with pytest.raises(AssertionError, match="Profiler must be initialized before accessing ev"):
        P.profile().events()
    with pytest.raises(AssertionError, match="Profiler must be initialized before exporting ch"):
        P.profile().export_chrome_trace("unused.json")
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        with pytest.raises(AssertionError, match="No activities specified for the profiler"):
            P.profile(activities=[P.ProfilerActivity.CUDA]).start()
    with pytest.raises(RuntimeError, match="Expected a value of type 'str' for argument 'name'"):
        P.record_function(3).__enter__()
    with AP.profile() as ap:
        T.ones(1).sin()
        assert len(ap.key_averages()) == 0 and ap.self_cpu_time_total == 0  # not parsed yet
    assert "aten::sin" in {e.key for e in ap.key_averages()}
    with P.profile() as prof:
        T.ones(1).sin()
        assert len(prof.events()) == 0 and len(prof.key_averages()) == 0
    assert "aten::sin" in {e.key for e in prof.key_averages()}


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_post_processing_timeout_returns_partial_results(T):
    P = T.profiler
    for timeout, some in ((0.0, False), (30.0, True)):
        with P.profile(post_processing_timeout_s=timeout) as prof:
            T.ones(3).sin()
        assert ("aten::sin" in {e.name for e in prof.events()}) is some
    with pytest.raises(ValueError, match="post_processing_timeout_s must be non-negative"):
        T.autograd.profiler.profile(post_processing_timeout_s=-1.0)


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_a_profile_started_inside_another_takes_its_session_over(T, capfd, tmp_path):
    P, AP = T.profiler, T.autograd.profiler
    x = T.ones(2, 2)
    for outer_cls, inner_cls in ((P.profile, P.profile), (AP.profile, P.profile)):
        with outer_cls() as outer:
            T.mm(x, x)  # dropped with the outer profile's session
            with inner_cls() as inner:
                T.add(x, x)
            T.sub(x, x)
        assert {e.key for e in inner.key_averages()} == {"aten::add"}, T.__name__
        assert len(outer.key_averages()) == 0, T.__name__
        assert "disableProfiler called but no active profiling session found" in (
            capfd.readouterr().err
        ), T.__name__
    with P.profile() as after:
        T.mul(x, x)
    assert {e.key for e in after.key_averages()} == {"aten::mul"}, T.__name__
    if T.__name__ == "ember":  # torch 2.13 crashes exporting the cancelled profile's trace
        outer.export_chrome_trace(str(tmp_path / "t.json"))
        with open(tmp_path / "t.json") as f:
            events = json.load(f)["traceEvents"]
        assert not [e for e in events if e.get("cat") == "cpu_op"]
