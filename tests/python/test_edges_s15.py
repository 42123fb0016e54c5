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
    # so do logaddexp/logaddexp2, ldexp and heaviside
    (lambda T: T.logaddexp(T.ones(1, dtype=T.uint8), float("nan")), _raises(TypeError)),
    (lambda T: T.logaddexp2(T.ones(1), 2.0), _raises(TypeError)),
    (lambda T: T.logaddexp(2.0, T.ones(1)), _raises(TypeError)),
    (lambda T: T.ldexp(T.ones(1, dtype=T.float16), -1), _raises(TypeError)),
    (lambda T: T.heaviside(T.ones(1), 0.5), _raises(TypeError)),
    (lambda T: T.ldexp(T.ones(1), T.tensor([2])), _ok([4.0])),
    (lambda T: T.heaviside(T.tensor([0.0, -1.0]), T.tensor([0.5])), _ok([0.5, 0.0])),
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


# ----------------------------------------------------------------------------- sizes

SIZES = [
    # c10's numel rule: unsigned product left to right, an overflow sticks past a later 0
    (lambda T: list(T.ones(4, 0, 2**62).shape), _ok([4, 0, 2**62])),
    (lambda T: list(T.empty(2, 0, 2**62 + 1, dtype=T.int8).shape), _ok([2, 0, 2**62 + 1])),
    (lambda T: T.ones(4, 0, 2**62).sum(), _ok(0.0)),
    (lambda T: list(T.randint(0, 5, (2**63 - 1, 0, 2**40)).shape), _ok([2**63 - 1, 0, 2**40])),
    (lambda T: T.ones(2**62, 4, 0), _raises(RuntimeError)),
    (lambda T: T.zeros(0, 2**62, 4), _raises(RuntimeError)),
    (lambda T: T.ones(4, 0, 2**62).sum(1), _raises(RuntimeError)),
]


@pytest.mark.parametrize("case", range(len(SIZES)))
def test_numel_overflow_with_a_zero_dim_as_torch(case):
    fn, want = SIZES[case]
    _check(fn, want)


# ----------------------------------------------------------------------------- amin/amax

EMPTY_DIMS = [
    # each listed dim of an empty input is checked, in order, before repeats and later ranges
    (lambda T: T.amin(T.zeros(0, 3), (0, 0)), _raises(IndexError)),
    (lambda T: T.amax(T.zeros(0, 3), (0, 5)), _raises(IndexError)),
    (lambda T: T.amax(T.zeros(2, 0), (1, -1)), _raises(IndexError)),
    (lambda T: T.amax(T.zeros(0, 3), (1, 1)), _raises(RuntimeError)),
    (lambda T: T.amin(T.zeros(0, 3), (1, 5)), _raises(IndexError)),
    (lambda T: T.amin(T.zeros(0, 3), 1), _ok([])),
    (lambda T: T.amin(T.zeros(2, 3), (0, 0)), _raises(RuntimeError)),
]


@pytest.mark.parametrize("case", range(len(EMPTY_DIMS)))
def test_amin_amax_of_an_empty_input_check_dims_as_torch(case):
    fn, want = EMPTY_DIMS[case]
    _check(fn, want)


@pytest.mark.parametrize(
    "fn, text",
    [
        (lambda T: T.amin(T.zeros(0, 3), (-2, -2)), r"amin\(\): Expected reduction dim -2 to have"),
        (lambda T: T.amax(T.zeros(3, 0), (1, 0)), r"amax\(\): Expected reduction dim 1 to have"),
    ],
)
def test_empty_reduction_messages_as_torch(fn, text):
    with pytest.raises(IndexError, match=text):
        fn(ember)


# ----------------------------------------------------------------------------- out=

