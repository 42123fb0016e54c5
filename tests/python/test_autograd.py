"""Autograd: graph bookkeeping, backward/grad semantics, grad modes, custom Functions, checks.

Gradients are compared with hand-derived formulas.
"""

import numpy as np
import pytest

import ember
from ember.autograd import Function


def leaf(values, dtype=None):
    return ember.tensor(values, dtype=dtype or ember.float64, requires_grad=True)


def assert_close(t, expected, **kw):
    np.testing.assert_allclose(t.detach().numpy(), np.asarray(expected), **kw)


# ----------------------------------------------------------------------------------------------
# graph bookkeeping
# ----------------------------------------------------------------------------------------------


def test_requires_grad_and_is_leaf():
    x = leaf([1.0, 2.0])
    c = ember.tensor([3.0, 4.0], dtype=ember.float64)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert not c.requires_grad and c.is_leaf
    y = x * c
    assert y.requires_grad and not y.is_leaf
    z = c * 2  # nothing requires grad: result is a leaf without a graph
    assert not z.requires_grad and z.is_leaf and z.grad_fn is None
    with pytest.raises(RuntimeError):
        ember.tensor([1, 2], requires_grad=True)  # only floating point can require grad
    assert ember.zeros(2, requires_grad=True).requires_grad
    assert ember.ones(2, 2, requires_grad=True).is_leaf


def test_grad_fn_names_and_next_functions():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    y = x * w
    s = y + 1
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert y.grad_fn.name() == "MulBackward0"
    assert type(s.grad_fn).__name__ == "AddBackward0"
    assert type(s.sum().grad_fn).__name__ == "SumBackward0"
    assert type(x.exp().grad_fn).__name__ == "ExpBackward0"
    assert type((x @ w).grad_fn).__name__ == "DotBackward0"
    assert type(x.view(2, 1).grad_fn).__name__ == "ViewBackward0"
    assert type(x[0].grad_fn).__name__ == "SelectBackward0"
    # the add's inputs: the mul node and (for the Python scalar) nothing
    (n0, i0), (n1, i1) = s.grad_fn.next_functions
    assert n0 is y.grad_fn and i0 == 0
    assert n1 is None
    # the mul's inputs are leaves: AccumulateGrad nodes that hold the leaf in `.variable`
    fns = [f for f, _ in y.grad_fn.next_functions]
    assert [type(f).__name__ for f in fns] == ["AccumulateGrad", "AccumulateGrad"]
    # The leaf behind AccumulateGrad: same tensor data (ember does not preserve Python object
    # identity for tensors handed back from C++; see the issue notes).
    assert fns[0].variable.data_ptr() == x.data_ptr() and fns[1].variable.data_ptr() == w.data_ptr()
    assert fns[0].variable.requires_grad and fns[0].variable.is_leaf


def test_next_functions_skip_inputs_not_requiring_grad():
    x = leaf([1.0])
    c = ember.tensor([2.0], dtype=ember.float64)
    y = x * c
    (f0, _), (f1, _) = y.grad_fn.next_functions
    assert type(f0).__name__ == "AccumulateGrad" and f1 is None


# ----------------------------------------------------------------------------------------------
# backward
# ----------------------------------------------------------------------------------------------


def test_simple_backward():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x + 3 * x).sum()
    assert y.shape == ()
    y.backward()
    assert_close(x.grad, [5.0, 7.0, 9.0])  # 2x + 3
    assert x.grad.dtype == ember.float64 and not x.grad.requires_grad


def test_grad_accumulates_over_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    (x * x).sum().backward()
    assert_close(x.grad, [2 + 2, 2 + 4])
    x.grad = None
    (x * 3).sum().backward()
    assert_close(x.grad, [3, 3])
    x.grad.zero_()
    assert_close(x.grad, [0, 0])


def test_backward_with_gradient():
    x = leaf([1.0, 2.0, 3.0])
    y = x**2
    y.backward(gradient=ember.tensor([1.0, 0.1, 0.01], dtype=ember.float64))
    assert_close(x.grad, [2.0, 0.4, 0.06])
    x2 = leaf([[1.0, 2.0]])
    ember.autograd.backward(x2 * 5, ember.ones(1, 2, dtype=ember.float64))
    assert_close(x2.grad, [[5.0, 5.0]])


