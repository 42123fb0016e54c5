"""ember.func, session 13: forward-over-reverse under vmap (grad/vjp of dual tensors inside vmap:
per-example Hessians and Hessian-vector products, vmap(jacfwd(grad)), jacfwd(vmap(grad)),
vmap(hessian), nested forward levels inside vmap), autograd.grad of BatchedTensors, and Python
functions captured before vmap. Values against torch.func and against numpy / finite
differences (Note [Forward-over-reverse under vmap] in ember/func/_vmap_ad.py)."""

import numpy as np
import pytest

import ember
import ember.func as func
import ember.nn.functional as F

# references taken at import, before any transform
_angle, _einsum, _empty_like = ember.angle, ember.einsum, ember.empty_like
_logdet, _conj, _real = ember.logdet, ember.conj, ember.real
_logit = ember.special.logit
_elu_, _hardtanh_, _leaky_relu_ = F.elu_, F.hardtanh_, F.leaky_relu_

RNG = np.random.default_rng(13)
X = RNG.standard_normal((3, 4))
V = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 4))


def _fns(T):
    G = T.nn.functional
    return {
        "sin_mul": lambda x, w: (x.sin() * x.exp()).sum() + (x**3).sum() * x.tanh().sum(),
        "softmax": lambda x, w: (T.softmax(x @ w, -1) * x).sum(),
        "logsumexp": lambda x, w: T.logsumexp(x * w.sum(0), 0) + (x**2).sum(),
        "mlp": lambda x, w: G.gelu(G.linear(x, w)).pow(2).sum(),
        "norm": lambda x, w: x.norm() * (w @ x).tanh().sum(),
        "cumprod": lambda x, w: (x.cumsum(0) * x.sigmoid()).prod(),
        "log_softmax": lambda x, w: -G.log_softmax(w @ x, -1)[1] + x.abs().sum(),
    }


def _compositions(T, fn):
    x, v, w = T.tensor(X), T.tensor(V), T.tensor(W)
    vmap, grad, jvp, jacfwd, jacrev = (
        T.func.vmap,
        T.func.grad,
        T.func.jvp,
        T.func.jacfwd,
        T.func.jacrev,
    )
    hessian, vjp = T.func.hessian, T.func.vjp

    def g_x(a):
        return grad(fn)(a, w)

    return {
        "vmap(hessian)": lambda: vmap(hessian(fn), in_dims=(0, None))(x, w),
        "vmap(jacfwd(grad))": lambda: vmap(jacfwd(grad(fn)), in_dims=(0, None))(x, w),
        "vmap(jacfwd(jacrev))": lambda: vmap(jacfwd(jacrev(fn)), in_dims=(0, None))(x, w),
        "vmap(jacfwd(jacfwd))": lambda: vmap(jacfwd(jacfwd(fn)), in_dims=(0, None))(x, w),
        "vmap(jacrev(jacrev))": lambda: vmap(jacrev(jacrev(fn)), in_dims=(0, None))(x, w),
        "per-sample hvp (jvp of grad)": lambda: vmap(lambda a, b: jvp(g_x, (a,), (b,))[1])(x, v),
        "vmap(jvp(grad)) primal": lambda: vmap(lambda a, b: jvp(g_x, (a,), (b,))[0])(x, v),
        "per-sample hvp (vjp of grad)": lambda: vmap(lambda a, b: vjp(g_x, a)[1](b)[0])(x, v),
        "hvp wrt an unbatched weight": lambda: vmap(
            lambda a: jvp(lambda ww: grad(fn, argnums=1)(a, ww), (w,), (T.ones_like(w),))[1]
        )(x),
        "vmap(hessian) wrt the weight": lambda: vmap(hessian(fn, argnums=1), in_dims=(0, None))(
            x, w
        ),
        "jacfwd(vmap(grad))": lambda: jacfwd(lambda xx: vmap(grad(fn), in_dims=(0, None))(xx, w))(
            x
        ),
        "jvp(vmap(grad))": lambda: jvp(
            lambda xx: vmap(grad(fn), in_dims=(0, None))(xx, w), (x,), (v,)
        )[1],
        "vmap(grad(grad))": lambda: vmap(grad(lambda a: g_x(a).sin().sum()))(x),
        # a forward level outside the vmap and one inside it
        "jvp(vmap(hessian))": lambda: jvp(
            lambda xx: vmap(hessian(fn), in_dims=(0, None))(xx, w), (x,), (v,)
        )[1],
        "jvp(vmap(jvp(grad)))": lambda: jvp(
            lambda xx: vmap(lambda a, b: jvp(g_x, (a,), (b,))[1])(xx, v), (x,), (v,)
        )[1],
        "jacfwd(vmap(hessian))": lambda: jacfwd(
            lambda xx: vmap(hessian(fn), in_dims=(0, None))(xx, w).sum(0)
        )(x[:2]),
    }


