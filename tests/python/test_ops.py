"""Generic tests of ember's core ops, driven by the table in op_db.py.

For every op (and every dtype it supports):
  * test_values          results and result dtype against the numpy reference;
  * test_layouts         the same for transposed, sliced (offset + stride), expanded
                         (stride 0), zero-size and 0-d inputs;
  * test_gradcheck       finite-difference gradient check in float64;
  * test_matches_torch / test_grads_match_torch
                         values, dtypes and gradients equal real PyTorch's (needs torch);
  * test_error / test_error_matches_torch
                         invalid calls raise the documented exception class.
Plus type-promotion, Tensor-method and broadcasting (hypothesis) checks.

Run against real PyTorch to validate the expectations themselves:
    EMBER_TEST_AGAINST=torch python -m pytest tests/python/test_ops.py -q
"""

import contextlib
import os
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes
from op_db import NP_CARRIER, OP_DB, OPS_BY_NAME, Dt, Sample, T, is_float, rng_for, tensor

import ember

AGAINST_TORCH = os.environ.get("EMBER_TEST_AGAINST") == "torch"

# var/std over a zero-size reduction are nan by definition; torch also warns about it
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")

LAYOUTS = ("contiguous", "transposed", "sliced", "expanded", "zero_size", "zero_dim")
MAX_GRAD_SAMPLES = 5  # gradcheck is the slow part: a few samples per op are enough
GRAD_TOL = (1e-6, 1e-8)  # float64 gradients of the same formula agree to rounding


# ----------------------------------------------------------------------------- conversions


def dtype_name(dtype):
    """'float32' for ember.float32 or torch.float32, so dtypes compare across libraries."""
    return str(dtype).rsplit(".", 1)[-1]


