"""ember.nested: nested tensors in the strided and jagged layouts, compared with torch.nested;
and ember.masked's MaskedTensor (a Tensor subclass as well, so its checks share the subprocess).

Building torch's first jagged tensor costs seconds (it imports torch's compiler stack), so the
jagged layout is compared with torch's strided nested tensors and with torch's ops on each
component (what torch 2.13's jagged layout gives, checked when this was written).

Making a nested or masked tensor installs ember's subclass dispatch mode for the rest of the
process, so the checks run in one subprocess (test_nested_checks_in_a_subprocess)."""

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
    if layout == "jagged":  # torch's symbolic ragged size j1, j2, ... (checked with torch 2.13)
        assert nt.size(1) == nt.shape[1] and str(nt.size(1)).startswith("j")
    else:
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
    if layout == "strided":  # torch's jagged layout sums (test_jagged_* below)
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
    jag = nested.nested_tensor([a.detach(), b.detach()], layout=ember.jagged, requires_grad=True)
    nested.to_padded_tensor(jag * 3, 0.0).sum().backward()
    assert jag.grad.is_nested and jag.grad.shape == jag.shape  # torch's keeps the structure
    assert jag.grad[1].tolist() == [[3.0, 3.0, 3.0]]
    plain = nested.nested_tensor([a.detach(), b.detach()])
    assert plain.mul_(2) is plain  # in place: the same nested tensor, its buffer changed
    assert ember.allclose(plain[1], 2 * b.detach())


# --- jagged layout: ops over regular dims, the ragged dim, dense weights, attention ----------


def _jagged_pair(torch):
    a = (ember.arange(12.0).reshape(3, 4) - 5) / 7
    b = (ember.arange(8.0).reshape(2, 4) - 2) / 3
    nt = nested.nested_tensor([a, b], layout=ember.jagged)
    return nt, [torch.tensor(t.numpy()) for t in (a, b)]


def _same_components(got, want_parts, atol=1e-5):
    assert got.is_nested and len(got.unbind()) == len(want_parts)
    for g, w in zip(got.unbind(), want_parts):
        assert tuple(g.shape) == tuple(w.shape)
        assert ember.allclose(g, ember.tensor(w.detach().numpy()), atol=atol)


@inner
def test_jagged_shape_reductions_and_softmax_match_torch(pair):
    torch = pair[0]
    F = torch.nn.functional
    nt, parts = _jagged_pair(torch)
    assert str(nt.shape) == f"torch.Size([2, {nt.shape[1]}, 4])" and str(nt.shape[1])[0] == "j"
    assert nt.shape[1] == nt.size(1) and nt.shape[1] != 3 and nt.is_contiguous()
    assert nt.lengths() is None
    for got, fn in (
        (nt.softmax(-1), lambda c: c.softmax(-1)),
        (ember.nn.functional.log_softmax(nt, dim=2), lambda c: F.log_softmax(c, 1)),
        (nt.softmax(1), lambda c: c.softmax(0)),  # over the ragged dim: per component
        (nt.sum(-1), lambda c: c.sum(-1)),
        (nt.mean(2, keepdim=True), lambda c: c.mean(1, keepdim=True)),
        (nt.amax(-1), lambda c: c.amax(-1)),
    ):
        _same_components(got, [fn(c) for c in parts])
    _same(nt.sum(1), torch.stack([c.sum(0) for c in parts]))  # a dense (B, 4) result
    _same(nt.mean(1), torch.stack([c.mean(0) for c in parts]))
    _same(nt.sum((0, 1)), torch.cat(parts).sum(0))
    assert abs(nt.sum().item() - float(torch.cat(parts).sum())) < 1e-5
    with pytest.raises(RuntimeError, match="reducing across the batch dimension"):
        nt.softmax(0)
    with pytest.raises(RuntimeError, match="batch dimension but not the ragged"):
        nt.sum(0)
    with pytest.raises(RuntimeError, match="ragged and non-batch"):
        nt.sum((1, 2))