OVERLAP = [
    # an out whose elements share memory is refused before it is resized
    (lambda T: T.exp(T.tensor(1.0), out=T.zeros(1).expand(3)), _raises(RuntimeError)),
    (lambda T: T.add(T.ones(2), 1, out=T.zeros(1).expand(3)), _raises(RuntimeError)),
    (lambda T: T.sigmoid(T.ones(3), out=T.zeros(1).expand(3)), _raises(RuntimeError)),
    (lambda T: T.exp(T.ones(1, 3), out=T.zeros(1, 1).expand(1, 3)), _raises(RuntimeError)),
    (lambda T: T.exp(T.ones(3), out=T.zeros(3, 2)[:, 0]), _ok([2.7183] * 3)),
    (lambda T: T.exp(T.ones(0), out=T.zeros(1).expand(0)), _ok([])),
]


@pytest.mark.parametrize("case", range(len(OVERLAP)))
def test_out_with_internal_overlap_as_torch(case):
    fn, want = OVERLAP[case]
    _check(fn, want)


# ----------------------------------------------------------------------------- fuzzer, seed 15

SEED15 = [
    # index_select: IndexError but along dim 1 of a matrix or more (torch's dim-1 fast path)
    (lambda T: T.index_select(T.ones(3, 3, 3), -1, T.tensor([3])), _raises(IndexError)),
    (lambda T: T.index_select(T.ones(3, 3, 3), 1, T.tensor([3])), _raises(RuntimeError)),
    (lambda T: T.index_select(T.ones(2, 3, 4), 2, T.tensor([-1])), _raises(IndexError)),
    (lambda T: T.index_select(T.ones(3, 3), -1, T.tensor([3])), _raises(RuntimeError)),
    # of an empty matrix: the indexed dim must have a size, then indices fail as RuntimeError
    (lambda T: T.index_select(T.zeros(3, 3, 0), -1, T.tensor([3])), _raises(RuntimeError)),
    (lambda T: T.index_select(T.zeros(3, 0, 2), -1, T.tensor([7])), _raises(RuntimeError)),
    (lambda T: T.index_select(T.zeros(0, 2), 0, T.tensor([7])), _raises(RuntimeError)),
    (lambda T: T.index_select(T.zeros(0), 0, T.tensor([7])), _raises(IndexError)),
    (lambda T: list(T.index_select(T.zeros(0, 2), 1, T.tensor([1, 1, 0])).shape), _ok([0, 3])),
    # broadcast_to's function form takes a sequence only; the method takes an int
    (lambda T: T.broadcast_to(T.ones(3, 1), 4), _raises(TypeError)),
    (lambda T: T.broadcast_to(T.ones(1), 4), _raises(TypeError)),
    (lambda T: T.ones(1).broadcast_to(4), _ok([1.0] * 4)),
    (lambda T: T.broadcast_to(T.ones(1), (2,)), _ok([1.0] * 2)),
    # the 1-d/2-d average pools check the dtype even for an empty batch
    (
        lambda T: T.nn.functional.avg_pool1d(T.zeros(0, 2, 3, dtype=T.bool), 1),
        _raises(NotImplementedError),
    ),
    (
        lambda T: T.nn.functional.avg_pool2d(T.zeros(0, 2, 3, 3, dtype=T.bool), 1),
        _raises(NotImplementedError),
    ),
    (lambda T: T.nn.functional.avg_pool2d(T.zeros(0, 2, 3, 3), 1).shape[0], _ok(0)),
    # (the adaptive pools and area interpolation return an empty bool output)
    (
        lambda T: T.nn.functional.interpolate(
            T.zeros(0, 2, 1, dtype=T.bool), mode="area", scale_factor=2
        ).shape[2],
        _ok(2),
    ),
    (
        lambda T: T.nn.functional.adaptive_avg_pool2d(T.zeros(0, 2, 3, 3, dtype=T.bool), 2).shape[
            2
        ],
        _ok(2),
    ),
    # linspace: start and end converted to dtype first (checked); no bool loop past one step
    (lambda T: T.linspace(0, 0, 4, dtype=T.bool), _raises(NotImplementedError)),
    (lambda T: T.linspace(0, 1, 1, dtype=T.bool), _ok([False])),
    (lambda T: T.linspace(1, -2, 3, dtype=T.uint8), _ok([1, 127, 254])),
    (lambda T: T.linspace(0, -200, 5, dtype=T.uint8), _ok([0, 14, 28, 42, 56])),
    (lambda T: T.linspace(-3, 5, 1, dtype=T.uint8), _ok([253])),
    (lambda T: T.linspace(2.7, -2.7, 3, dtype=T.int64), _ok([2, 0, -2])),
    (lambda T: T.linspace(0, 300, 3, dtype=T.uint8), _raises(RuntimeError)),
    (lambda T: T.linspace(0, 1e10, 3, dtype=T.int32), _raises(RuntimeError)),
    (lambda T: T.linspace(-1.5, 200.5, 3, dtype=T.uint8), _raises(RuntimeError)),
    # copy_ of a number goes through its double 0-d tensor: x86's conversion of -inf, nan, 1e20
    (lambda T: T.zeros((), dtype=T.int32).copy_(float("-inf")), _ok(-(2**31))),
    (lambda T: T.zeros((), dtype=T.int32).copy_(float("nan")), _ok(-(2**31))),
    (lambda T: T.zeros((), dtype=T.int32).copy_(1e20), _ok(-(2**31))),
    (lambda T: T.zeros(2, dtype=T.int64).copy_(-4), _ok([-4, -4])),
    (lambda T: T.zeros(2).copy_(True), _ok([1.0, 1.0])),
    # an index into a dim of size 0 is refused before the value's shape is looked at
    (
        lambda T: T.zeros(0, 5, 3).__setitem__(
            (T.tensor([0, 1, 2]), slice(-6, None), Ellipsis, None), T.ones(3)
        ),
        _raises(IndexError),
    ),
    (lambda T: T.zeros(0, 5, 3)[T.tensor([0, 1, 2])], _raises(IndexError)),
    (lambda T: T.zeros(0, 5)[T.tensor([], dtype=T.int64)].shape[0], _ok(0)),
    # narrow checks the length before the start
    (lambda T: T.ones(2).narrow(-1, 2**63 - 1, -2), _raises(RuntimeError)),
    (lambda T: T.ones(2).narrow(-1, 5, 1), _raises(IndexError)),
]