def map_structure(obj, fn):
    """Apply fn to every T / Dt inside nested lists, tuples and dicts (cat takes a list)."""
    if isinstance(obj, (T, Dt)):
        return fn(obj)
    if isinstance(obj, list):
        return [map_structure(o, fn) for o in obj]
    if isinstance(obj, tuple):
        return tuple(map_structure(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: map_structure(v, fn) for k, v in obj.items()}
    return obj


def tensors_of(sample):
    """The sample's T leaves, args before kwargs (the order map_structure visits them)."""
    found = []
    map_structure(
        (sample.args, sample.kwargs), lambda x: found.append(x) if isinstance(x, T) else None
    )
    return found


def _contiguous(m, values, dtype):
    x = m.tensor(np.array(values, order="C"))  # a copy; ascontiguousarray would make 0-d 1-d
    return x.to(m.bfloat16) if dtype == "bfloat16" else x  # numpy has no bfloat16


def _sentinel(dtype):
    """Fill for the memory around a sliced view: reading it shows up as a wrong value."""
    return np.nan if is_float(dtype) else True if dtype == "bool" else 7


def make_tensor(m, t):
    """Realise a T on module m in the memory layout it asks for (values are unchanged)."""
    v = t.values
    if t.layout == "transposed":  # a transposed view of a contiguous buffer
        x = _contiguous(m, np.swapaxes(v, -1, -2), t.dtype)
        return x.t() if v.ndim == 2 else x.transpose(-1, -2)
    if t.layout == "sliced":  # storage offset 1 and stride 2 in the last dim
        if v.ndim == 1:
            index, base_shape = (slice(1, None, 2),), (2 * v.shape[0] + 1,)
        else:
            index = (slice(1, None),) + (slice(None),) * (v.ndim - 2) + (slice(None, None, 2),)
            base_shape = (v.shape[0] + 1,) + v.shape[1:-1] + (2 * v.shape[-1],)
        base = np.full(base_shape, _sentinel(t.dtype), dtype=v.dtype)
        base[index] = v
        return _contiguous(m, base, t.dtype)[index]
    if t.layout == "expanded":  # stride 0 along dim 0 (values were made equal along it)
        return _contiguous(m, v[:1], t.dtype).expand(*v.shape)
    return _contiguous(m, v, t.dtype)


def to_lib(m, obj):
    return map_structure(
        obj, lambda x: getattr(m, x.name) if isinstance(x, Dt) else make_tensor(m, x)
    )


def to_numpy(t):
    t = t.detach()
    return (t.float() if dtype_name(t.dtype) == "bfloat16" else t).numpy()


def as_tuple(out):
    """Ops return a tensor, a tuple/namedtuple or a list of tensors."""
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def ref_inputs(obj):
    """numpy view of a sample part: floats as float64, ints and bool in their own dtype."""

    def conv(x):
        if isinstance(x, Dt):
            return np.dtype(NP_CARRIER[x.name])
        return x.values.astype(np.float64) if is_float(x.dtype) else x.values.copy()

    return map_structure(obj, conv)


def call_ref(op, dtype, sample):
    kwargs = ref_inputs(sample.kwargs)
    if op.ref_needs_dtype:
        kwargs["_dtype"] = dtype
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nan/inf in references are intended
        out = op.ref(*ref_inputs(sample.args), **kwargs)
    return tuple(np.asarray(o) for o in as_tuple(out))


def call(m, op, sample):
    return as_tuple(op.op(m, *to_lib(m, sample.args), **to_lib(m, sample.kwargs)))


@contextlib.contextmanager
def describe(*what):
    """Name the op / dtype / sample in any failure: a table-driven test runs many cases."""
    try:
        yield
    except Exception as e:
        raise AssertionError(f"{' | '.join(map(str, what))}\n{type(e).__name__}: {e}") from e


def assert_values(actual, expected, result_dtype, tol):
    assert actual.shape == expected.shape, f"shape {actual.shape} != expected {expected.shape}"
    if is_float(result_dtype):
        rtol, atol = tol
        np.testing.assert_allclose(
            actual.astype(np.float64),
            expected.astype(np.float64),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
        )
    else:  # integer, bool and index results are exact
        np.testing.assert_array_equal(actual.astype(np.float64), expected.astype(np.float64))


def compare_outputs(op, sample, actual, expected, dtypes):
    """actual/expected: numpy outputs; canonicalized first where ties allow several answers."""
    assert len(actual) == len(expected), f"{len(actual)} outputs, expected {len(expected)}"
    if op.canonicalize:
        ref_args, ref_kwargs = ref_inputs(sample.args), ref_inputs(sample.kwargs)
        actual = op.canonicalize(actual, ref_args, ref_kwargs)
        expected = op.canonicalize(expected, ref_args, ref_kwargs)
    for i, (a, e, dt) in enumerate(zip(actual, expected, dtypes)):
        with describe(f"output {i}"):
            assert_values(np.asarray(a), np.asarray(e), dt, op.tolerance(dt))


def check_against_ref(op, dtype, sample):
    outs = call(ember, op, sample)
    expected_dtypes = op.expected_dtypes(dtype, sample, len(outs))
    assert [dtype_name(o.dtype) for o in outs] == list(expected_dtypes), "result dtype"
    compare_outputs(
        op, sample, [to_numpy(o) for o in outs], call_ref(op, dtype, sample), expected_dtypes
    )


# ----------------------------------------------------------------------------- parametrization


def op_dtype_params():
    return [pytest.param(op, d, id=f"{op.name}-{d}") for op in OP_DB for d in op.dtypes]


def layout_dtype(op):
    """Layouts are about memory, not arithmetic: one representative dtype per op."""
    return next(d for d in ("float32", "int64") + op.dtypes if d in op.dtypes)


def layout_applies(t, layout):
    if layout == "transposed":
        return t.ndim >= 2
    if layout == "sliced":
        return t.ndim >= 1
    if layout == "expanded":
        return t.ndim >= 1 and t.shape[0] > 1
    if layout == "zero_size":
        return t.values.size == 0
    if layout == "zero_dim":
        return t.ndim == 0
    return True


def with_layout(sample, layout):
    """The sample with every applicable tensor laid out as `layout`.

    zero_size/zero_dim select samples rather than transform them; expanded replaces values by
    copies of their first slice along dim 0, which is what a stride-0 view can hold."""
    if layout in ("contiguous", "zero_size", "zero_dim"):
        return sample

    def conv(x):
        if not isinstance(x, T) or not layout_applies(x, layout):
            return x
        values = np.broadcast_to(x.values[:1], x.shape).copy() if layout == "expanded" else x.values
        return T(values, x.dtype, layout)

    return Sample(
        map_structure(sample.args, conv), map_structure(sample.kwargs, conv), sample.grad_ok
    )


def layout_samples(op, layout):
    samples = op.samples(layout_dtype(op))
    return [s for s in samples if any(layout_applies(t, layout) for t in tensors_of(s))]


LAYOUT_PARAMS = [
    pytest.param(op, layout, id=f"{op.name}-{layout}")
    for op in OP_DB
    for layout in LAYOUTS
    if layout_samples(op, layout)
]


def grad_samples(op):
    """float64 samples where finite differences are meaningful and there is something to vary;
    different kwargs first (div's rounding modes, var's corrections, ...), then other shapes."""

    def usable(s):
        floats = [t for t in tensors_of(s) if is_float(t.dtype)]
        return s.grad_ok and floats and all(t.values.size for t in floats)

    firsts, rest, seen = [], [], set()
    for s in op.samples("float64"):
        if usable(s):
            (rest if repr(s.kwargs) in seen else firsts).append(s)
            seen.add(repr(s.kwargs))
    return (firsts + rest)[:MAX_GRAD_SAMPLES]


GRAD_OPS = [pytest.param(op, id=op.name) for op in OP_DB if op.differentiable]
ERROR_PARAMS = [
    pytest.param(op, case, id=f"{op.name}-{case.desc.replace(' ', '_')}")
    for op in OP_DB
    for case in op.error_inputs()
]
METHOD_OPS = [pytest.param(op, id=op.name) for op in OP_DB if op.method]


# ----------------------------------------------------------------------------- 1. values


@pytest.mark.parametrize("op, dtype", op_dtype_params())
def test_values(op, dtype):
    for sample in op.samples(dtype):
        with describe(op.name, dtype, sample):
            check_against_ref(op, dtype, sample)


# ----------------------------------------------------------------------------- 2. layouts


def _check_layout_is_real(m, sample):
    """Guard the harness itself: the realised tensors really have the advertised strides."""
    for t in tensors_of(sample):
        x = make_tensor(m, t)
        # size-1 dims don't count for contiguity: a transposed (3, 1) is still contiguous
        strided = t.layout == "sliced" or (t.layout == "transposed" and min(t.shape[-2:]) > 1)
        if strided and t.values.size > 1:
            assert not x.is_contiguous(), f"{t} should be a non-contiguous view"
        if t.layout == "expanded":
            assert x.stride()[0] == 0, f"{t} should have stride 0 in dim 0"


@pytest.mark.parametrize("op, layout", LAYOUT_PARAMS)
def test_layouts(op, layout):
    dtype = layout_dtype(op)
    for sample in layout_samples(op, layout):
        bug = AGAINST_TORCH and op.torch_bug and op.torch_bug(layout, sample)
        if bug:
            warnings.warn(f"{op.name} {layout} {sample}: skipped, {bug}")
            continue
        laid_out = with_layout(sample, layout)
        with describe(op.name, dtype, layout, laid_out):
            _check_layout_is_real(ember, laid_out)
            check_against_ref(op, dtype, laid_out)


# ----------------------------------------------------------------------------- 3. gradcheck


def differentiable_call(m, op, sample):
    """(fn, inputs): fn maps the sample's float tensors to the op's floating outputs."""
    inputs = tuple(
        make_tensor(m, t).requires_grad_() for t in tensors_of(sample) if is_float(t.dtype)
    )

    def fn(*xs):
        it = iter(xs)

        def conv(x):
            if isinstance(x, Dt):
                return getattr(m, x.name)
            return next(it) if is_float(x.dtype) else make_tensor(m, x)

        args, kwargs = map_structure((sample.args, sample.kwargs), conv)
        return tuple(o for o in as_tuple(op.op(m, *args, **kwargs)) if o.is_floating_point())

    return fn, inputs


@pytest.mark.parametrize("op", GRAD_OPS)
def test_gradcheck(op):
    samples = grad_samples(op)
    assert samples, "a differentiable op needs samples usable by gradcheck"
    for sample in samples:
        with describe(op.name, sample):
            fn, inputs = differentiable_call(ember, op, sample)
            assert ember.autograd.gradcheck(fn, inputs)


# ----------------------------------------------------------------------------- 4. vs torch


@pytest.mark.parametrize("op, dtype", op_dtype_params())
def test_matches_torch(op, dtype, torch):
    for sample in op.samples(dtype):
        with describe(op.name, dtype, sample):
            ours, theirs = call(ember, op, sample), call(torch, op, sample)
            their_dtypes = [dtype_name(o.dtype) for o in theirs]
            assert [dtype_name(o.dtype) for o in ours] == their_dtypes, (
                "result dtype differs from torch"
            )
            compare_outputs(
                op, sample, [to_numpy(o) for o in ours], [to_numpy(o) for o in theirs], their_dtypes
            )


def backward_grads(m, op, sample):
    """Gradients of sum(output * grad_output) w.r.t. the float inputs (None where unused)."""
    fn, inputs = differentiable_call(m, op, sample)
    outs = fn(*inputs)
    rng = rng_for("grad_output", op.name)
    loss = sum((o * m.tensor(np.asarray(rng.standard_normal(tuple(o.shape))))).sum() for o in outs)
    loss.backward()
    return [None if x.grad is None else to_numpy(x.grad) for x in inputs]


@pytest.mark.parametrize("op", GRAD_OPS)
def test_grads_match_torch(op, torch):
    for sample in grad_samples(op):
        with describe(op.name, sample):
            ours, theirs = backward_grads(ember, op, sample), backward_grads(torch, op, sample)
            for g_ours, g_theirs in zip(ours, theirs):
                assert (g_ours is None) == (g_theirs is None), (
                    "gradient presence differs from torch"
                )
                if g_theirs is not None:
                    assert_values(g_ours, g_theirs, "float64", GRAD_TOL)


# ----------------------------------------------------------------------------- 5. errors


def builtin_class(exc):
    """The builtin exception class an error is an instance of.  torch reports unsupported
    dtypes with NotImplementedError, a RuntimeError subclass: both count as RuntimeError."""
    cls = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
    return RuntimeError if cls is NotImplementedError else cls


def raised(m, op, case):
    try:
        op.op(m, *to_lib(m, case.args), **to_lib(m, case.kwargs))
    except Exception as e:  # noqa: BLE001 - the class is what is being tested
        return e
    return None


@pytest.mark.parametrize("op, case", ERROR_PARAMS)
def test_error(op, case):
    with pytest.raises(case.exc):
        op.op(ember, *to_lib(ember, case.args), **to_lib(ember, case.kwargs))


@pytest.mark.parametrize("op, case", ERROR_PARAMS)
def test_error_matches_torch(op, case, torch):
    ours, theirs = raised(ember, op, case), raised(torch, op, case)
    assert theirs is not None, "torch accepts this call: the error case is wrong"
    assert ours is not None, f"torch raises {type(theirs).__name__}: {theirs}"
    assert builtin_class(ours) is builtin_class(theirs), f"ember: {ours!r}\ntorch: {theirs!r}"


# ----------------------------------------------------------------------------- type promotion

# (lhs, rhs, result) -- "0d:<dtype>" is a 0-d tensor, a Python number is a scalar operand
PROMOTION_CASES = [
    ("int8", "uint8", "int16"),  # no unsigned type holds int8: the next signed one
    ("uint8", "int16", "int16"),
    ("bool", "int8", "int8"),
    ("bool", "float16", "float16"),
    ("uint8", "int64", "int64"),
    ("int64", "float16", "float16"),  # any float beats any int, whatever the width
    ("int32", "bfloat16", "bfloat16"),
    ("float16", "bfloat16", "float32"),  # neither holds the other
    ("float16", "float32", "float32"),
    ("bfloat16", "float64", "float64"),
    ("int32", 2.5, "float32"),  # a float scalar gives the default float dtype
    ("float16", 2.5, "float16"),  # a scalar of the same kind never widens
    ("uint8", 2, "uint8"),
    ("bool", 2, "int64"),
    ("bool", True, "bool"),
    ("int8", "0d:int64", "int8"),  # a 0-d tensor of the same kind doesn't widen either
    ("float16", "0d:float64", "float16"),
    ("int32", "0d:float64", "float64"),  # ...but a 0-d tensor of a higher kind keeps its dtype
    ("bool", "0d:int32", "int32"),
    ("uint8", "0d:bfloat16", "bfloat16"),
    ("0d:int64", "0d:float16", "float16"),  # only 0-d tensors: ordinary promotion
    ("0d:uint8", "0d:int8", "int16"),
]


def _operand(spec):
    """A tensor spec from PROMOTION_CASES (values 1..3 fit every dtype exactly), or a scalar."""
    if not isinstance(spec, str):
        return spec, np.float64(spec)
    zero_dim = spec.startswith("0d:")
    dtype = spec[3:] if zero_dim else spec
    values = np.array(2) if zero_dim else np.array([1, 2, 3])
    if dtype == "bool":
        values = values > 1
    return tensor(values, dtype), values.astype(np.float64)


@pytest.mark.parametrize(
    "name, np_fn",
    [pytest.param("add", np.add, id="add"), pytest.param("mul", np.multiply, id="mul")],
)
@pytest.mark.parametrize("lhs, rhs, result", PROMOTION_CASES, ids=str)
def test_type_promotion(name, np_fn, lhs, rhs, result):
    (a, a_np), (b, b_np) = _operand(lhs), _operand(rhs)
    out = getattr(ember, name)(*to_lib(ember, (a, b)))
    assert dtype_name(out.dtype) == result
    expected = np_fn(a_np, b_np).astype(NP_CARRIER[result])  # bool results saturate: True + True
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), expected.astype(np.float64))


