"""Indexing: __getitem__/__setitem__ (basic and advanced) and the index/scatter/gather family.

References are numpy indexing (same result-shape rules as torch) or hand-computed values.
"""

import numpy as np
import pytest

import ember

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


def T(a):
    return ember.tensor(np.asarray(a))


def check_get(index, np_index=None):
    """t[index] equals numpy's A[index] in values and shape."""
    np_index = index if np_index is None else np_index
    got = ember.tensor(A)[index]
    expected = A[np_index]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)
    return got


# ----------------------------------------------------------------------------------------------
# basic indexing (views)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        (1, 2),
        (-1, -2, -3),
        (2, 3, 4),
        slice(None),
        slice(1, None),
        slice(None, None, 2),
        (slice(None), slice(1, 4, 2)),
        (slice(None), slice(None), slice(None, None, 3)),
        (Ellipsis, 0),
        (0, Ellipsis),
        (Ellipsis, slice(1, 3)),
        (1, Ellipsis, 2),
        None,
        (None, 0),
        (slice(None), None, slice(1, 2), None),
        (Ellipsis, None),
        (None, Ellipsis, None),
        (slice(-2, None), -1),
        (slice(10, 20),),  # out-of-range slices clamp to empty
        (slice(2, 1),),  # empty slice
        (slice(-100, 100),),
        (),
    ],
    ids=repr,
)
def test_basic_indexing_matches_numpy(index):
    check_get(index)


def test_basic_indexing_returns_views():
    t = ember.tensor(A.copy())
    v = t[1, :, ::2]
    assert v.shape == (4, 3)
    assert v.stride() == (5, 2) and v.storage_offset() == 20
    v[0, 1] = -1
    assert t[1, 0, 2].item() == -1
    t[..., 0][0, 0] = -2  # chained views still write through
    assert t[0, 0, 0].item() == -2


def test_integer_index_gives_0d_tensor():
    t = ember.tensor(A)
    s = t[1, 2, 3]
    assert isinstance(s, ember.Tensor) and s.shape == () and s.item() == A[1, 2, 3]
    # a 0-d integer tensor acts like an int (basic indexing, no copy)
    assert t[ember.tensor(1)].shape == (4, 5)


def test_negative_step_slice_is_rejected():
    # unlike numpy, torch does not support negative slice steps
    with pytest.raises(ValueError):
        ember.tensor(A)[::-1]


@pytest.mark.parametrize(
    "index",
    [3, -4, (0, 4), (0, 0, 5), (0, -5)],
    ids=repr,
)
def test_index_out_of_range_raises_index_error(index):
    with pytest.raises(IndexError):
        ember.tensor(A)[index]


def test_too_many_indices_raises_index_error():
    with pytest.raises(IndexError):
        ember.tensor(A)[0, 0, 0, 0]
    with pytest.raises(IndexError):
        ember.tensor(5.0)[0]  # 0-d tensors can't be indexed by an int


def test_zero_dim_indexing():
    t = ember.tensor(5.0)
    assert t[()].shape == () and t[...].shape == ()
    assert t[None].shape == (1,)
    assert t[ember.tensor(True)].shape == (1,)
    assert t[ember.tensor(False)].shape == (0,)


# ----------------------------------------------------------------------------------------------
# advanced indexing (copies)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index",
    [
        [0, 2],
        ([[0, 1], [2, 2]],),  # index of shape (2, 2) replaces dim 0 (tuple-wrapped: a bare
        # nested list is deprecated legacy syntax in torch, meaning a tuple of indices)
        (slice(None), [3, 0, 0]),  # repeated indices are fine
        (slice(None), [-1, -2]),  # negative indices wrap
        ([0, 2], [1, 3]),  # adjacent advanced indices: paired up
        ([0, 2], slice(None), [1, 3]),  # separated by a slice: result dims go first
        (slice(None), [[0], [1]], [2, 3]),  # broadcast (2,1) with (2,) -> (2,2), stays in place
        ([[0], [2]], slice(1, 3), [[1, 2]]),  # separated and broadcast -> (2, 2) in front
        (Ellipsis, [0, 4]),
        ([1], Ellipsis, [0]),
        (None, [0, 1]),
        ([0, 1], None),
        ([1, 2], slice(None, None, 2)),
        ([],),
    ],
    ids=repr,
)
def test_advanced_indexing_with_lists_matches_numpy(index):
    check_get(index)


