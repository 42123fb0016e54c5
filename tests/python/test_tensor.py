"""Tensor basics: dtypes, promotion, creation, random, views/storage, in-place ops, Python protocol.

Every expectation here is what PyTorch does; ember must behave identically.
"""

import operator

import numpy as np
import pytest

import ember


def np_of(t):
    """A numpy copy of a tensor's values (float dtypes numpy lacks go through float32)."""
    t = t.detach()
    if t.dtype == ember.bfloat16:
        t = t.float()
    return t.numpy().copy()


def assert_equal(t, expected, dtype=None):
    """Values (and optionally dtype) of tensor `t` equal the array-like `expected`."""
    if dtype is not None:
        assert t.dtype == dtype
    np.testing.assert_array_equal(np_of(t), np.asarray(expected))


# ----------------------------------------------------------------------------------------------
# dtypes
# ----------------------------------------------------------------------------------------------

DTYPE_INFO = [
    # name, element size, is_floating_point, is_signed
    ("bool", 1, False, False),
    ("uint8", 1, False, False),
    ("int8", 1, False, True),
    ("int16", 2, False, True),
    ("int32", 4, False, True),
    ("int64", 8, False, True),
    ("float16", 2, True, True),
    ("bfloat16", 2, True, True),
    ("float32", 4, True, True),
    ("float64", 8, True, True),
]


@pytest.mark.parametrize("name,size,is_float,is_signed", DTYPE_INFO)
def test_dtype_attributes(name, size, is_float, is_signed):
    dt = getattr(ember, name)
    assert isinstance(dt, ember.dtype)
    assert dt.is_floating_point == is_float
    assert dt.is_signed == is_signed
    assert dt.itemsize == size
    assert repr(dt).endswith("." + name)  # the exact "torch.<name>" is checked in test_repr.py
    t = ember.zeros(3, dtype=dt)
    assert t.dtype == dt
    assert t.element_size() == size
    assert t.is_floating_point() == is_float


@pytest.mark.parametrize(
    "alias,canonical",
    [
        ("float", "float32"),
        ("double", "float64"),
        ("half", "float16"),
        ("long", "int64"),
        ("int", "int32"),
        ("short", "int16"),
    ],
)
def test_dtype_aliases(alias, canonical):
    assert getattr(ember, alias) is getattr(ember, canonical)


def test_dtype_conversion_methods():
    t = ember.tensor([1.7, -2.2])
    assert t.int().dtype == ember.int32
    assert t.long().dtype == ember.int64
    assert t.double().dtype == ember.float64
    assert t.half().dtype == ember.float16
    assert t.bfloat16().dtype == ember.bfloat16
    assert t.bool().dtype == ember.bool
    assert t.to(ember.int16).dtype == ember.int16
    assert t.type(ember.float64).dtype == ember.float64
    # float -> int conversion truncates toward zero
    assert t.long().tolist() == [1, -2]
    # .to with the same dtype returns self (no copy)
    assert t.to(ember.float32) is t
    assert t.float() is t


# ----------------------------------------------------------------------------------------------
# type promotion
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("bool", "bool", "bool"),
        ("bool", "uint8", "uint8"),
        ("uint8", "int8", "int16"),  # no common 8-bit type: goes up
        ("int8", "int16", "int16"),
        ("int32", "int64", "int64"),
        ("uint8", "float16", "float16"),
        ("int64", "float16", "float16"),  # any float beats any int
        ("float16", "bfloat16", "float32"),  # neither contains the other
        ("bfloat16", "float32", "float32"),
        ("float32", "float64", "float64"),
        ("bool", "float64", "float64"),
        ("int64", "bfloat16", "bfloat16"),
    ],
)
def test_promote_types(a, b, expected):
    da, db, de = getattr(ember, a), getattr(ember, b), getattr(ember, expected)
    assert ember.promote_types(da, db) == de
    assert ember.promote_types(db, da) == de
    # the same rule for binary ops on dimensioned tensors
    x = ember.ones(2, dtype=da)
    y = ember.ones(2, dtype=db)
    assert (x + y).dtype == de
    assert ember.result_type(x, y) == de


