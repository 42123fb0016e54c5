"""Issue 19, session 11: the differential fuzzer's remaining disagreements with torch. relu's and
the piecewise activations' double backward, float16/bfloat16 overflow checks of a number, the
nn kernels' dtype support, and the order of torch's checks (conv_transpose, scatter_add,
indexing). Each case is checked against hand-computed outcomes, and against torch where it is
installed.
"""

import math

import numpy as np
import pytest
from _edge_check import _check, _ok, _raises

import ember

F = ember.nn.functional
INF, NAN = math.inf, math.nan


# ----------------------------------------------------------------------------- double backward


def _double_backward(lib, act):
    x = lib.tensor([1.0, -2.0, 3.0, 0.25], requires_grad=True)
    (g,) = lib.autograd.grad(act(lib, x).sum(), x, create_graph=True)
    g.sum().backward()
    return g.detach(), x.grad


ACTS = {
    "relu": lambda L, x: L.relu(x),
    "F.relu": lambda L, x: L.nn.functional.relu(x),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.5, 2.0),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x, -1.0, 2.0),
    "softshrink": lambda L, x: L.nn.functional.softshrink(x, 0.5),
    "hardshrink": lambda L, x: L.nn.functional.hardshrink(x, 0.5),
}


@pytest.mark.parametrize("name", sorted(ACTS))
def test_piecewise_double_backward_reaches_x_with_zeros(name):
    g, xg = _double_backward(ember, ACTS[name])
    # the gradient of a piecewise-linear function is flat in x: a zero gradient, not None
    assert xg is not None
    assert xg.tolist() == [0.0, 0.0, 0.0, 0.0]
    try:
        import torch
    except ImportError:
        return
    tg, txg = _double_backward(torch, ACTS[name])
    assert g.tolist() == tg.tolist()
    assert xg.tolist() == txg.tolist()


def test_hardsigmoid_double_backward_raises_as_torch():
    # torch has no derivative for hardsigmoid's backward
    def fn(lib):
        return _double_backward(lib, lambda L, x: L.nn.functional.hardsigmoid(x))

    _check(fn, _raises(RuntimeError))


def test_relu_backward_records_threshold_backward_backward():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    (g,) = ember.autograd.grad(ember.relu(x).sum(), x, create_graph=True)
    assert g.requires_grad
    assert type(g.grad_fn).__name__ == "ThresholdBackwardBackward0"
    assert g.tolist() == [1.0, 0.0]


def test_relu_first_order_backward_unchanged():
    x = ember.tensor([[1.0, -2.0], [0.0, 3.0]], requires_grad=True)
    ember.relu(x).mul(ember.tensor([2.0, 5.0])).sum().backward()
    assert x.grad.tolist() == [[2.0, 0.0], [0.0, 5.0]]


def test_relu_triple_backward():
    x = ember.tensor([1.0, -1.0], requires_grad=True)
    (g,) = ember.autograd.grad(ember.relu(x).pow(2).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x, create_graph=True)
    assert gg.tolist() == [2.0, 0.0]


# ----------------------------------------------------------------------------- number overflow


def _setitem(lib, dtype, n, v):
    x = lib.zeros(n, dtype=getattr(lib, dtype))
    x[...] = v
    return x


