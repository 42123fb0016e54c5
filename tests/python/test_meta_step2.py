"""The meta step of the unary table's ops, and `out=` through the out= kernels (Note [Meta
step] in csrc/ember/ops/meta.h): one function in ops/ gives the CPU and the meta device their
result dtype, shape and layout; a Python `out=` call runs the op's out= kernel after torch's
out= checks (dtype rule, resize with its warning, overlap). Compared with torch's CPU and meta
device where torch is installed, with hand-written expectations otherwise."""

import warnings

import numpy as np
import pytest

import ember

# Rows of the unary table that torch has under the same name, by result rule.
FLOAT = "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh"
FLOAT += " asinh acosh atanh sigmoid erf erfc erfinv reciprocal sinc lgamma digamma i0"
SAME = "abs neg sign floor ceil round trunc frac relu"
UNARY = FLOAT.split() + SAME.split() + ["bitwise_not", "isnan", "isinf", "isfinite", "signbit"]
UNARY += ["isposinf", "isneginf", "logical_not"]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return str(r.dtype).split(".")[-1], tuple(r.shape), tuple(r.stride())


def _meta(m, dtype, transposed=False):
    x = m.empty(3, 4, dtype=getattr(m, dtype), device="meta")
    return x.t() if transposed else x


# torch's meta frac is its decomposition x - trunc(x), whose bool subtraction raises; its CPU
# kernel and ember's (meta and CPU alike) are frac's own
TORCH_META_ONLY = {("frac", "bool")}


@pytest.mark.parametrize("name", UNARY)
def test_unary_meta_matches_torch_meta(name):
    torch = pytest.importorskip("torch")
    for dtype in DTYPES:
        if (name, dtype) in TORCH_META_ONLY:
            continue
        for transposed in (False, True):
            got = _outcome(lambda: getattr(ember, name)(_meta(ember, dtype, transposed)))
            want = _outcome(lambda: getattr(torch, name)(_meta(torch, dtype, transposed)))
            assert got == want, (name, dtype, transposed)


@pytest.mark.parametrize("name", FLOAT.split()[:6] + SAME.split()[:5] + ["bitwise_not"])
def test_unary_inplace_meta_matches_torch_meta(name):
    torch = pytest.importorskip("torch")
    for dtype in DTYPES:
        got = _outcome(lambda: getattr(_meta(ember, dtype), name + "_")())
        want = _outcome(lambda: getattr(_meta(torch, dtype), name + "_")())
        assert got == want, (name, dtype)


def test_unary_meta_without_torch():
    x = ember.empty(3, 4, dtype=ember.int32, device="meta").t()
    r = ember.exp(x)
    assert (r.dtype, r.shape, r.stride(), r.device.type) == (ember.float32, (4, 3), (1, 4), "meta")
    assert ember.abs(x).dtype == ember.int32 and ember.isnan(x).dtype == ember.bool
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        ember.neg(ember.empty(2, dtype=ember.bool, device="meta"))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Int"):
        x.exp_()


def test_unary_meta_refuses_a_cpu_tensor_with_dims():
    with pytest.raises(RuntimeError, match="is not on the expected device meta"):
        ember.add(ember.empty(2, device="meta"), ember.ones(2))


def test_floor_divide_of_bool_raises_on_meta_as_torch():
    b = ember.empty(3, dtype=ember.bool, device="meta")
    with pytest.raises(RuntimeError, match="torch.bool not supported for floor_divide"):
        ember.floor_divide(b, b)
    with pytest.raises(RuntimeError, match="torch.bool not supported for floor_divide"):
        ember.floor_divide(b, b, out=ember.empty(3, dtype=ember.bool, device="meta"))
    # other dtypes pass, as torch's meta device (which checks no CPU loop's dtype set)
    assert ember.remainder(b, b).dtype == ember.bool
    assert ember.abs(b).dtype == ember.bool


def test_floor_divide_meta_errors_match_torch():
    torch = pytest.importorskip("torch")
    for dt in ("bool", "int32", "float32"):
        # (not pow: torch's meta pow of two bools answers int64, its CPU raises, as ember's)
        for op in ("floor_divide", "remainder", "bitwise_and", "hypot"):
            got = _outcome(lambda: getattr(ember, op)(_meta(ember, dt), _meta(ember, dt)))
            want = _outcome(lambda: getattr(torch, op)(_meta(torch, dt), _meta(torch, dt)))
            assert got == want, (op, dt)