@pytest.mark.parametrize(
    "dtype,scalar,expected",
    [
        # a Python scalar only matters if it is of a higher *category* (bool < int < float)
        ("float32", 2, "float32"),
        ("float16", 2, "float16"),
        ("int8", 1000, "int8"),  # value is not inspected (it wraps)
        ("uint8", 1, "uint8"),
        ("int32", 2.5, "float32"),  # -> default dtype
        ("int64", 2.5, "float32"),
        ("bool", 2.5, "float32"),
        ("bool", 2, "int64"),
        ("bool", True, "bool"),
        ("int16", True, "int16"),
        ("float16", 2.5, "float16"),
        ("bfloat16", 2.5, "bfloat16"),
        ("float64", 2.5, "float64"),
    ],
)
def test_promotion_with_python_scalars(dtype, scalar, expected):
    t = ember.ones(3, dtype=getattr(ember, dtype))
    exp = getattr(ember, expected)
    assert (t + scalar).dtype == exp
    assert (scalar + t).dtype == exp
    assert (t * scalar).dtype == exp
    assert ember.result_type(t, scalar) == exp


def test_zero_dim_tensors_promote_like_scalars():
    # a 0-d tensor of the same category does not promote a dimensioned tensor
    f32 = ember.ones(3, dtype=ember.float32)
    assert (f32 + ember.tensor(1.0, dtype=ember.float64)).dtype == ember.float32
    i8 = ember.ones(3, dtype=ember.int8)
    assert (i8 + ember.tensor(1, dtype=ember.int64)).dtype == ember.int8
    # ... but a higher category does, and keeps its own dtype
    assert (i8 + ember.tensor(1.0, dtype=ember.float64)).dtype == ember.float64
    assert (i8 + ember.tensor(1.0, dtype=ember.float16)).dtype == ember.float16
    # two 0-d tensors promote normally
    z = ember.tensor(1.0, dtype=ember.float32) + ember.tensor(1.0, dtype=ember.float64)
    assert z.dtype == ember.float64
    assert z.dim() == 0
    # a 1-element 1-d tensor is dimensioned: normal promotion
    assert (f32 + ember.ones(1, dtype=ember.float64)).dtype == ember.float64


