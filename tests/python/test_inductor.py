"""ember._inductor.compile_fx on hand-built graphs: results equal eager's, and the kernels show
that fusion happened (one generated kernel for a pointwise chain, producers inside reductions,
bias + activation after a GEMM), views, broadcasting, scalars, eager calls between kernels,
in-place ops, memory planning, and autograd through fused kernels."""

import operator

import numpy as np
import pytest

import ember
from ember import fx
from ember._inductor import compile_fx, metrics

F = ember.nn.functional


def build(n_inputs, body, root=None):
    """A GraphModule from body(graph, *placeholders) -> output structure of nodes."""
    g = fx.Graph()
    xs = [g.placeholder(f"x{i}") for i in range(n_inputs)]
    g.output(body(g, *xs))
    return fx.GraphModule(root if root is not None else ember.nn.Module(), g)


def check(gm, inputs, rtol=1e-5, atol=1e-6):
    """Compiles gm, compares with eager, returns (compiled fn, kernels generated)."""
    before = metrics.kernels_generated
    fn = compile_fx(gm, inputs)
    kernels = metrics.kernels_generated - before
    got, want = fn(*inputs), gm(*inputs)
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    for a, b in zip(got, want):
        assert tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    return fn, kernels


def chain(g, x, y):
    a = g.call_function(operator.mul, (x, 1.5))
    b = g.call_function(ember.add, (a, y))
    c = g.call_function(F.gelu, (b,))
    d = g.call_method("sigmoid", (c,))
    e = g.call_function(operator.sub, (d, 0.5))
    f = g.call_function(ember.relu, (e,))
    h = g.call_function(ember.tanh, (f,))
    return g.call_function(operator.mul, (h, y))


def test_pointwise_chain_is_one_kernel():
    gm = build(2, chain)
    fn, kernels = check(gm, [ember.randn(64, 33), ember.randn(64, 33)])
    assert kernels == 1 and len(fn.kernels) == 1
    assert fn.kernels[0].count("for (int64_t j") == 1  # one loop over the elements


def test_functional_forms_with_inplace_false_fuse():
    # F.relu(x, inplace=False) is what nn.ReLU() records; inplace=True is a mutation and stays eager
    def body(g, x):
        a = g.call_function(F.relu, (x,), {"inplace": False})
        b = g.call_function(F.silu, (a,), {"inplace": False})
        return g.call_function(operator.mul, (b, 2.0))

    fn, kernels = check(build(1, body), [ember.randn(8, 5)])
    assert kernels == 1 and fn.kernels[0].count("for (int64_t j") == 1

    def mutating(g, x):
        y = g.call_function(operator.mul, (x, 1.0))
        return g.call_function(F.relu, (y,), {"inplace": True})

    check(build(1, mutating), [ember.randn(8, 5)])


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_broadcasting_and_scalars(dtype):
    def body(g, x, y, z):
        cond = g.call_function(operator.gt, (x, 0.25))
        a = g.call_function(operator.add, (x, y))
        b = g.call_function(operator.mul, (z, 2))
        return g.call_function(ember.where, (cond, a, b))

    gm = build(3, body)
    xs = [
        ember.randn(4, 1, 5, dtype=dtype),
        ember.randn(3, 1, dtype=dtype),
        ember.randn(5, dtype=dtype),
    ]
    _, kernels = check(gm, xs)
    assert kernels == 1


def test_zero_dim_and_empty_inputs():
    gm = build(
        2, lambda g, x, y: g.call_function(ember.exp, (g.call_function(operator.add, (x, y)),))
    )
    check(gm, [ember.randn(()), ember.randn(())])
    check(gm, [ember.randn(0, 3), ember.randn(3)])


def test_views_fold_into_loads():
    def body(g, x, y):
        t = g.call_method("transpose", (x, 0, 1))
        s = g.call_function(operator.getitem, (t, (slice(1, None, 2), None, Ellipsis)))
        v = g.call_method("reshape", (y, (3, 1, 4)))
        e = g.call_method("expand", (v, 3, 5, 4))
        a = g.call_function(operator.add, (s, e))
        p = g.call_method("permute", (a, 2, 0, 1))
        return g.call_function(ember.sin, (p,))

    _, kernels = check(build(2, body), [ember.randn(4, 7), ember.randn(12)])
    assert kernels == 1


def test_non_contiguous_inputs():
    gm = build(
        2, lambda g, x, y: g.call_function(operator.mul, (g.call_function(ember.exp, (x,)), y))
    )
    x = ember.randn(6, 8).t()
    y = ember.randn(8, 12)[:, ::2]
    check(gm, [x, y])