@inner
def test_jagged_dense_weights_layers_and_views_match_torch(pair):
    torch = pair[0]
    nt, parts = _jagged_pair(torch)
    w = ember.arange(20.0).reshape(4, 5) / 10
    tw = torch.tensor(w.numpy())
    _same_components(nt @ w, [c @ tw for c in parts])
    lin, tlin = ember.nn.Linear(4, 5), torch.nn.Linear(4, 5)
    tlin.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in lin.state_dict().items()})
    ln, tln = ember.nn.LayerNorm(4), torch.nn.LayerNorm(4)
    _same_components(ln(nt), [tln(c) for c in parts])
    out = lin(nt)
    _same_components(out, [tlin(c) for c in parts])
    out.to_padded_tensor(0.0).pow(2).sum().backward()
    sum(tlin(c).pow(2).sum() for c in parts).backward()
    _same(lin.weight.grad, tlin.weight.grad)
    t = nt.transpose(1, 2)
    assert str(t.shape) == f"torch.Size([2, 4, {nt.shape[1]}])" and not t.is_contiguous()
    _same_components(t, [c.T for c in parts])
    _same_components(t.transpose(1, 2), parts)
    with pytest.raises(ValueError, match="batch dimension"):
        nt.transpose(0, 1)
    u = nt.unflatten(-1, (2, 2))
    assert str(u.shape) == f"torch.Size([2, {nt.shape[1]}, 2, 2])"
    _same_components(u.flatten(-2), parts)
    _same_components(nt.view(2, -1, 2, 2), [c.view(-1, 2, 2) for c in parts])
    _same_components(nt.unsqueeze(-1), [c.unsqueeze(-1) for c in parts])
    _same_components(ember.cat([nt, nt], -1), [torch.cat([c, c], -1) for c in parts])
    halves = nt.chunk(2, -1)
    assert len(halves) == 2
    _same_components(halves[1], [c.chunk(2, -1)[1] for c in parts])


@inner
def test_jagged_scaled_dot_product_attention_matches_torch(pair):
    torch = pair[0]
    F = torch.nn.functional
    parts = [torch.randn(3, 8), torch.randn(2, 8)]
    nt = nested.nested_tensor([ember.tensor(c.numpy()) for c in parts], layout=ember.jagged)
    q = nt.unflatten(-1, (2, 4)).transpose(1, 2)  # (B, H, j, D), as torch's tutorial
    got = ember.nn.functional.scaled_dot_product_attention(q, q, q).transpose(1, 2).flatten(-2)
    want = []
    for c in parts:
        h = c.unflatten(-1, (2, 4)).transpose(0, 1)
        want.append(F.scaled_dot_product_attention(h, h, h).transpose(0, 1).flatten(-2))
    _same_components(got, want)
    with pytest.raises(RuntimeError, match="No viable backend"):
        ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)


@inner
def test_jagged_constructors():
    v = ember.arange(10.0).reshape(5, 2)
    nt = nested.nested_tensor_from_jagged(v, ember.tensor([0, 2, 5]))
    assert nt.values().data_ptr() == v.data_ptr() and nt.offsets().tolist() == [0, 2, 5]
    assert [c.shape[0] for c in nt.unbind()] == [2, 3]
    by_len = nested.nested_tensor_from_jagged(v, lengths=ember.tensor([2, 3]))
    assert by_len.offsets().tolist() == [0, 2, 5]
    sel = nested.masked_select(
        ember.arange(6.0).reshape(2, 3), ember.tensor([[True, False, True], [True, True, False]])
    )
    assert [c.tolist() for c in sel.unbind()] == [[0.0, 2.0], [3.0, 4.0]]
    rows = nested.narrow(
        ember.arange(12.0).reshape(2, 6),
        1,
        ember.tensor([0, 1]),
        ember.tensor([3, 2]),
        layout=ember.jagged,
    )
    assert [c.tolist() for c in rows.unbind()] == [[0.0, 1.0, 2.0], [7.0, 8.0]]


# --- MaskedTensor (torch.masked's prototype), a Tensor subclass too -------------------------


_DATA = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
_MASK = [[True, False, True], [False, False, True]]


def _masked_results():
    """ember's MaskedTensor operations (the docs tutorial's), in the order of _torch_expected."""
    data, mask = ember.tensor(_DATA), ember.tensor(_MASK)
    mt = ember.masked.masked_tensor(data, mask)
    F = ember.nn.functional
    x = ember.tensor([-10.0, -5, 0, 5, 10, 50], requires_grad=True)
    mx = ember.masked.masked_tensor(x, x < 0, requires_grad=True)
    my = ember.masked.masked_tensor(ember.ones_like(x), ~(x < 0), requires_grad=True)
    y = ember.where(x < 0, ember.exp(mx), my)  # the tutorial's safe gradient
    y.sum().backward()
    nan = ember.tensor([[1.0, float("nan"), 3], [4, 5, float("nan")]])
    z = ember.masked.masked_tensor(nan, ~ember.isnan(nan))
    return [
        mt, mt.sum(), mt.sum(1), mt.sum(dim=1, keepdim=True), mt.mean(), mt.amax(1),
        ember.amin(mt, 0), mt.prod(1), ember.argmax(mt, 1), mt.softmax(1), F.softmax(mt, -1),
        mt.sum(1).sum(), mt + 1, ember.sin(mt), mt * mt, mt / 2, mt > 2, abs(-mt),
        ember.where(mask, mt, mt), mt.t(), mt.reshape(3, 2), mt.view(-1), mt[0],
        ember.masked.masked_tensor(ember.tensor([1, 2, 3]), ember.tensor([True, False, True])),
        ember.masked.masked_tensor(ember.tensor(2.0), ember.tensor(False)),
        y, mx.grad, my.grad, z.mean(1), z.amax(0), ember.argmin(z, 1), z.var(1),
    ]  # fmt: skip


