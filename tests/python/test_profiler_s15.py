"""torch 2.13's Chrome trace layout and profile_memory rows (session 15). Each case checks the
expectation written here under ember and, where torch is installed, under torch with the same
code."""

import json

from _docs_check import _libs

_FLAGS = ("with_stack", "profile_memory", "record_shapes", "with_modules", "with_flops")


def _trace(T, path, **kwargs):
    x = T.ones(8, 8)
    with T.profiler.profile(**kwargs) as prof:
        with T.profiler.record_function("blk"):
            (x * 2).relu()
        prof.add_metadata("note", "v")
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return json.load(f)


def test_trace_top_level_keys_follow_the_options(tmp_path):
    for T in _libs():
        for on in (
            (),
            ("record_shapes",),
            ("profile_memory", "with_flops"),
            ("with_stack", "with_modules", "record_shapes"),
        ):
            path = tmp_path / f"{T.__name__}_{'_'.join(on)}.json"
            js = _trace(T, path, **{name: True for name in on})
            flags = [name for name in _FLAGS if name in on]
            expected = ["schemaVersion", "deviceProperties", "trace_id", *flags, "note"]
            expected += ["host_name", "displayTimeUnit", "baseTimeNanoseconds", "traceEvents"]
            expected += ["traceName"]
            assert list(js) == expected, (T.__name__, on)
            assert all(js[name] == 1 for name in flags), T.__name__
            assert js["note"] == "v" and js["traceName"] == str(path), T.__name__


def test_trace_events_layout_and_numbering(tmp_path):
    for T in _libs():
        js = _trace(T, tmp_path / f"{T.__name__}.json", profile_memory=True)
        evs = js["traceEvents"]
        meta = [(e["name"], e["pid"], e["args"]) for e in evs if e["ph"] == "M"]
        pid = meta[0][1]
        assert [m[0] for m in meta[:3]] == ["process_name", "process_labels", "process_sort_index"]
        assert meta[2][2] == {"sort_index": pid}, T.__name__
        threads = [m for m in meta if m[0] == "thread_name"]
        assert threads and all(m[2]["name"].endswith(" (python)") for m in threads), T.__name__
        assert ("process_sort_index", "Spans", {"sort_index": 536870912}) in meta, T.__name__
        body = [e for e in evs if e["ph"] != "M"]
        kinds = [e.get("cat") for e in body]
        ops = [e for e in body if e.get("cat") in ("cpu_op", "user_annotation")]
        memory = [e for e in body if e.get("cat") == "cpu_instant_event"]
        assert ops and memory, T.__name__
        # the ops, then the allocations, then the session's span and its two markers
        assert kinds == ["user_annotation"] + ["cpu_op"] * (len(ops) - 1) + [
            "cpu_instant_event"
        ] * len(memory) + ["Trace", None, None], T.__name__
        assert [e["name"] for e in body[-2:]] == [
            "Iteration Start: PyTorch Profiler",
            "Record Window End",
        ]
        # torch's correlation ids count on across profiles: consecutive within one
        first = ops[0]["args"]["External id"]
        assert [e["args"]["External id"] for e in ops] == list(range(first, first + len(ops)))
        assert [e["args"]["Ev Idx"] for e in ops + memory] == list(range(len(ops + memory)))
        assert list(memory[0]["args"]) == [
            "Total Reserved",
            "Total Allocated",
            "Bytes",
            "Device Id",
            "Device Type",
            "Addr",
            "finished",
            "Ev Idx",
        ], T.__name__
        assert memory[0]["args"]["finished"] is False


def test_factory_allocation_belongs_to_its_empty_row():
    for T in _libs():
        x = T.ones(3, 4)
        with T.profiler.profile(profile_memory=True) as prof:
            a = T.zeros(10)
            b = T.ones_like(x)
        del a, b
        rows = {}
        for e in prof.events():
            parent = e.cpu_parent.name if e.cpu_parent else None
            rows[(e.name, parent)] = (e.cpu_memory_usage, e.self_cpu_memory_usage)
        assert rows[("aten::zeros", None)] == (40, 0), T.__name__
        assert rows[("aten::empty", "aten::zeros")] == (40, 40), T.__name__
        assert rows[("aten::ones_like", None)] == (48, 0), T.__name__
        assert rows[("aten::empty_like", "aten::ones_like")] == (48, 0), T.__name__
        assert rows[("aten::empty_strided", "aten::empty_like")] == (48, 48), T.__name__
        table = prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=3)
        top = [line.split()[0] for line in table.splitlines()[3:6]]
        assert top[0] in ("aten::empty_strided", "aten::empty"), (T.__name__, top)


def test_custom_op_rows_and_input_shapes():
    for T in _libs():
        ns = f"s15prof_{T.__name__}"

        @T.library.custom_op(f"{ns}::scale", mutates_args=())
        def scale(x: T.Tensor, k: float, y: T.Tensor) -> T.Tensor:
            return x * k + y

        scale.register_autograd(
            lambda ctx, g: (g * 2, None, g), setup_context=lambda ctx, inputs, output: None
        )
        rows = []
        for requires_grad in (False, True):
            x = T.ones(2, 3, requires_grad=requires_grad)
            with T.profiler.profile(record_shapes=True) as prof:
                scale(x, 2.0, T.ones(3))
            rows.append(
                [
                    (e.name, e.cpu_parent.name if e.cpu_parent else None, e.input_shapes)
                    for e in prof.events()
                    if e.name.startswith((ns, "GeneratedBackwardFor_", "aten::mul"))
                ]
            )
        fn_row = f"GeneratedBackwardFor_{ns}_scale_default"
        assert rows[0] == [
            (f"{ns}::scale", None, [[2, 3], [], [3]]),
            ("aten::mul", f"{ns}::scale", [[2, 3], []]),
        ], T.__name__
        assert rows[1] == [
            (f"{ns}::scale", None, [[2, 3], [], [3]]),
            (fn_row, f"{ns}::scale", [[2, 3], [], [3]]),
            ("aten::mul", fn_row, [[2, 3], []]),
        ], T.__name__
