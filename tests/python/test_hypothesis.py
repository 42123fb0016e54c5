"""Property tests: elementwise ops, reductions and indexing agree with numpy.

Inputs are random shapes (including zero-size and 0-d), dtypes, and strided views (transposed,
step-sliced, expanded) so kernels see non-contiguous memory as well as contiguous.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember

# deterministic (derandomize) and without an example database written to the work tree
SETTINGS = settings(max_examples=50, deadline=None, derandomize=True, database=None)

INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]  # bfloat16: numpy has no reference
ALL_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES


def is_float(dtype):
    return dtype in FLOAT_DTYPES


def elements(dtype):
    """Small values: no overflow surprises beyond what both libraries do identically."""
    if dtype == "bool":
        return st.booleans()
    if dtype == "uint8":
        return st.integers(0, 100)
    if dtype in INT_DTYPES:
        return st.integers(-100, 100)
    width = {"float16": 16, "float32": 32, "float64": 64}[dtype]
    return st.floats(-100, 100, width=width, allow_nan=False, allow_infinity=False)


# sizes 0..4 with zero rarer (any zero side makes the whole tensor empty)
SIDES = st.sampled_from([1, 2, 3, 4, 1, 2, 3, 4, 0])


def shapes(min_dims=0, max_dims=4):
    return st.lists(SIDES, min_size=min_dims, max_size=max_dims).map(tuple)


@st.composite
def strided(draw, shape, dtype, allow_expand=True):
    """(tensor, ndarray) with equal values and the given shape; the tensor is often a strided view
    of a larger/permuted base rather than a fresh contiguous tensor."""
    shape = tuple(shape)
    ndim = len(shape)
    # strided modes listed twice: weighted towards non-contiguous memory
    modes = ["contiguous"] + ["sliced"] * 2 + (["transposed"] * 2 if ndim >= 2 else [])
    if allow_expand and ndim >= 1:
        modes += ["expanded"] * 2
    mode = draw(st.sampled_from(modes))

    def base_of(base_shape):
        # np.asarray: hypothesis hands back numpy scalars for shape (), we want 0-d arrays
        return np.asarray(draw(hnp.arrays(np.dtype(dtype), base_shape, elements=elements(dtype))))

    if mode == "contiguous":
        a = base_of(shape)
        return ember.tensor(a), a
    if mode == "transposed":
        i, j = draw(st.lists(st.integers(0, ndim - 1), min_size=2, max_size=2, unique=True))
        base_shape = list(shape)
        base_shape[i], base_shape[j] = base_shape[j], base_shape[i]
        base = base_of(tuple(base_shape))
        return ember.tensor(base).transpose(i, j), base.swapaxes(i, j)
    if mode == "sliced":
        steps = draw(st.lists(st.sampled_from([2, 1, 3]), min_size=ndim, max_size=ndim))
        offsets = draw(st.lists(st.integers(0, 2), min_size=ndim, max_size=ndim))
        base = base_of(tuple(o + s * k for o, s, k in zip(offsets, shape, steps)))
        index = tuple(slice(o, o + s * k, k) for o, s, k in zip(offsets, shape, steps))
        return ember.tensor(base)[index], np.asarray(base[index])
    # expanded: some dims (and possibly leading ones) broadcast from size 1 (stride 0)
    n_lead = draw(st.integers(0, ndim))
    ones = draw(st.lists(st.booleans(), min_size=ndim - n_lead, max_size=ndim - n_lead))
    base_shape = tuple(1 if o else s for o, s in zip(ones, shape[n_lead:]))
    base = base_of(base_shape)
    return ember.tensor(base).expand(*shape), np.broadcast_to(base, shape)


@st.composite
def tensor_and_array(draw, dtypes=ALL_DTYPES, allow_expand=True, min_dims=0):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes(min_dims=min_dims))
    return draw(strided(shape, dtype, allow_expand=allow_expand))


def check(t, expected, dtype=None, rtol=None, atol=0.0):
    """Tensor `t` equals ndarray `expected` in shape, values and dtype (`dtype` or expected's)."""
    dtype = dtype or str(expected.dtype)
    assert t.dtype == getattr(ember, dtype), (t.dtype, dtype)
    assert tuple(t.shape) == expected.shape
    got = t.numpy()
    if rtol is None:
        rtol = {"float16": 1e-3, "float32": 1e-5, "float64": 1e-12}.get(dtype, 0)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(got, expected.astype(dtype))
    else:
        np.testing.assert_allclose(got, expected.astype(dtype), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------------------------
# elementwise
# ----------------------------------------------------------------------------------------------

# name: (ember op, numpy op, dtypes it applies to)
UNARY = {
    "neg": (lambda t: -t, np.negative, INT_DTYPES + FLOAT_DTYPES),
    "abs": (lambda t: t.abs(), np.abs, INT_DTYPES + FLOAT_DTYPES),
    "exp": (lambda t: ember.exp(t / 10), lambda a: np.exp(a / a.dtype.type(10)), FLOAT_DTYPES),
    "sin": (ember.sin, np.sin, FLOAT_DTYPES),
    "tanh": (lambda t: t.tanh(), np.tanh, FLOAT_DTYPES),
    "sqrt_abs": (lambda t: t.abs().sqrt(), lambda a: np.sqrt(np.abs(a)), FLOAT_DTYPES),
    "floor": (ember.floor, np.floor, FLOAT_DTYPES),
    "round": (ember.round, np.round, FLOAT_DTYPES),  # half to even, like numpy
    "square": (lambda t: t * t, np.square, ALL_DTYPES[1:]),
    "logical_not": (ember.logical_not, np.logical_not, ALL_DTYPES),
    "sign": (ember.sign, np.sign, FLOAT_DTYPES + ["int32", "int64"]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary_matches_numpy(name, data):
    op, np_op, dtypes = UNARY[name]
    t, a = data.draw(tensor_and_array(dtypes))
    expected = np_op(a)
    atol = 1e-3 if a.dtype == np.float16 else 1e-6  # near-zero results of sin/tanh
    check(op(t), expected, atol=atol if is_float(str(a.dtype)) else 0.0)


def test_unary_on_ints_gives_default_float():
    # torch computes transcendental functions of int tensors in the default float dtype
    t = ember.tensor([0, 1, 2], dtype=ember.int32)
    assert ember.exp(t).dtype == ember.float32
    assert ember.sqrt(t).dtype == ember.float32
    assert ember.sin(ember.tensor([True])).dtype == ember.float32


BINARY = {
    "add": (lambda x, y: x + y, np.add, ALL_DTYPES),
    "sub": (lambda x, y: x - y, np.subtract, INT_DTYPES + FLOAT_DTYPES),  # bool - bool is an error
    "mul": (lambda x, y: x * y, np.multiply, ALL_DTYPES),
    "div": (lambda x, y: x / y, np.true_divide, FLOAT_DTYPES),
    "maximum": (ember.maximum, np.maximum, ALL_DTYPES),
    "minimum": (ember.minimum, np.minimum, ALL_DTYPES),
    "lt": (lambda x, y: x < y, np.less, ALL_DTYPES),
    "eq": (lambda x, y: x == y, np.equal, ALL_DTYPES),
}


def expected_result_dtype(t1, t2):
    """torch's rule: 0-d tensors only count if of a higher category than the dimensioned one."""
    if (t1.dim() == 0) == (t2.dim() == 0):
        return ember.promote_types(t1.dtype, t2.dtype)
    dimmed, zero = (t1, t2) if t1.dim() else (t2, t1)

    def category(dt):
        return 2 if dt.is_floating_point else (0 if dt == ember.bool else 1)

    if category(zero.dtype) > category(dimmed.dtype):
        return zero.dtype
    return dimmed.dtype


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(
    data=st.data(),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, min_side=0, max_side=4),
)
def test_binary_broadcasting_matches_numpy(name, data, shapes):
    op, np_op, dtypes = BINARY[name]
    d1 = data.draw(st.sampled_from(dtypes))
    d2 = data.draw(st.sampled_from(dtypes))
    t1, a1 = data.draw(strided(shapes.input_shapes[0], d1))
    t2, a2 = data.draw(strided(shapes.input_shapes[1], d2))
    out = op(t1, t2)
    res_dtype = str(expected_result_dtype(t1, t2)).split(".")[-1]
    # torch casts both inputs to the result dtype and computes there
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        expected = np_op(a1.astype(res_dtype), a2.astype(res_dtype))
    out_dtype = "bool" if expected.dtype == np.bool_ else res_dtype
    assert tuple(out.shape) == shapes.result_shape
    check(out, np.asarray(expected), dtype=out_dtype)


# ----------------------------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------------------------


@st.composite
def reduction_args(draw, dtypes):
    t, a = draw(tensor_and_array(dtypes))
    if a.ndim == 0 or draw(st.booleans()):
        return t, a, None, False
    dims = draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True))
    # torch also accepts negative dims and a bare int
    dims = [d - a.ndim if draw(st.booleans()) else d for d in dims]
    dim = dims[0] if len(dims) == 1 and draw(st.booleans()) else tuple(dims)
    return t, a, dim, draw(st.booleans())


def call_reduction(t, method, dim, keepdim):
    fn = getattr(t, method)
    return fn() if dim is None else fn(dim=dim, keepdim=keepdim)


def reduced_size(a, dim):
    axes = range(a.ndim) if dim is None else np.atleast_1d(dim)
    return int(np.prod([a.shape[d] for d in axes]))


def float_atol(a, dtype):
    """Summation error bound: relative to the sum of absolute values."""
    eps = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    return eps * (float(np.abs(a.astype(np.float64)).sum()) + 1.0)


@SETTINGS
@given(args=reduction_args(ALL_DTYPES))
def test_sum_matches_numpy(args):
    t, a, dim, keepdim = args
    out = call_reduction(t, "sum", dim, keepdim)
    expected = np.sum(a.astype(np.float64), axis=dim, keepdims=keepdim)
    dtype = str(a.dtype) if is_float(str(a.dtype)) else "int64"  # ints and bool sum to int64
    if is_float(dtype):
        check(out, np.asarray(expected), dtype=dtype, rtol=0, atol=float_atol(a, dtype))
    else:
        check(out, np.asarray(expected), dtype=dtype)


@SETTINGS
@given(args=reduction_args(FLOAT_DTYPES))
def test_mean_matches_numpy(args):
    t, a, dim, keepdim = args
    out = call_reduction(t, "mean", dim, keepdim)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of empty -> nan in both
        expected = np.mean(a.astype(np.float64), axis=dim, keepdims=keepdim)
    dtype = str(a.dtype)
    check(out, np.asarray(expected), dtype=dtype, rtol=0, atol=float_atol(a, dtype))


def test_mean_of_int_tensor_raises():
    with pytest.raises(RuntimeError):
        ember.tensor([1, 2]).mean()


@pytest.mark.parametrize("method,np_fn", [("amax", np.amax), ("amin", np.amin)])
@SETTINGS
@given(args=reduction_args(ALL_DTYPES))
def test_amax_amin_match_numpy(method, np_fn, args):
    t, a, dim, keepdim = args
    if reduced_size(a, dim) == 0 and a.size == 0:
        # no identity for max/min: reducing over a zero-size dim is an error
        with pytest.raises((IndexError, RuntimeError)):
            call_reduction(t, method, dim, keepdim)
        return
    out = call_reduction(t, method, dim, keepdim)
    check(out, np.asarray(np_fn(a, axis=dim, keepdims=keepdim)))


# ----------------------------------------------------------------------------------------------
# indexing
# ----------------------------------------------------------------------------------------------


@st.composite
def basic_index(draw, shape):
    """A basic index (ints, positive-step slices, None, Ellipsis) valid for `shape`."""
    parts = []
    for size in shape:
        choices = ["slice"] + (["int"] if size > 0 else [])
        if draw(st.sampled_from(choices)) == "int":
            parts.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.none() | st.integers(-size - 2, size + 2)
            parts.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3))))
    if parts and draw(st.booleans()):  # replace a run of components by Ellipsis
        i = draw(st.integers(0, len(parts)))
        j = draw(st.integers(i, len(parts)))
        parts[i:j] = [Ellipsis]
    elif parts and draw(st.booleans()):  # or drop trailing ones (implicitly full slices)
        parts = parts[: draw(st.integers(0, len(parts)))]
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    if len(parts) == 1 and draw(st.booleans()):
        return parts[0]  # a bare (non-tuple) index
    return tuple(parts)


