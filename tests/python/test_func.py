"""ember.func (vmap, grad, jacrev, hessian, vjp, jvp, functional_call) and
ember.autograd.functional against torch 2.13."""

import numpy as np
import pytest
from _breadth_util import check, check_raises, rand

import ember


def T(m, a, dt="float64"):
    return m.tensor(np.asarray(a).tolist(), dtype=getattr(m, dt))


X = rand(3)
M = rand(3, 3, seed=1)


def f(x):
    return (x.sin() * x).sum()


def g(m):
    return lambda x, y: (x * y.exp()).sum() + (x**3).sum()


CASES = {
    "vmap": lambda m: [
        m.func.vmap(lambda r: r.sum() * r)(T(m, M)),
        m.vmap(lambda a, b: a @ b, in_dims=(0, None))(T(m, rand(4, 3)), T(m, M)),
        m.func.vmap(lambda r: (r.max(), r.min()), out_dims=(0, 0))(T(m, M)),
        m.vmap(lambda r: r * 2, in_dims=1, out_dims=1)(T(m, rand(2, 5))),
    ],
    "vmap_nested": lambda m: m.vmap(m.vmap(lambda a, b: a * b))(T(m, M), T(m, M)),
    "grad": lambda m: [
        m.func.grad(f)(T(m, X)),
        m.func.grad(g(m), argnums=(0, 1))(T(m, X), T(m, X)),
    ],
    "grad_and_value": lambda m: list(m.func.grad_and_value(f)(T(m, X))),
    "grad_aux": lambda m: list(m.func.grad(lambda x: (f(x), x.cos()), has_aux=True)(T(m, X))),
    "grad_of_grad": lambda m: m.func.grad(lambda x: m.func.grad(f)(x).sum())(T(m, X)),
    "jacrev": lambda m: [
        m.func.jacrev(lambda x: x.sin() * x.sum())(T(m, X)),
        m.func.jacfwd(lambda x: T(m, M) @ x)(T(m, X)),
    ],
    "hessian": lambda m: m.func.hessian(f)(T(m, X)),
    "vjp": lambda m: list(m.func.vjp(lambda x: x.exp() * 2, T(m, X))[1](T(m, [1.0, 2.0, 3.0]))),
    "jvp": lambda m: list(m.func.jvp(lambda x: x.exp() * x, (T(m, X),), (T(m, [1.0, 0.5, -1.0]),))),
    "vmap_grad": lambda m: m.vmap(m.func.grad(f))(T(m, M)),
    "af_jacobian": lambda m: [
        m.autograd.functional.jacobian(lambda x: x.exp() @ T(m, M), T(m, X)),
        m.autograd.functional.jacobian(lambda x, y: (x * y, x + y), (T(m, X), T(m, X))),
    ],
    "af_hessian": lambda m: [
        m.autograd.functional.hessian(f, T(m, X)),
        m.autograd.functional.hessian(lambda x, y: (x * y.sin()).sum(), (T(m, X), T(m, X))),
    ],
    "af_vjp_jvp": lambda m: [
        m.autograd.functional.vjp(lambda x: x**2, T(m, X), T(m, [1.0, 1.0, 2.0])),
        m.autograd.functional.vjp(f, T(m, X)),
        m.autograd.functional.jvp(lambda x: x**2, T(m, X), T(m, [1.0, 1.0, 2.0])),
    ],
    "af_hvp": lambda m: [
        m.autograd.functional.hvp(f, T(m, X), T(m, [1.0, 0.0, 2.0])),
        m.autograd.functional.vhp(f, T(m, X), T(m, [1.0, 0.0, 2.0])),
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(torch, name):
    check(torch, CASES[name], rtol=1e-6, atol=1e-9)


def test_grad_results_are_plain_tensors():
    out = ember.func.grad(f)(ember.tensor(X))
    assert not out.requires_grad


def _functional_call(m):
    m.manual_seed(0)
    lin = m.nn.Sequential(m.nn.Linear(3, 2), m.nn.BatchNorm1d(2))
    params = {"0.weight": T(m, rand(2, 3), "float32"), "0.bias": T(m, [1.0, -1.0], "float32")}
    x = T(m, rand(4, 3, seed=3), "float32")
    out = m.func.functional_call(lin, params, (x,))
    after = lin[0].weight.detach().clone()  # the module's own parameters are back
    lin.eval()
    bufs = {"1.running_mean": T(m, [0.5, 0.5], "float32")}
    out2 = m.func.functional_call(lin, (params, bufs), x)
    return [out, tuple(after.shape), out2, lin[1].running_mean]


def test_functional_call(torch):
    check(torch, _functional_call, rtol=1e-5, atol=1e-6)


def test_functional_call_gradients_reach_the_given_tensors():
    lin = ember.nn.Linear(3, 1)
    w = ember.tensor(rand(1, 3), dtype=ember.float32, requires_grad=True)
    ember.func.functional_call(lin, {"weight": w}, ember.ones(2, 3)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[2.0, 2.0, 2.0]])
    assert lin.weight.grad is None


ERRORS = {
    "vmap_sizes": lambda m: m.vmap(lambda a, b: a + b)(T(m, rand(2, 3)), T(m, rand(3, 3))),
    "vmap_no_tensor": lambda m: m.vmap(lambda a: a, in_dims=(None,))(T(m, X)),
    "grad_not_scalar": lambda m: m.func.grad(lambda x: x * 2)(T(m, X)),
    "hessian_not_scalar": lambda m: m.autograd.functional.hessian(lambda x: x * 2, T(m, X)),
    "functional_call_dup": lambda m: m.func.functional_call(
        m.nn.Linear(1, 1),
        ({"weight": T(m, [[1.0]], "float32")}, {"weight": T(m, [[1.0]], "float32")}),
        T(m, [[1.0]], "float32"),
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    check_raises(torch, ERRORS[name])


def test_transform_results_stay_differentiable_for_tensors_func_reads():
    # torch's grad/vjp/jacrev results carry the enclosing graph of a tensor that func reads
    # from a closure or a module (a CNF's divergence, a Gauss-Newton Jacobian); the reference
    # is plain autograd with create_graph.
    w = ember.tensor([[0.5, -0.3], [0.2, 0.7]], dtype=ember.float64, requires_grad=True)
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)

    def energy(z):
        return ember.tanh(w @ z).sum()

    def d_dw(out):
        return ember.autograd.grad(out.sum(), w, retain_graph=True)[0]

    xr = x.clone().requires_grad_()
    (g_ref,) = ember.autograd.grad(energy(xr), xr, create_graph=True)
    expected = {"grad": d_dw(g_ref)}
    got = {
        "grad": d_dw(ember.func.grad(energy)(x)),
        "jacrev": d_dw(ember.func.jacrev(lambda z: ember.tanh(w @ z))(x).sum(0)),
        "vjp": d_dw(ember.func.vjp(lambda z: ember.tanh(w @ z), x)[1](ember.ones(2))[0]),
        "vmap_grad": d_dw(ember.func.vmap(ember.func.grad(energy))(ember.stack([x, x]))) / 2,
    }
    expected["jacrev"] = expected["vjp"] = expected["vmap_grad"] = expected["grad"]
    for name, value in got.items():
        np.testing.assert_allclose(value.numpy(), expected[name].numpy(), rtol=1e-12, err_msg=name)
    with ember.no_grad():
        assert not ember.func.grad(energy)(x).requires_grad
    assert not ember.func.grad(lambda z: ember.tanh(z).sum())(x).requires_grad
    assert not ember.func.hessian(lambda z: ember.tanh(z).sum())(x).requires_grad
    assert not ember.func.vjp(lambda z: z, x)[0].requires_grad


def test_per_example_gradients_reach_a_parameter_left_in_the_module():
    # The shared-weight route of per-example conv/linear gradients is first-order only: when the
    # loss also reads a module parameter outside the given dict, grad runs func again
    # differentiably, so the gradients' own gradient reaches that parameter.
    lin = ember.nn.Linear(2, 2).double()
    with ember.no_grad():
        lin.weight.copy_(ember.tensor([[0.5, -0.3], [0.2, 0.7]]))
        lin.bias.fill_(0.1)
    xs = ember.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ember.float64)

    def loss(p, xx):
        return ember.tanh(ember.func.functional_call(lin, p, (xx,))).sum()

    weight = {"weight": lin.weight.detach()}
    per_example = ember.func.vmap(ember.func.grad(loss), in_dims=(None, 0))(weight, xs)
    per_example["weight"].sum().backward()
    expected = ember.zeros(2, dtype=ember.float64)
    for xx in xs:
        wr = lin.weight.detach().requires_grad_()
        (g,) = ember.autograd.grad(
            ember.tanh(ember.nn.functional.linear(xx, wr, lin.bias)).sum(), wr, create_graph=True
        )
        expected += ember.autograd.grad(g.sum(), lin.bias)[0]
    np.testing.assert_allclose(lin.bias.grad.numpy(), expected.numpy(), rtol=1e-12)