def test_true_division_of_ints_gives_default_float():
    a = ember.tensor([3, 4])
    out = a / 2
    assert out.dtype == ember.float32
    assert out.tolist() == [1.5, 2.0]
    assert (a // 2).dtype == ember.int64
    assert (a // 2).tolist() == [1, 2]


def test_comparisons_return_bool():
    a = ember.tensor([1, 2, 3])
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        assert op(a, 2).dtype == ember.bool
        assert op(a, 2.5).dtype == ember.bool


@pytest.fixture
def restore_default_dtype():
    old = ember.get_default_dtype()
    yield
    ember.set_default_dtype(old)


def test_default_dtype(restore_default_dtype):
    assert ember.get_default_dtype() == ember.float32
    ember.set_default_dtype(ember.float64)
    assert ember.get_default_dtype() == ember.float64
    assert ember.tensor([1.5]).dtype == ember.float64
    assert ember.zeros(2).dtype == ember.float64
    assert ember.arange(0.0, 1.0, 0.5).dtype == ember.float64
    assert (ember.tensor([1, 2]) / 2).dtype == ember.float64
    assert (ember.tensor([1, 2]) * 0.5).dtype == ember.float64
    # ints are unaffected
    assert ember.tensor([1]).dtype == ember.int64
    ember.set_default_dtype(ember.float32)
    assert ember.tensor([1.5]).dtype == ember.float32


def test_set_default_dtype_rejects_ints(restore_default_dtype):
    with pytest.raises(TypeError):
        ember.set_default_dtype(ember.int64)


# ----------------------------------------------------------------------------------------------
# creation
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,dtype,shape",
    [
        (1, "int64", ()),
        (1.5, "float32", ()),
        (True, "bool", ()),
        ([1, 2, 3], "int64", (3,)),
        ([1, 2.0], "float32", (2,)),  # any float -> default float
        ([True, False], "bool", (2,)),
        ([True, 2], "int64", (2,)),  # bool + int -> int
        ([[1, 2], [3, 4], [5, 6]], "int64", (3, 2)),
        ([], "float32", (0,)),  # empty list -> default float
        ([[], []], "float32", (2, 0)),
        ([[[1.0]]], "float32", (1, 1, 1)),
    ],
)
def test_tensor_dtype_inference(data, dtype, shape):
    t = ember.tensor(data)
    assert t.dtype == getattr(ember, dtype)
    assert tuple(t.shape) == shape
    assert t.tolist() == data


def test_tensor_explicit_dtype_and_copy():
    t = ember.tensor([1, 2], dtype=ember.float64)
    assert t.dtype == ember.float64 and t.tolist() == [1.0, 2.0]
    src = ember.tensor([1.0, 2.0])
    with pytest.warns(UserWarning):  # torch warns: use clone().detach()
        c = ember.tensor(src)
    c[0] = 9
    assert src[0].item() == 1.0  # tensor() always copies


def test_tensor_ragged_list_raises():
    with pytest.raises((ValueError, TypeError)):
        ember.tensor([[1, 2], [3]])


@pytest.mark.parametrize(
    "np_dtype,dtype",
    [
        (np.bool_, "bool"),
        (np.uint8, "uint8"),
        (np.int8, "int8"),
        (np.int16, "int16"),
        (np.int32, "int32"),
        (np.int64, "int64"),
        (np.float16, "float16"),
        (np.float32, "float32"),
        (np.float64, "float64"),  # numpy float64 stays float64 (not the default dtype)
    ],
)
def test_tensor_from_numpy_keeps_dtype(np_dtype, dtype):
    arr = np.arange(6).reshape(2, 3).astype(np_dtype)
    t = ember.tensor(arr)
    assert t.dtype == getattr(ember, dtype)
    assert t.shape == (2, 3)
    np.testing.assert_array_equal(t.numpy(), arr)
    arr[0, 0] = 1  # tensor() copies
    assert t[0, 0].item() == 0
    f = ember.from_numpy(arr)
    assert f.dtype == getattr(ember, dtype)


def test_numpy_scalar_and_python_float_list_inference():
    assert ember.tensor(np.float64(1.5)).dtype == ember.float64
    assert ember.tensor(np.float32(1.5)).dtype == ember.float32
    assert ember.tensor(np.int32(3)).dtype == ember.int32


def test_from_numpy_shares_memory_both_ways():
    arr = np.zeros((2, 3), dtype=np.float32)
    t = ember.from_numpy(arr)
    arr[1, 2] = 5.0
    assert t[1, 2].item() == 5.0
    t[0, 0] = 7.0
    assert arr[0, 0] == 7.0
    # non-contiguous numpy arrays keep their strides (in elements)
    sl = arr[:, ::2]
    ts = ember.from_numpy(sl)
    assert ts.stride() == (3, 2)
    ts.fill_(1.0)
    assert arr[0, 0] == 1.0 and arr[0, 1] == 0.0


def test_as_tensor_shares_when_possible():
    arr = np.arange(4, dtype=np.float32)
    t = ember.as_tensor(arr)
    arr[0] = 10
    assert t[0].item() == 10  # same dtype: no copy
    t2 = ember.as_tensor(arr, dtype=ember.float64)
    arr[1] = 20
    assert t2[1].item() == 1  # dtype change: copy
    src = ember.tensor([1.0, 2.0])
    assert ember.as_tensor(src) is src
    assert ember.as_tensor([1, 2]).dtype == ember.int64


def test_asarray_copy_and_requires_grad():
    """torch.asarray's copy= (None shares where it can, True copies, False refuses a copy) and
    requires_grad= (unset keeps a tensor's graph; set detaches a copy or flags the alias)."""
    import warnings

    arr = np.arange(3.0)
    shared, copied = ember.asarray(arr), ember.asarray(arr, copy=True)
    arr[0] = 9.0
    assert shared[0].item() == 9.0 and copied[0].item() == 0.0
    assert ember.asarray(arr, copy=False)[0].item() == 9.0
    with pytest.raises(
        ValueError, match="can't alias tensor with dtype 'Double' into dtype 'Float'"
    ):
        ember.asarray(arr, dtype=ember.float32, copy=False)
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor"):
        ember.asarray([1.0, 2.0], copy=False)
    assert ember.asarray([1.0, 2.0], requires_grad=True).requires_grad
    assert ember.asarray(bytearray(b"ab"), dtype=ember.uint8).tolist() == [97, 98]
    x = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.asarray(x) is x
        cloned = ember.asarray(x, copy=True)
        assert type(cloned.grad_fn).__name__ == "CloneBackward0"
        converted = ember.asarray(x, dtype=ember.float64)
        assert type(converted.grad_fn).__name__ == "ToCopyBackward0"
    detached = ember.asarray(x, dtype=ember.float64, requires_grad=False)
    assert not detached.requires_grad and x.requires_grad
    assert ember.asarray(x, requires_grad=False) is x and not x.requires_grad


def test_numpy_method_shares_memory():
    t = ember.zeros(2, 2)
    a = t.numpy()
    a[0, 1] = 3.0
    assert t[0, 1].item() == 3.0
    t.add_(1)
    assert a[1, 1] == 1.0
    # views keep their layout
    v = t.t().numpy()
    assert v[1, 0] == 4.0


def test_numpy_method_refuses_requires_grad():
    t = ember.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        t.numpy()
    assert t.detach().numpy().shape == (2,)


@pytest.mark.parametrize("fn,value", [("zeros", 0), ("ones", 1)])
def test_zeros_ones(fn, value):
    f = getattr(ember, fn)
    for shape_args in [(2, 3), ((2, 3),), ([2, 3],)]:
        t = f(*shape_args)
        assert t.shape == (2, 3) and t.dtype == ember.float32
        assert_equal(t, np.full((2, 3), value, dtype=np.float32))
    t = f(4, dtype=ember.int32)
    assert t.dtype == ember.int32 and t.tolist() == [value] * 4
    like = getattr(ember, fn + "_like")(ember.empty(2, 1, dtype=ember.float64))
    assert like.shape == (2, 1) and like.dtype == ember.float64
    assert f(0, 3).numel() == 0
    assert f(()).shape == ()  # 0-d


def test_full_and_empty():
    t = ember.full((2, 2), 7)
    assert t.dtype == ember.int64  # dtype inferred from the fill value
    assert ember.full((2,), 1.5).dtype == ember.float32
    assert ember.full((2,), True).dtype == ember.bool
    assert ember.full((2,), 3, dtype=ember.float64).tolist() == [3.0, 3.0]
    fl = ember.full_like(ember.zeros(3, dtype=ember.int16), 4)
    assert fl.dtype == ember.int16 and fl.tolist() == [4, 4, 4]
    e = ember.empty(3, 4)
    assert e.shape == (3, 4) and e.dtype == ember.float32
    el = ember.empty_like(ember.zeros(2, dtype=ember.uint8))
    assert el.shape == (2,) and el.dtype == ember.uint8


@pytest.mark.parametrize(
    "args,kwargs,expected,dtype",
    [
        ((5,), {}, [0, 1, 2, 3, 4], "int64"),
        ((2, 5), {}, [2, 3, 4], "int64"),
        ((0, 10, 3), {}, [0, 3, 6, 9], "int64"),
        ((5, 0, -2), {}, [5, 3, 1], "int64"),
        ((0, -3, -1), {}, [0, -1, -2], "int64"),
        ((3, 3), {}, [], "int64"),
        ((0.0, 1.0, 0.25), {}, [0.0, 0.25, 0.5, 0.75], "float32"),
        ((1, 0, -0.5), {}, [1.0, 0.5], "float32"),
        ((3,), {"dtype": "float64"}, [0.0, 1.0, 2.0], "float64"),
        ((0, 2.5), {}, [0.0, 1.0, 2.0], "float32"),
    ],
)
def test_arange(args, kwargs, expected, dtype):
    kwargs = {k: getattr(ember, v) for k, v in kwargs.items()}
    t = ember.arange(*args, **kwargs)
    assert t.dtype == getattr(ember, dtype)
    assert t.tolist() == expected


def test_arange_wrong_sign_step_raises():
    with pytest.raises(RuntimeError):
        ember.arange(0, 5, -1)
    with pytest.raises(RuntimeError):
        ember.arange(0, 5, 0)


def test_linspace_logspace():
    t = ember.linspace(0, 1, 5)
    assert t.dtype == ember.float32
    np.testing.assert_allclose(t.numpy(), np.linspace(0, 1, 5), rtol=1e-6)
    t = ember.linspace(-2, 3, 11, dtype=ember.float64)
    np.testing.assert_allclose(t.numpy(), np.linspace(-2, 3, 11), rtol=1e-12)
    assert ember.linspace(5, 5, 1).tolist() == [5.0]
    assert ember.linspace(0, 1, 0).shape == (0,)
    assert ember.linspace(1, 0, 3).tolist() == [1.0, 0.5, 0.0]
    t = ember.logspace(0, 3, 4)
    np.testing.assert_allclose(t.numpy(), [1, 10, 100, 1000], rtol=1e-6)
    t = ember.logspace(0, 3, 4, base=2)
    np.testing.assert_allclose(t.numpy(), [1, 2, 4, 8], rtol=1e-6)


def test_eye():
    assert_equal(ember.eye(3), np.eye(3, dtype=np.float32), ember.float32)
    assert_equal(ember.eye(2, 4), np.eye(2, 4))
    assert_equal(ember.eye(3, dtype=ember.int64), np.eye(3, dtype=np.int64), ember.int64)
    assert ember.eye(0).shape == (0, 0)


@pytest.mark.parametrize("diagonal", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (2, 3, 4)])
def test_tril_triu(shape, diagonal):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    t = ember.tensor(a)
    assert_equal(ember.tril(t, diagonal), np.tril(a, diagonal))
    assert_equal(ember.triu(t, diagonal), np.triu(a, diagonal))
    assert_equal(t.tril(diagonal), np.tril(a, diagonal))
    c = t.clone()
    c.triu_(diagonal)
    assert_equal(c, np.triu(a, diagonal))


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_diag_both_directions(k):
    v = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    assert_equal(ember.diag(ember.tensor(v), k), np.diag(v, k))
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert_equal(ember.diag(ember.tensor(m), k), np.diag(m, k))
    assert_equal(ember.tensor(m).diagonal(k), np.diagonal(m, k))