def test_non_scalar_backward_without_gradient_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="scalar outputs"):
        (x * 2).backward()


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError):
        ember.tensor(1.0).backward()


def test_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp()).sum()  # exp saves its result for backward
    y.backward(retain_graph=True)
    y.backward()  # the graph was kept for a second pass
    assert_close(x.grad, 2 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


@pytest.mark.filterwarnings(r"ignore:Using backward\(\) with create_graph")  # torch: ref-cycle hint
def test_second_derivative_with_create_graph():
    x = leaf([2.0, -1.0])
    y = (x**3).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    assert_close(g, 3 * np.array([2.0, -1.0]) ** 2)
    (g2,) = ember.autograd.grad(g.sum(), x)
    assert_close(g2, 6 * np.array([2.0, -1.0]))
    # and via backward(create_graph=True): x.grad itself carries a graph
    z = leaf([3.0])
    (z**3).sum().backward(create_graph=True)
    assert z.grad.requires_grad
    gz = z.grad.clone()
    z.grad = None
    gz.sum().backward()
    assert_close(z.grad, [18.0])


def test_autograd_grad():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    y = x * w
    gx, gw = ember.autograd.grad(y, (x, w), grad_outputs=ember.ones_like(y), retain_graph=True)
    assert_close(gx, [3, 4])
    assert_close(gw, [1, 2])
    assert x.grad is None and w.grad is None  # grad() does not touch .grad
    (gx2,) = ember.autograd.grad([y.sum()], [x])  # lists work too; graph was retained
    assert_close(gx2, [3, 4])
    with pytest.raises(RuntimeError):
        ember.autograd.grad(y.sum(), x)  # graph already freed


def test_autograd_grad_unused_inputs():
    x = leaf([1.0])
    unused = leaf([2.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        ember.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = ember.autograd.grad(y, [x, unused], allow_unused=True)
    assert_close(gx, [2.0])
    assert gu is None


def test_autograd_grad_of_input_not_requiring_grad_raises():
    x = leaf([1.0])
    c = ember.tensor([1.0])
    with pytest.raises(RuntimeError):
        ember.autograd.grad((x * 2).sum(), c)


# ----------------------------------------------------------------------------------------------
# hooks, retain_grad
# ----------------------------------------------------------------------------------------------


def test_register_hook_can_modify_grad():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    (x * 3).sum().backward()
    assert_close(seen[0], [3, 3])
    assert_close(x.grad, [30, 30])
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert_close(x.grad, [3, 3])
    assert len(seen) == 1


def test_hook_on_intermediate_changes_upstream_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g + 1)  # returning None would leave it unchanged
    (y * y).sum().backward()  # dL/dy = 2y = [4, 8] -> hooked to [5, 9]
    assert_close(x.grad, [10, 18])


def test_register_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError):
        ember.zeros(1).register_hook(lambda g: g)


def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    z = x * 3
    y.retain_grad()
    (y * z).sum().backward()
    assert y.retains_grad and not z.retains_grad
    assert_close(y.grad, [3.0, 6.0])  # dL/dy = z
    with pytest.warns(UserWarning):  # torch warns when reading .grad of a non-leaf
        assert z.grad is None  # non-leaf grads are not kept


def test_non_leaf_grad_access_warns():
    x = leaf([1.0])
    y = x * 2
    with pytest.warns(UserWarning):
        assert y.grad is None


# ----------------------------------------------------------------------------------------------
# grad modes
# ----------------------------------------------------------------------------------------------


def test_no_grad_and_enable_grad():
    x = leaf([1.0])
    with ember.no_grad():
        y = x * 2
        assert not ember.is_grad_enabled()
        with ember.enable_grad():
            z = x * 2
            assert ember.is_grad_enabled()
    assert ember.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad


def test_grad_mode_decorators():
    x = leaf([1.0])

    @ember.no_grad()
    def f(t):
        return t * 2

    @ember.enable_grad()
    def g(t):
        return t * 2

    assert not f(x).requires_grad
    with ember.no_grad():
        assert g(x).requires_grad
    assert f.__name__ == "f"  # functools.wraps-style


def test_set_grad_enabled():
    x = leaf([1.0])
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    ember.set_grad_enabled(False)  # also works as a plain function call
    try:
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        ember.set_grad_enabled(True)
    assert ember.is_grad_enabled()


def test_inference_mode():
    x = leaf([1.0])
    with ember.inference_mode():
        y = x * 2
        assert ember.is_inference_mode_enabled()
        assert not ember.is_grad_enabled()
    assert not ember.is_inference_mode_enabled()
    assert not y.requires_grad and y.is_inference()
    assert not x.is_inference()
    with pytest.raises(RuntimeError):
        (y * x).sum().backward()  # inference tensors can't be saved for backward

    @ember.inference_mode()
    def f(t):
        return t + 1

    assert not f(x).requires_grad


def test_no_grad_inplace_on_leaf_is_allowed():
    w = leaf([1.0, 2.0])
    with ember.no_grad():
        w -= 0.5 * ember.ones(2, dtype=ember.float64)  # the classic SGD step
    assert w.is_leaf and w.requires_grad
    assert_close(w, [0.5, 1.5])


# ----------------------------------------------------------------------------------------------
# detach / requires_grad_
# ----------------------------------------------------------------------------------------------


def test_detach_and_detach_():
    x = leaf([1.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_requires_grad_():
    t = ember.tensor([1.0, 2.0])
    assert t.requires_grad_() is t
    assert t.requires_grad and t.is_leaf
    (t * t).sum().backward()
    assert_close(t.grad, [2, 4])
    t.requires_grad_(False)
    assert not t.requires_grad
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError):
        y.requires_grad_(False)  # can't change it on a non-leaf
    with pytest.raises(RuntimeError):
        ember.tensor([1]).requires_grad_()


# ----------------------------------------------------------------------------------------------
# custom Function
# ----------------------------------------------------------------------------------------------


class MulScale(Function):
    """out = a * b * scale, with `scale` a plain Python number."""

    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        return a * b * scale

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad * b * ctx.scale if ctx.needs_input_grad[0] else None
        gb = grad * a * ctx.scale if ctx.needs_input_grad[1] else None
        return ga, gb, None  # no grad for the non-tensor argument


def test_custom_function():
    a = leaf([1.0, 2.0])
    b = leaf([3.0, 4.0])
    out = MulScale.apply(a, b, 10)
    assert_close(out, [30, 80])
    assert type(out.grad_fn).__name__ == "MulScaleBackward"
    out.sum().backward()
    assert_close(a.grad, [30, 40])
    assert_close(b.grad, [10, 20])


def test_custom_function_needs_input_grad():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            seen.append(tuple(ctx.needs_input_grad))
            return grad, None

    a = leaf([1.0])
    b = ember.tensor([2.0], dtype=ember.float64)
    Probe.apply(a, b).sum().backward()
    assert seen == [(True, False)]
    assert_close(a.grad, [1.0])


def test_custom_function_mark_non_differentiable():
    class SortWithIndices(Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return values, idx

        @staticmethod
        def backward(ctx, grad_values, grad_idx):
            (idx,) = ctx.saved_tensors
            g = ember.zeros_like(grad_values)
            g[idx] = grad_values
            return g

    x = leaf([3.0, 1.0, 2.0])
    values, idx = SortWithIndices.apply(x)
    assert values.requires_grad and not idx.requires_grad
    (values * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum().backward()
    assert_close(x.grad, [3.0, 1.0, 2.0])


def test_custom_function_without_grad_inputs_has_no_graph():
    out = MulScale.apply(ember.ones(2), ember.ones(2), 2)
    assert not out.requires_grad and out.grad_fn is None


# ----------------------------------------------------------------------------------------------
# in-place correctness checks
# ----------------------------------------------------------------------------------------------


def test_inplace_modification_of_saved_tensor_detected():
    x = leaf([1.0, 2.0])
    y = x * 2
    z = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_on_saved_output_detected():
    x = leaf([1.0, 2.0])
    y = x.exp()  # exp saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_leaf_requiring_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(RuntimeError):
        x[0] = 2.0
    with pytest.raises(RuntimeError):
        x.view(1).mul_(2)  # through a view too


def test_inplace_on_non_leaf_is_differentiable():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.add_(1)  # add does not need its input for backward: fine
    assert type(y.grad_fn).__name__ == "AddBackward0"
    y.mul_(ember.tensor([2.0, 3.0], dtype=ember.float64))
    y.sum().backward()
    assert_close(x.grad, 3 * np.array([2.0, 3.0]))


# ----------------------------------------------------------------------------------------------
# gradcheck
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: (x * x).sin(),
        lambda x: x.exp() / (1 + x.abs()),
        lambda x: (x @ x.t()).tanh(),
        lambda x: x.softmax(dim=-1),
        lambda x: x.sum(0, keepdim=True) * x,
        lambda x: x[:, 1:].pow(3).mean(),
    ],
    ids=["sin_sq", "exp_div", "matmul_tanh", "softmax", "broadcast", "slice_pow"],
)
def test_gradcheck_and_gradgradcheck(fn):
    ember.manual_seed(0)
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-5)
    assert ember.autograd.gradgradcheck(fn, (x,), eps=1e-6, atol=1e-5)


def test_gradcheck_detects_wrong_gradient():
    class BadSquare(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2 * x

    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    with pytest.raises(RuntimeError):
        ember.autograd.gradcheck(BadSquare.apply, (x,))
    assert not ember.autograd.gradcheck(BadSquare.apply, (x,), raise_exception=False)


def test_gradcheck_perturbs_non_contiguous_inputs_in_place():
    """A sliced input (a view with strides) is perturbed where the function reads it: its
    numerical Jacobian was all zeros (a reshaped copy was perturbed), failing a correct check."""
    base = ember.linspace(0.0, 1.0, 24, dtype=ember.float64).reshape(4, 6)
    x = base[:, ::2].detach().requires_grad_()
    assert not x.is_contiguous()
    assert ember.autograd.gradcheck(lambda t: (t * t).sum(1), (x,))
    scalar = ember.tensor(0.5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: t.exp(), (scalar,))


def test_once_differentiable_backward_records_nothing_and_refuses_double_backward():
    from ember.autograd.function import once_differentiable

    seen = []

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            seen.append(ember.is_grad_enabled())
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (g,) = ember.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert seen == [False] and g.tolist() == [2.0, 4.0] and not g.requires_grad
    y = Square.apply(x * 1)  # grad outputs that require grad: the gradient is flagged
    (g,) = ember.autograd.grad((y * y).sum(), x, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked"):
        g.sum().backward()


# ----------------------------------------------------------------------------------------------
# gradients through views, broadcasting, indexing
# ----------------------------------------------------------------------------------------------


def test_grad_through_views():
    x = leaf(np.arange(6.0).reshape(2, 3))
    y = x[:, ::2] * ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ember.float64)
    (y.sum() + (x.t()[2] * 10).sum()).backward()
    assert_close(x.grad, [[1, 0, 2 + 10], [3, 0, 4 + 10]])


def test_grad_through_view_reshape_permute_expand():
    x = leaf(np.arange(6.0))
    y = x.view(2, 3).permute(1, 0).unsqueeze(0).expand(4, 3, 2)
    y.sum().backward()
    assert_close(x.grad, np.full(6, 4.0))  # each element used 4 times


def test_grad_reduced_over_broadcast_dims():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.arange(4.0))
    s = leaf(2.0)
    out = a * b * s  # shape (3, 4)
    out.sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,) and s.grad.shape == ()
    assert_close(a.grad, np.full((3, 1), 2 * 6.0))
    assert_close(b.grad, np.full(4, 2 * 3.0))
    assert_close(s.grad, 18.0)