def test_view_outputs_alias_like_eager():
    gm = build(1, lambda g, x: (g.call_method("t", (x,)), g.call_method("view", (x, -1))))
    x = ember.randn(3, 4)
    fn = compile_fx(gm, [x])
    t, v = fn(x)
    x.add_(1)  # eager views see the change; so must compiled ones
    np.testing.assert_allclose(t.numpy(), x.t().numpy())
    np.testing.assert_allclose(v.numpy(), x.reshape(-1).numpy())


def test_reshape_of_transposed_expression():
    # not expressible as a strided view: computed first, then viewed
    gm = build(
        1,
        lambda g, x: g.call_method(
            "view",
            (
                g.call_method(
                    "contiguous", (g.call_method("t", (g.call_function(ember.exp, (x,)),)),)
                ),
                -1,
            ),
        ),
    )
    check(gm, [ember.randn(3, 5)])


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("sum", {"dim": 1}),
        ("sum", {"dim": (0, 2), "keepdim": True}),
        ("mean", {}),
        ("amax", {"dim": -1}),
        ("amin", {"dim": 0}),
        ("var", {"dim": 1}),
        ("std", {"dim": 2, "correction": 0}),
        ("logsumexp", {"dim": 1}),
    ],
)
def test_reductions_fuse_their_producers(name, kwargs):
    def body(g, x, y):
        p = g.call_function(ember.sigmoid, (g.call_function(operator.mul, (x, y)),))
        return g.call_function(getattr(ember, name), (p,), kwargs)

    _, kernels = check(build(2, body), [ember.randn(4, 6, 5), ember.randn(6, 1)])
    assert kernels == 1  # the producer is inside the reduction kernel


@pytest.mark.parametrize("fname", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax_fuses_producer(fname, dim):
    def body(g, x):
        s = g.call_function(operator.mul, (x, 0.5))
        return g.call_function(getattr(F, fname), (s,), {"dim": dim})

    _, kernels = check(build(1, body), [ember.randn(5, 7, 3)])
    assert kernels == 1


def test_layer_norm_and_mse_and_cross_entropy():
    def body(g, x, w, b, t, c):
        h = g.call_function(F.gelu, (g.call_function(operator.add, (x, 1.0)),))
        ln = g.call_function(F.layer_norm, (h, (8,), w, b))
        mse = g.call_function(F.mse_loss, (ln, t))
        ce = g.call_function(F.cross_entropy, (ln, c))
        return ln, mse, ce

    xs = [
        ember.randn(6, 8),
        ember.randn(8),
        ember.randn(8),
        ember.randn(6, 8),
        ember.tensor([1, 0, 7, 3, 3, 2]),
    ]
    _, kernels = check(build(5, body), xs)
    assert kernels == 3  # layer_norm (with add+gelu inside), mse, log_softmax


def test_linear_bias_activation_epilogue():
    lin = ember.nn.Linear(16, 24)
    root = ember.nn.Module()
    root.lin = lin

    def body(g, x):
        h = g.call_function(F.linear, (x, g.get_attr("lin.weight"), g.get_attr("lin.bias")))
        return g.call_function(F.relu, (h,))

    gm = build(1, body, root)
    with ember.no_grad():
        fn, kernels = check(gm, [ember.randn(5, 16)])
    assert kernels == 1
    assert "+" in fn.kernels[0] and "?" in fn.kernels[0]  # bias add and relu in one loop


def test_conv_bias_batchnorm_relu_epilogue():
    conv, bn = ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4)
    bn.eval()
    bn.running_mean.copy_(ember.randn(4))
    bn.running_var.copy_(ember.rand(4) + 0.5)
    root = ember.nn.Module()
    root.conv, root.bn = conv, bn

    def body(g, x):
        h = g.call_function(F.conv2d, (x, g.get_attr("conv.weight"), g.get_attr("conv.bias")))
        a = [g.get_attr(f"bn.{n}") for n in ("running_mean", "running_var", "weight", "bias")]
        h = g.call_function(F.batch_norm, (h, *a), {"training": False})
        return g.call_function(F.relu, (h,))

    with ember.no_grad():
        _, kernels = check(build(1, body, root), [ember.randn(2, 3, 8, 8)], atol=1e-5)
    assert kernels == 1