def _case_ids():
    names = list(_fns(ember))
    comps = list(_compositions(ember, _fns(ember)["sin_mul"]))
    return [(f, c) for f in names for c in comps]


@pytest.mark.parametrize("fname,comp", _case_ids())
def test_compositions_against_torch(fname, comp):
    torch = pytest.importorskip("torch")
    want = _compositions(torch, _fns(torch)[fname])[comp]().detach().numpy()
    got = _compositions(ember, _fns(ember)[fname])[comp]().detach().numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8)


def _f_np_hessian(x):
    # f(x) = sum(sin(x) * x): H = diag(2 cos x - x sin x)
    return np.diag(2 * np.cos(x) - x * np.sin(x))


def _f(r):
    return (r.sin() * r).sum()


@pytest.mark.parametrize(
    "build",
    [
        lambda: func.vmap(func.hessian(_f)),
        lambda: func.vmap(func.jacfwd(func.grad(_f))),
        lambda: func.vmap(func.jacfwd(func.jacrev(_f))),
        lambda: func.vmap(func.jacfwd(func.jacfwd(_f))),
    ],
    ids=["hessian", "jacfwd_grad", "jacfwd_jacrev", "jacfwd_jacfwd"],
)
def test_per_example_hessians_against_numpy(build):
    got = build()(ember.tensor(X)).numpy()
    for i in range(X.shape[0]):
        np.testing.assert_allclose(got[i], _f_np_hessian(X[i]), rtol=1e-10, atol=1e-10)


def test_jvp_of_vmapped_jvp_against_numpy():
    # a forward level outside vmap and one inside: d/dx (f''(x) t) along s, f = sin^2
    t, s = ember.tensor(V), ember.ones(3, 4, dtype=ember.float64)

    def inner(a, b):
        return func.jvp(lambda c: c.sin() ** 2, (a,), (b,))[1]

    got = func.jvp(lambda xx: func.vmap(inner)(xx, t), (ember.tensor(X),), (s,))[1].numpy()
    np.testing.assert_allclose(got, 2 * np.cos(2 * X) * V, rtol=1e-12, atol=1e-12)


def test_jvp_of_vmapped_hessian_against_numpy():
    # H(x) = diag(2 cos x - x sin x); its derivative along s: diag((-3 sin x - x cos x) s)
    s = ember.tensor(V)
    got = func.jvp(lambda xx: func.vmap(func.hessian(_f))(xx), (ember.tensor(X),), (s,))[1]
    for i in range(3):
        want = np.diag((-3 * np.sin(X[i]) - X[i] * np.cos(X[i])) * V[i])
        np.testing.assert_allclose(got.numpy()[i], want, rtol=1e-10, atol=1e-10)


def test_jacfwd_of_vmapped_grad_is_block_diagonal():
    got = func.jacfwd(func.vmap(func.grad(_f)))(ember.tensor(X)).numpy()
    for i in range(3):
        for j in range(3):
            want = _f_np_hessian(X[i]) if i == j else np.zeros((4, 4))
            np.testing.assert_allclose(got[i, :, j, :], want, rtol=1e-10, atol=1e-10)


def test_per_example_hvp_against_finite_differences():
    def loss(x):
        return (x.tanh() * x.sum()).sum()

    def hvp(x, v):
        return func.jvp(func.grad(loss), (x,), (v,))[1]

    got = func.vmap(hvp)(ember.tensor(X), ember.tensor(V)).numpy()
    eps = 1e-6
    for i in range(3):
        gp = func.grad(loss)(ember.tensor(X[i] + eps * V[i])).numpy()
        gm = func.grad(loss)(ember.tensor(X[i] - eps * V[i])).numpy()
        np.testing.assert_allclose(got[i], (gp - gm) / (2 * eps), rtol=1e-6, atol=1e-6)


def test_third_order_inside_vmap():
    # d3/dx3 of sum(x^4) / 4 is diag3(6 x)
    got = func.vmap(func.jacfwd(func.hessian(lambda r: (r**4).sum() / 4)))(ember.tensor(X))
    got = got.numpy()
    for i in range(3):
        want = np.zeros((4, 4, 4))
        for k in range(4):
            want[k, k, k] = 6 * X[i, k]
        np.testing.assert_allclose(got[i], want, rtol=1e-10, atol=1e-10)


def test_autograd_grad_of_batched_tensors_raises_as_torch():
    # torch's BatchedTensor is not tracked by autograd: the batched output "does not require
    # grad" (this test asserted per-example gradients before, which torch does not give)
    x = ember.tensor(X, requires_grad=True)

    def per_example(a):
        (g,) = ember.autograd.grad((a.sin() * a).sum(), a)
        return g

    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        func.vmap(per_example)(x)