def test_grad_through_advanced_indexing_accumulates_duplicates():
    x = leaf([1.0, 2.0, 3.0])
    x[[0, 0, 2]].sum().backward()
    assert_close(x.grad, [2, 0, 1])
    m = leaf(np.arange(6.0).reshape(2, 3))
    m[m > 2].sum().backward()
    assert_close(m.grad, [[0, 0, 0], [1, 1, 1]])


def test_grad_through_setitem_on_non_leaf():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf([5.0])
    y = x * 2
    y[1] = v * 3  # overwritten slot no longer depends on x
    assert type(y.grad_fn).__name__ == "CopySlices"
    (y * ember.tensor([1.0, 10.0, 100.0], dtype=ember.float64)).sum().backward()
    assert_close(x.grad, [2, 0, 200])
    assert_close(v.grad, [30])


def test_grad_through_view_modified_in_place():
    x = leaf([1.0, 2.0, 3.0])
    y = x.clone()
    y[:2].mul_(ember.tensor([4.0, 5.0], dtype=ember.float64))  # through a view of y
    y.sum().backward()
    assert_close(x.grad, [4, 5, 1])


def test_grad_of_common_functions():
    x = leaf([0.5, 1.0, 2.0])
    y = (x.log() + x.sqrt() + x.sigmoid() + x.relu() + x.pow(2)).sum()
    y.backward()
    v = np.array([0.5, 1.0, 2.0])
    sig = 1 / (1 + np.exp(-v))
    assert_close(x.grad, 1 / v + 0.5 / np.sqrt(v) + sig * (1 - sig) + 1 + 2 * v, rtol=1e-12)