def test_unknown_ops_run_eagerly_between_kernels():
    def body(g, x):
        a = g.call_function(ember.exp, (x,))
        s = g.call_function(ember.sort, (a,), {"dim": 1})  # not lowered: eager
        v = g.call_function(operator.getitem, (s, 0))
        c = g.call_function(ember.cumsum, (v,), {"dim": 1})
        return g.call_function(operator.mul, (c, 2.0))

    before = metrics.extern_calls
    _, kernels = check(build(1, body), [ember.randn(3, 5)])
    assert kernels == 2 and metrics.extern_calls - before == 3


def test_integer_and_half_dtypes_fall_back():
    gm = build(
        2, lambda g, x, y: g.call_function(operator.add, (g.call_function(operator.mul, (x, y)), 3))
    )
    check(gm, [ember.arange(12).reshape(3, 4), ember.arange(4)])
    check(
        gm,
        [ember.randn(3, 4).to(ember.float16), ember.randn(4).to(ember.float16)],
        rtol=1e-3,
        atol=1e-3,
    )


def test_in_place_ops_keep_eager_order():
    def body(g, x, y):
        a = g.call_function(operator.mul, (x, 2.0))  # reads x before the in-place change
        b = g.call_method("add_", (x, y))
        c = g.call_function(operator.add, (a, x))  # reads x after it
        d = g.call_method("relu_", (c,))
        return g.call_function(operator.mul, (d, b))

    gm = build(2, body)
    x, y = ember.randn(4, 5), ember.randn(5)
    fn = compile_fx(gm, [x.clone(), y])
    x1, x2 = x.clone(), x.clone()
    got, want = fn(x1, y), gm(x2, y)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x1.numpy(), x2.numpy())  # the input was mutated the same way


