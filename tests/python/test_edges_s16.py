"""Issue 19, session 16: what a sweep of out=, in-place, promotion, reduction, sorting, nan-variant,
indexing and where/masked_* calls found against torch, and the known leftovers (keepdim without
dim, mT of a 0-d tensor, mode with NaN). Each case is checked against a hand-written outcome and
against torch where it is installed; the tie-order cases compare positions with torch only.
"""

import random
import warnings

import pytest
from _edge_check import _check, _ok, _raises

import ember

# ------------------------------------------------------------------ keepdim= needs dim=

KEEPDIM = [
    # torch's overloads: keepdim= comes with dim= only (dim=None explicitly is one for sum/mean)
    (lambda T: T.ones(2, 2).sum(keepdim=True), _raises(TypeError)),
    (lambda T: T.sum(T.ones(2, 2), keepdim=False), _raises(TypeError)),
    (lambda T: T.ones(2, 2).mean(keepdim=True, dtype=T.float64), _raises(TypeError)),
    (lambda T: T.ones(2, 2).prod(keepdim=True), _raises(TypeError)),
    (lambda T: T.ones(2, 2).prod(None), _raises(TypeError)),
    (lambda T: T.ones(2, 2).median(keepdim=True), _raises(TypeError)),
    (lambda T: T.nanmedian(T.ones(2, 2), keepdim=False), _raises(TypeError)),
    (lambda T: T.ones(2, 2).sum(dim=None, keepdim=True), _ok([[4.0]])),
    (lambda T: T.mean(T.ones(2, 2), None, True), _ok([[1.0]])),
    (lambda T: T.ones(2, 3).sum((0,), False, dtype=T.float64), _ok([2.0, 2.0, 2.0])),
    (lambda T: T.ones(2, 3).prod(1, True), _ok([[1.0], [1.0]])),
    (lambda T: T.ones(2, 3).median(-1, keepdim=True)[0], _ok([[1.0], [1.0]])),
    (lambda T: T.ones(2, 3).sum(axis=0, keepdims=True), _ok([[2.0, 2.0, 2.0]])),
    # an __index__ object or a one-element integer tensor is one dim, as torch's int[1]
    (lambda T: T.ones(2, 3).sum(__import__("numpy").int64(1)), _ok([3.0, 3.0])),
    (lambda T: T.ones(2, 3).mean(T.tensor(0)), _ok([1.0, 1.0, 1.0])),
    (lambda T: T.ones(2, 3).sum(True), _raises(TypeError)),
]


@pytest.mark.parametrize("case", range(len(KEEPDIM)))
def test_keepdim_without_dim_is_a_type_error_as_torch(case):
    fn, want = KEEPDIM[case]
    _check(fn, want)


# ------------------------------------------------------------------ transposes of a 0-d tensor


@pytest.mark.parametrize(
    ("attr", "text", "value"),
    [
        ("T", "Tensor.T is deprecated on 0-D tensors. This function is the identity", 2.0),
        ("mT", "Tensor.mT is deprecated on 0-D tensors. This function is the identity", 2.0),
        ("mH", "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", 2.0),
        ("H", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", 2.0),
        ("adjoint", "adjoint() is deprecated on 0-D tensors. Consider using x.conj().", 2.0),
    ],
)
def test_transposes_of_a_0d_tensor_warn_and_return_it(attr, text, value):
    x = ember.tensor(value)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = getattr(x, attr)() if attr == "adjoint" else getattr(x, attr)
    assert r.shape == () and r.item() == value
    assert any(text in str(w.message) and w.category is UserWarning for w in seen)


def test_conjugate_transposes_of_a_0d_complex_tensor_conjugate():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.tensor(1 + 2j).mH.item() == 1 - 2j
        assert ember.tensor(1 + 2j).H.item() == 1 - 2j
        assert ember.tensor(1 + 2j).mT.item() == 1 + 2j
    with pytest.raises(RuntimeError, match="Got 1-D tensor"):
        _ = ember.ones(3).mT


# ------------------------------------------------------------------ which of equal values


def _rows(seed, lengths, floats):
    rng = random.Random(seed)
    for n in lengths:
        for _ in range(6):
            pool = [0.0, 1.0, 2.0, float("nan")] if floats else [0, 1, 2]
            yield [rng.choice(pool) for _ in range(n)]


def _same_pair(t_out, e_out):
    import numpy as np

    for a, b in zip(t_out, e_out):
        np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))


