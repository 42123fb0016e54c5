"""The meta step of the elementwise ops (Note [Meta step] in csrc/ember/ops/meta.h): result
dtypes, broadcast shapes, output layouts and errors come from one function in ops/ for the CPU
and the meta device alike. Checked against torch's meta device and CPU results where torch is
installed, against hand-written expectations otherwise; plus the layer check that keeps the
rules out of the kernels."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ember

ROOT = Path(__file__).resolve().parents[2]

BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "true_divide",
    "floor_divide",
    "remainder",
    "fmod",
    "atan2",
    "hypot",
    "copysign",
    "minimum",
    "maximum",
    "fmin",
    "fmax",
    "pow",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "logical_and",
    "logical_or",
    "logical_xor",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]
FLOAT_ONLY = {"atan2", "hypot", "copysign"}
INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"}

# (a's shape, a's dtype, b: a shape and dtype, or a Python number)
CASES = [
    ((2, 3), "float32", ((3,), "float32")),
    ((2, 3), "float32", ((2, 1), "float64")),
    ((4, 1), "int64", ((1, 5), "int32")),
    ((3,), "int32", ((), "int64")),  # a 0-d tensor does not promote a tensor with dims
    ((3,), "int32", ((), "float64")),  # ... unless it is of a higher kind
    ((3,), "float16", ((), "float64")),
    ((2, 3), "bool", ((3,), "bool")),
    ((2, 3), "uint8", ((3,), "int8")),
    ((2, 3), "float32", 2),
    ((2, 3), "int64", 2.5),
    ((2, 3), "int16", 3),
    ((2, 3), "bool", True),
    ((2, 3), "bfloat16", 1.5),
    ((), "float64", ((2, 3), "float32")),
]


def _applies(op, da, db):
    dts = {da, db}
    if op in FLOAT_ONLY and not dts <= {"float32", "float64", "float16", "bfloat16", "int"}:
        return all(d.startswith(("float", "bfloat")) for d in dts)
    if op in INT_ONLY:
        return all(d.startswith(("int", "uint", "bool")) for d in dts) and not (
            op.endswith("shift") and "bool" in dts
        )
    if op == "sub" and "bool" in dts:
        return False
    if op == "pow" and dts == {"bool"}:
        return False  # torch answers bool ** True (exponent 1) as a copy; ember refuses bool pow
    return True


def _dtype_name(b):
    if isinstance(b, bool):
        return "bool"
    if isinstance(b, int):
        return "int"
    if isinstance(b, float):
        return "float"
    return b[1]


def _make(lib, shape, dtype, device):
    return lib.ones(shape, dtype=getattr(lib, dtype), device=device)


def _operands(lib, case, device):
    ashape, adtype, b = case
    a = _make(lib, ashape, adtype, device)
    if isinstance(b, tuple):
        # a 0-d operand is a CPU tensor when the other is meta (a number-like tensor)
        bdev = "cpu" if (device == "meta" and b[0] == ()) else device
        b = _make(lib, b[0], b[1], bdev)
    return a, b


def _geometry(t):
    return tuple(t.shape), str(t.dtype).split(".")[-1], tuple(t.stride())


def _outcome(lib, op, case, device):
    a, b = _operands(lib, case, device)
    try:
        r = getattr(lib, op)(a, b)
    except Exception as e:  # noqa: BLE001 - the error type is part of what is compared
        return ("error", type(e).__name__)
    return ("ok", _geometry(r), r.device.type)


@pytest.mark.parametrize("op", BINARY)
def test_meta_results_agree_with_cpu_results(op):
    """One rule: where the CPU op succeeds, the meta device gives its shape, dtype and strides.
    Which dtypes a loop implements (bool floor_divide) is the kernel's, so meta does not check it
    (torch's meta device does not for pow either)."""
    for case in CASES:
        if not _applies(op, case[1], _dtype_name(case[2])):
            continue
        cpu = _outcome(ember, op, case, "cpu")
        meta = _outcome(ember, op, case, "meta")
        if cpu[0] == "ok":
            assert meta[0] == "ok" and cpu[1] == meta[1], (op, case, cpu, meta)
            assert meta[2] == "meta"
        elif cpu[1] != "NotImplementedError":
            assert meta[0] == "error", (op, case, cpu, meta)


@pytest.mark.parametrize("op", BINARY)
def test_binary_promotion_and_shapes_match_torch(op):
    torch = pytest.importorskip("torch")
    for case in CASES:
        if not _applies(op, case[1], _dtype_name(case[2])):
            continue
        cpu = _outcome(torch, op, case, "cpu")
        assert _outcome(ember, op, case, "cpu")[0:2] == cpu[0:2], (op, case)
        if cpu[0] == "error":
            continue  # torch's meta answers some ops its CPU refuses (bool ** bool gives int64)
        ours, theirs = _outcome(ember, op, case, "meta"), _outcome(torch, op, case, "meta")
        if theirs[0] == "ok":
            assert ours == theirs, (op, case)
        # torch's meta copysign alone asks a 0-d CPU operand to be on meta too
        elif op != "copysign":
            assert ours[0] == "error", (op, case, ours, theirs)


def test_cpu_values_unchanged_by_the_step():
    a = ember.tensor([[1, 2, 3], [4, 5, 6]], dtype=ember.int32)
    b = ember.tensor([2.5, -1.0, 0.5], dtype=ember.float64)
    np.testing.assert_allclose((a + b).numpy(), a.numpy() + b.numpy())
    np.testing.assert_allclose(ember.add(a, b, alpha=2).numpy(), a.numpy() + 2 * b.numpy())
    np.testing.assert_allclose((a * 2.5).numpy(), a.numpy() * 2.5)
    assert (a * 2.5).dtype == ember.float32
    assert (a / 2).dtype == ember.float32 and (a / 2).tolist()[0] == [0.5, 1.0, 1.5]
    assert (a < 2.5).tolist() == [[True, True, False], [False, False, False]]
    assert ember.pow(a, 2).tolist() == [[1, 4, 9], [16, 25, 36]]
    assert ember.where(a > 2, a, 0.5).dtype == ember.float32


def test_in_place_into_another_dtype_and_errors():
    x = ember.tensor([1.0, 2.0, 3.0])
    x.add_(ember.tensor([1, 1, 1], dtype=ember.int64))
    assert x.tolist() == [2.0, 3.0, 4.0] and x.dtype == ember.float32
    x.mul_(ember.tensor(2.0, dtype=ember.float64))
    assert x.tolist() == [4.0, 6.0, 8.0] and x.dtype == ember.float32
    i = ember.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        ember.ones(3).add_(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="argument alpha must not be a floating point number"):
        ember.add(i, i, alpha=0.5)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        ember.pow(i, -1)
    # the same checks on meta tensors
    im = ember.ones(3, dtype=ember.int64, device="meta")
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        im.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        ember.ones(3, device="meta").mul_(ember.ones(2, 3, device="meta"))
    with pytest.raises(RuntimeError, match="argument alpha must not be a floating point number"):
        ember.add(im, im, alpha=0.5)


def test_in_place_errors_match_torch():
    """torch's CPU texts; ember's meta tensors give the same (torch's meta device lets a float
    into an int64 tensor in place and words the shape error differently)."""
    torch = pytest.importorskip("torch")
    for lib, devices in ((torch, ("cpu",)), (ember, ("cpu", "meta"))):
        for device in devices:
            i = lib.ones(3, dtype=lib.int64, device=device)
            with pytest.raises(RuntimeError) as err:
                i.mul_(1.5)
            assert "result type Float can't be cast to the desired output type Long" in str(
                err.value
            )
            f = lib.ones(3, device=device)
            with pytest.raises(RuntimeError) as err:
                f.add_(lib.ones(2, 3, device=device))
            assert "output with shape [3] doesn't match the broadcast shape [2, 3]" in str(
                err.value
            )


def test_meta_device_mismatch_raises_as_torch():
    m = ember.ones(2, 3, device="meta")
    for fn in (
        lambda c: m + c,
        lambda c: ember.where(m > 0, m, c),
        lambda c: ember.lerp(m, c, 0.5),
    ):
        with pytest.raises(RuntimeError, match="is not on the expected device meta"):
            fn(ember.ones(2, 3))
    # a 0-d CPU tensor mixes with meta ones (a number), as in torch
    assert (m + ember.tensor(2.0)).is_meta


def test_where_lerp_masked_fill_cat_on_meta_match_torch():
    torch = pytest.importorskip("torch")

    def run(lib, device):
        c = lib.ones(4, 1, dtype=lib.bool, device=device)
        a = lib.ones(3, dtype=lib.float64, device=device)
        b = lib.ones(4, 3, dtype=lib.float32, device=device)
        x = lib.ones(2, 3, 4, device=device).permute(2, 0, 1)
        mask = lib.ones(3, 1, dtype=lib.bool, device=device)
        ints = lib.ones(2, 3, dtype=lib.int32, device=device)
        results = [
            lib.where(c, a, b),
            lib.where(c, b, 2),
            lib.where(c, lib.ones(4, 3, dtype=lib.int32, device=device), 2.5),
            lib.lerp(b, lib.zeros(4, 3, device=device), 0.25),
            lib.lerp(x, x, lib.ones(2, 3, device=device)),
            lib.masked_fill(b, c, 1.0),
            lib.masked_fill(lib.ones(1, 3, device=device), mask, 0.0),
            lib.cat([ints, lib.ones(1, 3, dtype=lib.float16, device=device)]),
            lib.cat([b, b], dim=1),
            lib.cat([lib.ones(0, device=device), ints]),
            x * 2,
            x + lib.ones(4, 1, 1, device=device),
            lib.special.zeta(lib.ones(3, dtype=lib.int64, device=device) + 1, 1.0),
            lib.special.chebyshev_polynomial_t(b, lib.ones(3, dtype=lib.float64, device=device)),
        ]
        return [_geometry(r) for r in results]

    for device in ("cpu", "meta"):
        assert run(ember, device) == run(torch, device), device


def test_out_argument_validation_matches_torch():
    torch = pytest.importorskip("torch")

    def errors(lib):
        out = []
        a = lib.ones(2, 3)
        i = lib.ones(2, 3, dtype=lib.int64)
        for call in (
            lambda: lib.add(a, a, out=lib.empty(2, 3, dtype=lib.int64)),
            lambda: lib.mul(a, 2.5, out=lib.empty(2, 3, dtype=lib.int32)),
            lambda: lib.eq(a, a, out=lib.empty(2, 3, dtype=lib.float32)),
            lambda: lib.add(i, i, out=lib.empty(2, 3, dtype=lib.float32)),
        ):
            try:
                r = call()
                out.append(("ok", str(r.dtype).split(".")[-1], tuple(r.shape)))
            except RuntimeError as e:
                out.append(("error", str(e).split(":")[-1].strip()[:60]))
        return out

    assert errors(ember) == errors(torch)


def test_out_kernels_are_registered_with_torchs_schemas():
    ops = {e["name"]: e for e in ember._C._op_schemas()}
    for name in ["add.out", "mul.out", "eq.Tensor_out", "where.self_out", "lerp.Tensor_out"]:
        assert name in ops and "CPU" in ops[name]["kernels"], name
    for name in ["cat.out", "pow.Tensor_Tensor_out", "special_zeta.out"]:
        assert name in ops, name
    # the ops keep a kernel for the CPU and, from the same meta step, one for Meta
    for name in ["add.Tensor", "mul.Tensor", "where.self", "cat", "masked_fill.Tensor"]:
        assert {"CPU", "Meta"} <= set(ops[name]["kernels"]), name
    torch = pytest.importorskip("torch")
    for name in ["add.out", "mul.out", "eq.Tensor_out", "where.self_out", "cat.out"]:
        base, overload = name.split(".")
        theirs = [
            str(s)
            for s in torch._C._jit_get_schemas_for_operator("aten::" + base)
            if s.overload_name == overload
        ]
        assert theirs and theirs[0].split("::", 1)[1] == ops[name]["schema"], name


def test_layer_check_refuses_promotion_in_a_kernel(tmp_path):
    kernels = tmp_path / "csrc" / "ember" / "cpu"
    kernels.mkdir(parents=True)
    (tmp_path / "tools").mkdir()
    (kernels / "ok.cpp").write_text("// broadcast_shapes( only in a comment\nint f();\n")
    check = [sys.executable, str(ROOT / "tools" / "check_layers.py"), "--root", str(tmp_path)]
    assert subprocess.run(check, capture_output=True, text=True).returncode == 0
    (kernels / "bad.cpp").write_text("int g() { return result_type({a, b}) == x; }\n")
    r = subprocess.run(check, capture_output=True, text=True)
    assert r.returncode == 1
    assert "csrc/ember/cpu/bad.cpp:1: calls result_type" in r.stderr
    # and the tree itself is clean
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "check_layers.py")], capture_output=True
    )
    assert r.returncode == 0, r.stderr