@pytest.mark.parametrize(
    "index_fn",
    [
        lambda: ember.tensor([2, 0]),
        lambda: (ember.tensor([0, 1]), ember.tensor([[1], [2]])),
        lambda: (slice(None), ember.tensor([[0, 3]]), slice(None)),
        lambda: (ember.tensor([1, 2]), slice(None), ember.tensor([4, 0])),
        lambda: (ember.tensor([0, 1], dtype=ember.int32), 1),
    ],
)
def test_advanced_indexing_with_tensors(index_fn):
    index = index_fn()
    to_np = lambda i: i.numpy() if isinstance(i, ember.Tensor) else i  # noqa: E731
    np_index = tuple(map(to_np, index)) if isinstance(index, tuple) else to_np(index)
    check_get(index, np_index)


def test_separated_advanced_indices_move_to_front():
    # the shapes spelled out, since this is the easiest rule to get wrong
    t = ember.zeros(5, 6, 7, 8)
    i = ember.tensor([0, 1, 2])
    assert t[i, :, i].shape == (3, 6, 8)
    assert t[:, i, i].shape == (5, 3, 8)  # adjacent: stay in place
    assert t[:, i, :, i].shape == (3, 5, 7)
    assert t[i, 0].shape == (3, 7, 8)
    # unlike numpy, torch applies ints as basic indexing first (a select), so an int never
    # separates advanced indices: these keep the index dims in place (numpy: (3, 6, 8), (3, 6))
    assert t[0, :, i].shape == (6, 3, 8)
    assert t[0, :, i, 0].shape == (6, 3)
    assert t[i, :, 0, i].shape == (3, 6)  # two tensors separated by a slice: to the front
    got = ember.tensor(A)[0, :, [1, 3]]
    np.testing.assert_array_equal(got.numpy(), A[0][:, [1, 3]])
    assert t[i.view(3, 1), :, :, i.view(1, 3)].shape == (3, 3, 6, 7)


def test_advanced_indexing_copies():
    t = ember.arange(5.0)
    c = t[[1, 2]]
    c[0] = 100
    assert t[1].item() == 1.0


@pytest.mark.parametrize(
    "mask",
    [
        A > 30,  # full-shape mask -> 1-d result
        (A > 30)[0],  # partial mask over the first 2 dims
        (A > 30)[:, 0, 0],  # over the first dim
        np.zeros(3, dtype=bool),
        np.ones((3, 4, 5), dtype=bool),
    ],
    ids=["full", "first2", "first1", "none", "all"],
)
def test_bool_mask_indexing(mask):
    if mask.shape == (4, 5):  # first2 is a (4, 5) mask: use it for dims 1, 2 under A[0]
        got = ember.tensor(A)[0][ember.tensor(mask)]
        np.testing.assert_array_equal(got.numpy(), A[0][mask])
    else:
        check_get(ember.tensor(mask), mask)


def test_bool_mask_combinations():
    check_get(
        (slice(None), ember.tensor([True, False, True, False])),
        (slice(None), np.array([True, False, True, False])),
    )
    check_get(
        (ember.tensor([True, False, True]), slice(None), 2),
        (np.array([True, False, True]), slice(None), 2),
    )
    check_get((ember.tensor([True, False, True]), [0, 3]), (np.array([True, False, True]), [0, 3]))
    # a Python list of bools is a mask too, not integer indices
    check_get(([True, False, True],), (np.array([True, False, True]),))


def test_bool_mask_shape_mismatch_raises_index_error():
    t = ember.tensor(A)
    with pytest.raises(IndexError):
        t[ember.tensor([True, False])]
    with pytest.raises(IndexError):
        t[ember.ones(3, 5, dtype=ember.bool)]


