"""AOT autograd derivative formulas added for multi-output ops (max/min with dim, split, chunk,
unbind), advanced indexing (getitem with tensors, index_put, index_select, gather),
maximum/minimum, cross_entropy / nll_loss with weights, label smoothing, probability targets,
ignore_index and every reduction, and batched products (matmul beyond 2-D, addmm with a
broadcast bias, baddbmm, addbmm, addmv).

Each case runs through ``ember.compile`` with the ``aot_eager`` and ``inductor`` backends; the
test asserts the graph was captured into a joint graph (no fallback to eager autograd) and that
outputs and gradients equal eager ember's, and torch's where torch is installed."""

import numpy as np
import pytest

import ember
from ember._dynamo.backends import lookup_backend


def _tensor_to(M, t):
    if M is ember:
        return t.detach().clone().requires_grad_(t.requires_grad)
    x = M.from_numpy(np.array(t.detach().numpy()))
    return x.requires_grad_(t.requires_grad)


def _loss(outs):
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    total = 0
    for i, o in enumerate(outs):
        if o.dtype.is_floating_point:
            total = total + (o * (i + 1.5)).sin().sum()
    return total


def _run(M, fn, inputs, compiled=None):
    xs = [_tensor_to(M, t) for t in inputs]
    f = compiled or (lambda *a: fn(M, *a))
    outs = f(*xs)
    _loss(outs).backward()
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    return [o.detach() for o in outs], [x.grad if x.requires_grad else None for x in xs]


def _np(t):
    return np.array(t.detach().numpy(), dtype=np.float64)


def _close(a, b, tol):
    assert a.shape == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _compiled(fn, backend):
    made = []

    def recording(gm, example_inputs):
        c = lookup_backend(backend)(gm, example_inputs)
        made.append(c)
        return c

    return ember.compile(lambda *a: fn(ember, *a), backend=recording), made


def check(fn, inputs, backend, tol):
    cfn, made = _compiled(fn, backend)
    _run(ember, fn, inputs, cfn)  # the capture
    out_c, grads_c = _run(ember, fn, inputs, cfn)
    assert made, "nothing was captured"
    for c in made:
        assert c.fallback_reason is None, c.fallback_reason
        assert any(v is not None for v in c._compiled.values()), "no joint graph was built"
    out_e, grads_e = _run(ember, fn, inputs)
    for a, b in zip(out_c, out_e):
        _close(a, b, tol)
    for a, b in zip(grads_c, grads_e):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b, tol)
    return out_e, grads_e


def r(*shape, grad=True, dtype=ember.float64):
    return ember.randn(*shape, dtype=dtype).requires_grad_(grad)


def idx(*values):
    return ember.tensor(list(values), dtype=ember.int64)


def _ties(dtype=ember.float64):
    x = ember.tensor([[1.0, 2.0, 3.0, -1.0], [0.5, 0.5, -2.0, 4.0]], dtype=dtype)
    y = ember.tensor([[1.0, 3.0, 2.0, -1.0], [0.5, 0.1, -2.0, 5.0]], dtype=dtype)
    return [x.requires_grad_(True), y.requires_grad_(True)]


def _repeats(dtype):
    """A (5, 4) tensor whose columns repeat values (a mode to find), requiring grad."""
    base = ember.randint(0, 3, (5, 4)).to(dtype) + ember.randn(1, 4, dtype=dtype)
    return base.requires_grad_(True)


def _probs(*shape, dtype=ember.float64):
    return ember.randn(*shape, dtype=dtype).softmax(1)


def _ce(M, **kw):
    def f(M, x, t, *w):
        if w:
            kw["weight"] = w[0]
        return M.nn.functional.cross_entropy(x, t, **kw)

    return f


def _nll(M, x, t, w):
    return M.nn.functional.nll_loss(M.nn.functional.log_softmax(x, 1), t, weight=w)


