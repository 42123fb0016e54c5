"""torch.special's Bessel and Airy functions, zeta and the orthogonal polynomials: values against
mpmath (a high-precision reference) and identities, edges and dtype rules against torch."""

import math

import numpy as np
import pytest

import ember
import ember.special as S

BESSEL = {
    "bessel_j0": lambda m, x: m.besselj(0, x),
    "bessel_j1": lambda m, x: m.besselj(1, x),
    "bessel_y0": lambda m, x: m.bessely(0, x),
    "bessel_y1": lambda m, x: m.bessely(1, x),
    "modified_bessel_i0": lambda m, x: m.besseli(0, x),
    "modified_bessel_i1": lambda m, x: m.besseli(1, x),
    "modified_bessel_k0": lambda m, x: m.besselk(0, x),
    "modified_bessel_k1": lambda m, x: m.besselk(1, x),
    "scaled_modified_bessel_k0": lambda m, x: m.exp(x) * m.besselk(0, x),
    "scaled_modified_bessel_k1": lambda m, x: m.exp(x) * m.besselk(1, x),
    "airy_ai": lambda m, x: m.airyai(x),
}
POSITIVE_ONLY = {"bessel_y0", "bessel_y1"} | {n for n in BESSEL if "_k" in n}
GRID = [-40.0, -7.5, -1.0, -0.3, 0.01, 0.4, 1.0, 2.5, 6.0, 13.0, 30.0, 120.0, 600.0]
POLYS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


@pytest.mark.parametrize("name", sorted(BESSEL))
def test_bessel_against_mpmath(name):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    xs = [x for x in GRID if x > 0 or name not in POSITIVE_ONLY]
    if name == "airy_ai":
        xs = [x for x in xs if x < 100]
    got = getattr(S, name)(ember.tensor(xs, dtype=ember.float64)).tolist()
    for x, g in zip(xs, got):
        want = float(getattr(BESSEL[name](mp, mp.mpf(x)), "real", BESSEL[name](mp, mp.mpf(x))))
        assert math.isclose(g, want, rel_tol=1e-9, abs_tol=1e-12), (name, x, g, want)


def test_bessel_identities():
    x = ember.linspace(0.5, 40, 200, dtype=ember.float64)
    # The Wronskian J1 Y0 - J0 Y1 = 2 / (pi x) and the K/I one I0 K1 + I1 K0 = 1 / x.
    w = S.bessel_j1(x) * S.bessel_y0(x) - S.bessel_j0(x) * S.bessel_y1(x)
    np.testing.assert_allclose(w.numpy(), (2 / (math.pi * x)).numpy(), rtol=1e-10)
    wk = S.modified_bessel_i0(x) * S.modified_bessel_k1(x) + S.modified_bessel_i1(
        x
    ) * S.modified_bessel_k0(x)
    np.testing.assert_allclose(wk.numpy(), (1 / x).numpy(), rtol=1e-10)
    np.testing.assert_allclose(
        S.scaled_modified_bessel_k0(x).numpy(),
        (S.modified_bessel_k0(x) * ember.exp(x)).numpy(),
        rtol=1e-12,
    )


def test_bessel_edges_and_dtypes():
    inf, nan = float("inf"), float("nan")
    e = ember.tensor([0.0, inf, -inf, nan, -2.0], dtype=ember.float64)
    assert S.bessel_j0(e).tolist()[0] == 1.0
    assert all(math.isnan(v) for v in S.bessel_j0(e).tolist()[1:4])
    assert S.bessel_y0(e).tolist()[0] == -inf and math.isnan(S.bessel_y0(e).tolist()[4])
    assert S.modified_bessel_k0(e).tolist()[:2] == [inf, 0.0]
    assert S.scaled_modified_bessel_k1(ember.tensor([1e6], dtype=ember.float64)).item() > 0
    assert math.isnan(S.airy_ai(ember.tensor([inf])).item())
    assert S.bessel_j0(ember.tensor([1, 2])).dtype == ember.float32
    x = ember.tensor([1.0], requires_grad=True)
    assert S.bessel_j0(x).grad_fn is None and not S.bessel_j0(x).requires_grad
    with pytest.raises(NotImplementedError, match='"bessel_j0_cpu" not implemented for .BFloat16'):
        S.bessel_j0(ember.tensor([1.0], dtype=ember.bfloat16))


def test_polynomials_against_closed_forms():
    th = np.linspace(0.1, 3.0, 13)
    x = ember.tensor(np.cos(th))
    for n in [0, 1, 2, 5, 9, 14]:
        t = S.chebyshev_polynomial_t(x, n).numpy()
        np.testing.assert_allclose(t, np.cos(n * th), atol=1e-5)
        u = S.chebyshev_polynomial_u(x, n).numpy()
        np.testing.assert_allclose(u, np.sin((n + 1) * th) / np.sin(th), atol=1e-4)
        v = S.chebyshev_polynomial_v(x, n).numpy()
        np.testing.assert_allclose(v, np.cos((n + 0.5) * th) / np.cos(th / 2), atol=1e-4)
        w = S.chebyshev_polynomial_w(x, n).numpy()
        np.testing.assert_allclose(w, np.sin((n + 0.5) * th) / np.sin(th / 2), atol=1e-4)
    xs = np.linspace(-2, 2, 9)
    xt = ember.tensor(xs, dtype=ember.float64)
    herm = np.polynomial.hermite.hermval(xs, [0, 0, 0, 0, 1])
    np.testing.assert_allclose(S.hermite_polynomial_h(xt, 4).numpy(), herm, rtol=1e-12)
    herme = np.polynomial.hermite_e.hermeval(xs, [0, 0, 0, 1])
    np.testing.assert_allclose(S.hermite_polynomial_he(xt, 3).numpy(), herme, rtol=1e-12)
    lag = np.polynomial.laguerre.lagval(xs, [0, 0, 0, 0, 0, 1])
    np.testing.assert_allclose(S.laguerre_polynomial_l(xt, 5).numpy(), lag, rtol=1e-12)
    leg = np.polynomial.legendre.legval(xs, [0, 0, 0, 0, 0, 0, 1])
    np.testing.assert_allclose(S.legendre_polynomial_p(xt, 6).numpy(), leg, rtol=1e-12)
    np.testing.assert_allclose(
        S.shifted_chebyshev_polynomial_t(xt, 3).numpy(),
        S.chebyshev_polynomial_t(2 * xt - 1, 3).numpy(),
    )
    # A degree is truncated to an integer; negative degrees give 0; n broadcasts.
    n = ember.tensor([[2.7], [-1.0]])
    assert S.legendre_polynomial_p(ember.tensor([0.5, 1.0]), n).tolist() == [[-0.125, 1.0], [0, 0]]


