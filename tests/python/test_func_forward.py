"""ember.func's forward-mode transforms (jvp, jacfwd, hessian, linearize) and
ember.autograd.functional (jvp, vjp, hvp, vhp, jacobian, hessian), against torch where it is
installed and against finite differences / reverse mode otherwise."""

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember import func as efunc


def _t(shape, seed):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=ember.float64)


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(y) for y in x]
    return x.detach().numpy()


def _close(a, b, tol=1e-9):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
        return
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _to_torch(torch, x):
    if isinstance(x, (tuple, list)):
        return type(x)(_to_torch(torch, y) for y in x)
    return torch.tensor(x.numpy())


def f_vec(x):  # R^3 -> R^4
    return ember.stack([x.sin().sum(), (x * x).sum(), x.prod(), x.exp().mean()])


def f_two(a, b):
    return a.sin().sum(0) * b, a @ b.T


def f_scalar(x):
    return (x.sin() * x.exp()).sum() * x.sum()


# ----------------------------------------------------------------------------- func.jvp


def test_jvp_matches_finite_differences_and_reverse():
    x, v = _t((3,), 0), _t((3,), 1)
    out, jv = efunc.jvp(f_vec, (x,), (v,))
    _close(out, f_vec(x))
    eps = 1e-6
    fd = (f_vec(x + eps * v) - f_vec(x - eps * v)) / (2 * eps)
    _close(jv, fd, 1e-6)
    jac = efunc.jacrev(f_vec)(x)
    _close(jv, jac @ v)
    assert not jv.requires_grad and not out.requires_grad


def test_jvp_pytrees_has_aux_and_errors():
    a, b = _t((2, 3), 2), _t((4, 3), 3)
    ta, tb = _t((2, 3), 4), _t((4, 3), 5)
    out, jv = efunc.jvp(f_two, (a, b), (ta, tb))
    assert isinstance(out, tuple) and isinstance(jv, tuple) and len(jv) == 2
    eps = 1e-6
    plus, minus = f_two(a + eps * ta, b + eps * tb), f_two(a - eps * ta, b - eps * tb)
    for j, p, m in zip(jv, plus, minus):
        _close(j, (p - m) / (2 * eps), 1e-6)
    out, jv, aux = efunc.jvp(lambda x: (x.sin(), {"k": 1}), (a,), (ta,), has_aux=True)
    assert aux == {"k": 1}
    _close(jv, a.cos() * ta)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        efunc.jvp(ember.sin, a, ta)
    with pytest.raises(RuntimeError, match="same python structure"):
        efunc.jvp(f_two, (a, b), (ta,))
    with pytest.raises(RuntimeError, match="different size than that of the original"):
        efunc.jvp(lambda x: x.sin(), (a,), (tb,))


def test_jvp_of_a_bare_public_function():
    # func may be the public function itself, taken before any level existed
    x, v = _t((3,), 6), _t((3,), 7)
    _, jv = efunc.jvp(ember.sin, (x,), (v,))
    _close(jv, x.cos() * v)


def test_jvp_against_torch():
    torch = pytest.importorskip("torch")
    a, b = _t((2, 3), 8), _t((4, 3), 9)
    ta, tb = _t((2, 3), 10), _t((4, 3), 11)

    def tf(a, b):
        return a.sin().sum(0) * b, a @ b.T

    out, jv = efunc.jvp(f_two, (a, b), (ta, tb))
    tout, tjv = torch.func.jvp(tf, _to_torch(torch, (a, b)), _to_torch(torch, (ta, tb)))
    _close(out, tout)
    _close(jv, tjv)


# ----------------------------------------------------------------------------- jacfwd / hessian


def test_jacfwd_equals_jacrev_and_torch():
    x = _t((3,), 12)
    _close(efunc.jacfwd(f_vec)(x), efunc.jacrev(f_vec)(x))
    a, b = _t((2, 3), 13), _t((4, 3), 14)
    jf = efunc.jacfwd(f_two, argnums=(0, 1))(a, b)
    assert len(jf) == 2 and len(jf[0]) == 2
    assert (
        tuple(jf[0][0].shape) == (4, 3, 2, 3)
        and tuple(jf[1][0].shape) == (2, 4, 2, 3)
        and tuple(jf[1][1].shape) == (2, 4, 4, 3)
    )
    torch = pytest.importorskip("torch")

    def tf(a, b):
        return a.sin().sum(0) * b, a @ b.T

    tj = torch.func.jacfwd(tf, argnums=(0, 1))(*_to_torch(torch, (a, b)))
    _close(jf, tj)
    tj1 = torch.func.jacfwd(tf, argnums=1)(*_to_torch(torch, (a, b)))
    _close(efunc.jacfwd(f_two, argnums=1)(a, b), tj1)


def test_jacfwd_has_aux_and_randomness_argument():
    x = _t((3,), 15)
    j, aux = efunc.jacfwd(lambda x: (x.sin(), x.sum()), has_aux=True)(x)
    _close(j, ember.diag(x.cos()))
    _close(aux, x.sum())
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        efunc.jacfwd(ember.sin, randomness="sometimes")(x)
    # randomness="same": every column sees the same dropout mask
    ember.manual_seed(0)
    xs = ember.ones(6, dtype=ember.float64)
    j = efunc.jacfwd(
        lambda x: ember.nn.functional.dropout(x, 0.5, training=True), randomness="same"
    )(xs)
    d = np.diag(j.numpy())
    assert set(np.unique(d)) <= {0.0, 2.0}
    np.testing.assert_array_equal(j.numpy() - np.diag(d), np.zeros((6, 6)))


