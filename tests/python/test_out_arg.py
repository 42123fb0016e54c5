"""`out=` on the ops that take it in torch (issue 16; ember/_argparse.py): the result is written
into `out` (resized, with torch's warning when out had elements), dtype casts follow torch's
can_cast rule, `out` is returned, and autograd refuses out= when an argument requires grad."""

import warnings

import numpy as np
import pytest

import ember
from ember import _argparse

A = [[1.0, -2.0], [3.0, 4.0]]


def _t(data=A, dtype=None):
    return ember.tensor(data, dtype=dtype)


@pytest.mark.parametrize(
    "name, call, expected",
    [
        ("add", lambda o: ember.add(_t(), _t(), out=o), [[2.0, -4.0], [6.0, 8.0]]),
        ("add alpha", lambda o: ember.add(_t(), 1, alpha=2, out=o), [[3.0, 0.0], [5.0, 6.0]]),
        ("exp", lambda o: ember.exp(_t([[0.0, 0.0]]), out=o), [[1.0, 1.0]]),
        ("neg", lambda o: ember.neg(_t(), out=o), [[-1.0, 2.0], [-3.0, -4.0]]),
        ("mul", lambda o: ember.mul(_t(), 2, out=o), [[2.0, -4.0], [6.0, 8.0]]),
        ("sum dim", lambda o: ember.sum(_t(), 0, out=o), [4.0, 2.0]),
        ("mean dim", lambda o: ember.mean(_t(), dim=1, keepdim=True, out=o), [[-0.5], [3.5]]),
        ("mm", lambda o: ember.mm(_t(), _t(), out=o), [[-5.0, -10.0], [15.0, 10.0]]),
        ("matmul", lambda o: ember.matmul(_t(), _t(), out=o), [[-5.0, -10.0], [15.0, 10.0]]),
        ("cat", lambda o: ember.cat([_t([1.0]), _t([2.0])], out=o), [1.0, 2.0]),
        ("stack", lambda o: ember.stack([_t([1.0]), _t([2.0])], 1, out=o), [[1.0, 2.0]]),
        ("where", lambda o: ember.where(_t() > 0, _t(), _t() * 0, out=o), [[1.0, 0.0], [3.0, 4.0]]),
        ("clamp", lambda o: ember.clamp(_t(), -1, 1, out=o), [[1.0, -1.0], [1.0, 1.0]]),
        ("zeros", lambda o: ember.zeros(2, out=o), [0.0, 0.0]),
        ("ones", lambda o: ember.ones((1, 2), out=o), [[1.0, 1.0]]),
        ("arange", lambda o: ember.arange(3, out=o), [0.0, 1.0, 2.0]),
        ("full", lambda o: ember.full((2,), 7.0, out=o), [7.0, 7.0]),
    ],
)
def test_out_written_and_returned(name, call, expected):
    out = ember.empty(0)
    r = call(out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), np.array(expected, dtype=np.float32))


def test_out_same_shape_keeps_storage():
    out = ember.empty(2, 2)
    ptr = out.data_ptr()
    ember.add(_t(), 1, out=out)
    assert out.data_ptr() == ptr
    assert out.tolist() == [[2.0, -1.0], [4.0, 5.0]]


def test_out_tuple_for_values_and_indices():
    v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.max(_t(), 1, out=(v, i))
    assert r[0] is v and r[1] is i
    assert v.tolist() == [1.0, 4.0] and i.tolist() == [0, 1]
    assert r.values is v  # the op's named result type
    v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
    ember.sort(_t([3.0, 1.0, 2.0]), out=(v, i))
    assert v.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2, 0]
    v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
    ember.topk(_t([3.0, 1.0, 2.0]), 2, out=(v, i))
    assert v.tolist() == [3.0, 2.0] and i.tolist() == [0, 2]


def test_out_resize_warns_only_when_out_had_elements():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.add(_t(), 1, out=ember.empty(3))
    assert any("was resized" in str(x.message) for x in w)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.add(_t(), 1, out=ember.empty(0))
    assert not any("was resized" in str(x.message) for x in w)


def test_out_dtype_rules():
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        ember.add(_t(), 1, out=ember.empty(2, 2, dtype=ember.int64))
    # an integer result widens into a float out
    out = ember.empty(2)
    ember.add(_t([1, 2], ember.int64), 1, out=out)
    assert out.dtype == ember.float32 and out.tolist() == [2.0, 3.0]
    # factories and accumulating reductions take out's dtype
    out = ember.empty(0, dtype=ember.int64)
    assert ember.zeros(2, 3, out=out).dtype == ember.int64 and out.shape == (2, 3)
    out = ember.empty(0, dtype=ember.int64)
    ember.sum(_t([[1.5, 2.5]]), 1, out=out)
    assert out.dtype == ember.int64


def test_out_refuses_autograd():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="add\\(\\): functions with out=... arguments don't support"
    ):
        ember.add(x, x, out=ember.empty(2))
    with ember.no_grad():
        assert ember.add(x, x, out=ember.empty(2)).tolist() == [2.0, 2.0]


def test_out_none_is_no_out():
    assert ember.add(_t(), 1, out=None).tolist() == [[2.0, -1.0], [4.0, 5.0]]


def test_linalg_out():
    out = ember.empty(0)
    r = ember.linalg.inv(ember.eye(2) * 2, out=out)
    assert r is out and out.tolist() == [[0.5, 0.0], [0.0, 0.5]]


def test_out_ops_take_out_in_torch():
    """Every name in OUT_OPS takes out= in torch 2.13 (and exists in ember)."""
    torch = pytest.importorskip("torch")
    for name in _argparse.OUT_OPS:
        assert hasattr(ember, name), name
        assert "out" in (getattr(torch, name).__doc__ or "") or name in ("take", "tensordot"), name
    x = torch.ones(2, 2)
    torch.take(x, torch.tensor([0]), out=torch.empty(1))
    torch.tensordot(x, x, 1, out=torch.empty(2, 2))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, o: m.add(m.ones(2, 2), m.ones(2, 2), out=o),
        lambda m, o: m.sub(m.ones(2, 2), 3, out=o),
        lambda m, o: m.sqrt(m.full((2, 2), 4.0), out=o),
        lambda m, o: m.amax(m.arange(4.0).view(2, 2), 0, out=o),
        lambda m, o: m.cumsum(m.arange(4.0), 0, out=o),
        lambda m, o: m.bmm(m.ones(1, 2, 2), m.ones(1, 2, 2), out=o),
        lambda m, o: m.addmm(m.ones(2, 2), m.ones(2, 2), m.ones(2, 2), out=o),
        lambda m, o: m.linspace(0, 1, 3, out=o),
        lambda m, o: m.eq(m.ones(2), 1, out=o),
        lambda m, o: m.index_select(m.arange(4.0), 0, m.tensor([2, 0]), out=o),
    ],
)
@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64", "bool"])
def test_out_matches_torch(call, out_dtype):
    torch = pytest.importorskip("torch")
    res = []
    for m in (torch, ember):
        o = m.empty(0, dtype=getattr(m, out_dtype))
        try:
            r = call(m, o)
            res.append((str(r.dtype).split(".")[-1], r.tolist()))
        except NotImplementedError:
            res.append(None)  # torch has no kernel for the dtype (cumsum, linspace to bool)
        except (RuntimeError, TypeError) as e:
            res.append(type(e).__name__)
    if res[0] is not None:  # where torch computes, ember must agree
        assert res[0] == res[1]