def _torch_expected(torch):
    """The same results as torch MaskedTensors built from torch.masked's functions and torch's
    ops on data and mask: torch's own MaskedTensor ops cost seconds on first use (its dispatch
    setup); their reprs were checked equal to these when this was written."""
    M, data, mask = torch.masked, torch.tensor(_DATA), torch.tensor(_MASK)
    red = [  # (data, mask) of the reductions and softmaxes
        (data, mask),
        (M.sum(data, mask=mask), mask.any()),
        (M.sum(data, 1, mask=mask), mask.any(1)),
        (M.sum(data, 1, keepdim=True, mask=mask), mask.any(1, keepdim=True)),
        (M.mean(data, mask=mask), mask.any()),
        (M.amax(data, 1, mask=mask), mask.any(1)),
        (M.amin(data, 0, mask=mask), mask.any(0)),
        (M.prod(data, 1, mask=mask), mask.any(1)),
        (M.argmax(data, 1, mask=mask), mask.any(1)),
        (M.softmax(data, 1, mask=mask), mask),
        (M.softmax(data, -1, mask=mask), mask),
        (M.sum(M.sum(data, 1, mask=mask), mask=mask.any(1)), mask.any()),
    ]
    ops = [data + 1, data.sin(), data * data, data / 2, data > 2, abs(-data)]
    views = [(data.t(), mask.t()), (data.reshape(3, 2), mask.reshape(3, 2))]
    views += [(data.view(-1), mask.view(-1)), (data[0], mask[0])]
    x = torch.tensor([-10.0, -5, 0, 5, 10, 50], requires_grad=True)
    ones = torch.ones_like(x).requires_grad_()
    y = torch.where(x < 0, x.exp(), ones)
    y.sum().backward()
    nan = torch.tensor([[1.0, float("nan"), 3], [4, 5, float("nan")]])
    valid = ~nan.isnan()
    pairs = red + [(o, mask) for o in ops] + [(data, mask)] + views + [
        (torch.tensor([1, 2, 3]), torch.tensor([True, False, True])),
        (torch.tensor(2.0), torch.tensor(False)),
        (y.detach(), torch.ones(6, dtype=torch.bool)), (x.grad, x < 0), (ones.grad, x >= 0),
        (M.mean(nan, 1, mask=valid), valid.any(1)), (M.amax(nan, 0, mask=valid), valid.any(0)),
        (M.argmin(nan, 1, mask=valid), valid.any(1)), (M.var(nan, 1, mask=valid), valid.any(1)),
    ]  # fmt: skip
    return [M.masked_tensor(d, m) for d, m in pairs]


@inner
def test_masked_tensor_matches_torch(pair):
    torch = pair[0]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [repr(r) for r in _torch_expected(torch)]
        got = [repr(r) for r in _masked_results()]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, (i, g, w)


@inner
def test_masked_tensor_data_mask_grad_and_errors():
    import warnings

    data = ember.arange(6.0).reshape(2, 3)
    mask = ember.tensor([[True, False, True], [False, False, True]])
    with pytest.warns(UserWarning, match="prototype stage"):
        mt = ember.masked.masked_tensor(data, mask, requires_grad=True)
    assert isinstance(mt, ember.Tensor) and ember.masked.is_masked_tensor(mt)
    assert mt.requires_grad_(True) is mt
    assert mt.is_leaf and mt.requires_grad and tuple(mt.shape) == (2, 3)
    assert ember.equal(mt.get_data(), data) and ember.equal(mt.get_mask(), mask)
    assert mt.to_tensor(-1.0).tolist() == [[0.0, -1.0, 2.0], [-1.0, -1.0, 5.0]]
    mt.sum().backward()
    assert ember.masked.is_masked_tensor(mt.grad) and ember.equal(mt.grad.get_mask(), mask)
    assert mt.grad.to_tensor(0.0).tolist() == [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = data.clone().requires_grad_()
        (ember.masked.as_masked_tensor(a, mask) * 2).sum().backward()  # keeps a's history
        assert a.grad.tolist() == [[2.0, 0.0, 2.0], [0.0, 0.0, 2.0]]
        with pytest.raises(ValueError, match="Input masks must match"):
            mt + ember.masked.masked_tensor(data, ~mask)
        with pytest.raises(TypeError, match="mask must have dtype bool"):
            ember.masked.masked_tensor(data, mask.int())
        with pytest.raises(ValueError, match="data.dim\\(\\) must equal mask.dim\\(\\)"):
            ember.masked.masked_tensor(data, mask[0])
        with pytest.raises(TypeError, match="unsupported operand"):
            2 - mt