@pytest.mark.parametrize("floats", [False, True])
def test_mode_reports_torchs_value_and_position(floats):
    torch = pytest.importorskip("torch")
    for row in _rows(1, [5, 16, 17, 40, 100], floats):
        dt = "float32" if floats else "int64"
        t = torch.mode(torch.tensor(row, dtype=getattr(torch, dt)))
        e = ember.mode(ember.tensor(row, dtype=getattr(ember, dt)))
        _same_pair(t, e)


def test_mode_with_nan_as_torch():
    # torch's sort by a plain `<` leaves the NaNs where they break the order: NaN wins here
    r = ember.mode(ember.tensor([float("nan"), 1.0, float("nan"), 1.0]))
    assert r.indices.item() == 0 and r.values.isnan().item()
    r = ember.mode(ember.tensor([1.0, float("nan"), float("nan"), 2.0, 2.0]))
    assert (r.values.item(), r.indices.item()) == (2.0, 4)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("floats", [False, True])
def test_unstable_sort_orders_ties_as_torch(descending, floats):
    torch = pytest.importorskip("torch")
    for row in _rows(2, [3, 16, 17, 20, 64], floats):
        dt = "float32" if floats else "int32"
        t = torch.sort(torch.tensor(row, dtype=getattr(torch, dt)), descending=descending)
        e = ember.sort(ember.tensor(row, dtype=getattr(ember, dt)), descending=descending)
        _same_pair(t, e)
        x = [row, row[::-1]]
        t = torch.argsort(torch.tensor(x, dtype=getattr(torch, dt)), dim=0)
        e = ember.argsort(ember.tensor(x, dtype=getattr(ember, dt)), dim=0)
        _same_pair([t], [e])


def test_stable_sort_keeps_positions_in_order():
    x = ember.tensor([1, 0, 1, 0] * 10)
    idx = ember.sort(x, stable=True).indices.tolist()
    assert idx == list(range(1, 40, 2)) + list(range(0, 40, 2))
    # a long 1-D integer ascending sort is stable even unasked (torch's radix sort)
    y = ember.tensor([1, 0] * 20000)
    assert ember.argsort(y)[:5].tolist() == [1, 3, 5, 7, 9]