def test_autograd_grad_inside_grad_inside_vmap_gives_per_example_gradients():
    def f(a):
        (g,) = ember.autograd.grad((a.sin() * a).sum(), a, create_graph=True)
        return (g * g).sum()

    got = func.vmap(func.grad(f))(ember.tensor(X)).numpy()
    d1 = np.cos(X) * X + np.sin(X)
    d2 = 2 * np.cos(X) - np.sin(X) * X
    np.testing.assert_allclose(got, 2 * d1 * d2, rtol=1e-12)


def test_autograd_grad_wrt_an_unbatched_weight_raises_as_torch():
    w = ember.tensor(W, requires_grad=True)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        func.vmap(lambda a: ember.autograd.grad((a @ w).sum(), w)[0])(ember.tensor(X))


_CAPTURED = {
    "angle": (lambda a: _angle(a), lambda t: t.angle()),
    "einsum": (lambda a: _einsum("i,i->", a, a), lambda t: (t * t).sum()),
    "einsum_sublist": (lambda a: _einsum(a, [0], a, [0], []), lambda t: (t * t).sum()),
    "empty_like": (lambda a: _empty_like(a).fill_(2.0) * a, lambda t: 2.0 * t),
    "conj": (lambda a: _conj(a) + 1, lambda t: t + 1),
    "real": (lambda a: _real(a) * 3, lambda t: t * 3),
    "logit": (lambda a: _logit(a.sigmoid()), lambda t: t),
    "elu_": (lambda a: _elu_(a.clone()), lambda t: F.elu(t)),
    "hardtanh_": (lambda a: _hardtanh_(a.clone()), lambda t: F.hardtanh(t)),
    "leaky_relu_": (lambda a: _leaky_relu_(a.clone()), lambda t: F.leaky_relu(t)),
}