def test_advanced_index_out_of_range_raises_index_error():
    t = ember.tensor(A)
    with pytest.raises(IndexError):
        t[[0, 3]]
    with pytest.raises(IndexError):
        t[:, ember.tensor([-5])]


def test_float_index_tensor_raises():
    with pytest.raises(IndexError):
        ember.tensor(A)[ember.tensor([0.0])]


# ----------------------------------------------------------------------------------------------
# __setitem__
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index,value",
    [
        (0, 1.5),
        ((1, 2), -1),
        ((slice(None), slice(None), 0), 7),
        ((slice(None, None, 2), 1), np.arange(5, dtype=np.float32)),  # broadcast over 2 rows
        ((Ellipsis, slice(1, 3)), np.array([[10.0], [20.0], [30.0], [40.0]], dtype=np.float32)),
        (([0, 2], slice(None), [1, 1]), 9.0),  # duplicate-free advanced
        ((slice(None), [0, 3]), np.ones((3, 2, 5), dtype=np.float32)),
        (A > 40, -3.0),
        ((A > 40)[:, :, 0], np.arange(5, dtype=np.float32)),  # partial mask: value broadcasts
        ((None, 1), 2.0),
    ],
    ids=repr,
)
def test_setitem_matches_numpy(index, value):
    expected = A.copy()
    expected[index] = value
    t = ember.tensor(A.copy())
    ptr = t.data_ptr()
    t_index = ember.tensor(index) if isinstance(index, np.ndarray) else index
    t[t_index] = ember.tensor(value) if isinstance(value, np.ndarray) else value
    np.testing.assert_array_equal(t.numpy(), expected)
    assert t.data_ptr() == ptr  # setitem is in place


def test_setitem_converts_dtype():
    t = ember.zeros(3, dtype=ember.int64)
    t[0] = 2.7  # truncated to the tensor's dtype
    t[1:] = ember.tensor([1.9, -1.9])
    assert t.tolist() == [2, 1, -1]
    b = ember.zeros(2, dtype=ember.bool)
    b[1] = 1
    assert b.tolist() == [False, True]


def test_setitem_with_tensor_value_through_view():
    base = ember.zeros(4, 4)
    view = base[1:3]
    view[:, ::3] = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert base[1].tolist() == [1, 0, 0, 2]
    assert base[2].tolist() == [3, 0, 0, 4]


def test_setitem_shape_mismatch_raises():
    t = ember.zeros(3, 4)
    with pytest.raises(RuntimeError):
        t[0] = ember.ones(3)


# ----------------------------------------------------------------------------------------------
# index functions
# ----------------------------------------------------------------------------------------------


def test_index_select():
    t = ember.tensor(A)
    idx = ember.tensor([2, 0, 2])
    for dim in range(3):
        got = ember.index_select(t, dim, idx)
        np.testing.assert_array_equal(got.numpy(), np.take(A, [2, 0, 2], axis=dim))
    assert t.index_select(-1, ember.tensor([4])).shape == (3, 4, 1)
    with pytest.raises(IndexError):
        t.index_select(0, ember.tensor([3]))


def test_gather():
    t = ember.tensor([[1, 2, 3], [4, 5, 6]])
    assert ember.gather(t, 1, ember.tensor([[2, 0], [1, 1]])).tolist() == [[3, 1], [5, 5]]
    assert t.gather(0, ember.tensor([[1, 0, 1]])).tolist() == [[4, 2, 6]]
    # index may be smaller than input along non-gathered dims
    assert t.gather(1, ember.tensor([[0]])).tolist() == [[1]]
    a = np.random.rand(3, 4, 5)
    idx = np.random.randint(0, 4, size=(3, 2, 5))
    got = ember.tensor(a).gather(1, ember.tensor(idx))
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(a, idx, axis=1))
    with pytest.raises(RuntimeError):
        t.gather(1, ember.tensor([[3]]))  # out of range


