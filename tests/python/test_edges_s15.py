"""Issue 19, session 15: the last session's leftovers and what the fuzzer's seed-15 run and a sweep
of rarely drawn combinations (integer/bool inputs, 0-d and empty tensors, expanded outputs,
Python numbers where torch wants a Tensor) found. Each case is checked against a hand-written
outcome and against torch where it is installed; messages where torch's wording is the point.
"""

import pytest
from _edge_check import _check, _ok, _raises

import ember

# ----------------------------------------------------------------------------- reductions

REDUCTIONS = [
    # aminmax of an empty input checks its dim's size (IndexError) after the dim's range
    (lambda T: T.aminmax(T.zeros(0, 3), dim=-2), _raises(IndexError)),
    (lambda T: T.aminmax(T.zeros(0, 3), dim=2), _raises(IndexError)),
    (lambda T: T.aminmax(T.zeros(0, 3), dim=1), _ok([[], []])),
    # cummax/cummin of an empty input take any int dim; kthvalue of a 0-d bool
    (lambda T: T.cummax(T.zeros(3, 0), -(2**40))[0].shape[1], _ok(0)),
    (lambda T: T.cummin(T.zeros(3, 0), 5)[1].shape[0], _ok(3)),
    (lambda T: T.cummax(T.zeros(3, 2), 5), _raises(IndexError)),
    (lambda T: T.kthvalue(T.tensor(True), 1), _ok([True, 0])),
    (lambda T: T.kthvalue(T.tensor(True), 2), _raises(RuntimeError)),
    (lambda T: T.kthvalue(T.tensor([True]), 1), _raises(NotImplementedError)),
    # nanmean refuses a non-float input whatever dtype= says
    (lambda T: T.nanmean(T.tensor(True), dim=(0,), dtype=T.float64), _raises(RuntimeError)),
    (lambda T: T.nanmean(T.tensor([1, 2]), dtype=T.float64), _raises(RuntimeError)),
    (lambda T: T.nanmean(T.tensor([1.0, float("nan")]), dtype=T.float64), _ok(1.0)),
    # index_reduce: an index out of range (negative too) is an IndexError
    (
        lambda T: T.zeros(3, dtype=T.int64).index_reduce(
            -1, T.tensor([3, 0]), T.tensor([1, 2]), "amin", include_self=False
        ),
        _raises(IndexError),
    ),
    (
        lambda T: T.zeros(3).index_reduce(0, T.tensor([-1, 0]), T.tensor([1.0, 2.0]), "prod"),
        _raises(IndexError),
    ),
    (
        lambda T: T.zeros(3, 2).index_reduce(1, T.tensor([5]), T.ones(3, 1), "amax"),
        _raises(IndexError),
    ),
    (
        lambda T: T.zeros(3).index_reduce(0, T.tensor([2, 2]), T.tensor([1.0, 3.0]), "amax"),
        _ok([0.0, 0.0, 3.0]),
    ),
    # linalg.cond of matrices with no elements is 0 (in the real dtype), for every valid order
    (lambda T: T.linalg.cond(T.zeros(0, 0, dtype=T.float64)), _ok(0.0)),
    (lambda T: T.linalg.cond(T.zeros(2, 0, 0)), _ok([0.0, 0.0])),
    (lambda T: T.linalg.cond(T.zeros(0, 0), -2), _ok(0.0)),
    (lambda T: T.linalg.cond(T.zeros(0, 0), "fro"), _ok(0.0)),
]


@pytest.mark.parametrize("case", range(len(REDUCTIONS)))
def test_reductions_of_empty_and_0d_inputs_as_torch(case):
    fn, want = REDUCTIONS[case]
    _check(fn, want)


def test_aminmax_message_as_torch():
    with pytest.raises(IndexError, match="aminmax: Expected reduction dim 0 to have non-zero size"):
        ember.aminmax(ember.zeros(0, 3), dim=-2)


# ----------------------------------------------------------------------------- argument types

TYPES = [
    # gcd/lcm take two tensors: a Python number is torch's TypeError
    (lambda T: T.gcd(T.tensor([4]), 2), _raises(TypeError)),
    (lambda T: T.lcm(T.tensor([4]), True), _raises(TypeError)),
    (lambda T: T.gcd(T.tensor(3.0), 0.5), _raises(TypeError)),
    (lambda T: T.lcm(T.tensor([4, 6]), T.tensor(6)), _ok([12, 6])),
]


@pytest.mark.parametrize("case", range(len(TYPES)))
def test_argument_types_as_torch(case):
    fn, want = TYPES[case]
    _check(fn, want)


def test_gcd_names_the_argument():
    with pytest.raises(TypeError, match=r"lcm\(\): argument 'other' \(position 2\) must be Tensor"):
        ember.lcm(ember.tensor([4]), 2)


# ----------------------------------------------------------------------------- nn.functional

NN = [
    # avg_pool3d: float32/64 and int64 only, checked after the geometry, even for an empty batch
    (
        lambda T: T.nn.functional.avg_pool3d(T.zeros(0, 1, 1, 2, 2, dtype=T.bool), 1),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.avg_pool3d(T.ones(1, 1, 1, 2, 2, dtype=T.int32), 1),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.avg_pool3d(T.ones(1, 1, 1, 2, 2, dtype=T.float16), 1),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.avg_pool3d(T.zeros(0, 1, 1, 2, 2, dtype=T.bool), 5),
        _raises(RuntimeError),
    ),
    # mse/smooth_l1 compute a bool input with a float target in the pair's dtype; l1 subtracts
    (lambda T: T.nn.functional.mse_loss(T.ones(3, dtype=T.bool), T.zeros(3)), _ok(1.0)),
    (
        lambda T: T.nn.functional.smooth_l1_loss(
            T.ones(5, 5, dtype=T.bool).expand(5, 5), T.ones(5, dtype=T.float64)
        ),
        _ok(0.0),
    ),
    (lambda T: T.nn.functional.l1_loss(T.ones(3, dtype=T.bool), T.zeros(3)), _raises(RuntimeError)),
    (
        lambda T: T.nn.functional.mse_loss(T.ones(3, dtype=T.bool), T.ones(3, dtype=T.bool)),
        _raises(NotImplementedError),
    ),
]


@pytest.mark.parametrize("case", range(len(NN)))
def test_nn_functional_dtypes_as_torch(case):
    fn, want = NN[case]
    _check(fn, want)


def test_avg_pool3d_of_int64_truncates_as_torch():
    x = ember.tensor([[[[[1, 2], [4, 7]]]]])
    f = ember.nn.functional.avg_pool3d
    assert f(x, (1, 2, 2)).dtype == ember.int64
    assert f(x, (1, 2, 2)).flatten().tolist() == [3]
    assert f(x, (1, 2, 2), divisor_override=3).flatten().tolist() == [4]
    assert f(x, (1, 2, 2), 2, (0, 1, 1)).flatten().tolist() == [0, 0, 1, 1]
    got = f(x, (1, 2, 2), 2, (0, 1, 1), count_include_pad=False)
    assert got.flatten().tolist() == [1, 2, 4, 7]