OVERFLOW = [
    # full / fill_ of float16 and bfloat16: checked when more than one element is written
    (lambda T: T.full((2,), 1e40, dtype=T.float16), _raises(RuntimeError)),
    (lambda T: T.full((2,), 70000.0, dtype=T.float16), _raises(RuntimeError)),
    (lambda T: T.full((2, 2), 70000, dtype=T.float16), _raises(RuntimeError)),
    (lambda T: T.full((0,), 1e40, dtype=T.float16), _raises(RuntimeError)),
    (lambda T: T.full((2,), 1e39, dtype=T.bfloat16), _raises(RuntimeError)),
    (lambda T: T.full((1,), 1e40, dtype=T.float16), _ok([INF])),
    (lambda T: T.full((2,), 70000.0, dtype=T.bfloat16), _ok([70144.0, 70144.0])),
    (lambda T: T.full((2,), INF, dtype=T.float16), _ok([INF, INF])),
    (lambda T: T.full((2,), NAN, dtype=T.float16), _ok([NAN, NAN])),
    (lambda T: T.full((2,), 65504.0, dtype=T.float16), _ok([65504.0, 65504.0])),
    (lambda T: T.zeros(2, dtype=T.float16).fill_(1e39), _raises(RuntimeError)),
    (lambda T: T.full_like(T.zeros(2, dtype=T.float16), 1e39), _raises(RuntimeError)),
    # masked_fill, index_fill and clamp check even one element
    (
        lambda T: T.zeros(1, dtype=T.float16).masked_fill(T.ones(1, dtype=T.bool), 1e39),
        _raises(RuntimeError),
    ),
    (lambda T: T.zeros(1, dtype=T.bfloat16).clamp(min=1e39), _raises(RuntimeError)),
    # a where or setitem number is converted unchecked
    (
        lambda T: T.where(T.ones(2, dtype=T.bool), T.zeros(2, dtype=T.float16), 1e39),
        _ok([0.0, 0.0]),
    ),
    (
        lambda T: T.where(T.ones(2, dtype=T.bool), 1e39, T.zeros(2, dtype=T.float16)),
        _ok([INF, INF]),
    ),
    (lambda T: _setitem(T, "float16", 2, 1e39), _ok([INF, INF])),
    (lambda T: _setitem(T, "bfloat16", 2, 70000.0), _ok([70144.0, 70144.0])),
    (lambda T: _setitem(T, "int32", 2, 1e40), _raises(RuntimeError)),
    # a float16 lerp weight is checked as float (its compute type)
    (
        lambda T: T.lerp(T.zeros(2, dtype=T.float16), T.ones(2, dtype=T.float16), 1e39),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.lerp(T.zeros(2, dtype=T.float16), T.ones(2, dtype=T.float16), 0.5),
        _ok([0.5, 0.5]),
    ),
]


@pytest.mark.parametrize("case", range(len(OVERFLOW)))
def test_number_overflow_for_16_bit_floats(case):
    fn, want = OVERFLOW[case]
    _check(fn, want)


def test_overflow_message_names_the_type():
    with pytest.raises(RuntimeError, match="c10::Half without overflow"):
        ember.full((3,), 1e40, dtype=ember.float16)
    with pytest.raises(RuntimeError, match="c10::BFloat16 without overflow"):
        ember.zeros(3, dtype=ember.bfloat16).fill_(-1e40)


# ----------------------------------------------------------------------------- nn kernel dtypes


def _i(lib, *shape, dtype="int64"):
    return lib.ones(*shape, dtype=getattr(lib, dtype))


DTYPES = [
    (
        lambda T: T.nn.functional.interpolate(_i(T, 2, 2, 2, 2), scale_factor=0.5),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.interpolate(
            _i(T, 1, 2, 3, dtype="bool"), size=4, mode="nearest-exact"
        ),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.interpolate(_i(T, 1, 2, 3, 3), size=2, mode="area"),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.interpolate(_i(T, 1, 2, 3, dtype="uint8"), size=4, mode="linear"),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.prelu(_i(T, 2, 3, dtype="bool"), _i(T, 1, dtype="bool")),
        NotImplementedError,
    ),
    (lambda T: T.nn.functional.prelu(_i(T, 2, 3), T.ones(1)), RuntimeError),
    (
        lambda T: T.nn.functional.nll_loss(_i(T, 2, 3), T.zeros(2, dtype=T.int64)),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.nll_loss(_i(T, 2, 3, 2), T.zeros(2, 2, dtype=T.int64)),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.binary_cross_entropy_with_logits(_i(T, 3), _i(T, 3)),
        NotImplementedError,
    ),
    (lambda T: T.nn.functional.mse_loss(_i(T, 3), _i(T, 3)), NotImplementedError),
    (
        lambda T: T.nn.functional.smooth_l1_loss(_i(T, 3), _i(T, 3, dtype="int32")),
        NotImplementedError,
    ),
    (lambda T: T.nn.functional.huber_loss(_i(T, 3), _i(T, 3)), NotImplementedError),
    (
        lambda T: T.nn.functional.huber_loss(
            _i(T, 3, dtype="bool"), _i(T, 3, dtype="bool"), delta=0.0
        ),
        RuntimeError,
    ),
    (lambda T: T.nn.functional.max_pool1d(_i(T, 1, 2, 3), 1), NotImplementedError),
    (
        lambda T: T.nn.functional.max_pool1d(_i(T, 1, 2, 3, dtype="bool"), 1, return_indices=True),
        NotImplementedError,
    ),
    (lambda T: T.nn.functional.adaptive_max_pool1d(_i(T, 1, 2, 3), 1), NotImplementedError),
]