def test_grad_dtype_matches_input():
    x = ember.tensor([1.0, 2.0], requires_grad=True)  # float32
    (x.double() * 2).sum().backward()
    assert x.grad.dtype == ember.float32
    assert_close(x.grad, [2, 2])


def test_inplace_after_use_where_no_gradient_reads_the_tensor():
    """x * 0.5, x / 3, x @ const and const * x keep no reference to x, so modifying x in place
    afterwards is allowed, as in torch; where a needed gradient reads x it is still an error."""
    uses = [
        lambda v: v * 0.01,
        lambda v: v / 3.0,
        lambda v: 2 * v - 1,
        lambda v: v.t() @ ember.ones(2, 2),
        lambda v: v * ember.ones(2, 2),
        lambda v: ember.mv(v, ember.ones(2)),
        lambda v: v.sub(ember.ones(2), alpha=2),
    ]
    for use in uses:
        a = ember.ones(2, 2, requires_grad=True)
        v = a + 1
        p = use(v)
        v[0] = 0  # bumps v's version
        p.sum().backward()
        fresh = ember.ones(2, 2, requires_grad=True)
        use(fresh + 1).sum().backward()  # the same gradient without the later modification
        np.testing.assert_array_equal(a.grad.numpy(), fresh.grad.numpy())
    a = ember.ones(2, 2, requires_grad=True)
    v = a + 1
    w = ember.ones(2, 2, requires_grad=True)
    p = v * w  # w's gradient reads v
    v.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        p.sum().backward()