CASES = {
    # ---- max/min with dim (values and indices)
    "max_dim": (lambda M, x: M.max(x, 1), lambda dt: [r(4, 5, dtype=dt)]),
    "max_dim_keepdim_values": (
        lambda M, x: x.max(0, keepdim=True).values * 2,
        lambda dt: [r(4, 5, dtype=dt)],
    ),
    "min_dim_3d": (lambda M, x: M.min(x, -2)[0].exp(), lambda dt: [r(2, 3, 4, dtype=dt)]),
    "max_dim_indices_used": (
        lambda M, x: (M.max(x, 1)[0], M.max(x, 1)[1].to(x.dtype) * x.sum(1)),
        lambda dt: [r(3, 6, dtype=dt)],
    ),
    # ---- other (values, indices) ops
    "sort": (
        lambda M, x: M.sort(x, 1, descending=True)[0] * M.arange(5.0),
        lambda dt: [r(3, 5, dtype=dt)],
    ),
    "topk": (lambda M, x: x.topk(2, dim=0).values.exp(), lambda dt: [r(4, 3, dtype=dt)]),
    "kthvalue_keepdim": (
        lambda M, x: M.kthvalue(x, 2, 1, True)[0] * x,
        lambda dt: [r(3, 4, dtype=dt)],
    ),
    "median_dim": (lambda M, x: x.median(1).values.sin(), lambda dt: [r(3, 5, dtype=dt)]),
    "mode_dim": (lambda M, x: M.mode(x, 0)[0] * 2, lambda dt: [_repeats(dt)]),
    "cummax": (lambda M, x: M.cummax(x, 1)[0] * 3, lambda dt: [r(2, 6, dtype=dt)]),
    # ---- split / chunk / unbind
    "split": (
        lambda M, x: (lambda a, b, c: a * b + c.sum())(*x.split(2, 1)),
        lambda dt: [r(4, 5, dtype=dt)],
    ),
    "split_one_used": (lambda M, x: x.split(3, 0)[1].cos(), lambda dt: [r(7, 2, dtype=dt)]),
    "split_sizes": (
        lambda M, x: (lambda a, b: a.sum(1, keepdim=True) * b)(*M.split(x, [1, 4], dim=1)),
        lambda dt: [r(3, 5, dtype=dt)],
    ),
    "chunk": (lambda M, x: M.cat(x.chunk(3, 0)[::-1], 1), lambda dt: [r(6, 2, dtype=dt)]),
    "unbind": (
        lambda M, x: (lambda u: u[0] * u[2] + u[1].tanh())(x.unbind(1)),
        lambda dt: [r(4, 3, dtype=dt)],
    ),
    "unbind_stack": (lambda M, x: M.stack(x.unbind(0), 1) * 2, lambda dt: [r(3, 4, dtype=dt)]),
    "stack_mixed": (
        lambda M, x, y: M.stack([x, y.exp(), x * y], -1),
        lambda dt: [r(2, 3, dtype=dt), r(2, 3, dtype=dt)],
    ),
    "tensor_split": (
        lambda M, x: M.tensor_split(x, 3, dim=1)[1].sin(),
        lambda dt: [r(2, 7, dtype=dt)],
    ),
    # ---- advanced indexing
    "index_tensor_dups": (
        lambda M, x, i: x[i] * 2,
        lambda dt: [r(5, 3, dtype=dt), idx(0, 2, 2, 4)],
    ),
    "index_second_dim": (
        lambda M, x, i: x[:, i].exp(),
        lambda dt: [r(3, 5, dtype=dt), idx(4, 0, 4)],
    ),
    "index_two_tensors": (
        lambda M, x, i, j: x[i, j] * x[j, i],
        lambda dt: [r(5, 5, dtype=dt), idx(0, 1, 1, 3), idx(2, 2, 4, 0)],
    ),
    "index_put": (
        lambda M, x, i, v: M.index_put(x, (i,), v) * 3,
        lambda dt: [r(5, 3, dtype=dt), idx(0, 3), r(2, 3, dtype=dt)],
    ),
    "index_put_accumulate_broadcast": (
        lambda M, x, i, v: x.index_put((i,), v, accumulate=True).sin(),
        lambda dt: [r(5, 3, dtype=dt), idx(1, 1, 4), r(3, dtype=dt)],
    ),
    "index_select": (
        lambda M, x, i: M.index_select(x, 1, i) * 2,
        lambda dt: [r(3, 4, dtype=dt), idx(3, 3, 0)],
    ),
    "gather": (
        lambda M, x, i: M.gather(x, 1, i).exp(),
        lambda dt: [r(3, 4, dtype=dt), ember.tensor([[0, 0], [3, 1], [2, 2]])],
    ),
    # ---- maximum / minimum (ties split the gradient)
    "maximum_ties": (lambda M, x, y: M.maximum(x, y) * 2, _ties),
    "minimum_ties": (lambda M, x, y: M.minimum(x, y).exp(), _ties),
    "max_binary": (lambda M, x, y: M.max(x, y) + M.min(x, y) * 3, _ties),
    "maximum_broadcast": (
        lambda M, x, y: M.maximum(x, y),
        lambda dt: [r(3, 4, dtype=dt), r(4, dtype=dt)],
    ),
    # ---- cross_entropy / nll_loss
    "ce_weight": (
        _ce(None),
        lambda dt: [r(6, 4, dtype=dt), idx(0, 3, 1, 1, 2, 0), ember.rand(4, dtype=dt) + 0.5],
    ),
    "ce_label_smoothing": (
        _ce(None, label_smoothing=0.2),
        lambda dt: [r(6, 4, dtype=dt), idx(0, 3, 1, 1, 2, 0)],
    ),
    "ce_weight_smoothing_ignore": (
        _ce(None, label_smoothing=0.1, ignore_index=1),
        lambda dt: [r(6, 4, dtype=dt), idx(0, 3, 1, 1, 2, 0), ember.rand(4, dtype=dt) + 0.5],
    ),
    "ce_ignore_index_sum": (
        _ce(None, ignore_index=2, reduction="sum"),
        lambda dt: [r(5, 3, dtype=dt), idx(2, 0, 1, 2, 1)],
    ),
    "ce_none_spatial": (
        _ce(None, reduction="none"),
        lambda dt: [r(2, 3, 4, dtype=dt), ember.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])],
    ),
    "ce_weight_spatial_mean": (
        _ce(None),
        lambda dt: [
            r(2, 3, 4, dtype=dt),
            ember.tensor([[0, 2, 1, 1], [2, 2, 0, 1]]),
            ember.rand(3, dtype=dt) + 0.5,
        ],
    ),
    "ce_probabilities": (_ce(None), lambda dt: [r(5, 4, dtype=dt), _probs(5, 4, dtype=dt)]),
    "ce_probabilities_weight_smoothing": (
        _ce(None, label_smoothing=0.3, reduction="sum"),
        lambda dt: [r(5, 4, dtype=dt), _probs(5, 4, dtype=dt), ember.rand(4, dtype=dt) + 0.5],
    ),
    "ce_probabilities_target_grad": (
        _ce(None, reduction="none"),
        lambda dt: [r(5, 4, dtype=dt), _probs(5, 4, dtype=dt).requires_grad_(True)],
    ),
    "ce_unbatched_smoothing": (
        _ce(None, label_smoothing=0.1),
        lambda dt: [r(4, dtype=dt), ember.tensor(2), ember.rand(4, dtype=dt) + 0.5],
    ),
    "ce_unbatched_probabilities_none": (
        _ce(None, reduction="none"),
        lambda dt: [r(4, dtype=dt), _probs(1, 4, dtype=dt).reshape(4).requires_grad_(True)],
    ),
    "nll_unbatched": (
        lambda M, x, t: M.nn.functional.nll_loss(M.log_softmax(x, 0), t, reduction="sum"),
        lambda dt: [r(5, dtype=dt), ember.tensor(3)],
    ),
    "nll_weight": (
        _nll,
        lambda dt: [r(6, 4, dtype=dt), idx(0, 3, 1, 1, 2, 0), ember.rand(4, dtype=dt) + 0.5],
    ),
    # ---- products beyond 2-D
    "matmul_3d_2d": (lambda M, x, w: x @ w, lambda dt: [r(2, 3, 4, dtype=dt), r(4, 5, dtype=dt)]),
    "matmul_broadcast_batch": (
        lambda M, x, w: M.matmul(x, w),
        lambda dt: [r(2, 1, 3, 4, dtype=dt), r(5, 4, 2, dtype=dt)],
    ),
    "matmul_1d_3d": (
        lambda M, v, w: M.matmul(v, w),
        lambda dt: [r(4, dtype=dt), r(2, 4, 3, dtype=dt)],
    ),
    "addmm_bias_1d": (
        lambda M, b, x, w: M.addmm(b, x, w, beta=0.5, alpha=2.0),
        lambda dt: [r(5, dtype=dt), r(3, 4, dtype=dt), r(4, 5, dtype=dt)],
    ),
    "baddbmm": (
        lambda M, b, x, w: M.baddbmm(b, x, w, beta=0.5, alpha=1.5),
        lambda dt: [r(1, 3, 5, dtype=dt), r(2, 3, 4, dtype=dt), r(2, 4, 5, dtype=dt)],
    ),
    "addbmm": (
        lambda M, b, x, w: M.addbmm(b, x, w, alpha=2.0),
        lambda dt: [r(3, 5, dtype=dt), r(2, 3, 4, dtype=dt), r(2, 4, 5, dtype=dt)],
    ),
    "addmv": (
        lambda M, b, m, v: M.addmv(b, m, v, beta=2.0),
        lambda dt: [r(3, dtype=dt), r(3, 4, dtype=dt), r(4, dtype=dt)],
    ),
    "linear_3d": (
        lambda M, x, w, b: M.nn.functional.linear(x, w, b).relu(),
        lambda dt: [r(2, 3, 4, dtype=dt), r(5, 4, dtype=dt), r(5, dtype=dt)],
    ),
}