# ----------------------------------------------------------------------------------------------
# random
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: ember.rand(5),
        lambda: ember.randn(2, 3),
        lambda: ember.randint(0, 10, (6,)),
        lambda: ember.randperm(7),
        lambda: ember.empty(4).normal_(),
        lambda: ember.empty(4).uniform_(-1, 1),
        lambda: ember.multinomial(ember.tensor([0.2, 0.3, 0.5]), 5, replacement=True),
    ],
)
def test_manual_seed_reproducible(make):
    ember.manual_seed(1234)
    a = make()
    ember.manual_seed(1234)
    b = make()
    assert a.tolist() == b.tolist()
    c = make()  # the state advanced
    if a.numel() > 3:
        assert a.tolist() != c.tolist()


def test_generator_is_independent_of_global_state():
    g = ember.Generator()
    assert g.manual_seed(7) is g
    a = ember.randn(5, generator=g)
    ember.manual_seed(0)
    ember.rand(10)  # consuming the global generator does not affect g
    g.manual_seed(7)
    b = ember.randn(5, generator=g)
    assert a.tolist() == b.tolist()
    g2 = ember.Generator().manual_seed(7)
    assert ember.randn(5, generator=g2).tolist() == a.tolist()
    assert g.initial_seed() == 7


def test_rand_family_shapes_and_ranges():
    ember.manual_seed(0)
    r = ember.rand(1000)
    assert r.dtype == ember.float32
    assert float(r.min()) >= 0.0 and float(r.max()) < 1.0
    assert abs(float(r.mean()) - 0.5) < 0.05
    n = ember.randn(4000, dtype=ember.float64)
    assert n.dtype == ember.float64
    assert abs(float(n.mean())) < 0.1 and abs(float(n.std()) - 1) < 0.1
    ri = ember.randint(3, 8, (500,))
    assert ri.dtype == ember.int64
    assert int(ri.min()) == 3 and int(ri.max()) == 7  # high is exclusive
    assert ember.randint(5, (2, 2)).shape == (2, 2)  # low defaults to 0
    assert ember.randint(0, 5, (3,), dtype=ember.int32).dtype == ember.int32
    p = ember.randperm(20)
    assert p.dtype == ember.int64 and sorted(p.tolist()) == list(range(20))
    base = ember.zeros(3, 2, dtype=ember.float64)
    assert ember.rand_like(base).shape == (3, 2) and ember.rand_like(base).dtype == ember.float64
    assert ember.randn_like(base).dtype == ember.float64
    assert ember.rand(2, 3).shape == (2, 3) and ember.rand((2, 3)).shape == (2, 3)


