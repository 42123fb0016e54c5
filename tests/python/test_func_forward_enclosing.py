"""Forward-mode transforms keep the enclosing autograd graph (Note [Enclosing graph]): jvp,
jacfwd, hessian and their compositions with vmap/jacrev/functional_call give results whose
gradient reaches the tensors func reads from a closure or a module, as torch's do (a CNF's
divergence, a physics-informed loss). Each scenario runs under ember and torch on the same data;
values and the parameters' .grad after backward are compared. Without torch, the gradients are
compared with ember's own reverse-mode reference (autograd.functional with create_graph)."""

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(7)
W1 = RNG.standard_normal((4, 3))
B1 = RNG.standard_normal(4)
W2 = RNG.standard_normal((2, 4))
X = RNG.standard_normal(3)
XS = RNG.standard_normal((5, 3))
V = RNG.standard_normal(3)


def _params(M):
    return [
        M.tensor(a, dtype=M.float64, requires_grad=True) for a in (W1, B1, W2)
    ]  # closure parameters


def _net(M, params):
    w1, b1, w2 = params

    def f(z):  # R^3 -> R^2
        return w2 @ M.tanh(w1 @ z + b1)

    return f


def _energy(M, params):
    f = _net(M, params)
    return lambda z: (f(z) ** 2).sum() + M.sin(f(z)).sum()


def _x(M, a=X):
    return M.tensor(a, dtype=M.float64)


SCENARIOS = {
    "jvp": lambda M, F, p: F.jvp(_net(M, p), (_x(M),), (_x(M, V),))[1],
    "jvp_primal_and_tangent": lambda M, F, p: ember_sum(F.jvp(_net(M, p), (_x(M),), (_x(M, V),))),
    "jacfwd": lambda M, F, p: F.jacfwd(_net(M, p))(_x(M)),
    "hessian": lambda M, F, p: F.hessian(_energy(M, p))(_x(M)),
    "jacrev_of_jacfwd": lambda M, F, p: F.jacrev(F.jacfwd(_net(M, p)))(_x(M)),
    "jacfwd_of_jacrev": lambda M, F, p: F.jacfwd(F.jacrev(_net(M, p)))(_x(M)),
    "jacfwd_of_jacfwd": lambda M, F, p: F.jacfwd(F.jacfwd(_net(M, p)))(_x(M)),
    "vmap_jacfwd": lambda M, F, p: F.vmap(F.jacfwd(_net(M, p)))(_x(M, XS)),
    "vmap_hessian": lambda M, F, p: F.vmap(F.hessian(_energy(M, p)))(_x(M, XS)),
    "jvp_of_grad": lambda M, F, p: F.jvp(F.grad(_energy(M, p)), (_x(M),), (_x(M, V),))[1],
    "jvp_has_aux": lambda M, F, p: F.jvp(
        lambda z: (_net(M, p)(z), p[1] * 2), (_x(M),), (_x(M, V),), has_aux=True
    )[1],
    # a CNF's exact divergence: the trace of the Jacobian of the dynamics, per sample
    "cnf_divergence": lambda M, F, p: F.vmap(lambda z: M.trace(F.jacfwd(_square(M, p))(z)))(
        _x(M, XS[:, :2])
    ),
}


def _square(M, p):  # R^2 -> R^2
    f = _net(M, p)
    return lambda z: f(M.cat([z, z[:1]]))


def ember_sum(outs):
    return outs[0].sum() + outs[1].sum()


def _run(M, name):
    p = _params(M)
    out = SCENARIOS[name](M, M.func, p)
    (out * out).sum().backward()
    return out.detach().numpy(), [q.grad.numpy() for q in p]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_gradients_reach_closure_parameters_as_torch(torch, name):
    value, grads = _run(ember, name)
    ref_value, ref_grads = _run(torch, name)
    np.testing.assert_allclose(value, ref_value, rtol=1e-9, atol=1e-10)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g, r, rtol=1e-8, atol=1e-10)


def test_jacfwd_and_hessian_gradients_equal_reverse_mode():
    af = ember.autograd.functional
    for fwd, rev in (
        (
            lambda p: ember.func.jacfwd(_net(ember, p))(_x(ember)),
            lambda p: af.jacobian(_net(ember, p), _x(ember), create_graph=True),
        ),
        (
            lambda p: ember.func.hessian(_energy(ember, p))(_x(ember)),
            lambda p: af.hessian(_energy(ember, p), _x(ember), create_graph=True),
        ),
    ):
        got, want = _params(ember), _params(ember)
        out, ref = fwd(got), rev(want)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
        (out.sin().sum()).backward()
        (ref.sin().sum()).backward()
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_results_without_an_enclosing_graph_stay_detached():
    x = _x(ember)
    p = [t.detach() for t in _params(ember)]
    assert not ember.func.jacfwd(_net(ember, p))(x).requires_grad
    assert not ember.func.jvp(_net(ember, p), (x,), (x,))[1].requires_grad
    assert not ember.func.hessian(_energy(ember, p))(x).requires_grad
    assert not ember.func.hessian(lambda z: ember.tanh(z).sum())(x).requires_grad
    with ember.no_grad():
        assert not ember.func.jacfwd(_net(ember, _params(ember)))(x).requires_grad