# ---------------------------------------------------------------------------------------------
# out=


def _run_out(m, call, out_dtype, out_shape=(0,)):
    out = m.empty(*out_shape, dtype=getattr(m, out_dtype))
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = call(m, out)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e).split("\n")[0]
    resized = any("was resized" in str(x.message) for x in w)
    return r is out, str(out.dtype).split(".")[-1], tuple(out.shape), out.tolist(), resized


X = [[0.5, -2.0, 3.0], [4.0, -0.0, 1.5]]
XI = [[1, -2, 3], [4, 0, 7]]
OUT_CALLS = {
    "exp": lambda m, o: m.exp(m.tensor(X), out=o),
    "exp int": lambda m, o: m.exp(m.tensor(XI), out=o),
    "sqrt int": lambda m, o: m.sqrt(m.tensor(XI).abs(), out=o),
    "abs": lambda m, o: m.abs(m.tensor(X), out=o),
    "abs int": lambda m, o: m.abs(m.tensor(XI), out=o),
    "neg int": lambda m, o: m.neg(m.tensor(XI), out=o),
    "floor": lambda m, o: m.floor(m.tensor(X), out=o),
    "bitwise_not": lambda m, o: m.bitwise_not(m.tensor(XI), out=o),
    "signbit": lambda m, o: m.signbit(m.tensor(X), out=o),
    "isposinf": lambda m, o: m.isposinf(m.tensor(X), out=o),
    "logical_not": lambda m, o: m.logical_not(m.tensor(X), out=o),
    "lgamma int": lambda m, o: m.lgamma(m.tensor(XI).abs() + 1, out=o),
    "add": lambda m, o: m.add(m.tensor(X), m.tensor(XI), out=o),
    "add alpha": lambda m, o: m.add(m.tensor(XI), 2, alpha=3, out=o),
    "add float alpha": lambda m, o: m.add(m.tensor(XI), 2, alpha=1.5, out=o),
    "sub": lambda m, o: m.sub(m.tensor(XI), m.tensor([1, 2, 3]), out=o),
    "mul number": lambda m, o: m.mul(m.tensor(XI), 2.5, out=o),
    "true_divide": lambda m, o: m.true_divide(m.tensor(XI), 2, out=o),
    "div floor": lambda m, o: m.div(m.tensor(XI), m.tensor(2), rounding_mode="floor", out=o),
    "div trunc": lambda m, o: m.div(m.tensor(X), m.tensor(2), rounding_mode="trunc", out=o),
    "floor_divide": lambda m, o: m.floor_divide(m.tensor(XI), 2, out=o),
    "remainder": lambda m, o: m.remainder(m.tensor(XI), 3, out=o),
    "pow": lambda m, o: m.pow(m.tensor(XI), 2, out=o),
    "pow negative": lambda m, o: m.pow(m.tensor(XI), -1, out=o),
    "atan2": lambda m, o: m.atan2(m.tensor(X), m.tensor(X), out=o),
    "maximum": lambda m, o: m.maximum(m.tensor(X), m.tensor([1.0, 1.0, 1.0]), out=o),
    "bitwise_and": lambda m, o: m.bitwise_and(m.tensor(XI), 6, out=o),
    "eq": lambda m, o: m.eq(m.tensor(X), 3.0, out=o),
    "logical_xor": lambda m, o: m.logical_xor(m.tensor(X), m.tensor(XI), out=o),
}


@pytest.mark.parametrize("case", list(OUT_CALLS))
@pytest.mark.parametrize("out_dtype", ["float32", "float64", "float16", "int64", "int32", "bool"])
@pytest.mark.parametrize("out_shape", [(0,), (2, 3), (7,)])
def test_out_matches_torch(case, out_dtype, out_shape):
    torch = pytest.importorskip("torch")
    got = _run_out(ember, OUT_CALLS[case], out_dtype, out_shape)
    want = _run_out(torch, OUT_CALLS[case], out_dtype, out_shape)
    if isinstance(want[0], str):  # an error: its class and first line
        assert got == want
    else:
        assert got[:3] == want[:3] and got[4] == want[4]
        np.testing.assert_allclose(
            np.array(got[3], dtype=np.float64), np.array(want[3], dtype=np.float64), rtol=2e-3
        )