def test_inplace_random_fills():
    ember.manual_seed(0)
    t = ember.empty(2000)
    assert t.normal_(3.0, 0.5) is t
    assert abs(float(t.mean()) - 3.0) < 0.05 and abs(float(t.std()) - 0.5) < 0.05
    t.uniform_(2, 4)
    assert float(t.min()) >= 2 and float(t.max()) < 4
    assert abs(float(t.mean()) - 3.0) < 0.1


def test_bernoulli():
    ember.manual_seed(0)
    p = ember.full((4000,), 0.3)
    b = ember.bernoulli(p)
    assert b.dtype == ember.float32 and b.shape == p.shape
    assert set(b.unique().tolist()) <= {0.0, 1.0}
    assert abs(float(b.mean()) - 0.3) < 0.05
    assert ember.bernoulli(ember.zeros(10)).sum().item() == 0
    assert ember.bernoulli(ember.ones(10)).sum().item() == 10
    t = ember.empty(2000).bernoulli_(0.8)
    assert abs(float(t.mean()) - 0.8) < 0.05


def test_multinomial():
    ember.manual_seed(0)
    w = ember.tensor([1.0, 0.0, 3.0])  # unnormalised weights are fine
    s = ember.multinomial(w, 2000, replacement=True)
    assert s.dtype == ember.int64 and s.shape == (2000,)
    counts = np.bincount(s.numpy(), minlength=3)
    assert counts[1] == 0  # zero weight never drawn
    assert abs(counts[2] / 2000 - 0.75) < 0.05
    # without replacement: distinct indices, all non-zero weights used
    s = ember.multinomial(ember.tensor([1.0, 1.0, 1.0, 0.0]), 3)
    assert sorted(s.tolist()) == [0, 1, 2]
    # 2-d input: one row of samples per distribution
    rows = ember.multinomial(ember.tensor([[0.0, 1.0], [1.0, 0.0]]), 3, replacement=True)
    assert rows.shape == (2, 3)
    assert rows[0].tolist() == [1, 1, 1] and rows[1].tolist() == [0, 0, 0]
    # more samples than categories without replacement is an error
    with pytest.raises(RuntimeError):
        ember.multinomial(ember.tensor([0.5, 0.5]), 3)
    with pytest.raises(RuntimeError):
        ember.multinomial(ember.tensor([-1.0, 2.0]), 1)