def _modules(M, seed):
    rng = np.random.default_rng(seed)
    M.manual_seed(0)
    model = M.nn.Sequential(M.nn.Linear(3, 8), M.nn.Tanh(), M.nn.Linear(8, 3)).double()
    with M.no_grad():
        for q in model.parameters():
            q.copy_(M.tensor(rng.standard_normal(tuple(q.shape)), dtype=M.float64))
    return model


MODULE_CASES = (
    "functional_call_jacfwd_x",
    "functional_call_jacfwd_params",
    "pinn_laplacian",
    "cnf_trace",
    "jacrev_of_jacfwd_module",
)


def _module_case(M, name):
    """(value, leaves whose .grad to compare) for the usual shapes: a functional_call Jacobian
    (Gauss-Newton / NTK), a physics-informed residual from a Hessian in x, a CNF divergence
    from jacfwd of the module itself."""
    F = M.func
    model = _modules(M, 3)
    params = dict(model.named_parameters())
    leaves = list(model.parameters())

    def call(p, z):
        return F.functional_call(model, p, (z,))

    if name == "functional_call_jacfwd_x":  # the parameters go through functional_call
        return F.jacfwd(call, argnums=1)(params, _x(M)), leaves
    if name == "functional_call_jacfwd_params":  # NTK-style: detached parameters, x in a graph
        x = _x(M).requires_grad_()
        jac = F.jacfwd(call)({k: v.detach() for k, v in params.items()}, x)
        return M.cat([j.reshape(3, -1) for j in jac.values()], 1), [x]
    if name == "pinn_laplacian":
        hess = F.hessian(lambda y: model(y).sum())
        return F.vmap(lambda z: M.trace(hess(z)))(_x(M, XS)), leaves
    if name == "cnf_trace":
        return F.vmap(lambda z: M.trace(F.jacfwd(model)(z)))(_x(M, XS)), leaves
    return F.jacrev(F.jacfwd(lambda z: model(z).sum()))(_x(M)), leaves


@pytest.mark.parametrize("name", MODULE_CASES)
def test_module_transforms_backward_to_parameters_as_torch(torch, name):
    results = []
    for M in (ember, torch):
        value, leaves = _module_case(M, name)
        (value**2).sum().backward()
        grads = [None if q.grad is None else q.grad.numpy() for q in leaves]
        results.append((value.detach().numpy(), grads))
    (value, grads), (ref_value, ref_grads) = results
    np.testing.assert_allclose(value, ref_value, rtol=1e-9, atol=1e-10)
    for g, r in zip(grads, ref_grads):
        assert (g is None) == (r is None)  # the last bias does not reach a derivative
        if r is not None:
            np.testing.assert_allclose(g, r, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["jvp", "hvp", "vhp", "hessian", "jacobian"])
def test_autograd_functional_create_graph_reaches_closure_parameters(torch, name):
    def run(M):
        p = _params(M)
        af = M.autograd.functional
        f, e, x, v = _net(M, p), _energy(M, p), _x(M), _x(M, V)
        out = {
            "jvp": lambda: af.jvp(f, x, v, create_graph=True)[1],
            "hvp": lambda: af.hvp(e, x, v, create_graph=True)[1],
            "vhp": lambda: af.vhp(e, x, v, create_graph=True)[1],
            "hessian": lambda: af.hessian(e, x, create_graph=True),
            "jacobian": lambda: af.jacobian(f, x, create_graph=True),
        }[name]()
        (out**2).sum().backward()
        return out.detach().numpy(), [q.grad.numpy() for q in p]

    (value, grads), (ref_value, ref_grads) = run(ember), run(torch)
    np.testing.assert_allclose(value, ref_value, rtol=1e-10)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)


def test_jvp_api_errors_as_torch(torch):
    def message(M, fn):
        x = M.tensor([0.5, -1.0], dtype=M.float64)
        with pytest.raises(RuntimeError) as info:
            fn(M, x)
        return str(info.value)

    for fn in (
        lambda M, x: M.func.jvp(lambda z: 3, (x,), (x,)),
        lambda M, x: M.func.jvp(lambda z: z.sin(), (x,), (x,), has_aux=True),
        lambda M, x: M.func.jvp(lambda z: z, x, (x,)),
        lambda M, x: M.func.jacfwd(lambda z: z, randomness="foo")(x),
    ):
        assert message(ember, fn) == message(torch, fn)