def test_promotion_in_cat_and_where():
    i8, u8 = tensor([1, 2], "int8"), tensor([3, 4], "uint8")
    assert dtype_name(ember.cat(to_lib(ember, [i8, u8])).dtype) == "int16"
    cond = tensor([True, False], "bool")
    assert dtype_name(ember.where(*to_lib(ember, (cond, i8, u8))).dtype) == "int16"


# ----------------------------------------------------------------------------- Tensor methods


@pytest.mark.parametrize("op", METHOD_OPS)
def test_method_variant(op):
    """x.op(...) is the same computation as ember.op(x, ...)."""
    dtype = layout_dtype(op)
    for sample in op.samples(dtype):
        if not (sample.args and isinstance(sample.args[0], T)):
            continue
        with describe(op.name, dtype, sample):
            x, *rest = to_lib(ember, sample.args)
            as_method = as_tuple(getattr(x, op.method)(*rest, **to_lib(ember, sample.kwargs)))
            as_function = call(ember, op, sample)
            dtypes = [dtype_name(o.dtype) for o in as_function]
            assert [dtype_name(o.dtype) for o in as_method] == dtypes
            compare_outputs(
                op,
                sample,
                [to_numpy(o) for o in as_method],
                [to_numpy(o) for o in as_function],
                dtypes,
            )