def test_out_writes_in_place_and_bumps_the_version():
    x = ember.tensor(X)
    out = ember.empty(2, 3)
    ptr, version = out.data_ptr(), out._version
    assert ember.exp(x, out=out) is out
    assert out.data_ptr() == ptr and out._version > version
    np.testing.assert_allclose(out.numpy(), np.exp(np.array(X, dtype=np.float32)), rtol=1e-6)
    # out of another dtype: the result is cast into it, out keeps its storage
    out = ember.empty(2, 3, dtype=ember.float64)
    ptr = out.data_ptr()
    ember.add(x, 1, out=out)
    assert out.data_ptr() == ptr and out.dtype == ember.float64
    assert out.tolist() == [[1.5, -1.0, 4.0], [5.0, 1.0, 2.5]]


def test_out_dtype_rules_without_torch():
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        ember.abs(ember.tensor(X), out=ember.empty(2, 3, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired"):
        ember.exp(ember.tensor(XI), out=ember.empty(2, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="signbit does not support non-boolean outputs."):
        ember.signbit(ember.tensor(X), out=ember.empty(2, 3))
    out = ember.empty(0, dtype=ember.int64)
    ember.logical_not(ember.tensor(X), out=out)
    assert out.tolist() == [[0, 0, 0], [0, 1, 0]]


def test_out_resize_warns_only_when_out_had_elements():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = ember.empty(4)
        ember.sqrt(ember.tensor([4.0, 9.0]), out=out)
    assert [str(x.message).split(" which")[0] for x in w] == [
        "An output with one or more elements was resized since it had shape [4],"
    ]
    assert w[0].filename == __file__  # the warning names the user's line
    assert out.tolist() == [2.0, 3.0]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = ember.empty(0)
        ember.mul(ember.ones(2, 2), 3, out=out)
    assert not w and out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_out_overlap_rules():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    ember.mul(x, x, out=x)  # out is an input itself: allowed
    assert x.tolist() == [[1.0, 4.0], [9.0, 16.0]]
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to"):
        ember.mul(x, x, out=x.t())
    y = ember.arange(6.0)
    ember.exp(y[:3], out=y[3:])  # apart within one storage: allowed
    np.testing.assert_allclose(y[3:].numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-6)


def test_out_on_meta():
    x = ember.empty(2, 3, device="meta")
    out = ember.empty(0, dtype=ember.float64, device="meta")
    assert ember.exp(x, out=out) is out
    assert out.shape == (2, 3) and out.dtype == ember.float64 and out.device.type == "meta"
    out = ember.empty(0, dtype=ember.bool, device="meta")
    ember.lt(x, 0.5, out=out)
    assert out.shape == (2, 3)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        ember.add(x, x, out=ember.empty(0, dtype=ember.int64, device="meta"))


def test_out_refuses_autograd_and_takes_other_forms():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.exp(x, out=ember.empty(2))
    # forms the out= kernel does not take still write out= (round with decimals)
    out = ember.empty(0)
    ember.round(ember.tensor([1.234, 5.678]), decimals=1, out=out)
    np.testing.assert_allclose(out.numpy(), [1.2, 5.7], rtol=1e-6)


def test_out_profiles_the_op_row():
    x, out = ember.ones(3), ember.empty(3)
    with ember.profiler.profile() as prof:
        ember.exp(x, out=out)
    names = [e.name for e in prof.events()]
    assert "aten::exp" in names and "aten::copy_" not in names


# Reductions (ops/reduce.cpp's step): the result's shape, dtype and strides, or the error class,
# from one function for CPU and meta. name -> (input shape, dtype, call)
REDUCTIONS = {
    "sum dims keepdim": ((2, 3, 4), "float32", lambda t: t.sum((0, 2), keepdim=True)),
    "sum int": ((2, 3), "int32", lambda t: t.sum(1)),
    "sum dtype": ((2, 3), "int32", lambda t: t.sum(1, dtype=t.new_empty(0).half().dtype)),
    "sum complex": ((2, 3), "complex64", lambda t: t.sum(0)),
    "sum transposed": ((4, 6), "float32", lambda t: t.t().sum(0)),
    "sum bad dim": ((2, 3), "float32", lambda t: t.sum(5)),
    "prod bool": ((2, 3), "bool", lambda t: t.prod(1)),
    "amax": ((2, 3), "float64", lambda t: t.amax(1)),
    "amin keepdim": ((2, 3), "int64", lambda t: t.amin(0, keepdim=True)),
    "amax complex": ((2, 3), "complex64", lambda t: t.amax(1)),
    "max dim": ((2, 3), "float32", lambda t: t.max(1)),
    "min dim keepdim": ((2, 3), "int32", lambda t: t.min(0, keepdim=True)),
    "argmax": ((2, 3), "float32", lambda t: t.argmax()),
    "argmax keepdim": ((2, 3), "float32", lambda t: t.argmax(keepdim=True)),
    "argmin dim": ((2, 3), "float32", lambda t: t.argmin(1, keepdim=True)),
    "argmax empty": ((0, 3), "float32", lambda t: t.argmax()),
    "var_mean": ((2, 3), "float32", lambda t: t.var_mean(1)),
    "all": ((2, 3), "float32", lambda t: t.all(1)),
    "any uint8": ((2, 3), "uint8", lambda t: t.any()),
    "cumsum int": ((2, 3), "int32", lambda t: t.cumsum(-1)),
    "cumsum dtype": ((2, 3), "float32", lambda t: t.cumsum(0, dtype=t.new_empty(0).double().dtype)),
    "cumprod bool": ((2, 3), "bool", lambda t: t.cumprod(1)),
    "cumsum 0-d": ((), "float32", lambda t: t.cumsum(0)),
    "cumsum bad dim": ((2, 3), "float32", lambda t: t.cumsum(2)),
    "kthvalue": ((2, 3, 4), "float32", lambda t: t.kthvalue(2, 1)),
    "median keepdim": ((2, 3), "int64", lambda t: t.median(-1, keepdim=True)),
    "mode": ((2, 3), "float64", lambda t: t.mode(0)),
    "kthvalue 0-d": ((), "float32", lambda t: t.kthvalue(1)),
}


def _reduced(lib, case, device):
    shape, dtype, call = REDUCTIONS[case]
    try:
        r = call(lib.zeros(shape, dtype=getattr(lib, dtype), device=device))
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    rs = r if isinstance(r, tuple) else (r,)
    return [
        (str(t.dtype).split(".")[-1], tuple(t.shape), tuple(t.stride()), t.device.type) for t in rs
    ]


def test_reductions_meta_matches_cpu():
    """The step gives the meta device the CPU result's geometry; meta runs no loop, so the dtypes
    a loop lacks (complex amax) pass there, as on torch's meta device."""
    for case in REDUCTIONS:
        cpu, meta = _reduced(ember, case, "cpu"), _reduced(ember, case, "meta")
        if cpu == "NotImplementedError":
            assert isinstance(meta, list), case
            continue
        if isinstance(cpu, str):
            assert meta == cpu, case
        else:
            assert [g[:3] for g in meta] == [g[:3] for g in cpu], case
            assert all(g[3] == "meta" for g in meta), case


def test_reductions_meta_matches_torch_meta():
    torch = pytest.importorskip("torch")
    for case in REDUCTIONS:
        theirs = _reduced(torch, case, "meta")
        if isinstance(theirs, str):  # an error: torch's CPU class (its meta argmax differs)
            theirs = _reduced(torch, case, "cpu")
        assert _reduced(ember, case, "meta") == theirs, case
    ops = {e["name"]: e for e in ember._C._op_schemas()}
    for name in ["sum.dim_IntList", "amax", "max.dim", "argmax", "var_mean.correction", "cumsum"]:
        assert {"CPU", "Meta"} <= set(ops[name]["kernels"]), name
    for name in ["sum.IntList_out", "amax.out", "max.dim_max", "cumprod.out", "mode.values"]:
        assert "CPU" in ops[name]["kernels"], name