def test_derivative_helper_keeps_shapes_not_tensors_and_skips_index_edges():
    """Ops whose derivative is written with EMBER_DERIVATIVE (ops/derivative.h): index_select's
    formula reads only `self_sizes`, so self is not kept and an in-place change of it after the op
    is allowed, as in torch; index and condition arguments get no edge, so next_functions lists
    only the differentiable inputs, as torch's do."""
    a = ember.ones(2, 2, requires_grad=True)
    v = a * 3
    out = ember.index_select(v, 0, ember.tensor([1, 0]))
    assert len(out.grad_fn.next_functions) == 1
    v.mul_(2)
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 2), 3.0))
    g = ember.gather(ember.ones(2, 2, requires_grad=True), 0, ember.tensor([[1, 0], [0, 1]]))
    assert len(g.grad_fn.next_functions) == 1
    x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = ember.where(x > 0, x, ember.zeros(3, requires_grad=True))
    assert len(y.grad_fn.next_functions) == 2  # self and other; the condition has no edge


def test_gradients_of_products_with_constants_match_numpy():
    x = np.random.randn(3, 4)
    c = np.random.randn(4, 5)
    a = ember.tensor(x, requires_grad=True)
    (a @ ember.tensor(c) * 0.5).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 0.5 * np.ones((3, 5)) @ c.T, rtol=1e-12)
    a.grad = None
    (ember.tensor(c).t() @ a.t() / 4.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), (c @ np.ones((5, 3))).T / 4.0, rtol=1e-12)