# ----------------------------------------------------------------------------------------------
# views and storage
# ----------------------------------------------------------------------------------------------


def test_view_shares_storage():
    t = ember.arange(12.0)
    v = t.view(3, 4)
    assert v.shape == (3, 4) and v.stride() == (4, 1)
    assert v.data_ptr() == t.data_ptr()
    v[1, 1] = -1
    assert t[5].item() == -1
    assert t.view(2, -1).shape == (2, 6)
    assert t.view(-1, 2, 3).shape == (2, 2, 3)
    assert t.view(12).is_contiguous()
    assert t.view(ember.int32).dtype == ember.int32  # same element size: reinterprets bits
    with pytest.raises(RuntimeError):
        t.view(5, -1)
    with pytest.raises(RuntimeError):
        t.view(3, 4).t().view(12)  # not viewable: view never copies


def test_reshape_shares_or_copies():
    t = ember.arange(6.0).view(2, 3)
    r = t.reshape(3, 2)  # contiguous: a view
    r[0, 0] = 42
    assert t[0, 0].item() == 42
    assert r.data_ptr() == t.data_ptr()
    tt = t.t()
    assert not tt.is_contiguous()
    c = tt.reshape(6)  # must copy
    c[1] = -5
    assert t.view(-1).tolist() == [42, 1, 2, 3, 4, 5]
    assert c.tolist() == [42, -5, 1, 4, 2, 5]
    # a non-contiguous tensor can still be reshaped as a view when strides allow
    s = ember.arange(24.0).view(2, 3, 4)[:, :, ::2]  # shape (2, 3, 2), strides (12, 4, 2)
    v = s.reshape(6, 2)
    v[0, 0] = -1
    assert s[0, 0, 0].item() == -1
    assert v.stride() == (4, 2)