@st.composite
def advanced_index(draw, shape):
    """Integer-array indices (broadcast together, possibly separated by slices) for some dims of
    `shape`, slices elsewhere; None where every dim is empty.

    Ints and None are left out: torch treats them differently from numpy when mixed with arrays.
    """
    usable = [i for i, size in enumerate(shape) if size > 0]
    if not usable:
        return None
    forced = draw(st.sampled_from(usable))  # at least one array index
    chosen = [i for i in usable if i == forced or draw(st.booleans())]
    index_shapes = draw(
        hnp.mutually_broadcastable_shapes(
            num_shapes=len(chosen), min_dims=1, max_dims=2, min_side=1, max_side=3
        )
    ).input_shapes
    parts = [slice(None, None, draw(st.sampled_from([None, 2]))) for _ in shape]
    for i, ishape in zip(chosen, index_shapes):
        parts[i] = draw(hnp.arrays(np.int64, ishape, elements=st.integers(-shape[i], shape[i] - 1)))
    # drop trailing slices sometimes
    while isinstance(parts[-1], slice) and draw(st.booleans()):
        parts.pop()
    return tuple(parts)


def to_ember_index(index, as_list=False):
    def conv(p):
        if isinstance(p, np.ndarray):
            return p.tolist() if as_list and p.ndim == 1 and p.size else ember.tensor(p)
        return p

    return tuple(conv(p) for p in index) if isinstance(index, tuple) else conv(index)