def test_pow_gradient_ends_in_a_multiply_as_torch():
    x = ember.tensor(2.0, requires_grad=True)
    (g,) = ember.autograd.grad(x**3, x, create_graph=True)
    assert g.item() == 12.0 and type(g.grad_fn).__name__ == "MulBackward0"
    y = ember.tensor([0.0, 2.0], requires_grad=True)
    (y ** ember.tensor([0.0, 2.5])).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [0.0, 2.5 * 2.0**1.5])


def test_linear_weight_gradient_when_only_the_weight_requires_grad():
    """x @ t(w) saves only x (w's gradient reads x), and w's gradient keeps w's layout."""
    x = np.random.randn(5, 3)
    w = ember.tensor(np.random.randn(4, 3), requires_grad=True)
    xs = ember.tensor(x)
    out = ember.nn.functional.linear(xs, w)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.ones((4, 5)) @ x, rtol=1e-12)
    assert w.grad.is_contiguous()
    w.grad = None
    y = ember.addmm(ember.zeros(4, dtype=ember.float64), xs, w.t())
    xs.mul_(2)  # x is saved for w's gradient: modifying it is an error, as in torch
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- torch.autograd.graph: multi-grad hooks and gradient edges (torch 2.13's semantics) ----


def test_multi_grad_hook_all_waits_for_the_tensors_this_backward_computes():
    from ember.autograd.graph import register_multi_grad_hook

    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    c, d = a * b, a * b
    seen = []
    handle = register_multi_grad_hook(
        (a, b, c, d), lambda grads: seen.append([g is not None for g in grads])
    )
    c.sum().backward(retain_graph=True)
    assert seen == [[True, True, True, False]]  # d is not in this graph: not waited for
    c.sum().backward(inputs=(a,), retain_graph=True)
    assert seen[-1] == [True, False, True, False]  # b is not needed for inputs=(a,)
    ember.autograd.grad((c + d).sum(), (a,), retain_graph=True)
    assert seen[-1] == [True, False, True, True]
    handle.remove()
    c.sum().backward(retain_graph=True)
    assert len(seen) == 3
    grads = []
    with register_multi_grad_hook((a, b), grads.append):
        (a * 2 + b).sum().backward()
    assert_close(grads[0][0], [2.0, 2.0])
    assert_close(grads[0][1], [1.0, 1.0])


def test_multi_grad_hook_any_fires_once_per_backward_and_checks_its_arguments():
    from ember.autograd.graph import register_multi_grad_hook

    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    seen = []
    register_multi_grad_hook((a, b), lambda g: seen.append(g.tolist()), mode="any")
    (a * 3 + b).sum().backward()
    (a * 5).sum().backward()
    assert len(seen) == 2 and seen[0] in ([3.0, 3.0], [1.0, 1.0]) and seen[1] == [5.0, 5.0]
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\)"):
        register_multi_grad_hook((a, b), print, mode="bad")
    with pytest.raises(AssertionError, match="Expected gradient function to be set"):
        register_multi_grad_hook((ember.ones(2), a), print)


def test_gradient_edge_survives_in_place_changes():
    from ember.autograd.graph import GradientEdge, get_gradient_edge

    x = leaf([1.0, -2.0, 3.0])
    y = x * 2
    edge = get_gradient_edge(y)
    assert isinstance(edge, GradientEdge) and edge.output_nr == 0
    assert type(edge.node).__name__ == "MulBackward0" and edge.ownership_token is None
    y.mul_(3)  # y's history moves on; the edge still names the gradient of x * 2
    z = (y**2).sum()
    (g_edge,) = ember.autograd.grad(z, inputs=edge, retain_graph=True)
    assert_close(g_edge, 2 * 9 * (2 * x.detach()).numpy())  # dz/d(x*2) = 18 * (x*2)
    g_edge2, g_x = ember.autograd.grad(z, inputs=(edge, x), retain_graph=True)
    assert_close(g_edge2, g_edge.numpy())
    assert_close(g_x, 2 * g_edge.numpy())
    leaf_edge = get_gradient_edge(x)
    assert leaf_edge.node.name() == "torch::autograd::AccumulateGrad" and leaf_edge.output_nr == 0
    (g_leaf,) = ember.autograd.grad(z, [leaf_edge])
    assert_close(g_leaf, g_x.numpy())
    assert get_gradient_edge(leaf([1.0, 2.0, 3.0, 4.0]).split(2)[1]).output_nr == 1
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(ember.ones(2))
    x.grad = None
    ember.autograd.backward((x * 2).sum(), inputs=[leaf_edge])  # a leaf's edge: its .grad
    assert_close(x.grad, [2.0, 2.0, 2.0])
    w = x * 1
    ember.autograd.backward((w * 3).sum(), inputs=get_gradient_edge(w))  # nothing to fill
    assert_close(x.grad, [2.0, 2.0, 2.0])


