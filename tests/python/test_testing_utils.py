"""ember.testing.make_tensor and assert_close against torch.testing's ranges, flags, decisions
and messages (torch where installed; hand-written expectations otherwise)."""

import pytest

import ember
from ember.testing import assert_close, make_tensor

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS + INTS + ["bool"])
def test_make_tensor_default_ranges(name):
    dtype = getattr(ember, name)
    t = make_tensor(2000, dtype=dtype, device="cpu")
    assert t.dtype == dtype and t.shape == (2000,)
    lo, hi = {"bool": (0, 1), "uint8": (0, 9)}.get(name, (-9, 9))
    v = t.to(ember.float64)
    assert float(v.min()) >= lo and float(v.max()) <= hi
    if name in INTS + ["bool"]:  # every value of the range appears in 2000 draws
        assert set(v.tolist()) == set(range(lo, hi + 1))
    else:
        assert float(v.min()) < lo + 1 and float(v.max()) > hi - 1


def test_make_tensor_shapes_bounds_and_flags():
    assert make_tensor((2, 3), dtype=ember.float32, device="cpu").shape == (2, 3)
    assert make_tensor([4], dtype=ember.float32, device="cpu").shape == (4,)
    t = make_tensor(3, 5, dtype=ember.float32, device="cpu", low=2, high=3, requires_grad=True)
    assert t.requires_grad and t.is_leaf and float(t.min()) >= 2 and float(t.max()) < 3
    nc = make_tensor(3, 4, dtype=ember.float32, device="cpu", noncontiguous=True)
    assert nc.shape == (3, 4) and not nc.is_contiguous()
    assert make_tensor(1, dtype=ember.float32, device="cpu", noncontiguous=True).is_contiguous()
    ints = make_tensor(500, dtype=ember.int64, device="cpu", low=-1.5, high=1.2)
    assert set(ints.tolist()) == {-1, 0, 1}  # bounds rounded up: [-1, 2)
    u8 = make_tensor(500, dtype=ember.uint8, device="cpu", low=-100, high=2)
    assert set(u8.tolist()) == {0, 1}  # clamped to the dtype
    nz = make_tensor(3000, dtype=ember.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert 0 not in nz.tolist()
    fz = make_tensor(3000, dtype=ember.float16, device="cpu", exclude_zero=True)
    assert not bool((fz == 0).any())


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(dtype="int64", requires_grad=True), ValueError, "requires_grad=True` is not"),
        (dict(low=3, high=1), ValueError, "`low` must be less than `high`, but got 3 >= 1"),
        (dict(low=float("nan")), ValueError, "`low` and `high` cannot be NaN"),
        (dict(dtype="uint8", low=300, high=400), ValueError, "only supports"),
        (dict(noncontiguous=True, memory_format="cl"), ValueError, "mutually exclusive"),
    ],
)
def test_make_tensor_argument_errors(kwargs, error, match):
    kwargs = dict(kwargs)
    kwargs["dtype"] = getattr(ember, kwargs.pop("dtype", "float32"))
    if kwargs.get("memory_format") == "cl":
        kwargs["memory_format"] = ember.channels_last
    with pytest.raises(error, match=match):
        make_tensor(2, 2, device="cpu", **kwargs)


def test_make_tensor_low_equal_high_float_warns():
    with pytest.warns(FutureWarning, match="low==high"):
        t = make_tensor(3, dtype=ember.float32, device="cpu", low=1, high=1)
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_make_tensor_errors_match_torch():
    torch = pytest.importorskip("torch")
    from torch.testing import make_tensor as tmake

    for kw in [dict(low=3, high=1), dict(low=float("nan"))]:
        with pytest.raises(ValueError) as theirs:
            tmake(2, dtype=torch.float32, device="cpu", **kw)
        with pytest.raises(ValueError) as ours:
            make_tensor(2, dtype=ember.float32, device="cpu", **kw)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as theirs:
        tmake(2, dtype=torch.uint8, device="cpu", low=300, high=400)
    with pytest.raises(ValueError) as ours:
        make_tensor(2, dtype=ember.uint8, device="cpu", low=300, high=400)
    assert str(ours.value) == str(theirs.value)


def test_assert_close_accepts():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert_close(x, x + 5e-6)  # within float32's atol
    assert_close({"a": [x, 1.0], "b": (True, None)}, {"a": [x.clone(), 1.0], "b": (True, None)})
    assert_close([1, 2], (1, 2))  # sequences of any kind
    assert_close(ember.tensor([float("nan")]), ember.tensor([float("nan")]), equal_nan=True)
    assert_close(x, x.double(), check_dtype=False)
    assert_close(x, x + 0.5, rtol=0, atol=0.6)
    assert_close(ember.nn.Parameter(x.clone()), x)  # a subclass
    assert_close(x.t() if x.dim() == 2 else x[::1], x, check_stride=True)