@pytest.mark.parametrize("case", range(len(DTYPES)))
def test_nn_kernels_reject_dtypes_torch_lacks(case):
    fn, cls = DTYPES[case]
    _check(fn, _raises(cls))


STILL_TAKEN = [
    (
        lambda T: T.nn.functional.interpolate(_i(T, 1, 1, 2, dtype="uint8"), size=4),
        [[[1, 1, 1, 1]]],
    ),
    (lambda T: T.nn.functional.max_pool1d(_i(T, 1, 1, 2), 1, return_indices=True)[0], [[[1, 1]]]),
    (lambda T: T.nn.functional.mse_loss(T.ones(2), _i(T, 2)), 0.0),
    (lambda T: T.nn.functional.interpolate(T.ones(1, 1, 2), size=3), [[[1.0, 1.0, 1.0]]]),
]


@pytest.mark.parametrize("case", range(len(STILL_TAKEN)))
def test_nn_kernels_keep_the_dtypes_torch_takes(case):
    fn, want = STILL_TAKEN[case]
    _check(fn, _ok(want))


def test_batch_norm_with_expanded_running_stats_trains():
    x = ember.tensor([[1.0, 2.0], [3.0, 6.0]])
    rm = ember.zeros(1).expand(2)
    rv = ember.ones(1).expand(2)
    y = F.batch_norm(x, rm, rv, training=True)
    np.testing.assert_allclose(y.numpy(), [[-1.0, -1.0], [1.0, 1.0]], atol=1e-3)


# ----------------------------------------------------------------------------- check order


def _setitem_step0(lib):
    x = lib.zeros(2)
    x[slice(-3, 1, 0), lib.zeros(5, 3, dtype=lib.int64)] = lib.zeros(4, 3)
    return x


ORDER = [
    # the output size is checked before the dtype (torch's int64 transposed conv runs)
    (
        lambda T: T.nn.functional.conv_transpose1d(
            _i(T, 1, 2, 2, dtype="int32"), _i(T, 2, 2, 2, dtype="int32"), padding=7
        ),
        RuntimeError,
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(
            _i(T, 1, 2, 2, dtype="int32"), _i(T, 2, 2, 2, dtype="int32")
        ),
        NotImplementedError,
    ),
    # scatter_add reads src's sizes along self's dims: a src with fewer dims is an IndexError
    (
        lambda T: T.scatter_add(T.zeros(3, 3, 2), -2, T.zeros(3, 3, 1, dtype=T.int64), T.zeros(5)),
        IndexError,
    ),
    (lambda T: T.zeros(()).__getitem__(slice(0, None, -1)), ValueError),
    (lambda T: T.zeros(3).__getitem__(slice(None, None, 0)), ValueError),
    (_setitem_step0, IndexError),
    (lambda T: T.einsum(-1, T.zeros(3)), TypeError),
]


@pytest.mark.parametrize("case", range(len(ORDER)))
def test_torch_check_order(case):
    fn, cls = ORDER[case]
    _check(fn, _raises(cls))


EMPTY = [
    (lambda T: list(T.ones(2**62, 0).shape), [2**62, 0]),
    (
        lambda T: T.mm(T.ones(3, 0, dtype=T.bool), T.ones(0, 2, dtype=T.bool)).tolist(),
        [[False] * 2] * 3,
    ),
    (
        lambda T: list(T.matmul(T.ones(2, 1, 0, dtype=T.bool), T.ones(0, 2, dtype=T.bool)).shape),
        [2, 1, 2],
    ),
]


@pytest.mark.parametrize("case", range(len(EMPTY)))
def test_empty_shapes_as_torch(case):
    fn, want = EMPTY[case]
    _check(fn, _ok(want))