@pytest.mark.parametrize("floats", [False, True])
def test_kthvalue_and_median_report_torchs_positions(floats):
    torch = pytest.importorskip("torch")
    for row in _rows(3, [1, 2, 3, 5, 17, 40], floats):
        dt = "float64" if floats else "int64"
        for k in sorted({1, (len(row) + 1) // 2, len(row)}):
            t = torch.kthvalue(torch.tensor(row, dtype=getattr(torch, dt)), k)
            e = ember.kthvalue(ember.tensor(row, dtype=getattr(ember, dt)), k)
            _same_pair(t, e)
        t = torch.median(torch.tensor(row, dtype=getattr(torch, dt)), 0)
        e = ember.median(ember.tensor(row, dtype=getattr(ember, dt)), 0)
        _same_pair(t, e)


def test_kthvalue_picks_the_kth_value():
    r = ember.kthvalue(ember.tensor([3.0, float("nan"), 1.0, 2.0, 1.0]), 3)
    assert r.values.item() == 2.0 and r.indices.item() == 3
    r = ember.kthvalue(ember.tensor([3.0, float("nan"), 1.0]), 3)
    assert r.values.isnan().item() and r.indices.item() == 1


# ------------------------------------------------------------------ quantile's checks

QUANTILE = [
    (lambda T: T.quantile(T.tensor([1.0, 2.0], dtype=T.float16), 0.5), _raises(RuntimeError)),
    (lambda T: T.nanquantile(T.tensor([1.0, 2.0], dtype=T.bfloat16), 0.5), _raises(RuntimeError)),
    (lambda T: T.quantile(T.ones(2, 0), 0.5, dim=0), _raises(RuntimeError)),
    (lambda T: T.nanquantile(T.ones(0), 0.5), _raises(RuntimeError)),
    (lambda T: T.quantile(T.ones(2), 0.5, interpolation="foo"), _raises(RuntimeError)),
    (lambda T: T.quantile(T.ones(2), 1.5, interpolation="foo"), _raises(RuntimeError)),
    (lambda T: T.quantile(T.ones(2), 0.5, dim=3), _raises(IndexError)),
    (lambda T: T.quantile(T.tensor([1.0, 3.0]), 0.5), _ok(2.0)),
    (lambda T: T.nanquantile(T.tensor([1.0, float("nan"), 3.0]), 0.25), _ok(1.5)),
]


@pytest.mark.parametrize("case", range(len(QUANTILE)))
def test_quantile_checks_as_torch(case):
    fn, want = QUANTILE[case]
    _check(fn, want)


def test_quantile_messages_as_torch():
    with pytest.raises(
        RuntimeError, match=r"^quantile\(\) q must be in the range \[0, 1\] but got 1.5"
    ):
        ember.nanquantile(ember.ones(2), 1.5, interpolation="foo")
    with pytest.raises(RuntimeError, match="midpoint or nearest, but got foo"):
        ember.quantile(ember.ones(0), 0.5, interpolation="foo")
    with pytest.raises(RuntimeError, match=r"^quantile\(\) input tensor must be either float"):
        ember.nanquantile(ember.ones(2, dtype=ember.float16), 0.5)


# ------------------------------------------------------------------ dtypes and broadcasting

MISC = [
    # norm with dtype= is linalg.vector_norm's: a float or complex input and dtype only
    (lambda T: T.norm(T.tensor([1, 2]), dtype=T.float32), _raises(RuntimeError)),
    (lambda T: T.norm(T.tensor([3, 4]), dim=0, dtype=T.float64), _raises(RuntimeError)),
    (lambda T: T.norm(T.tensor([3.0, 4.0]), dtype=T.float64), _ok(5.0)),
    (
        lambda T: T.norm(T.tensor([[3.0, -4.0]]), 1, dim=1, keepdim=True, dtype=T.float64),
        _ok([[7.0]]),
    ),
    # addcmul has no bool kernel
    (lambda T: T.addcmul(*[T.tensor([True, False])] * 3), _raises(NotImplementedError)),
    (
        lambda T: T.tensor([True]).addcmul_(T.tensor([True]), T.tensor([True])),
        _raises(NotImplementedError),
    ),
    (lambda T: T.addcmul(T.tensor([1]), T.tensor([True]), T.tensor([True])), _ok([2])),
    # the in-place form checks addcdiv's integer division as the function does
    (lambda T: T.tensor([1]).addcdiv_(T.tensor([1]), T.tensor([2])), _raises(RuntimeError)),
    # the out-of-place masked_scatter broadcasts self and mask
    (
        lambda T: T.tensor([1.0, 2.0, 3.0]).masked_scatter(
            T.tensor([[True], [False]]), T.arange(8.0)
        ),
        _ok([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]),
    ),
    (
        lambda T: T.tensor(1.0).masked_scatter(T.tensor([True, False, True]), T.arange(8.0)),
        _ok([0.0, 1.0, 1.0]),
    ),
    (
        lambda T: T.ones(3).masked_scatter(T.tensor([True, False]), T.arange(8.0)),
        _raises(RuntimeError),
    ),
]


@pytest.mark.parametrize("case", range(len(MISC)))
def test_dtype_checks_and_broadcasting_as_torch(case):
    fn, want = MISC[case]
    _check(fn, want)


# ------------------------------------------------------------------ indices of empty results

INDEXING = [
    # an index into a non-empty dim is checked as it is read: an empty result reads none
    (lambda T: T.ones(2, 0)[[0, -3]], _ok([[], []])),
    (lambda T: T.ones(2, 0)[T.tensor([5])], _ok([[]])),
    # but an index into an empty dim is refused before any read
    (lambda T: list(T.ones(2, 0, 3)[:, [7]].shape), _raises(IndexError)),
    (lambda T: T.ones(2, 3)[[0, -3]], _raises(IndexError)),
    (lambda T: T.ones(0)[[0]], _raises(IndexError)),
    (lambda T: T.ones(0, 2)[T.tensor([1])], _raises(IndexError)),
]


@pytest.mark.parametrize("case", range(len(INDEXING)))
def test_out_of_range_indices_of_an_empty_result_as_torch(case):
    fn, want = INDEXING[case]
    _check(fn, want)


# ------------------------------------------------------------------ out= of the aliases


@pytest.mark.parametrize(
    "op",
    [
        "absolute",
        "negative",
        "fix",
        "arccos",
        "square",
        "subtract",
        "multiply",
        "arctan2",
        "greater",
        "less_equal",
        "not_equal",
        "nextafter",
        "xlogy",
    ],
)
def test_out_sharing_memory_is_refused_by_aliases_and_composites_as_torch(op):
    unary = op in ("absolute", "negative", "fix", "arccos", "square")
    dtype = ember.bool if op in ("greater", "less_equal", "not_equal") else ember.float32
    args = (ember.ones(1),) if unary else (ember.ones(1), ember.ones(1))
    # an expanded out is refused before the resize its shape (3) would otherwise get
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        getattr(ember, op)(*args, out=ember.zeros(1, dtype=dtype).expand(3))
    out = ember.zeros(1, dtype=dtype)
    assert getattr(ember, op)(*args, out=out) is out


OUT_NUMBERS = [
    # torch's parser takes a Python number for div's Tensor operands (and add/sub/mul's), out= too
    (lambda T: T.div(T.ones(2), 2, out=T.zeros(2)), _ok([0.5, 0.5])),
    (lambda T: T.div(2, T.ones(2), out=T.zeros(2)), _ok([2.0, 2.0])),
    (lambda T: T.div(T.ones(2), 2, rounding_mode="floor", out=T.zeros(2)), _ok([0.0, 0.0])),
    (lambda T: T.div(T.ones(2), True, out=T.zeros(2)), _ok([1.0, 1.0])),
    (lambda T: T.div(T.ones(2), 1, out=T.zeros((), dtype=T.int64)), _raises(RuntimeError)),
    (lambda T: T.div(T.ones(2), "a", out=T.zeros(2)), _raises(TypeError)),
    (lambda T: T.logical_and(T.ones(2), True, out=T.zeros(2, dtype=T.bool)), _raises(TypeError)),
]


@pytest.mark.parametrize("case", range(len(OUT_NUMBERS)))
def test_div_out_takes_a_number_as_torch(case):
    fn, want = OUT_NUMBERS[case]
    _check(fn, want)


ALIAS_OUT = [
    # an alias runs its op's out= kernel: out's dtype is checked before the kernel's dtype
    (lambda T: T.absolute(T.tensor([True]), out=T.zeros(1, dtype=T.int64)), _raises(RuntimeError)),
    (lambda T: T.fix(T.tensor([True]), out=T.zeros(1, dtype=T.float16)), _raises(RuntimeError)),
    (lambda T: T.absolute(T.tensor([-2]), out=T.zeros(1, dtype=T.int64)), _ok([2])),
    (lambda T: T.multiply(T.tensor([2]), 3, out=T.zeros(1, dtype=T.int64)), _ok([6])),
    (lambda T: T.greater(T.tensor([2.0]), 1, out=T.zeros(1, dtype=T.bool)), _ok([True])),
    # nanmedian of an empty reduced dim: torch's IndexError before its bool dtype error
    (lambda T: T.nanmedian(T.zeros(2, 0, dtype=T.bool), dim=1), _raises(IndexError)),
    (lambda T: T.nanmedian(T.zeros(2, 3, dtype=T.bool), dim=1), _raises(NotImplementedError)),
    (lambda T: T.nanmedian(T.tensor([[2.0, 1.0, 2.0, 1.0, float("nan")]]), 1)[1], _ok([3])),
]


@pytest.mark.parametrize("case", range(len(ALIAS_OUT)))
def test_alias_out_and_nanmedian_checks_as_torch(case):
    fn, want = ALIAS_OUT[case]
    _check(fn, want)


EMPTY_LINALG = [
    # cholesky of one 0x0 matrix (no batch dims): an empty factor, no info dims
    (lambda T: list(T.linalg.cholesky(T.zeros(0, 0)).shape), _ok([0, 0])),
    (lambda T: list(T.linalg.cholesky(T.zeros(0, 0).t()).shape), _ok([0, 0])),
    (lambda T: list(T.linalg.cholesky(T.zeros(2, 0, 0)).shape), _ok([2, 0, 0])),
]


@pytest.mark.parametrize("case", range(len(EMPTY_LINALG)))
def test_cholesky_of_a_0x0_matrix_as_torch(case):
    fn, want = EMPTY_LINALG[case]
    _check(fn, want)