# ----------------------------------------------------------------------------- broadcasting


@pytest.mark.parametrize("name", ["add", "mul", "maximum", "atan2", "eq"])
@settings(max_examples=25, deadline=None, database=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
def test_broadcasting(name, shapes):
    op = OPS_BY_NAME[name]
    rng = rng_for("broadcast", name, shapes)
    sample = Sample(tuple(tensor(rng.uniform(-3, 3, s), "float32") for s in shapes.input_shapes))
    with describe(name, sample):
        outs = call(ember, op, sample)
        assert tuple(outs[0].shape) == shapes.result_shape
        check_against_ref(op, "float32", sample)


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


@settings(max_examples=25, deadline=None, database=None)
@given(
    a=array_shapes(max_dims=3, min_side=2, max_side=4),
    b=array_shapes(max_dims=3, min_side=2, max_side=4),
)
def test_non_broadcastable_shapes_raise(a, b):
    assume(not _broadcastable(a, b))
    x, y = ember.ones(*a), ember.ones(*b)
    with pytest.raises(RuntimeError):
        ember.add(x, y)


@pytest.mark.parametrize("a", ["uint8", "int32", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("b", ["bool", "int8", "int64", "float16", "bfloat16", "float32"])
def test_xlogy_and_ldexp_promote_as_torch(a, b):
    """The result dtype is the pair's promoted type (the default float for two integer types)."""
    x = ember.tensor([0, 1, 2, 3]).to(getattr(ember, a))
    y = ember.tensor([1, 0, 2, 3]).to(getattr(ember, b))
    want = ember.promote_types(x.dtype, y.dtype)
    want = want if want.is_floating_point else ember.float32
    xs, ys = x.double().numpy(), y.double().numpy()
    r = ember.xlogy(x, y)
    assert r.dtype == want
    with np.errstate(divide="ignore"):
        expected = np.where(xs == 0, 0.0, xs * np.log(ys))
    np.testing.assert_allclose(r.float().numpy(), expected, rtol=1e-2)
    if b != "bool":
        r = ember.ldexp(x, y)
        assert r.dtype == want
        np.testing.assert_allclose(r.float().numpy(), xs * 2.0**ys, rtol=1e-2)


def test_sinc_half_precision_rounds_only_the_result():
    x = ember.tensor([0.0, 1.0, 2.0, 0.5], dtype=ember.bfloat16)
    want = np.sinc(np.array([0.0, 1.0, 2.0, 0.5]))
    got = ember.sinc(x)
    assert got.dtype == ember.bfloat16
    np.testing.assert_allclose(got.float().numpy(), want, atol=1e-6, rtol=1e-2)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_long_float_sums_stay_within_one_output_rounding(dtype):
    """Float sums add blocks of 16 elements in float and the rest in double: over 2^22 elements
    (rows, columns and a single long run) the error stays within two roundings of the output."""
    rng = np.random.default_rng(0)
    x = (rng.random((1 << 22,)) / 1024).astype(np.float32)  # float16's total stays finite
    t = ember.tensor(x).to(getattr(ember, dtype))
    exact = t.double().numpy().astype(np.float64)
    eps = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}[dtype]
    total = exact.sum()
    assert abs(t.sum().double().item() - total) <= 2 * eps * total
    cols = t.reshape(-1, 16)
    np.testing.assert_allclose(
        cols.sum(0).double().numpy(), exact.reshape(-1, 16).sum(0), rtol=2 * eps
    )
    np.testing.assert_allclose(
        cols.mean(1).double().numpy(), exact.reshape(-1, 16).mean(1), rtol=2 * eps
    )


def test_logcumsumexp_keeps_small_early_prefixes():
    """A running log-sum-exp: the first prefix of [-1000, 0] is -1000, which a shift by the row
    maximum would lose to exp underflow; infinities and NaN behave as in log(cumsum(exp(x)))."""
    x = ember.tensor(
        [[-1000.0, 0.0, 1000.0], [float("-inf"), float("-inf"), 2.0]], dtype=ember.float64
    )
    got = ember.logcumsumexp(x, 1).numpy()
    want = np.logaddexp.accumulate(x.numpy(), axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[0, 0] == -1000.0
    y = ember.tensor([1.0, float("inf"), float("nan"), 0.0]).logcumsumexp(0)
    assert y[1].item() == float("inf") and np.isnan(y[2].item()) and np.isnan(y[3].item())
    with pytest.raises(NotImplementedError, match="logcumsumexp"):
        ember.logcumsumexp(ember.tensor([1, 2]), 0)


def test_logcumsumexp_gradient_against_finite_differences():
    x = ember.tensor(
        [[0.3, -2.0, 5.0, 1.0], [-40.0, 3.0, 3.0, -1.0]], dtype=ember.float64, requires_grad=True
    )
    assert ember.autograd.gradcheck(lambda t: ember.logcumsumexp(t, 1), (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.logcumsumexp(t, 0), (x,))
    out = ember.logcumsumexp(x, 1)
    assert out.grad_fn.name() == "LogcumsumexpBackward0"
