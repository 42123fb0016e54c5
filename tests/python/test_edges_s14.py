"""Issue 19, session 14: the fuzzer's last raise and class findings. movedim and index_fill
check in torch's order; adaptive average pools and area interpolation of integer inputs (sizes
checked and the output allocated before the dtype; area of 5-d inputs); losses that check the
reduction before the dtype; batch_norm's training statistics of a strided integer input and its
inf weight in evaluation; median of a non-tensor. Each case is checked against hand-computed
outcomes, and against torch where it is installed.
"""

import pytest
from _edge_check import _check, _ok, _raises

T_EYE3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

# ----------------------------------------------------------------------------- check order

ORDER = [
    # movedim wraps every source and destination dim before it looks for repeats
    (lambda T: T.movedim(T.ones(2, 3), (0, 0), (0, 5)), _raises(IndexError)),
    (lambda T: T.movedim(T.ones(2, 3), (0, -2), (0, 1)), _raises(RuntimeError)),
    (lambda T: T.movedim(T.ones(2, 3), (0, 1), (1, -1)), _raises(RuntimeError)),
    (lambda T: list(T.movedim(T.ones(2, 3, 4), (0, -1), (-1, 0)).shape), _ok([4, 3, 2])),
    # index_fill: a value tensor must be 0-d (checked first), a number must fit self's dtype
    # (even with no index to fill)
    (
        lambda T: T.ones(2).index_fill(0, T.tensor([0.0]), T.tensor([1.0])),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.ones(2, dtype=T.int32).index_fill(0, T.tensor([0]), 1e20),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.ones(2, dtype=T.int32).index_fill(0, T.tensor([], dtype=T.int64), 1e20),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.ones(2, dtype=T.int32).index_fill(5, T.tensor([0]), 1e20),
        _raises(IndexError),
    ),
    (
        lambda T: T.ones(2, dtype=T.int32).index_fill(0, T.tensor([0]), T.tensor(1e20)),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.ones(2, dtype=T.uint8).index_fill_(0, T.tensor([0]), -1),
        _ok([255, 1]),
    ),
    (
        lambda T: T.ones(2, dtype=T.int32).index_fill(0, T.tensor([1]), T.tensor(2.5)),
        _ok([1, 2]),
    ),
    # the reduction is checked before the dtype (torch's Python layer)
    (
        lambda T: T.nn.functional.mse_loss(
            T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64), reduction="bogus"
        ),
        _raises(ValueError),
    ),
    (
        lambda T: T.nn.functional.mse_loss(T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.mse_loss(
            T.ones(2, dtype=T.int64), T.zeros(2, dtype=T.int64), weight=T.ones(2)
        ),
        _ok(1.0),
    ),
    (
        lambda T: T.nn.functional.soft_margin_loss(
            T.ones((), dtype=T.int64), T.ones((), dtype=T.int64), reduction="bogus"
        ),
        _raises(ValueError),
    ),
    (lambda T: T.median("abc"), _raises(TypeError)),
    # training statistics of an input neither contiguous nor channels-last: torch's mean()
    (
        lambda T: T.nn.functional.batch_norm(
            T.ones(3, 2, 4, dtype=T.int64).transpose(1, 2), None, None, training=True
        ),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.batch_norm(
            T.ones(1, 4, 2, dtype=T.bool).expand(3, 4, 2), None, None, training=True
        ),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.batch_norm(
            T.ones(3, 4, 2, 2, dtype=T.int64).to(memory_format=T.channels_last),
            None,
            None,
            training=True,
        ),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.batch_norm(
            T.ones(3, 2, 4, dtype=T.int64).transpose(1, 2), T.ones(4), T.ones(4)
        ),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.batch_norm(
            T.tensor([[1.0, 3.0], [3.0, 5.0]], dtype=T.float16).t(), None, None, training=True
        ).tolist(),
        _ok([[-1.0, -1.0], [1.0, 1.0]]),
    ),
]


@pytest.mark.parametrize("case", range(len(ORDER)))
def test_check_order_as_torch(case):
    fn, want = ORDER[case]
    _check(fn, want)


# ----------------------------------------------------------------------------- integer pools