@pytest.mark.parametrize("name", list(_CAPTURED))
def test_python_functions_captured_before_vmap(name):
    fn, ref = _CAPTURED[name]
    x = ember.tensor(X)
    got = func.vmap(fn)(x)
    want = ember.stack([ref(x[i]) for i in range(3)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_logdet_captured_before_vmap():
    a = ember.tensor(RNG.standard_normal((3, 4, 4)))
    spd = a @ a.transpose(-1, -2) + ember.eye(4, dtype=ember.float64)
    got = func.vmap(lambda m: _logdet(m))(spd).numpy()
    np.testing.assert_allclose(got, np.linalg.slogdet(spd.numpy())[1], rtol=1e-10)


def test_grad_through_a_captured_function_inside_vmap():
    got = func.vmap(func.grad(lambda a: (_angle(a) + a * a).sum()))(ember.tensor(X)).numpy()
    np.testing.assert_allclose(got, 2 * X, rtol=1e-12)


def _functions(T):
    class MyExp(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

        @staticmethod
        def vmap(info, in_dims, x):
            return MyExp.apply(x), in_dims[0]

    class MyCube(T.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x**3, 3 * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, g, g_dx):
            x, dx = ctx.saved_tensors
            return g * dx + g_dx * 6 * x

    class NoRule(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return MyExp, MyCube, NoRule


def _function_programs(T):
    MyExp, MyCube, _ = _functions(T)
    F = T.func
    x = T.tensor(X)
    cube = lambda q: MyCube.apply(q)[0]  # noqa: E731
    return {
        "vmap_staticmethod": lambda: F.vmap(MyExp.apply)(x),
        "vmap_in_dims_1": lambda: F.vmap(MyExp.apply, in_dims=1)(x),
        "vmap_vmap": lambda: F.vmap(F.vmap(MyExp.apply))(x),
        "vmap_grad": lambda: F.vmap(F.grad(lambda r: MyExp.apply(r).sum()))(x),
        "grad_vmap": lambda: F.grad(lambda r: F.vmap(MyExp.apply)(r).sum())(x),
        "generated": lambda: F.vmap(cube)(x),
        "generated_grad": lambda: F.vmap(F.grad(lambda r: cube(r).sum()))(x),
        "generated_grad_grad": lambda: F.vmap(
            F.grad(lambda q: F.grad(lambda r: cube(r).sum())(q).sum())
        )(x),
        "generated_jacrev": lambda: F.vmap(F.jacrev(cube))(x),
        "grad_vmap_generated": lambda: F.grad(lambda r: F.vmap(cube)(r).sum())(x),
    }


@pytest.mark.parametrize("name", list(_function_programs(ember)))
def test_autograd_function_under_vmap(name):
    got = _function_programs(ember)[name]().numpy()
    if name.startswith(("vmap_", "grad_vmap")) and "generated" not in name:
        want = np.exp(X)  # exp and its gradient
        if name == "vmap_in_dims_1":
            want = np.exp(X).T
    elif name in ("generated", "generated_jacrev"):
        want = X**3 if name == "generated" else np.stack([np.diag(3 * r**2) for r in X])
    elif name == "generated_grad_grad":
        want = 6 * X
    else:
        want = 3 * X**2
    np.testing.assert_allclose(got, want, rtol=1e-10)
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(got, _function_programs(torch)[name]().detach().numpy(), rtol=1e-10)


def test_autograd_function_without_a_vmap_rule_raises_as_torch():
    _, _, NoRule = _functions(ember)
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        func.vmap(NoRule.apply)(ember.tensor(X))


def test_hessian_of_a_dict_of_parameters_inside_and_outside_vmap():
    w0, b0 = RNG.standard_normal((1, 3)), RNG.standard_normal(1)
    xs = RNG.standard_normal((4, 3))

    def run(T, batched):
        lin = T.nn.Linear(3, 1).double()
        params = {"weight": T.tensor(w0), "bias": T.tensor(b0)}

        def loss(p, xi):
            return T.func.functional_call(lin, p, (xi,)).tanh().pow(2).sum()

        if batched:
            h = T.func.vmap(T.func.hessian(loss), in_dims=(None, 0))(params, T.tensor(xs))
        else:
            h = T.func.hessian(loss)(params, T.tensor(xs[0]))
        return [h[a][b].detach().numpy() for a in sorted(h) for b in sorted(h[a])]

    for batched in (False, True):
        got = run(ember, batched)
        # numpy: loss = tanh(u)^2, u = w.x + b; d2/du2 = 2 (1 - t^2)(1 - 3 t^2)
        for k, x in enumerate(xs if batched else xs[:1]):
            t = np.tanh(w0 @ x + b0)[0]
            c = 2 * (1 - t**2) * (1 - 3 * t**2)
            bb, bw, wb, ww = (g[k] if batched else g for g in got)
            np.testing.assert_allclose(bb.reshape(()), c, rtol=1e-10)
            np.testing.assert_allclose(ww.reshape(3, 3), c * np.outer(x, x), rtol=1e-10)
            np.testing.assert_allclose(bw.reshape(3), c * x, rtol=1e-10)
            np.testing.assert_allclose(wb.reshape(3), c * x, rtol=1e-10)


@pytest.mark.parametrize("training", [False, True])
def test_per_example_gradients_through_batch_norm_affine(training):
    # grad inside vmap expands the affine parameters over the batch: the rule applies them after
    # normalizing (per-example batch statistics in training mode, running ones in eval mode)
    x = RNG.standard_normal((5, 2, 4))
    w, b = RNG.standard_normal(4), RNG.standard_normal(4)
    rm, rv = RNG.standard_normal(4), RNG.random(4) + 0.5

    def run(T):
        G = T.nn.functional

        def loss(xi, ww, bb):
            stats = (None, None) if training else (T.tensor(rm), T.tensor(rv))
            out = G.batch_norm(xi, *stats, ww, bb, training)
            return (out**2 * T.arange(4.0, dtype=T.float64)).sum()

        g = T.func.vmap(T.func.grad(loss, argnums=(1, 2)), in_dims=(0, None, None))
        return [t.numpy() for t in g(T.tensor(x), T.tensor(w), T.tensor(b))]

    got = run(ember)
    # numpy reference for the bias gradient: d/db sum(c * out^2) = 2 c sum_n out
    for i in range(5):
        xi = x[i]
        if training:
            mean, var = xi.mean(0), xi.var(0)
        else:
            mean, var = rm, rv
        out = (xi - mean) / np.sqrt(var + 1e-5) * w + b
        np.testing.assert_allclose(got[1][i], 2 * np.arange(4.0) * out.sum(0), rtol=1e-8)
    torch = pytest.importorskip("torch")
    for g, t in zip(got, run(torch)):
        np.testing.assert_allclose(g, t, rtol=1e-8, atol=1e-10)


def test_batch_norm_of_one_value_per_channel_raises_value_error_inside_vmap():
    x = ember.tensor(RNG.standard_normal((3, 1, 4)))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        func.vmap(lambda r: F.batch_norm(r, None, None, training=True))(x)


@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": -2}])
def test_glu_under_vmap_halves_the_dimension_glu_does(kwargs):
    # the rule defaulted to dim 0 where F.glu halves the last dimension (a silently wrong shape)
    x = ember.tensor(RNG.standard_normal((3, 4, 6)))
    got = func.vmap(lambda t: F.glu(t, **kwargs))(x)
    want = ember.stack([F.glu(x[i], **kwargs) for i in range(3)])
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