@pytest.fixture(autouse=True)
def _fresh():
    ember._dynamo.reset()
    yield
    ember._dynamo.reset()


@pytest.mark.parametrize("name", sorted(CASES))
def test_aot_eager(name):
    fn, make = CASES[name]
    ember.manual_seed(0)
    check(fn, make(ember.float64), "aot_eager", 1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_inductor(name):
    fn, make = CASES[name]
    ember.manual_seed(1)
    check(fn, make(ember.float32), "inductor", 2e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    fn, make = CASES[name]
    ember.manual_seed(2)
    inputs = make(ember.float64)
    out_e, grads_e = check(fn, inputs, "aot_eager", 1e-9)
    out_t, grads_t = _run(torch, fn, inputs)
    for a, b in zip(out_e, out_t):
        _close(a, b, 1e-7)
    for a, b in zip(grads_e, grads_t):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b, 1e-7)


def test_unused_output_of_split_gets_zero_gradient():
    fn, make = CASES["split_one_used"]
    x = make(ember.float64)[0]
    _, (g,) = check(fn, [x], "aot_eager", 1e-9)
    assert float(g[:3].abs().sum()) == 0.0 and float(g[6:].abs().sum()) == 0.0


def test_weight_requiring_grad_falls_back_correctly():
    # a class weight that requires grad has no formula here: eager autograd, same gradients
    fn = _ce(None)
    x, t, w = r(4, 3), idx(0, 2, 1, 1), (ember.rand(3, dtype=ember.float64) + 0.5)
    w.requires_grad_(True)
    cfn, made = _compiled(fn, "aot_eager")
    _run(ember, fn, [x, t, w], cfn)
    out_c, grads_c = _run(ember, fn, [x, t, w], cfn)
    assert made and made[0].fallback_reason is not None
    out_e, grads_e = _run(ember, fn, [x, t, w])
    for a, b in zip(grads_c, grads_e):
        if a is not None:
            _close(a, b, 1e-9)


# ---- saved tensors are version-checked as eager's are


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_inplace_change_of_saved_input_raises_like_eager(backend):
    def fn(a, b):
        return (a * b).sum()

    cf = ember.compile(fn, backend=backend)
    a, b = ember.randn(3, requires_grad=True), ember.randn(3)
    cf(a, b)
    out = cf(a, b)
    b.mul_(2)  # b is saved for a's gradient
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
    eager = fn(a, b)
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        eager.backward()


def test_inplace_change_of_unsaved_input_is_fine():
    cf = ember.compile(lambda a, b: (a.sin() + b).sum(), backend="aot_eager")
    a, b = ember.randn(3, requires_grad=True), ember.randn(3)
    cf(a, b)
    out = cf(a, b)
    b.add_(1)  # not needed by the backward
    out.backward()
    _close(a.grad, a.detach().cos(), 1e-6)