POOLS = [
    # negative sizes first (RuntimeError), then the output's allocation, then the dtype
    (
        lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(1, 1, 4, dtype=T.int64), -2),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.int32), (-2, 2)),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool2d(
            T.ones(1, 1, 4, 4, dtype=T.int64), (2**62, 2)
        ),
        _raises(RuntimeError),
    ),
    (
        lambda T: list(
            T.nn.functional.adaptive_avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.int64), (0, 2)).shape
        ),
        _ok([1, 1, 0, 2]),
    ),
    (
        lambda T: list(
            T.nn.functional.adaptive_avg_pool2d(T.ones(0, 1, 4, 4, dtype=T.int64), 2).shape
        ),
        _ok([0, 1, 2, 2]),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.int64), 2),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(6, dtype=T.bool), -1),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool3d(
            T.ones(1, 1, 4, 4, 4, dtype=T.int64), (-2, 2, 2)
        ),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool3d(
            T.ones(1, 1, 4, 4, 4, dtype=T.int64), (0, 2, 2)
        ),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool3d(T.ones(1, 1, 0, 4, 4), (2, 2, 2)),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool3d(T.ones(1, 1, 4, 4, 4, dtype=T.int64), 1),
        _raises(RuntimeError),  # torch's mean path
    ),
    # area interpolation is the adaptive average pool (3-d included)
    (
        lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4, dtype=T.int64), size=-2, mode="area"),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.interpolate(
            T.ones(2, 2, 1, dtype=T.int64), scale_factor=0.0, mode="area"
        ).shape[-1],
        _ok(0),
    ),
    (
        lambda T: T.nn.functional.interpolate(
            T.ones(1, 1, 4, 4, 4, dtype=T.int64), size=(-2, 2, 2), mode="area"
        ),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.interpolate(
            T.ones(1, 1, 4, 4, 4, dtype=T.int64), size=(2, 3, 2), mode="area"
        ),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.interpolate(
            T.arange(64.0).reshape(1, 1, 4, 4, 4), size=(2, 1, 2), mode="area"
        ).flatten(),
        _ok([14.5, 16.5, 46.5, 48.5]),
    ),
]


@pytest.mark.parametrize("case", range(len(POOLS)))
def test_integer_adaptive_pools_as_torch(case):
    fn, want = POOLS[case]
    _check(fn, want)


# ----------------------------------------------------------------------------- conv_transpose1d

CONV_T = [
    # torch's oneDNN path (batched float32) takes dilation 0 with a 1-wide kernel; others refuse
    (
        lambda T: T.nn.functional.conv_transpose1d(
            T.arange(16.0).reshape(2, 2, 4), T.ones(2, 1, 1), dilation=0, stride=3, padding=2
        ).flatten()[:6],
        _ok([0.0, 6.0, 0.0, 0.0, 8.0, 0.0]),
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(
            T.ones(2, 2, 4), T.ones(2, 1, 1), T.tensor([5.0]), dilation=(0,)
        ).flatten()[:2],
        _ok([7.0, 7.0]),
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(T.ones(2, 2, 4), T.ones(2, 1, 2), dilation=0),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(
            T.ones(2, 2, 4, dtype=T.float64), T.ones(2, 1, 1, dtype=T.float64), dilation=0
        ),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(T.ones(2, 4), T.ones(2, 1, 1), dilation=0),
        _raises(RuntimeError),
    ),
    # a batch of 1 is torch's native path (unless grouped), an empty batch is sized unchecked
    (
        lambda T: T.nn.functional.conv_transpose1d(T.ones(1, 2, 4), T.ones(2, 1, 1), dilation=0),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(
            T.ones(1, 2, 4), T.ones(2, 1, 1), dilation=0, groups=2
        ).shape[1],
        _ok(2),
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(
            T.ones(0, 2, 4, dtype=T.float64), T.ones(2, 1, 1, dtype=T.float64), dilation=0
        ).shape[-1],
        _ok(4),
    ),
]


CONV_T += [
    # an empty batch is sized without checking output_padding against the stride
    (
        lambda T: list(
            T.nn.functional.conv_transpose1d(
                T.ones(0, 2, 2), T.ones(2, 1, 2), T.ones(1), output_padding=1
            ).shape
        ),
        _ok([0, 1, 4]),
    ),
    (
        lambda T: list(
            T.nn.functional.conv_transpose2d(
                T.ones(0, 2, 2, 3), T.ones(2, 1, 2, 2), output_padding=(1, 3)
            ).shape
        ),
        _ok([0, 1, 4, 7]),
    ),
    (
        lambda T: T.nn.functional.conv_transpose1d(
            T.ones(2, 2, 2), T.ones(2, 1, 2), output_padding=1
        ),
        _raises(RuntimeError),
    ),
]


@pytest.mark.parametrize("case", range(len(CONV_T)))
def test_conv_transpose1d_dilation_zero_as_torch(case):
    fn, want = CONV_T[case]
    _check(fn, want)


# ----------------------------------------------------------------------------- empty linalg

