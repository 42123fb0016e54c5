"""torch 2.13's record of op arguments with record_shapes (session 22, Note [Profiler inputs] in
core/profiler.h): the Chrome trace's "Input type", "Input Strides" and "Concrete Inputs" next to
"Input Dims", FunctionEvent's input_dtypes, structured_input_strides and concrete_inputs, and
key_averages(group_by_input_shape=True). Each case checks the expectation written here under
ember and, where torch is installed, under torch with the same code."""

import json

import pytest
from _docs_check import _libs

ARG_KEYS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")


def _program(T):
    T.manual_seed(0)
    conv, lin = T.nn.Conv2d(3, 4, 3), T.nn.Linear(4 * 6 * 6, 5)
    x = T.randn(2, 3, 8, 8)
    with T.no_grad(), T.profiler.profile(record_shapes=True) as prof:
        y = lin(T.flatten(conv(x), 1))
        z = T.add(y, y, alpha=2)
        T.add(y, z, alpha=0.1)
        T.add(y, y, alpha=2.0)
        T.add(x, x)
        z.sum(dim=(0, 1), keepdim=True)
        T.cat([y, z], 1)
        y.to(T.bfloat16)
    return prof


def _first_args(evs):
    out = {}
    for e in evs:
        out.setdefault(e["name"], []).append({k: e["args"].get(k) for k in ARG_KEYS})
    return out


@pytest.fixture(scope="module", params=_libs(), ids=lambda T: T.__name__)
def traced(request, tmp_path_factory):
    T = request.param
    prof = _program(T)
    path = tmp_path_factory.mktemp(T.__name__) / "t.json"
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        evs = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "cpu_op"]
    return T, prof, _first_args(evs)


def _row(dims, types, strides, concrete):
    return dict(zip(ARG_KEYS, (dims, types, strides, concrete)))


EXPECTED = {
    "aten::conv2d": _row(
        [[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []],
        ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
        [[192, 64, 8, 1], [27, 9, 3, 1], [1], [], [], [], []],
        ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "1"],
    ),
    "aten::linear": _row(
        [[2, 144], [5, 144], [5]],
        ["float", "float", "float"],
        [[144, 1], [144, 1], [1]],
        ["", "", ""],
    ),
    "aten::sum": _row(
        [[2, 5], [], [], []],
        ["float", "ScalarList", "Scalar", ""],
        [[5, 1], [], [], []],
        ["", "[0, 1]", "True", ""],
    ),
    "aten::cat": _row(
        [[[2, 5], [2, 5]], []], ["TensorList", "Scalar"], [[[5, 1], [5, 1]], []], ["", "1"]
    ),
    "aten::to": _row(
        [[2, 5], [], [], [], []],
        ["float", "Scalar", "Scalar", "Scalar", ""],
        [[5, 1], [], [], [], []],
        ["", "15", "False", "False", ""],  # torch's number of bfloat16
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_trace_args_record_types_strides_and_concrete_values(traced, name):
    T, _, rows = traced
    assert rows[name][0] == EXPECTED[name], T.__name__


def test_scalar_values_print_as_torch_prints_them(traced):
    T, _, rows = traced
    adds = [r["Concrete Inputs"] for r in rows["aten::add"]][:4]
    # an int, a float with torch's 17 digits, an integral float, a default alpha
    assert adds == [["", "", "2"], ["", "", "0.10000000000000001"], ["", "", "2."], ["", "", "1"]]
    assert rows["aten::add"][3]["Input Strides"] == [[192, 64, 8, 1], [192, 64, 8, 1], []]


def test_function_events_carry_the_same_record(traced):
    T, prof, _ = traced
    add = next(e for e in prof.events() if e.name == "aten::add")
    assert add.input_shapes == [[2, 5], [2, 5], []], T.__name__
    assert add.concrete_inputs == [None, None, 2], T.__name__
    assert add.input_dtypes == ["float", "float", "Scalar"], T.__name__
    assert add.structured_input_strides == [[5, 1], [5, 1], []], T.__name__
    total = next(e for e in prof.events() if e.name == "aten::sum")
    assert total.concrete_inputs == [None, [0, 1], True, None], T.__name__
    to = next(e for e in prof.events() if e.name == "aten::to")
    assert to.concrete_inputs[1] == 15, T.__name__
    cat = next(e for e in prof.events() if e.name == "aten::cat")
    assert cat.input_shapes == [[], []], T.__name__  # the list's shapes: structured only
    assert cat.structured_input_shapes == [[[2, 5], [2, 5]], []], T.__name__


def test_group_by_input_shape_groups_by_shapes_alone(traced):
    T, prof, _ = traced
    adds = [a for a in prof.key_averages(group_by_input_shape=True) if a.key == "aten::add"]
    by_shapes = {str(a.input_shapes): a.count for a in adds}
    # alpha 2, 0.1 and 2. differ in value only: one group
    assert by_shapes == {"[[2, 5], [2, 5], []]": 3, "[[2, 3, 8, 8], [2, 3, 8, 8], []]": 1}, (
        T.__name__
    )


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_tensor_type_names_are_torchs(T):
    names = {
        T.uint8: "unsigned char",
        T.int8: "signed char",
        T.int16: "short int",
        T.int32: "int",
        T.int64: "long int",
        T.float16: "c10::Half",
        T.float64: "double",
        T.bool: "bool",
        T.bfloat16: "c10::BFloat16",
        T.complex64: "c10::complex<float>",
    }
    tensors = {dt: T.zeros(2, dtype=dt) for dt in names}
    with T.profiler.profile(record_shapes=True) as prof:
        for t in tensors.values():
            T.clone(t)
    clones = [e for e in prof.events() if e.name == "aten::clone"]
    assert [e.input_dtypes[0] for e in clones] == list(names.values()), T.__name__


@pytest.mark.parametrize("T", _libs(), ids=lambda T: T.__name__)
def test_without_record_shapes_no_input_args(T, tmp_path):
    with T.profiler.profile() as prof:
        T.add(T.ones(2), T.ones(2), alpha=3)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    with open(tmp_path / "t.json") as f:
        evs = [e for e in json.load(f)["traceEvents"] if e.get("name") == "aten::add"]
    assert evs and not set(ARG_KEYS) & set(evs[0]["args"]), T.__name__