def test_bool_matmul_with_a_reduced_dim_still_raises():
    with pytest.raises(NotImplementedError):
        ember.mm(ember.ones(3, 1, dtype=ember.bool), ember.ones(1, 2, dtype=ember.bool))


# ----------------------------------------------------------------------------- gelu at the edges

VEC_BIG = INF if ember.backends.cpu.get_cpu_capability() == "AVX512" else 3e38
GELU = [
    # torch's scalar path (one element, strided): x / 2 first, so 3e38 stays finite
    (lambda T: T.nn.functional.gelu(T.tensor(3e38)), 3e38),
    (lambda T: T.nn.functional.gelu(T.tensor([3e38])), [3e38]),
    (lambda T: T.nn.functional.gelu(T.tensor([INF])), [INF]),
    (lambda T: T.nn.functional.gelu(T.tensor([3e38, 0.0, INF, 0.0])[::2]), [3e38, INF]),
    # its AVX-512 vectorized path (contiguous): x * (1 + erf) overflows (its AVX2 build: the
    # scalar path's result)
    (lambda T: T.nn.functional.gelu(T.tensor([3e38, -INF, 1.0])), [VEC_BIG, NAN, 0.8413447]),
    (lambda T: T.nn.functional.gelu(T.tensor([3e38, INF]), approximate="tanh"), [3e38, INF]),
    (lambda T: T.nn.functional.gelu(T.tensor([3e38, INF], dtype=T.float64)), [3e38, INF]),
]


@pytest.mark.parametrize("case", range(len(GELU)))
def test_gelu_special_values_as_torch(case):
    fn, want = GELU[case]
    _check(fn, _ok(want))


MORE = [
    (
        lambda T: T.nn.functional.pairwise_distance(T.ones(1, 5, 0), T.ones(1, 5, 0), p=-1.0),
        RuntimeError,
    ),
    (
        lambda T: T.nn.functional.pairwise_distance(T.ones(5, 0), T.ones(5, 0), p=math.inf),
        RuntimeError,
    ),
    (
        lambda T: T.nn.functional.smooth_l1_loss(
            _i(T, 3, dtype="bool"), _i(T, 3, dtype="bool"), beta=-1.0
        ),
        RuntimeError,
    ),
    (lambda T: T.einsum("ii->i"), ValueError),
    (
        lambda T: T.nn.functional.pad(_i(T, 2, 2, dtype="bool"), (1, 1), mode="reflect"),
        NotImplementedError,
    ),
    (
        lambda T: T.nn.functional.pad(_i(T, 1, 2, 2, dtype="bool"), (1, 1), mode="replicate"),
        NotImplementedError,
    ),
]


@pytest.mark.parametrize("case", range(len(MORE)))
def test_more_checks_as_torch(case):
    fn, cls = MORE[case]
    _check(fn, _raises(cls))


def test_pairwise_distance_of_empty_rows_with_an_identity():
    _check(
        lambda T: T.nn.functional.pairwise_distance(T.ones(5, 0), T.ones(5, 0), p=2.0),
        _ok([0.0] * 5),
    )
    _check(
        lambda T: T.nn.functional.pad(_i(T, 1, 2, dtype="int64"), (1, 1), mode="reflect"),
        _ok([[1, 1, 1, 1]]),
    )


def test_index_select_of_a_0d_tensor_as_torch():
    # more than one index into a 0-d tensor: torch's RuntimeError; one index selects it
    _check(lambda T: T.index_select(T.tensor(1.0), 0, T.tensor([0, 1])), _raises(RuntimeError))
    _check(lambda T: T.index_select(T.tensor(1.0), 0, T.tensor([0])), _ok(1.0))
    _check(lambda T: T.index_select(T.tensor(1.0), 0, T.tensor([1])), _raises(IndexError))


def test_dropout_of_an_integer_input_as_torch():
    _check(lambda T: T.nn.functional.dropout(T.ones(3, dtype=T.bool), p=0.5), _raises(RuntimeError))
    _check(
        lambda T: T.nn.functional.dropout(T.ones(3, dtype=T.int64), p=0.5, training=False),
        _ok([1, 1, 1]),
    )
    _check(lambda T: list(T.nn.functional.dropout(T.ones(0, 5, dtype=T.bool)).shape), _ok([0, 5]))