EMPTY_LINALG = [
    # the factorization kernels refused an empty batch with an internal assert
    (lambda T: list(T.linalg.cholesky(T.zeros(0, 4, 4, dtype=T.float64)).shape), _ok([0, 4, 4])),
    (
        lambda T: [list(t.shape) for t in T.linalg.cholesky_ex(T.zeros(2, 0, 0))][1],
        _ok([2]),
    ),
    (
        lambda T: [list(t.shape) for t in T.linalg.qr(T.zeros(0, 3, 2), mode="complete")],
        _ok([[0, 3, 3], [0, 3, 2]]),
    ),
    (lambda T: T.linalg.qr(T.zeros(2, 3, 0), mode="complete").Q[1], _ok(T_EYE3)),
    (
        lambda T: [list(t.shape) for t in T.linalg.qr(T.zeros(3, 0), mode="r")][0],
        _ok([0]),
    ),
    (
        lambda T: [list(t.shape) for t in T.linalg.qr(T.zeros(2, 0, 3))],
        _ok([[2, 0, 0], [2, 0, 3]]),
    ),
]


@pytest.mark.parametrize("case", range(len(EMPTY_LINALG)))
def test_empty_factorizations_as_torch(case):
    fn, want = EMPTY_LINALG[case]
    _check(fn, want)


# ----------------------------------------------------------------------------- batch_norm order

BN_ORDER = [
    # sizes, then the strided statistics' dtype (training), then the pair of running stats
    (
        lambda T: T.nn.functional.batch_norm(
            T.ones(2, 2, 2, dtype=T.bool).permute(2, 1, 0),
            None,
            T.ones(2, dtype=T.bool),
            training=True,
        ),
        _raises(RuntimeError),
    ),
    (
        lambda T: T.nn.functional.batch_norm(T.ones(2, 2, 2), None, T.ones(2), training=True),
        _raises(ValueError),
    ),
    (
        lambda T: T.nn.functional.batch_norm(
            T.ones(2, 2, 2, dtype=T.int64).permute(2, 1, 0), T.ones(3), T.ones(3), training=True
        ),
        _raises(RuntimeError),
    ),
    # evaluating: each running statistic must be given (RuntimeError, before the pair check)
    (
        lambda T: T.nn.functional.batch_norm(T.ones(2, 2, 2), None, T.ones(2)),
        _raises(RuntimeError),
    ),
    (lambda T: T.nn.functional.batch_norm(T.ones(2, 2, 2), T.ones(2), None), _raises(RuntimeError)),
]


@pytest.mark.parametrize("case", range(len(BN_ORDER)))
def test_batch_norm_check_order_as_torch(case):
    fn, want = BN_ORDER[case]
    _check(fn, want)


# ------------------------------------------------------------------ batch_norm, inf weight

NAN, INF = float("nan"), float("inf")


def _bn_eval(T, weight, dtype="float32", shape=(3, 2)):
    x = T.tensor([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]], dtype=getattr(T, dtype)).reshape(shape)
    stats = [T.tensor(v, dtype=getattr(T, dtype)) for v in ([1.0, 0.0], [1.0, 1.0])]
    w = T.tensor(weight, dtype=getattr(T, dtype))
    b = T.tensor([0.5, 0.0], dtype=getattr(T, dtype))
    return T.nn.functional.batch_norm(x, *stats, w, b, training=False).reshape(3, 2)


# torch's evaluation kernel folds the mean into the shift for a contiguous input and contiguous
# per-channel tensors: an inf weight makes the whole channel NaN (x * inf + (bias - mean * inf)),
# the input's zeros and the mean's own value included
BN_INF = [
    (lambda T: _bn_eval(T, [INF, 1.0]), [[NAN, 2.0], [NAN, -1.0], [NAN, 0.5]]),
    (lambda T: _bn_eval(T, [-INF, 2.0], "float64"), [[NAN, 4.0], [NAN, -2.0], [NAN, 1.0]]),
    (lambda T: _bn_eval(T, [INF, 1.0], shape=(3, 2, 1, 1)), [[NAN, 2.0], [NAN, -1.0], [NAN, 0.5]]),
    # its other path (a strided input, or a per-channel tensor that is not contiguous) does not
    # fold: (x - mean) * invstd * weight + bias
    (
        lambda T: T.nn.functional.batch_norm(
            T.tensor([[1.0, 0.0, 3.0], [2.0, -1.0, 0.5]]).t(),
            T.tensor([1.0, 0.0]),
            T.tensor([1.0, 1.0]),
            T.tensor([INF, 1.0]),
            T.tensor([0.5, 0.0]),
            training=False,
        ),
        [[NAN, 2.0], [-INF, -1.0], [INF, 0.5]],
    ),
    (
        lambda T: T.nn.functional.batch_norm(
            T.tensor([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]]),
            T.tensor([1.0, 0.0]),
            T.tensor([1.0, 1.0]),
            T.tensor([INF, 1.0]),
            T.tensor(0.5).expand(2),
            training=False,
        ),
        [[NAN, 2.5], [-INF, -0.5], [INF, 1.0]],
    ),
]


@pytest.mark.parametrize("case", range(len(BN_INF)))
def test_batch_norm_eval_with_an_inf_weight_as_torch(case):
    fn, want = BN_INF[case]
    _check(fn, _ok(want))
