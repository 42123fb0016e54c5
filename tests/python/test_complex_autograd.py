"""Autograd through complex tensors with torch's convention (the gradient of a real loss L of
z = x + iy is dL/dx + i dL/dy): gradcheck on complex inputs, and grads equal to torch's."""

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(5)


def crand(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def leaf(a):
    return ember.from_numpy(np.array(a)).requires_grad_()


def test_complex_leaves_can_require_grad():
    z = ember.zeros(2, dtype=ember.complex64, requires_grad=True)
    assert z.requires_grad
    (z.abs() + 1).sum().backward()
    assert z.grad.dtype == ember.complex64


def test_mul_grad_by_hand():
    # L = |a * b|^2 = (a b)(conj a conj b): dL/dconj(a) * 2 = 2 a |b|^2
    a, b = leaf([1 + 2j]), leaf([3 - 1j])
    ((a * b).abs() ** 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * (1 + 2j) * abs(3 - 1j) ** 2)
    np.testing.assert_allclose(b.grad.numpy(), 2 * (3 - 1j) * abs(1 + 2j) ** 2)


def test_real_input_gets_real_grad():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    z = leaf(crand(2))
    (x * z).real.sum().backward()
    assert x.grad.dtype == ember.float64
    np.testing.assert_allclose(x.grad.numpy(), z.detach().numpy().real)


GRADCHECK = [
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("add_sub", lambda a, b: a + b - 2 * a),
    ("matmul", lambda a, b: a.reshape(2, 2) @ b.reshape(2, 2)),
    ("exp", lambda a, b: ember.exp(a) * b),
    ("log", lambda a, b: ember.log(a)),
    ("sqrt", lambda a, b: ember.sqrt(a)),
    ("sin_cos", lambda a, b: ember.sin(a) + ember.cos(b)),
    ("tanh", lambda a, b: ember.tanh(a)),
    ("sigmoid", lambda a, b: ember.sigmoid(a)),
    ("reciprocal", lambda a, b: a.reciprocal()),
    ("pow", lambda a, b: a**3),
    ("abs", lambda a, b: a.abs()),
    ("angle", lambda a, b: ember.angle(a)),
    ("conj", lambda a, b: a.conj() * b),
    ("real_imag", lambda a, b: a.real * b.imag),
    ("sum_mean", lambda a, b: a.sum() + b.mean()),
    ("prod", lambda a, b: a.prod()),
    ("complex", lambda a, b: ember.complex(a.real, b.imag)),
    ("view_as_real", lambda a, b: ember.view_as_real(a) * 2),
    ("vdot", lambda a, b: ember.vdot(a, b)),
    ("sgn", lambda a, b: ember.sgn(a)),
]


@pytest.mark.parametrize("name,fn", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck_complex_inputs(name, fn):
    a, b = leaf(crand(4)), leaf(crand(4))
    assert ember.autograd.gradcheck(fn, (a, b))


def test_gradcheck_mixed_real_and_complex():
    x = ember.from_numpy(RNG.standard_normal(4)).requires_grad_()
    z = leaf(crand(4))
    assert ember.autograd.gradcheck(lambda x, z: x * z + ember.exp(x), (x, z))
    assert ember.autograd.gradcheck(lambda x, z: ember.polar(x.abs() + 1, x) * z, (x, z))


def test_gradcheck_reports_a_wrong_gradient():
    from ember.autograd import Function

    class Bad(Function):
        @staticmethod
        def forward(ctx, z):
            return ember.view_as_real(z) * 2

        @staticmethod
        def backward(ctx, g):
            return ember.view_as_complex(g.contiguous()) * 2j  # wrong: should be 2 * g

    z = leaf(crand(3))
    assert not ember.autograd.gradcheck(lambda t: Bad.apply(t), (z,), raise_exception=False)


LOSSES = [
    lambda m, a, b: (a * b).abs().sum(),
    lambda m, a, b: (a / b).real.sum() + (a * b.conj()).imag.sum(),
    lambda m, a, b: (m.exp(a) * m.sin(b)).abs().pow(2).sum(),
    lambda m, a, b: (a.reshape(2, 3) @ b.reshape(3, 2)).abs().sum(),
    lambda m, a, b: m.angle(a * b).sum() + m.log(a).real.sum(),
    lambda m, a, b: m.sqrt(a).imag.sum() + m.tanh(b).real.sum(),
    lambda m, a, b: m.view_as_real(a * b).pow(2).sum(),
    lambda m, a, b: (a.sum() * b.mean()).abs(),
    lambda m, a, b: (a.prod() + m.sigmoid(b).sum()).real,
]


@pytest.mark.parametrize("k", range(len(LOSSES)))
def test_grads_match_torch(k):
    torch = pytest.importorskip("torch")
    a, b = crand(6), crand(6)
    fn = LOSSES[k]
    ea, eb = leaf(a), leaf(b)
    ta = torch.from_numpy(a.copy()).requires_grad_()
    tb = torch.from_numpy(b.copy()).requires_grad_()
    fn(ember, ea, eb).backward()
    fn(torch, ta, tb).backward()
    ga, gb = ta.grad.resolve_conj().numpy(), tb.grad.resolve_conj().numpy()
    np.testing.assert_allclose(ea.grad.numpy(), ga, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(eb.grad.numpy(), gb, rtol=1e-9, atol=1e-9)


def test_function_with_complex_output_and_casts_keep_gradients():
    from ember.autograd import Function

    class Twice(Function):
        @staticmethod
        def forward(ctx, z):
            return z * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    z = leaf(crand(3))
    assert Twice.apply(z).requires_grad
    assert ember.autograd.gradcheck(lambda t: Twice.apply(t), (z,))
    x = ember.from_numpy(RNG.standard_normal(3)).requires_grad_()
    (x.to(ember.complex128) * (1 + 2j)).imag.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))
    assert ember.autograd.gradcheck(lambda t: ember._C._to_dtype(t, ember.complex128, False), (x,))
