"""ember.nested: nested tensors in the strided and jagged layouts, compared with torch.nested.

Building torch's first jagged tensor costs seconds (it imports torch's compiler stack), so the
jagged layout is compared with torch's strided nested tensors and with torch's ops on each
component (what torch 2.13's jagged layout gives, checked when this was written).

Making a nested tensor installs ember's subclass dispatch mode for the rest of the process, so
the checks run in one subprocess (test_nested_checks_in_a_subprocess)."""

import os
import subprocess
import sys

import pytest

import ember

nested = ember.nested
_INNER = os.environ.get("EMBER_NESTED_INNER") == "1"
inner = pytest.mark.skipif(not _INNER, reason="run by test_nested_checks_in_a_subprocess")


@pytest.mark.skipif(_INNER, reason="this is the subprocess")
def test_nested_checks_in_a_subprocess():
    env = dict(os.environ, EMBER_NESTED_INNER="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " failed" not in out.stdout and " passed" in out.stdout


def _parts():
    return ember.arange(6.0).reshape(2, 3), ember.arange(3.0).reshape(1, 3) - 1


def _same(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert ember.allclose(got, ember.tensor(want.detach().numpy()), atol=1e-6)


def _same_nested(got, want):
    assert got.is_nested and want.is_nested
    assert len(got.unbind()) == len(want.unbind())
    for g, w in zip(got.unbind(), want.unbind()):
        _same(g, w)


@pytest.fixture(scope="module")
def pair():
    torch = pytest.importorskip("torch")
    a, b = _parts()
    ta, tb = (torch.tensor(t.numpy()) for t in (a, b))
    return torch, (a, b), (ta, tb)


@inner
@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_construction_queries_and_padding_match_torch(pair, layout):
    torch, ours, theirs = pair
    nt = nested.nested_tensor(list(ours), layout=getattr(ember, layout))
    tt = torch.nested.nested_tensor(list(theirs))
    assert nt.is_nested and not ours[0].is_nested and isinstance(nt, ember.Tensor)
    assert nt.layout is getattr(ember, layout) and str(nt.layout) == f"torch.{layout}"
    assert (nt.dim(), nt.size(0), nt.size(2), nt.numel()) == (3, 2, 3, 9)
    assert (tt.dim(), tt.size(0), tt.size(2), tt.numel()) == (3, 2, 3, 9)
    with pytest.raises(RuntimeError, match="irregular"):
        nt.size(1)
    with pytest.raises(IndexError):
        nt.size(3)
    _same_nested(nt, tt)
    _same(nested.to_padded_tensor(nt, 0.5), torch.nested.to_padded_tensor(tt, 0.5))
    if layout == "strided":
        _same(nt.to_padded_tensor(-1.0, (2, 3, 4)), tt.to_padded_tensor(-1.0, (2, 3, 4)))
    if layout == "jagged":  # reads only the ragged dim's size, and cuts, as torch's
        _same(nt.to_padded_tensor(0.0, (2, 1, 9)), tt.to_padded_tensor(0.0)[:, :1])
    else:
        for t in (nt, tt):
            with pytest.raises(RuntimeError, match="Truncation is not supported"):
                t.to_padded_tensor(0.0, (2, 1, 3))
    _same(nt[1], tt[1])
    if layout == "jagged":
        _same(nt.values(), torch.cat(theirs))
        assert nt.offsets().tolist() == [0, 2, 3] and nt.offsets().dtype == ember.int64
        assert repr(nt).startswith(
            "NestedTensor(size=(2, j"
        ) and "offsets=tensor([0, 2, 3])" in repr(nt)
    else:
        assert repr(nt) == repr(tt).replace("torch", "ember")
        with pytest.raises(RuntimeError, match="doesn't support sizes"):
            nt.shape  # noqa: B018
    with pytest.raises(RuntimeError, match="same dimension"):
        nested.nested_tensor([ours[0], ember.ones(3)], layout=getattr(ember, layout))


@inner
@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_elementwise_ops_match_torch(pair, layout):
    torch, ours, theirs = pair
    nt = nested.nested_tensor(list(ours), layout=getattr(ember, layout))
    tt = torch.nested.nested_tensor(list(theirs))
    for fn in (
        lambda m, t: t + t,
        lambda m, t: t * 2 - t / 3,
        lambda m, t: m.relu(t),
        lambda m, t: m.nn.functional.gelu(t.sin()),
        lambda m, t: m.add(t, t, alpha=2).abs(),
        lambda m, t: -t.to(m.float64),
    ):
        _same_nested(fn(ember, nt), fn(torch, tt))
    # ops torch runs on the jagged layout only, and the errors of the strided one
    for fn in (lambda m, t: t.exp(), lambda m, t: 1 - t, lambda m, t: t + m.ones(3)):
        if layout == "jagged":
            got = fn(ember, nt).unbind()
            for g, w in zip(got, theirs):
                _same(g, fn(torch, w))
        else:
            with pytest.raises(Exception) as want:
                fn(torch, tt)
            with pytest.raises(type(want.value)):
                fn(ember, nt)
    with pytest.raises(NotImplementedError, match="NestedTensorCPU"):
        nt.sum()


@inner
def test_autograd_through_as_nested_tensor():
    a = ember.randn(2, 3, requires_grad=True)
    b = ember.randn(1, 3, requires_grad=True)
    nt = nested.as_nested_tensor([a, b])
    assert nt.requires_grad and not nt.is_leaf
    (nested.to_padded_tensor(nt * 3, 0.0) ** 2).sum().backward()
    assert ember.allclose(a.grad, 18 * a.detach()) and ember.allclose(b.grad, 18 * b.detach())
    leaf = nested.nested_tensor([a, b])
    assert not leaf.requires_grad and leaf.is_leaf  # nested_tensor copies (a new leaf)
    assert [t.shape for t in nested.as_nested_tensor(ember.ones(2, 3, 4)).unbind()] == [(3, 4)] * 2
    assert nested.nested_tensor([[1, 2], [3]])[1].tolist() == [3]
    grad_leaf = nested.nested_tensor([a, b], requires_grad=True)
    assert grad_leaf.requires_grad and grad_leaf.is_leaf
    plain = nested.nested_tensor([a.detach(), b.detach()])
    assert plain.mul_(2) is plain  # in place: the same nested tensor, its buffer changed
    assert ember.allclose(plain[1], 2 * b.detach())