def test_scatter_src_and_value():
    src = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    idx = ember.tensor([[0, 1, 2], [2, 0, 1]])
    out = ember.zeros(3, 3).scatter(0, idx, src)
    assert out.tolist() == [[1, 5, 0], [0, 2, 6], [4, 0, 3]]
    out = ember.zeros(2, 4).scatter(1, ember.tensor([[3], [0]]), src)
    assert out.tolist() == [[0, 0, 0, 1], [4, 0, 0, 0]]  # only index's extent of src is used
    out = ember.zeros(2, 3).scatter(1, ember.tensor([[1], [2]]), 9.0)
    assert out.tolist() == [[0, 9, 0], [0, 0, 9]]
    z = ember.zeros(2, 3)
    assert z.scatter_(1, ember.tensor([[0], [0]]), 1.0) is z
    assert z.tolist() == [[1, 0, 0], [1, 0, 0]]


# self is ones; two 2.0s land on slot 0
@pytest.mark.parametrize("reduce,expected", [("add", [[5, 1, 1]]), ("multiply", [[4, 1, 1]])])
@pytest.mark.filterwarnings("ignore:The reduce argument")  # torch deprecates it for tensor src
def test_scatter_reduce_argument(reduce, expected):
    idx = ember.tensor([[0, 0]])
    out = ember.ones(1, 3).scatter(1, idx, ember.tensor([[2.0, 2.0]]), reduce=reduce)
    assert out.tolist() == expected
    out = ember.ones(1, 3).scatter(1, idx, 2.0, reduce=reduce)
    assert out.tolist() == expected


