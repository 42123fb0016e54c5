"""Derivatives of ops over lists of tensors declared as formulas (Note [List derivatives] in
csrc/ember/ops/derivative_list.h): cat, index and index_put keep torch's node names, edges and
gradients; indices are saved like any input (version-checked); nothing is recorded without a
tensor that requires grad. Compared with torch where it is installed, with numpy otherwise."""

import numpy as np
import pytest

import ember


def _name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def _grads(lib, build):
    """(node name, next node names, gradients) of build(lib) -> (out, inputs)."""
    out, inputs = build(lib)
    names = (
        _name(out),
        [f[0].name() if f[0] is not None else None for f in out.grad_fn.next_functions],
    )
    weights = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) + 1
    gs = lib.autograd.grad((out * weights).sum(), inputs, allow_unused=True)
    return names, [None if g is None else g.detach().numpy().tolist() for g in gs]


def _cat(lib):
    a = lib.ones(2, 3, requires_grad=True)
    b = (lib.ones(1, 3) * 2).requires_grad_()
    c = lib.ones(4, 3)  # no gradient
    skipped = lib.ones(0, requires_grad=True)  # torch's legacy: a 1-d empty tensor is skipped
    return lib.cat([a, skipped, c, b]), [a, skipped, b]


def _cat_dim1(lib):
    a = lib.ones(2, 1, requires_grad=True)
    b = lib.ones(2, 4, requires_grad=True)
    return lib.cat([a, b], dim=1), [a, b]


def _index(lib):
    x = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
    idx = lib.tensor([2, 0, 2])  # a repeated index accumulates
    return x[:, idx], [x]


def _index_mask(lib):
    x = lib.arange(6.0).reshape(2, 3).requires_grad_()
    return x[x.detach() > 2], [x]


def _index_put(lib, accumulate=False):
    x = lib.zeros(5, 2, requires_grad=True)
    v = lib.ones(2, 2, requires_grad=True)
    out = lib.index_put(x * 1, (lib.tensor([1, 3]),), v * 3, accumulate=accumulate)
    return out, [x, v]


CASES = {
    "cat": _cat,
    "cat_dim1": _cat_dim1,
    "index": _index,
    "index_mask": _index_mask,
    "index_put": _index_put,
    "index_put_accumulate": lambda lib: _index_put(lib, True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_nodes_and_gradients_match_torch(case):
    torch = pytest.importorskip("torch")
    assert _grads(ember, CASES[case]) == _grads(torch, CASES[case])


def test_node_names_and_values_without_torch():
    (name, _), gs = _grads(ember, _cat)
    assert name == "CatBackward0"
    assert gs[0] == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert gs[1] == [] and gs[2] == [[19.0, 20.0, 21.0]]
    (name, _), gs = _grads(ember, _index)
    assert name == "IndexBackward0"
    expected = np.zeros((2, 3, 4))
    w = np.arange(1, 25).reshape(2, 3, 4).astype(float)  # out is (2, 3, 4): rows 2, 0, 2
    for k, row in enumerate([2, 0, 2]):
        expected[:, row, :] += w[:, k, :]
    np.testing.assert_allclose(gs[0], expected)
    (name, _), gs = _grads(ember, _index_put)
    assert name == "IndexPutBackward0"
    assert gs[0] == [[1.0, 2.0], [0.0, 0.0], [5.0, 6.0], [0.0, 0.0], [9.0, 10.0]]
    assert gs[1] == [[9.0, 12.0], [21.0, 24.0]]


def test_only_what_requires_grad_is_recorded():
    a, b = ember.ones(2), ember.ones(3)
    assert ember.cat([a, b]).grad_fn is None
    x = ember.ones(3, 2)
    assert x[ember.tensor([0, 2])].grad_fn is None
    w = ember.ones(2, requires_grad=True)
    out = ember.cat([a, w, b])
    assert _name(out) == "CatBackward0"
    (g,) = ember.autograd.grad(out.sum(), [w])
    assert g.tolist() == [1.0, 1.0]


def test_saved_indices_are_version_checked_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        x = lib.ones(4, 2, requires_grad=True)
        idx = lib.tensor([0, 3])
        y = x[idx]
        idx.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_double_backward_through_cat_and_index():
    torch = pytest.importorskip("torch")

    def second(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.cat([x * x, x[lib.tensor([0, 0])] ** 3])
        (g,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), [x])
        return g.detach().numpy().tolist(), h.numpy().tolist()

    assert second(ember) == second(torch)


def test_unused_input_error_text_is_torchs():
    """torch 2.13 names the unused input's index; materialize_grads refuses allow_unused=False."""
    x = ember.ones(2, requires_grad=True)
    y = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        ember.autograd.grad((x * 2).sum(), [x, y])
    assert str(err.value) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        ember.autograd.grad((x * 2).sum(), [x, y], allow_unused=False, materialize_grads=True)
    g = ember.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
    assert g[1].tolist() == [0.0, 0.0]
    torch = pytest.importorskip("torch")
    tx = torch.ones(2, requires_grad=True)
    ty = torch.ones(2, requires_grad=True)
    for args in (([ty, tx], {}), ([tx, ty], {"allow_unused": False, "materialize_grads": True})):
        with pytest.raises((RuntimeError, ValueError)) as theirs:
            torch.autograd.grad((tx * 2).sum(), args[0], **args[1])
        ex, ey = (x, y) if args[0][0] is tx else (y, x)
        with pytest.raises(theirs.type) as ours:
            ember.autograd.grad((x * 2).sum(), [ex, ey], **args[1])
        assert str(ours.value) == str(theirs.value)