def test_hessian_forward_over_reverse():
    x = _t((4,), 16)
    h = efunc.hessian(f_scalar)(x)
    assert not h.requires_grad
    _close(h, efunc.jacrev(efunc.jacrev(f_scalar))(x), 1e-8)
    _close(h, h.T, 1e-10)
    # a vector function: output.shape + input.shape + input.shape
    hv = efunc.hessian(f_vec)(_t((3,), 17))
    assert tuple(hv.shape) == (4, 3, 3)
    torch = pytest.importorskip("torch")

    def tf(x):
        return (x.sin() * x.exp()).sum() * x.sum()

    _close(h, torch.func.hessian(tf)(_to_torch(torch, x)), 1e-8)

    def tg(a, b):
        return (a.sin() * b).sum() + (a * a * b).sum()

    a, b = _t((3,), 18), _t((3,), 19)
    got = efunc.hessian(lambda a, b: (a.sin() * b).sum() + (a * a * b).sum(), argnums=(0, 1))(a, b)
    _close(got, torch.func.hessian(tg, argnums=(0, 1))(*_to_torch(torch, (a, b))), 1e-8)


def test_linearize_and_nesting():
    x, v = _t((3,), 20), _t((3,), 21)
    out, jvp_fn = efunc.linearize(f_vec, x)
    _close(out, f_vec(x))
    _close(jvp_fn(v), efunc.jvp(f_vec, (x,), (v,))[1])
    # func.jvp runs in a level of its own inside a dual_level (as torch.func.jvp does)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        p, t = efunc.jvp(ember.sin, (d,), (v,))
        _close(t, x.cos() * v)
        _close(fwAD.unpack_dual(t).tangent, -x.sin() * v * v)


def test_reverse_transforms_inside_forward():
    # jvp of a gradient (forward-over-reverse) = H v
    x, v = _t((4,), 22), _t((4,), 23)
    _, hv = efunc.jvp(efunc.grad(f_scalar), (x,), (v,))
    _close(hv, efunc.hessian(f_scalar)(x) @ v, 1e-8)
    # the compositions users write for a Hessian
    h = efunc.hessian(f_scalar)(x)
    _close(efunc.jacfwd(efunc.jacrev(f_scalar))(x), h, 1e-8)
    _close(efunc.jacfwd(efunc.grad(f_scalar))(x), h, 1e-8)


# ----------------------------------------------------------------------------- functional


F = ember.autograd.functional


def test_functional_jacobian_strategies():
    x = _t((3,), 24)
    rev = F.jacobian(f_vec, x)
    fwd = F.jacobian(f_vec, x, strategy="forward-mode", vectorize=True)
    _close(fwd, rev)
    a, b = _t((2, 3), 25), _t((4, 3), 26)
    rev2 = F.jacobian(f_two, (a, b))
    fwd2 = F.jacobian(f_two, (a, b), strategy="forward-mode", vectorize=True)
    _close(fwd2, rev2)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(f_vec, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        F.jacobian(f_vec, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode"'):
        F.jacobian(f_vec, x, strategy="sideways")


def test_functional_hessian_forward_over_reverse():
    x = _t((4,), 27)
    rev = F.hessian(f_scalar, x)
    fwd = F.hessian(f_scalar, x, outer_jacobian_strategy="forward-mode", vectorize=True)
    _close(fwd, rev, 1e-8)
    a, b = _t((3,), 28), _t((3,), 29)

    def g(a, b):
        return (a.sin() * b).sum() + (a * a * b).sum()

    _close(
        F.hessian(g, (a, b), outer_jacobian_strategy="forward-mode", vectorize=True),
        F.hessian(g, (a, b)),
        1e-8,
    )


def test_functional_against_torch():
    torch = pytest.importorskip("torch")
    TF = torch.autograd.functional
    a, b = _t((2, 3), 30), _t((4, 3), 31)
    va, vb = _t((2, 3), 32), _t((4, 3), 33)

    def ef(a, b):
        return (a.sin() * b.sum(0)).sum(1)

    def tf(a, b):
        return (a.sin() * b.sum(0)).sum(1)

    def es(x):
        return (x.sin() * x.exp()).sum() * x.sum()

    def ts(x):
        return (x.sin() * x.exp()).sum() * x.sum()

    ta, tb, tva, tvb = _to_torch(torch, (a, b, va, vb))
    _close(F.jvp(ef, (a, b), (va, vb)), TF.jvp(tf, (ta, tb), (tva, tvb)))
    u = _t((2,), 34)
    _close(F.vjp(ef, (a, b), u), TF.vjp(tf, (ta, tb), _to_torch(torch, u)))
    x, v = _t((5,), 35), _t((5,), 36)
    tx, tv = _to_torch(torch, (x, v))
    _close(F.hvp(es, x, v), TF.hvp(ts, tx, tv), 1e-8)
    _close(F.vhp(es, x, v), TF.vhp(ts, tx, tv), 1e-8)
    _close(F.hessian(es, x), TF.hessian(ts, tx), 1e-8)
    _close(
        F.jacobian(ef, (a, b), strategy="forward-mode", vectorize=True),
        TF.jacobian(tf, (ta, tb), strategy="forward-mode", vectorize=True),
    )
    _close(
        F.hessian(es, x, outer_jacobian_strategy="forward-mode", vectorize=True),
        TF.hessian(ts, tx, outer_jacobian_strategy="forward-mode", vectorize=True),
        1e-8,
    )
    # single-tensor conventions: (output, result) with tensors, not 1-tuples
    out, jv = F.jvp(es, x, v)
    assert isinstance(jv, ember.Tensor) and isinstance(out, ember.Tensor)
    tout, tjv = TF.jvp(ts, tx, tv)
    _close((out, jv), (tout, tjv), 1e-8)