def test_scatter_add():
    out = ember.zeros(4).scatter_add(0, ember.tensor([0, 1, 0, 3, 0]), ember.ones(5))
    assert out.tolist() == [3, 1, 0, 1]
    a = ember.zeros(2, 3)
    a.scatter_add_(1, ember.tensor([[2, 2], [0, 1]]), ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert a.tolist() == [[0, 0, 3], [3, 4, 0]]


@pytest.mark.parametrize(
    "reduce,include_self,expected",
    [
        # self = [1, 2, 3, 4], src = [5, 6, 7, 8] scattered into index [0, 0, 2, 2];
        # slots 1 and 3 untouched
        ("sum", True, [12, 2, 18, 4]),
        ("sum", False, [11, 2, 15, 4]),
        ("prod", True, [30, 2, 168, 4]),
        ("prod", False, [30, 2, 56, 4]),
        ("mean", True, [4, 2, 6, 4]),  # (1+5+6)/3, (3+7+8)/3
        ("mean", False, [5.5, 2, 7.5, 4]),
        ("amax", True, [6, 2, 8, 4]),
        ("amax", False, [6, 2, 8, 4]),
        ("amin", True, [1, 2, 3, 4]),
        ("amin", False, [5, 2, 7, 4]),
    ],
)
def test_scatter_reduce(reduce, include_self, expected):
    self_ = ember.tensor([1.0, 2.0, 3.0, 4.0])
    src = ember.tensor([5.0, 6.0, 7.0, 8.0])
    idx = ember.tensor([0, 0, 2, 2])
    out = self_.scatter_reduce(0, idx, src, reduce=reduce, include_self=include_self)
    assert out.tolist() == expected
    assert self_.tolist() == [1, 2, 3, 4]  # out of place
    out2 = ember.scatter_reduce(self_, 0, idx, src, reduce)  # include_self defaults to True
    assert out2.tolist() == self_.scatter_reduce(0, idx, src, reduce, include_self=True).tolist()


def test_scatter_reduce_mean_on_ints_floors():
    out = ember.tensor([0, 0]).scatter_reduce(0, ember.tensor([0, 0]), ember.tensor([1, 2]), "mean")
    assert out.tolist() == [1, 0]  # (0 + 1 + 2) // 3


def test_index_add():
    t = ember.ones(3, 2)
    out = t.index_add(
        0, ember.tensor([0, 2, 0]), ember.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    )
    assert out.tolist() == [[7, 9], [1, 1], [4, 5]]  # duplicates accumulate
    out = t.index_add(1, ember.tensor([1]), ember.full((3, 1), 2.0), alpha=3)
    assert out.tolist() == [[1, 7]] * 3
    t.index_add_(0, ember.tensor([1]), ember.ones(1, 2))
    assert t.tolist() == [[1, 1], [2, 2], [1, 1]]


def test_index_put_():
    t = ember.zeros(3, 3)
    assert t.index_put_((ember.tensor([0, 2]), ember.tensor([1, 1])), ember.tensor(5.0)) is t
    assert t.tolist() == [[0, 5, 0], [0, 0, 0], [0, 5, 0]]
    # accumulate sums duplicates instead of picking one
    t = ember.zeros(4)
    t.index_put_((ember.tensor([0, 0, 3]),), ember.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert t.tolist() == [3, 0, 0, 3]
    t.index_put_((ember.tensor([1]),), ember.tensor([7.0]), accumulate=True)
    assert t.tolist() == [3, 7, 0, 3]
    out = ember.zeros(2, 2).index_put((ember.tensor([True, False]),), ember.tensor(1.0))
    assert out.tolist() == [[1, 1], [0, 0]]


def test_masked_fill_and_select():
    t = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    mask = ember.tensor([[True, False], [False, True]])
    assert t.masked_fill(mask, 0).tolist() == [[0, 2], [3, 0]]
    assert t.masked_fill(ember.tensor([True, False]), -1.0).tolist() == [
        [-1, 2],
        [-1, 4],
    ]  # broadcast
    assert t.masked_fill(mask, ember.tensor(9.0)).tolist() == [[9, 2], [3, 9]]
    c = t.clone()
    c.masked_fill_(c > 2, 0)
    assert c.tolist() == [[1, 2], [0, 0]]
    assert ember.masked_select(t, mask).tolist() == [1, 4]
    assert t.masked_select(ember.tensor([False, True])).tolist() == [2, 4]  # broadcast, row-major
    with pytest.raises(RuntimeError):
        t.masked_fill(ember.tensor([[1, 0], [0, 1]]), 0)  # mask must be bool


def test_take():
    t = ember.tensor([[4, 3, 5], [6, 7, 8]])
    assert ember.take(t, ember.tensor([0, 2, 5])).tolist() == [4, 5, 8]
    assert t.take(ember.tensor([[-1, 1]])).tolist() == [[8, 3]]  # shape of index; negatives wrap
    assert t.t().take(ember.tensor([1])).tolist() == [6]  # logical (row-major) order
    with pytest.raises(IndexError):
        t.take(ember.tensor([6]))


def test_nonzero():
    t = ember.tensor([[0, 1, 0], [2, 0, 3]])
    nz = ember.nonzero(t)
    assert nz.dtype == ember.int64 and nz.tolist() == [[0, 1], [1, 0], [1, 2]]
    rows, cols = t.nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 2]
    assert ember.zeros(2, 3).nonzero().shape == (0, 2)
    assert ember.tensor(5).nonzero().shape == (1, 0)
    (i,) = ember.tensor([0.0, 0.5, -1.0]).nonzero(as_tuple=True)
    assert i.tolist() == [1, 2]
    assert ember.tensor([True, False, True]).nonzero().tolist() == [[0], [2]]


def test_where():
    cond = ember.tensor([[True, False], [False, True]])
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert ember.where(cond, x, ember.zeros(2, 2)).tolist() == [[1, 0], [0, 4]]
    assert ember.where(cond, x, -1.0).tolist() == [[1, -1], [-1, 4]]  # scalar other
    assert ember.where(cond, 1.0, 0.0).tolist() == [[1, 0], [0, 1]]
    assert ember.where(ember.tensor([True, False]), x, ember.tensor(0.0)).tolist() == [
        [1, 0],
        [3, 0],
    ]
    assert x.where(x > 2, ember.tensor(0.0)).tolist() == [[0, 0], [3, 4]]
    # promotion between the branches
    assert ember.where(cond, ember.tensor([1, 2]), ember.tensor([0.5, 0.5])).dtype == ember.float32
    # 1-arg form == nonzero(as_tuple=True)
    rows, cols = ember.where(cond)
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]