@SETTINGS
@given(data=st.data())
def test_basic_indexing_matches_numpy(data):
    t, a = data.draw(tensor_and_array())
    index = data.draw(basic_index(a.shape))
    check(t[index], np.asarray(a[index]))


@SETTINGS
@given(data=st.data())
def test_advanced_indexing_matches_numpy(data):
    t, a = data.draw(tensor_and_array(min_dims=1))
    index = data.draw(advanced_index(a.shape))
    if index is None:
        return
    as_list = data.draw(st.booleans())
    check(t[to_ember_index(index, as_list)], np.asarray(a[index]))


@SETTINGS
@given(data=st.data())
def test_bool_mask_indexing_matches_numpy(data):
    t, a = data.draw(tensor_and_array(min_dims=1))
    n = data.draw(st.integers(1, a.ndim))  # mask over the leading n dims
    mask = data.draw(hnp.arrays(np.bool_, a.shape[:n]))
    check(t[ember.tensor(mask)], np.asarray(a[mask]))


@SETTINGS
@given(data=st.data())
def test_setitem_matches_numpy(data):
    # no expanded inputs: writing into memory shared by several elements is an error in torch
    t, a = data.draw(tensor_and_array(allow_expand=False))
    a = a.copy()
    value = data.draw(elements(str(a.dtype)))
    if data.draw(st.booleans()) and a.ndim:
        index = data.draw(advanced_index(a.shape)) or data.draw(basic_index(a.shape))
    else:
        index = data.draw(basic_index(a.shape))
    t[to_ember_index(index)] = value
    a[index] = value
    check(t, a)