def test_graph_task_queries_outside_a_backward():
    assert ember._C._current_graph_task_id() == -1
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        ember._C._will_engine_execute_node((leaf([1.0]) * 2).grad_fn._node)


def test_gradient_edge_as_outputs_of_grad_and_backward():
    # A pipeline stage's backward: the gradient of its output arrives from the next stage and
    # flows back from the output's edge (torch's autograd.grad(outputs=edge, grad_outputs=g)).
    from ember.autograd.graph import get_gradient_edge

    x, w = leaf([1.0, 2.0, 3.0]), leaf([0.5, -1.0, 2.0])
    h = x * w
    edge = get_gradient_edge(h)
    gh = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64)
    gx, gw = ember.autograd.grad(edge, (x, w), grad_outputs=gh, retain_graph=True)
    assert_close(gx, (gh * w).detach().numpy())
    assert_close(gw, (gh * x).detach().numpy())
    (gx2,) = ember.autograd.grad([edge], [get_gradient_edge(x)], [gh], retain_graph=True)
    assert_close(gx2, gx.numpy())
    ember.autograd.backward([edge], [gh], inputs=[w], retain_graph=True)
    assert x.grad is None and np.allclose(w.grad.numpy(), gw.numpy())
    (g_mixed,) = ember.autograd.grad([(x * 2).sum(), edge], x, [None, gh], retain_graph=True)
    assert_close(g_mixed, 2 + gx.numpy())
    x.grad = None
    ember.autograd.backward(get_gradient_edge(x), ember.ones(3, dtype=ember.float64))
    assert_close(x.grad, [1.0, 1.0, 1.0])  # a leaf's edge accumulates into its .grad
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        ember.autograd.backward(get_gradient_edge(x))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        ember.autograd.backward(get_gradient_edge(x), ember.ones(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Batched grads are not supported with GradientEdge"):
        ember.autograd.grad(edge, x, gh[None], is_grads_batched=True)


def test_increment_version_invalidates_saved_tensors():
    from ember.autograd.graph import increment_version

    x = leaf([1.0, 2.0])
    y = x * 1
    z = y * y  # saves y at version 0
    increment_version(y)
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    increment_version([y, x.detach()])  # an iterable; a detached alias shares x's counter
    assert (y._version, x._version) == (2, 1)


def test_grad_is_one_python_object_as_torch():
    """p.grad is the same Python object on each access (torch keeps one per tensor): programs
    key dicts on gradients and set attributes on them."""
    import gc
    import weakref

    p = ember.nn.Parameter(ember.randn(3))
    (p * 2).sum().backward()
    g = p.grad
    assert p.grad is g and p.grad is p.grad
    g.tag = "kept"
    seen = {p.grad: 1}
    (p * 2).sum().backward()  # accumulates in place: still the same tensor and object
    assert p.grad is g and p.grad.tag == "kept" and seen[p.grad] == 1
    mine = ember.zeros(3)
    p.grad = mine
    assert p.grad is mine
    p.grad = None
    assert p.grad is None
    # the remembered object does not keep a dropped gradient alive
    ref = weakref.ref(mine)
    del g, seen, mine
    gc.collect()
    assert ref() is None
    # gradients of tensors that died are released (swept as the table grows)
    refs = []
    for _ in range(40):
        t = ember.randn(2, requires_grad=True)
        t.sum().backward()
        refs.append(weakref.ref(t.grad))
    del t
    gc.collect()
    assert sum(r() is not None for r in refs) < 20
    x = ember.randn(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.sum().backward()
    assert y.grad is y.grad and y.grad_fn is y.grad_fn
