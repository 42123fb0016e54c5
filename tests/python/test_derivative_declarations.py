"""Derivatives declared with EMBER_DERIVATIVE_OUTPUTS / _GROUPED and argument-dependent node
names (Note [Derivatives]): node names as torch's, gradients against torch, integer outputs
without grad_fn, an unused output's gradient, and what mm saves when one factor is constant."""

import numpy as np
import pytest

import ember

CASES = {
    "sum_all": (lambda t, x: t.sum(x), [(3, 4)], "SumBackward0"),
    "sum_dim": (lambda t, x: t.sum(x, 1), [(3, 4)], "SumBackward1"),
    "prod_all": (lambda t, x: t.prod(x), [(2, 3)], "ProdBackward0"),
    "prod_dim": (lambda t, x: t.prod(x, 0), [(2, 3)], "ProdBackward1"),
    "max_dim": (lambda t, x: t.max(x, 1)[0], [(3, 4)], "MaxBackward0"),
    "min_dim": (lambda t, x: t.min(x, 0)[0], [(3, 4)], "MinBackward0"),
    "sort": (
        lambda t, x: t.sort(x, 1)[0],
        [(3, 4)],
        "SortBackward0",
    ),
    "topk": (lambda t, x: t.topk(x, 2, 1)[0], [(3, 4)], "TopkBackward0"),
    "kthvalue": (lambda t, x: t.kthvalue(x, 2, 1)[0], [(3, 4)], "KthvalueBackward0"),
    "cummax": (lambda t, x: t.cummax(x, 1)[0], [(3, 4)], "CummaxBackward0"),
    "median": (lambda t, x: t.median(x), [(3, 5)], "MedianBackward0"),
    "median_dim": (lambda t, x: t.median(x, 1)[0], [(3, 5)], "MedianBackward1"),
    "var_mean": (lambda t, x: t.var_mean(x, 1)[0], [(3, 4)], "VarMeanBackward0"),
    "mm": (lambda t, a, b: t.mm(a, b), [(3, 4), (4, 2)], "MmBackward0"),
    "bmm": (lambda t, a, b: t.bmm(a, b), [(2, 3, 4), (2, 4, 2)], "BmmBackward0"),
    "addmm": (
        lambda t, s, a, b: t.addmm(s, a, b, beta=0.5, alpha=2.0),
        [(3, 2), (3, 4), (4, 2)],
        "AddmmBackward0",
    ),
    "masked_fill_number": (
        lambda t, x: x.masked_fill(x > 0.5, 2.0),
        [(3, 4)],
        "MaskedFillBackward0",
    ),
    "conv2d": (
        lambda t, x, w, b: t.nn.functional.conv2d(x, w, b, padding=1),
        [(1, 2, 5, 5), (3, 2, 3, 3), (3,)],
        "ConvolutionBackward0",
    ),
    "max_pool2d": (
        lambda t, x: t.nn.functional.max_pool2d(x, 2),
        [(1, 2, 4, 4)],
        "MaxPool2DWithIndicesBackward0",
    ),
    "scatter_reduce": (
        lambda t, x, s: x.scatter_reduce(0, t.tensor([0, 1, 0]), s, "amax"),
        [(3,), (3,)],
        "ScatterReduceBackward0",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_name_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    fn, shapes, node = CASES[name]
    rng = np.random.default_rng(0)
    arrays = [rng.permutation(int(np.prod(s))).reshape(s) / 7.0 + 0.1 for s in shapes]
    results = []
    for lib in (ember, torch):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        out.sum().backward()
        results.append((out.grad_fn.name(), [x.grad.numpy() for x in xs]))
    (e_name, e_grads), (t_name, t_grads) = results
    assert e_name == t_name
    assert e_name == node
    for eg, tg in zip(e_grads, t_grads):
        np.testing.assert_allclose(eg, tg, rtol=1e-10, atol=1e-12)


def test_masked_fill_tensor_value_names_overload():
    x = ember.ones(3, requires_grad=True)
    v = ember.tensor(2.0, requires_grad=True)
    out = x.masked_fill(ember.tensor([True, False, True]), v)
    assert out.grad_fn.name() == "MaskedFillBackward1"
    out.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert v.grad.item() == 2.0


def test_integer_outputs_have_no_grad_fn():
    x = ember.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    values, indices = ember.sort(x, 1)
    assert values.grad_fn.name() == "SortBackward0"
    assert indices.grad_fn is None and not indices.requires_grad
    m, i = ember.max(x, 1)
    assert i.grad_fn is None
    assert m.grad_fn.name() == "MaxBackward0"


def test_var_mean_with_only_one_output_used():
    a = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    x = ember.tensor(a, requires_grad=True)
    var, mean = ember.var_mean(x, 1)
    assert var.grad_fn is mean.grad_fn
    mean.sum().backward()  # the variance's gradient arrives undefined
    np.testing.assert_allclose(x.grad.numpy(), np.full_like(a, 1 / 3))
    x.grad = None
    var, mean = ember.var_mean(x, 1)
    var.sum().backward()
    centered = a - a.mean(1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), 2 * centered / 2)


def _packs(lib, a_grad, b_grad):
    packed = []
    a = lib.ones(3, 4, requires_grad=a_grad)
    b = lib.ones(4, 5, requires_grad=b_grad)
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: packed.append(tuple(t.shape)) or t, lambda t: t
    ):
        lib.mm(a, b)
    return packed


@pytest.mark.parametrize("a_grad,b_grad", [(True, False), (False, True), (True, True)])
def test_mm_saves_only_the_factor_a_needed_gradient_reads(a_grad, b_grad):
    expected = ([(4, 5)] if a_grad else []) + ([(3, 4)] if b_grad else [])
    assert sorted(_packs(ember, a_grad, b_grad)) == sorted(expected)
    torch = pytest.importorskip("torch")
    assert sorted(_packs(torch, a_grad, b_grad)) == sorted(expected)


def test_mm_transposed_weight_gradient_keeps_layout():
    # The right factor's layout is read at forward time (mat2_strides), not from a saved mat2.
    w = ember.ones(5, 4, requires_grad=True)
    x = ember.tensor(np.arange(12.0).reshape(3, 4), dtype=ember.float32)
    out = ember.mm(x, w.t())
    out.sum().backward()
    np.testing.assert_allclose(
        w.grad.numpy(), np.tile(np.arange(12.0).reshape(3, 4).sum(0), (5, 1))
    )


def test_double_backward_through_grouped_normalization():
    x = ember.tensor(np.random.default_rng(1).normal(size=(2, 3, 4)), requires_grad=True)
    w = ember.ones(4, dtype=ember.float64, requires_grad=True)
    out = ember.nn.functional.layer_norm(x, (4,), w, None)
    assert out.grad_fn.name() == "NativeLayerNormBackward0"
    (g,) = ember.autograd.grad((out * out).sum(), x, create_graph=True)
    g.sum().backward()
    assert x.grad is not None and np.isfinite(x.grad.numpy()).all()