def test_transpose_t_permute_mT():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = ember.tensor(a)
    tr = t.transpose(0, 2)
    assert tr.shape == (4, 3, 2) and tr.stride() == (1, 4, 12)
    assert_equal(tr, a.transpose(2, 1, 0))
    assert_equal(t.transpose(-1, -2), a.swapaxes(-1, -2))
    assert_equal(t.permute(1, 2, 0), a.transpose(1, 2, 0))
    assert_equal(t.permute((2, 0, 1)), a.transpose(2, 0, 1))
    assert_equal(t.mT, a.swapaxes(-1, -2))
    assert_equal(ember.tensor(a[0]).t(), a[0].T)
    assert ember.tensor([1, 2]).t().shape == (2,)  # t() on 1-d is a no-op
    assert ember.tensor(3.0).t().shape == ()
    with pytest.raises(RuntimeError):
        t.t()  # t() needs <= 2 dims
    tr[0, 0, 1] = -1
    assert t[1, 0, 0].item() == -1  # a view
    with pytest.raises(RuntimeError):
        t.permute(0, 0, 1)


def test_squeeze_unsqueeze():
    t = ember.zeros(1, 3, 1, 2)
    assert t.squeeze().shape == (3, 2)
    assert t.squeeze(0).shape == (3, 1, 2)
    assert t.squeeze(1).shape == (1, 3, 1, 2)  # size != 1: unchanged
    assert t.squeeze(-2).shape == (1, 3, 2)
    assert t.squeeze((0, 2)).shape == (3, 2)
    assert t.unsqueeze(0).shape == (1, 1, 3, 1, 2)
    assert t.unsqueeze(-1).shape == (1, 3, 1, 2, 1)
    assert t.unsqueeze(4).shape == (1, 3, 1, 2, 1)
    assert ember.tensor(5).unsqueeze(0).shape == (1,)
    assert ember.zeros(1).squeeze().shape == ()
    with pytest.raises(IndexError):
        t.unsqueeze(6)
    u = t.unsqueeze(1)
    u.fill_(1)
    assert t.sum().item() == 6  # views
    c = t.clone()
    c.unsqueeze_(0)
    assert c.shape == (1, 1, 3, 1, 2)
    c.squeeze_()
    assert c.shape == (3, 2)


def test_expand():
    t = ember.tensor([[1], [2], [3]])
    e = t.expand(3, 4)
    assert e.shape == (3, 4) and e.stride() == (1, 0)
    assert e.tolist() == [[1] * 4, [2] * 4, [3] * 4]
    assert t.expand(-1, 2).shape == (3, 2)
    assert t.expand(2, 3, 2).shape == (2, 3, 2)  # new leading dims
    assert t.expand_as(ember.zeros(5, 3, 2)).shape == (5, 3, 2)
    assert not e.is_contiguous()
    with pytest.raises(RuntimeError):
        t.expand(4, 4)
    t[0, 0] = 9
    assert e[0].tolist() == [9, 9, 9, 9]  # expand is a view