def test_polynomial_arguments():
    with pytest.raises(TypeError, match="special_chebyshev_polynomial_t"):
        S.chebyshev_polynomial_t(0.3, 2)
    assert S.chebyshev_polynomial_t(ember.tensor([2, 3]), 2).tolist() == [7.0, 17.0]
    r = S.hermite_polynomial_he(0.5, ember.tensor([2, 3]))
    assert r.dtype == ember.float32 and r.tolist() == pytest.approx([-0.75, -1.375])
    x = ember.tensor([0.3], requires_grad=True)
    assert S.chebyshev_polynomial_t(x, 2).grad_fn is None
    out = ember.empty(1)
    S.chebyshev_polynomial_t(ember.tensor([0.5]), 3, out=out)
    assert out.tolist() == [-1.0]


def test_zeta_values_and_gradient():
    got = S.zeta(ember.tensor([2.0, 4.0], dtype=ember.float64), 1.0).tolist()
    assert got == pytest.approx([math.pi**2 / 6, math.pi**4 / 90], rel=1e-14)
    assert S.zeta(2.0, ember.tensor([1, 2])).tolist() == pytest.approx(
        [math.pi**2 / 6, math.pi**2 / 6 - 1], rel=1e-6
    )
    s = ember.tensor([2.0, 3.0], dtype=ember.float64)
    q = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    z = S.zeta(s, q)
    assert type(z.grad_fn).__name__ == "SpecialZetaBackward0"
    z.sum().backward()
    want = (-s * S.zeta(s + 1, q)).detach()
    np.testing.assert_allclose(q.grad.numpy(), want.numpy(), rtol=1e-12)
    s.requires_grad_()
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        S.zeta(s, q).sum().backward()


def test_against_torch():
    torch = pytest.importorskip("torch")
    xs = [-12.0, -2.0, -0.5, 0.0, 0.25, 1.0, 3.0, 9.0, 25.0, 80.0]
    for name in sorted(BESSEL):
        for dt in ["float32", "float64"]:
            ours = getattr(S, name)(ember.tensor(xs, dtype=getattr(ember, dt))).numpy()
            theirs = getattr(torch.special, name)(torch.tensor(xs, dtype=getattr(torch, dt)))
            # torch's float32 kernels compute in float; ember's in double, then round
            tol = dict(rtol=2e-6, atol=1e-12) if dt == "float64" else dict(rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(ours, theirs.numpy(), err_msg=name, **tol)
    px = [-1.0, -0.7, 0.0, 0.2, 0.5, 1.0, 1.5]
    pn = [-1, 0, 1, 2, 3, 7, 10, 13]
    X, N = np.meshgrid(px, pn)
    for name in POLYS:
        ours = getattr(S, name)(ember.tensor(X), ember.tensor(N)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(X), torch.tensor(N)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4, err_msg=name)
    zs, zq = [1.5, 2.0, 3.0, 0.5, 1.0], [1.0, 0.5, 3.0, 2.0, -1.0]
    ours = S.zeta(ember.tensor(zs, dtype=ember.float64), ember.tensor(zq, dtype=ember.float64))
    theirs = torch.special.zeta(torch.tensor(zs, dtype=torch.float64), torch.tensor(zq))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_gammainc_edges():
    nan, inf = float("nan"), float("inf")
    a = [-1.0, 0.5, 0.0, 0.0, 1.0, inf, inf, nan, nan, 2.0]
    x = [0.5, -1.0, 0.0, 2.0, inf, 1.0, inf, inf, 1.0, 0.0]
    p_want = [nan, nan, nan, 1.0, 1.0, 0.0, nan, 1.0, nan, 0.0]
    at, xt = ember.tensor(a, dtype=ember.float64), ember.tensor(x, dtype=ember.float64)
    p, q = S.gammainc(at, xt).tolist(), S.gammaincc(at, xt).tolist()
    for got_p, got_q, want in zip(p, q, p_want):
        if math.isnan(want):
            assert math.isnan(got_p) and math.isnan(got_q)
        else:
            assert got_p == want and got_q == 1 - want
    # inside the domain P + Q = 1 and P(1, x) = 1 - exp(-x)
    xs = ember.tensor([0.1, 1.0, 4.0], dtype=ember.float64)
    ones = ember.ones(3, dtype=ember.float64)
    np.testing.assert_allclose(S.gammainc(ones, xs).numpy(), 1 - np.exp(-xs.numpy()), rtol=1e-12)