def test_random_ops_keep_the_random_stream():
    def body(g, x):
        d = g.call_function(
            F.dropout, (g.call_function(ember.exp, (x,)),), {"p": 0.5, "training": True}
        )
        return g.call_function(operator.add, (d, 1.0))

    gm = build(1, body)
    x = ember.randn(50)
    fn = compile_fx(gm, [x])
    ember.manual_seed(3)
    got = fn(x)
    ember.manual_seed(3)
    want = gm(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_memory_planning_reuses_buffers():
    def body(g, x, y):
        a = g.call_function(ember.exp, (g.call_function(operator.mul, (x, y)),))
        s = g.call_function(ember.sum, (a,), {"dim": 1, "keepdim": True})  # a is shared: realized
        b = g.call_function(operator.sub, (a, s))
        t = g.call_function(ember.amax, (b,), {"dim": 1, "keepdim": True})
        c = g.call_function(operator.mul, (b, t))
        u = g.call_function(ember.amin, (c,), {"dim": 0})
        return g.call_function(operator.add, (c, u))

    before = metrics.buffers_reused
    check(build(2, body), [ember.randn(8, 16), ember.randn(8, 16)])
    assert metrics.buffers_reused > before


def test_new_input_shape_compiles_a_new_plan():
    gm = build(2, chain)
    fn = compile_fx(gm, [ember.randn(4, 3), ember.randn(4, 3)])
    for shape in [(4, 3), (7, 2), (5,)]:
        xs = [ember.randn(*shape), ember.randn(*shape)]
        np.testing.assert_allclose(fn(*xs).numpy(), gm(*xs).numpy(), rtol=1e-5, atol=1e-6)
    assert len(fn.plans) == 3


# ---------------------------------------------------------------------------- autograd


def _mlp_graph():
    root = ember.nn.Module()
    root.fc1, root.ln, root.fc2 = (
        ember.nn.Linear(6, 10),
        ember.nn.LayerNorm(10),
        ember.nn.Linear(10, 3),
    )

    def body(g, x):
        h = g.call_function(F.linear, (x, g.get_attr("fc1.weight"), g.get_attr("fc1.bias")))
        h = g.call_function(F.gelu, (h,))
        h = g.call_function(
            F.layer_norm, (h, (10,), g.get_attr("ln.weight"), g.get_attr("ln.bias"))
        )
        h = g.call_function(F.linear, (h, g.get_attr("fc2.weight"), g.get_attr("fc2.bias")))
        return g.call_function(F.softmax, (h,), {"dim": -1})

    return build(1, body, root), root


def test_backward_through_fused_kernels_matches_eager():
    gm, root = _mlp_graph()
    x = ember.randn(4, 6, requires_grad=True)
    fn = compile_fx(gm, [x])
    w = ember.randn(4, 3)
    (fn(x) * w).sum().backward()
    got = [x.grad.clone()] + [p.grad.clone() for p in root.parameters()]
    x.grad = None
    root.zero_grad()
    (gm(x) * w).sum().backward()
    want = [x.grad] + [p.grad for p in root.parameters()]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("which", ["chain", "reduce", "views"])
def test_gradcheck_float64(which):
    if which == "chain":
        gm, shapes = build(2, chain), [(3, 4), (4,)]
    elif which == "reduce":

        def body(g, x, y):
            p = g.call_function(ember.tanh, (g.call_function(operator.mul, (x, y)),))
            v = g.call_function(ember.var, (p,), {"dim": 1, "keepdim": True})
            s = g.call_function(F.log_softmax, (p,), {"dim": 0})
            return g.call_function(operator.add, (s, v))

        gm, shapes = build(2, body), [(3, 4), (3, 1)]
    else:

        def body(g, x, y):
            t = g.call_method("t", (x,))
            e = g.call_method("expand", (y, 4, 3))
            return g.call_function(ember.sin, (g.call_function(operator.mul, (t, e)),))

        gm, shapes = build(2, body), [(3, 4), (3,)]
    xs = [ember.randn(*s, dtype=ember.float64, requires_grad=True) for s in shapes]
    fn = compile_fx(gm, xs)
    assert ember.autograd.gradcheck(lambda *a: fn(*a), tuple(xs))


def test_no_grad_mode_records_nothing():
    gm = build(2, chain)
    xs = [ember.randn(3, 4, requires_grad=True), ember.randn(3, 4)]
    fn = compile_fx(gm, xs)
    with ember.no_grad():
        out = fn(*xs)
    assert not out.requires_grad
    assert fn(*xs).requires_grad


def _many_ops(x, y, b):
    t = ember.sigmoid(x * 1.5 + y) * x - 0.5
    u = F.gelu(ember.relu(t) * y + b) + F.silu(x) / (y.abs() + 1)
    u = ember.where(x > 0, u, ember.tanh(u)) + F.leaky_relu(x, 0.2) + F.softplus(y)
    u = u + ember.clamp(x, -0.5, 0.5) + F.hardswish(x) + F.elu(y) + ember.lerp(x, y, 0.3)
    return u * ember.exp(u * 0.1) + ember.addcmul(x, y, b, value=0.5) + ember.rsqrt(y * y + 1)


def test_generated_backward_kernels_gradcheck():
    gm = fx.symbolic_trace(_many_ops)
    xs = [ember.randn(3, 4, dtype=ember.float64, requires_grad=True) for _ in range(2)]
    xs.append(ember.randn(4, dtype=ember.float64, requires_grad=True))  # broadcast: summed
    before = metrics.backward_kernels
    fn = compile_fx(gm, xs)
    assert metrics.backward_kernels > before  # the backward is generated code, not eager replay
    assert ember.autograd.gradcheck(lambda *a: fn(*a), tuple(xs))


def test_generated_backward_matches_eager_float32():
    gm = fx.symbolic_trace(_many_ops)
    xs = [ember.randn(30, 40, requires_grad=True), ember.randn(30, 40), ember.randn(40)]
    xs[2].requires_grad_()  # y needs no gradient: only x's and b's are computed
    fn = compile_fx(gm, xs)
    g = ember.randn(30, 40)
    want = ember.autograd.grad(gm(*xs), [xs[0], xs[2]], g)
    got = ember.autograd.grad(fn(*xs), [xs[0], xs[2]], g)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


ACTIVATIONS = [
    (F.gelu, {}),
    (F.gelu, {"approximate": "tanh"}),
    (F.silu, {}),
    (F.mish, {}),
    (F.softplus, {"beta": 2.0, "threshold": 5.0}),
    (F.elu, {"alpha": 0.7}),
    (F.selu, {}),
    (F.celu, {"alpha": 1.3}),
    (F.leaky_relu, {"negative_slope": 0.2}),
    (F.hardtanh, {"min_val": -0.5, "max_val": 2.0}),
    (F.relu6, {}),
    (F.hardsigmoid, {}),
    (F.hardswish, {}),
    (F.softsign, {}),
    (F.tanhshrink, {}),
    (F.logsigmoid, {}),
    (F.threshold, {"threshold": 0.3, "value": -2.0}),
    (F.sigmoid, {}),
    (F.tanh, {}),
]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("fn,kwargs", ACTIVATIONS, ids=lambda a: getattr(a, "__name__", str(a)))
def test_activation_lowerings(fn, kwargs, dtype):
    gm = build(
        1, lambda g, x: g.call_function(fn, (g.call_function(operator.mul, (x, 1.0)),), kwargs)
    )
    x = ember.linspace(-7, 7, 141, dtype=dtype)
    x = ember.cat([x, ember.tensor([float("nan"), float("inf"), -float("inf"), 0.0], dtype=dtype)])
    before = metrics.kernels_generated
    fn_c = compile_fx(gm, [x])
    assert metrics.kernels_generated - before == 1
    got, want = fn_c(x).numpy(), gm(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    if dtype == ember.float64:  # and the generated backward against finite differences
        xs = (ember.linspace(-3, 3, 13, dtype=dtype).add(0.01).requires_grad_(),)
        f = compile_fx(gm, list(xs))
        assert ember.autograd.gradcheck(lambda a: f(a), xs)


@pytest.mark.parametrize(
    "f",
    [
        lambda x: x.amax(0),
        lambda x: x.amin(1),
        lambda x: F.softmax(x * 2, 1),
        lambda x: F.log_softmax(x, 0),
        lambda x: x.sum(0),
        lambda x: ember.logsumexp(x, 1),
        lambda x: F.layer_norm(x, (70,)),
        lambda x: x.var(0),
    ],
)
def test_reductions_with_nan_and_inf_rows(f):
    x = ember.randn(5, 70)
    x[1, 3], x[2, 5] = float("nan"), float("inf")
    x[3, :] = -float("inf")
    got = compile_fx(fx.symbolic_trace(f), [x])(x).numpy()
    np.testing.assert_allclose(got, f(x).numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)


SPECIAL_BINARY = {
    "maximum": lambda x, y: ember.maximum(x, y),
    "minimum": lambda x, y: ember.minimum(x, y),
    "clamp_tensor": lambda x, y: ember.clamp(x, min=y),
    "pow": lambda x, y: ember.pow(x, y),
    "fmod": lambda x, y: ember.fmod(x, y),
    "div": lambda x, y: x / y,
    "atan2": lambda x, y: ember.atan2(x, y),
    "relu_sign": lambda x, y: ember.relu(x) + y.sign(),
    "lerp": lambda x, y: ember.lerp(x, y, 0.7),
    "sqrt_rsqrt": lambda x, y: x.sqrt() + y.rsqrt(),
    "where_ge": lambda x, y: ember.where(x >= y, x, y),
    "round_frac": lambda x, y: (x * 2.5).round() + (y * 1.5).frac(),
    "addcdiv": lambda x, y: ember.addcdiv(x, y, x, value=0.5),
}


@pytest.mark.parametrize("name", SPECIAL_BINARY)
def test_pointwise_with_nan_inf_and_signed_zero(name):
    f = SPECIAL_BINARY[name]
    nan, inf = float("nan"), float("inf")
    x = ember.tensor([1.0, nan, -2.0, 0.0, inf, -inf, 3.0, -0.0, 2.0])
    y = ember.tensor([nan, 1.0, -2.0, 0.0, 2.0, inf, -3.0, 0.0, -inf])
    got = compile_fx(fx.symbolic_trace(f), [x, y])(x, y).numpy()
    np.testing.assert_allclose(got, f(x, y).numpy(), rtol=1e-6, equal_nan=True)


def test_pointwise_epilogue_fuses_into_softmax_and_layer_norm():
    w = ember.randn(6, 70)

    def f(x):
        s = F.softmax(x * 2, 1) * w + 1
        return F.gelu(F.layer_norm(s.tanh(), (70,))) * w

    before = metrics.epilogues_fused
    fn, kernels = check(fx.symbolic_trace(f), [ember.randn(6, 70)], atol=2e-5)
    # softmax; then layer_norm with `* w + 1` and tanh as its prologue and gelu, * w as epilogue
    assert kernels == 2 and metrics.epilogues_fused - before == 1
    x = ember.randn(6, 70, dtype=ember.float64, requires_grad=True)
    w = w.double()
    g = compile_fx(fx.symbolic_trace(f), [x])
    assert ember.autograd.gradcheck(lambda a: g(a), (x,))


def test_no_epilogue_when_the_result_is_shared_or_an_eager_call_intervenes():
    def shared(x):
        s = F.softmax(x, 1)
        return s * 2, s  # s is an output: stored as is

    def intervening(x, y):
        s = F.log_softmax(x, 1)
        y.add_(1)  # eager, in place, between the softmax and its consumer
        return s + y

    before = metrics.epilogues_fused
    check(fx.symbolic_trace(shared), [ember.randn(3, 5)])
    gm = fx.symbolic_trace(intervening)
    x, y = ember.randn(3, 5), ember.randn(3, 5)
    got = compile_fx(gm, [x, y.clone()])(x, y.clone())
    np.testing.assert_allclose(got.numpy(), gm(x, y.clone()).numpy(), rtol=1e-6)
    assert metrics.epilogues_fused == before