@pytest.mark.parametrize("dtype", [ember.int32, ember.int64])
def test_gather_scatter_take_int32_and_int64_indices(dtype):
    a = np.random.rand(3, 4)
    idx = np.array([[0, 3], [2, 2], [1, 0]])
    ix = ember.tensor(idx, dtype=dtype)
    np.testing.assert_array_equal(
        ember.tensor(a).gather(1, ix).numpy(), np.take_along_axis(a, idx, axis=1)
    )
    want = np.zeros((3, 4))
    np.put_along_axis(want, idx, 1.0, axis=1)
    np.testing.assert_array_equal(ember.zeros(3, 4).scatter(1, ix, 1.0).numpy(), want)
    added = ember.zeros(3, 4).scatter_add(1, ix, ember.ones(3, 2)).numpy()
    np.testing.assert_array_equal(added, [[1, 0, 0, 1], [0, 0, 2, 0], [1, 1, 0, 0]])
    red = ember.ones(3, 4).scatter_reduce(1, ix, ember.full((3, 2), 3.0), "prod").numpy()
    np.testing.assert_array_equal(red, [[3, 1, 1, 3], [1, 1, 9, 1], [3, 3, 1, 1]])
    x = ember.tensor(a, requires_grad=True)
    x.gather(1, ix).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), added)
    with pytest.raises(RuntimeError, match="gather.*int32/int64"):
        ember.tensor(a).gather(1, ember.tensor(idx, dtype=ember.int16))


def test_index_copy_and_index_fill_checks():
    a = np.random.rand(3, 4)
    src = np.random.rand(3, 2)
    got = ember.tensor(a).index_copy(1, ember.tensor([3, 0]), ember.tensor(src)).numpy()
    want = a.copy()
    want[:, [3, 0]] = src
    np.testing.assert_array_equal(got, want)
    x = ember.tensor(a, requires_grad=True)
    s = ember.tensor(src, requires_grad=True)
    x.index_copy(1, ember.tensor([3, 0]), s).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 1, 0]] * 3)
    np.testing.assert_array_equal(s.grad.numpy(), np.ones((3, 2)))
    t = ember.tensor(a)
    with pytest.raises(RuntimeError, match="index_copy_.*long"):
        t.index_copy(0, ember.tensor([0], dtype=ember.int32), ember.ones(1, 4, dtype=ember.float64))
    with pytest.raises(IndexError, match="index_copy_"):
        t.index_copy(0, ember.tensor([[0]]), ember.ones(1, 4, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="index_copy_.*same dtype"):
        t.index_copy(0, ember.tensor([0]), ember.ones(1, 4, dtype=ember.float32))
    with pytest.raises(IndexError, match="index_fill_"):  # torch's class for a wrong index dtype
        t.index_fill(0, ember.tensor([0], dtype=ember.int32), 1.0)


def test_take_along_dim_checks_as_torch():
    x = ember.zeros(2, 3)
    with pytest.raises(RuntimeError, match="dtype of indices should be Long"):
        ember.take_along_dim(x, ember.zeros(2, 1, dtype=ember.int32), 1)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        ember.take_along_dim(x, ember.zeros(1, dtype=ember.int64), 1)
    for dim in (2, -3):
        with pytest.raises(IndexError, match="Dimension out of range"):
            ember.take_along_dim(x, ember.zeros(2, 1, dtype=ember.int64), dim)
    a = np.random.rand(2, 3)
    got = ember.take_along_dim(ember.tensor(a), ember.tensor([[2], [0]]), -1).numpy()
    np.testing.assert_array_equal(got, np.take_along_axis(a, np.array([[2], [0]]), -1))