def test_assert_close_rejects_with_torch_messages():
    with pytest.raises(AssertionError) as e:
        assert_close(ember.tensor([1.0, 2.0, 3.0]), ember.tensor([1.0, 2.5, 3.0]))
    assert str(e.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)"
    )
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!") as e:
        assert_close(ember.tensor([[1, 2], [3, 4]]), ember.tensor([[1, 2], [3, 5]]))
    assert "Greatest absolute difference: 1 at index (1, 1)\n" in str(e.value)
    with pytest.raises(AssertionError, match=r"item \['a'\]\[1\]"):
        assert_close({"a": [1.0, 2.0]}, {"a": [1.0, 2.1]})
    with pytest.raises(AssertionError, match="The length of the sequences mismatch: 1 != 2"):
        assert_close([1], [1, 2])
    with pytest.raises(AssertionError, match="The keys of the mappings do not match"):
        assert_close({"a": 1}, {"b": 1})
    with pytest.raises(AssertionError, match="attribute 'dtype' do not match"):
        assert_close(ember.ones(2), ember.ones(2, dtype=ember.float64))
    with pytest.raises(AssertionError, match=r"attribute 'shape' do not match: torch.Size"):
        assert_close(ember.ones(2), ember.ones(3))
    with pytest.raises(TypeError, match="No comparison pair was able to handle"):
        assert_close(ember.ones(2), [1.0, 1.0])
    with pytest.raises(AssertionError, match="The \\(d\\)types do not match"):
        assert_close(1, 1.0)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be"):
        assert_close(ember.ones(1), ember.ones(1), rtol=0.1)
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(1.0, 2.0, msg="custom")
    with pytest.raises(AssertionError, match="^H\nScalars are not close"):
        assert_close(1.0, 2.0, msg=lambda m: "H\n" + m)
    with pytest.raises(AssertionError, match="None mismatch: None is not 1"):
        assert_close(None, 1)
    with pytest.raises(TypeError):
        assert_close(ember.nn.Parameter(ember.ones(1)), ember.ones(1), allow_subclasses=False)


def _cases(m):
    t = m.tensor
    return [
        (t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]), {}),
        (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 4.0001]]), {}),
        (t([1.0, 2.0]), t([1.0, 2.0 + 2e-5]), {}),
        (t([1.0, 2.0]), t([1.0, 2.0 + 1.5e-5]), {}),
        (t([1, 2, 3]), t([1, 2, 4]), {}),
        (t(1.5), t(1.0), {}),
        (t([1.0, 0.0]), t([1.0, 1e-6]), {}),
        (t([1.0, 0.0]), t([0.0, 0.0]), {}),
        (t([float("nan")]), t([float("nan")]), {}),
        (t([float("nan")]), t([float("nan")]), {"equal_nan": True}),
        (t([float("inf")]), t([float("inf")]), {}),
        (t([float("inf")]), t([-float("inf")]), {}),
        (t([1.0, 2.0], dtype=m.float16), t([1.0, 2.001], dtype=m.float16), {}),
        (t([1.0, 2.0], dtype=m.float16), t([1.0, 2.01], dtype=m.float16), {}),
        (t([1.0, 2.0], dtype=m.bfloat16), t([1.0, 2.02], dtype=m.bfloat16), {}),
        (t([1.0, 2.0], dtype=m.bfloat16), t([1.0, 2.1], dtype=m.bfloat16), {}),
        (t([1.0, 2.0], dtype=m.float64), t([1.0, 2.0 + 1e-7], dtype=m.float64), {}),
        (t([1.0, 2.0]), t([1.0, 2.0], dtype=m.float64), {}),
        (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6], dtype=m.float64), {"check_dtype": False}),
        (t([1.0, 2.0]), t([1.0, 2.0, 3.0]), {}),
        (t([True, False]), t([True, True]), {}),
        ({"a": [t([1.0]), 2.0]}, {"a": [t([1.0]), 2.1]}, {}),
        ([t([1.0]), (1, 2)], [t([1.0]), (1, 3)], {}),
        ([1.0, 2.0], [1.0, 2.0 + 1e-8], {}),
        (1, 1.0, {}),
        (1, 1.0, {"check_dtype": False}),
        (t([5.0, 6.0]), t([5.5, 6.0]), {"rtol": 0.0, "atol": 0.4}),
        (t([5.0, 6.0]), t([5.5, 6.0]), {"rtol": 0.1, "atol": 0.0}),
        (t([3, 4]), t([3, 5]), {"rtol": 0.0, "atol": 1.0}),
        (t([1.0]), [1.0], {}),
        (None, t([1.0]), {}),
    ]


def _outcome(fn, a, e, kw):
    try:
        fn(a, e, **kw)
        return "ok"
    except Exception as ex:
        # The one expected difference: the class's own name.
        return f"{type(ex).__name__}: {ex}".replace("ember.Tensor", "torch.Tensor")


def test_assert_close_matches_torch_decisions_and_messages():
    torch = pytest.importorskip("torch")
    from torch.testing import assert_close as tclose

    for i, ((ta, te, kw), (ea, ee, _)) in enumerate(zip(_cases(torch), _cases(ember))):
        assert _outcome(assert_close, ea, ee, kw) == _outcome(tclose, ta, te, kw), i


def test_make_tensor_matches_torch_flags():
    torch = pytest.importorskip("torch")
    from torch.testing import make_tensor as tmake

    for kw in [
        dict(noncontiguous=True),
        dict(requires_grad=True),
        dict(low=-1, high=1, exclude_zero=True),
    ]:
        t = tmake(3, 4, dtype=torch.float32, device="cpu", **kw)
        e = make_tensor(3, 4, dtype=ember.float32, device="cpu", **kw)
        assert tuple(e.shape) == tuple(t.shape)
        assert e.stride() == t.stride()
        assert e.is_contiguous() == t.is_contiguous()
        assert e.requires_grad == t.requires_grad