@pytest.mark.parametrize("case", range(len(SEED15)))
def test_seed15_findings_as_torch(case):
    fn, want = SEED15[case]
    _check(fn, want)


def test_check_order_messages_as_torch():
    with pytest.raises(RuntimeError, match=r"narrow\(\): length must be non-negative"):
        ember.ones(2).narrow(-1, 5, -2)
    with pytest.raises(NotImplementedError, match="\"linspace_cpu\" not implemented for 'Bool'"):
        ember.linspace(0, 1, 3, dtype=ember.bool)
    with pytest.raises(IndexError, match="index is out of bounds for dimension with size 0"):
        ember.zeros(0, 5)[ember.tensor([0])] = 1.0
    with pytest.raises(TypeError, match=r"broadcast_to\(\): argument 'size' \(position 2\)"):
        ember.broadcast_to(ember.ones(1), 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda T: T.split(T.ones(4, 4), 2),
        lambda T: T.ones(4, 4).split([1, 3]),
        lambda T: T.ones(4, 4).split_with_sizes([1, 3]),
        lambda T: T.ones(4, 4).chunk(2),
        lambda T: T.chunk(T.ones(4, 4), 3, 1),
        lambda T: T.ones(4, 4).unbind(),
        lambda T: T.unbind(T.ones(4, 4), 1),
        lambda T: T.ones(4, 4).unsafe_split(2),
        lambda T: T.ones(4, 4).unsafe_chunk(2),
        lambda T: T.meshgrid(T.ones(2), T.ones(3), indexing="ij"),
        lambda T: T.broadcast_tensors(T.ones(4, 1), T.ones(4)),
        lambda T: T.functional.split(T.ones(4), 3),
    ],
)
def test_pieces_are_tuples_as_torch(fn):
    # torch gives a tuple (`x.chunk(2) + (y,)` works; a list would raise TypeError there)
    got = fn(ember)
    assert type(got) is tuple
    try:
        import torch
    except ImportError:
        return
    want = fn(torch)
    assert type(want) is tuple
    assert [list(p.shape) for p in got] == [list(p.shape) for p in want]