def test_narrow_select_and_step_slices():
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    t = ember.tensor(a)
    n = t.narrow(1, 2, 3)
    assert_equal(n, a[:, 2:5])
    assert n.storage_offset() == 2 and n.stride() == (6, 1)
    assert_equal(t.narrow(0, -2, 2), a[-2:])
    s = t.select(0, 3)
    assert_equal(s, a[3])
    assert s.storage_offset() == 18 and s.stride() == (1,)
    assert_equal(t.select(1, -1), a[:, -1])
    st = t[1::2, ::3]
    assert_equal(st, a[1::2, ::3])
    assert st.stride() == (12, 3) and st.storage_offset() == 6
    st.zero_()
    assert t[1, 3].item() == 0 and t[1, 4].item() == 10
    with pytest.raises((IndexError, RuntimeError)):
        t.narrow(0, 4, 3)


def test_unfold():
    t = ember.arange(7.0)
    u = t.unfold(0, 3, 2)
    assert u.shape == (3, 3) and u.stride() == (2, 1)
    assert u.tolist() == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    m = ember.arange(12.0).view(3, 4)
    u2 = m.unfold(1, 2, 1)
    assert u2.shape == (3, 3, 2)
    assert u2[1, 2].tolist() == [6, 7]


def test_as_strided():
    t = ember.arange(10.0)
    s = t.as_strided((3, 3), (1, 1))  # overlapping windows
    assert s.tolist() == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
    s2 = t.as_strided((2, 2), (3, 2), 1)
    assert s2.storage_offset() == 1
    assert s2.tolist() == [[1, 3], [4, 6]]
    s2[0, 0] = -1
    assert t[1].item() == -1


def test_flatten_unflatten():
    t = ember.zeros(2, 3, 4, 5)
    assert t.flatten().shape == (120,)
    assert t.flatten(1).shape == (2, 60)
    assert t.flatten(1, 2).shape == (2, 12, 5)
    assert t.flatten(-2).shape == (2, 3, 20)
    assert ember.flatten(t, 0, 1).shape == (6, 4, 5)
    assert ember.tensor(3.0).flatten().shape == (1,)  # 0-d -> 1-d
    assert t.unflatten(1, (3, 1)).shape == (2, 3, 1, 4, 5)
    assert t.unflatten(-1, (-1, 5)).shape == (2, 3, 4, 1, 5)
    f = ember.arange(6).view(2, 3)
    assert f.flatten().data_ptr() == f.data_ptr()  # contiguous: a view
    assert f.flatten(0, 0).shape == (2, 3)  # a one-dim range is a no-op


def test_contiguous_and_clone():
    t = ember.arange(6.0).view(2, 3)
    assert t.is_contiguous()
    assert t.contiguous() is t  # already contiguous: returns self
    tt = t.t()
    assert not tt.is_contiguous()
    c = tt.contiguous()
    assert c.is_contiguous() and c.stride() == (2, 1)
    assert c.tolist() == tt.tolist()
    c[0, 0] = 99
    assert t[0, 0].item() == 0  # a copy
    cl = tt.clone()  # clone keeps the (dense) strides
    assert cl.stride() == tt.stride()
    cl[0, 1] = 5
    assert t[1, 0].item() == 3
    assert ember.zeros(3, 1).expand(3, 4).clone().stride() == (4, 1)  # overlapping -> contiguous
    # size-1 dims do not affect contiguity
    assert ember.zeros(1, 3).t().is_contiguous()


def test_detach_shares_storage():
    x = ember.ones(3, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 5
    assert x[0].item() == 5


def test_shape_queries():
    t = ember.zeros(2, 3, 4)
    assert t.size() == (2, 3, 4)
    assert isinstance(t.size(), ember.Size) and isinstance(t.shape, tuple)
    assert t.shape == t.size()
    assert t.size(1) == 3 and t.size(-1) == 4 and t.shape[0] == 2
    assert t.dim() == 3 and t.ndim == 3 and t.ndimension() == 3
    assert t.numel() == 24 and t.nelement() == 24 and ember.numel(t) == 24
    assert t.stride() == (12, 4, 1) and t.stride(1) == 4 and t.stride(-1) == 1
    assert t.storage_offset() == 0
    z = ember.tensor(1.0)
    assert z.shape == () and z.dim() == 0 and z.numel() == 1 and z.stride() == ()
    assert ember.zeros(3, 0).numel() == 0
    assert ember.Size([2, 3]).numel() == 6
