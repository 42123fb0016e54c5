"""Gamma helpers over the core's samplers: standard gamma draws carrying torch's reparameterized
gradient, an accurate dx/dalpha for Gamma.cdf's gradient, and the regularized incomplete gamma.
The draws and torch's gradient approximation are core kernels (Note [torch's gamma draws]).

Note [Gamma reparameterization]: a gamma draw x = F^-1(u; alpha) has dx/dalpha =
-(dF/dalpha) / f(x), with F the regularized lower incomplete gamma function and f the density.
For x <= 20 dF/dalpha comes from the power series of F term by term; beyond, from a quadrature
of the tail (x >= alpha - 1) or of the lower part (x < alpha - 1) of the integral
dF/dalpha = E[(log T - digamma(alpha)) 1{T < x}], whose integrand is largest at x either way.
"""

import math

from .. import _C
from .._C import broadcast_tensors, float64, minimum
from .._ops.creation import arange, full_like, linspace, ones, ones_like, zeros_like
from .._ops.index import where

__all__ = [
    "dirichlet_rsample",
    "gamma_rsample",
    "gammainc",
    "standard_gamma_grad",
]

_SERIES_X = 20.0
_SERIES_TERMS = 90
_QUAD_POINTS = 513  # odd: composite Simpson
_MAX_ITERATIONS = 5000


def _grad_series(a, x):
    """-(dF/dalpha) / f(x) from F's power series; accurate for x <= 20 in float64."""
    n = arange(_SERIES_TERMS, dtype=float64)
    a, x = a.unsqueeze(-1), x.unsqueeze(-1)
    log_term = (n + 1) * x.log() + a.lgamma() - (a + n + 1).lgamma()
    return -(log_term.exp() * (x.log() - (a + n + 1).digamma())).sum(-1)


def _simpson_weights(count):
    w = ones(count, dtype=float64)
    w[1:-1:2] = 4.0
    w[2:-1:2] = 2.0
    return w / 3.0


def _grad_quadrature(a, x):
    """-(dF/dalpha) / f(x) by Simpson's rule on the side of x where the integrand decays."""
    upper = x >= a - 1
    rate = ((a - 1) / x - 1).abs().clamp(min=1e-12)
    width = where(a > 1, x / (a - 1).clamp(min=1e-12).sqrt(), full_like(a, math.inf))
    length = minimum(40 / rate, 9 * width + 10)
    length = where(upper, length, minimum(length, x))
    s = linspace(0, 1, _QUAD_POINTS, dtype=float64) * length.unsqueeze(-1)
    a_, x_, up = a.unsqueeze(-1), x.unsqueeze(-1), upper.unsqueeze(-1)
    t = where(up, x_ + s, (x_ - s).clamp(min=1e-300))
    log_h = (a_ - 1) * (t / x_).log() - (t - x_)
    integrand = (t.log() - a_.digamma()) * log_h.exp()
    h = length / (_QUAD_POINTS - 1)
    integral = (integrand * _simpson_weights(_QUAD_POINTS)).sum(-1) * h
    return where(upper, integral, -integral)


def standard_gamma_grad(alpha, x):
    """dx/dalpha of standard gamma draws x at a fixed quantile (Note [Gamma reparameterization])."""
    a, xd = alpha.detach().double(), x.detach().double()
    a, xd = broadcast_tensors(a, xd)
    small = xd <= _SERIES_X
    out = zeros_like(a)
    if bool(small.any()):
        out[small] = _grad_series(a[small], xd[small])
    if bool((~small).any()):
        out[~small] = _grad_quadrature(a[~small], xd[~small])
    return out.to(x.dtype)


def _gammainc_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)); for x < a + 1."""
    term = ones_like(a)
    total = ones_like(a)
    ap = a.clone()
    for _ in range(_MAX_ITERATIONS):
        ap = ap + 1
        term = term * x / ap
        total = total + term
        if bool((term.abs() <= total.abs() * 1e-16).all()):
            break
    return total * (a * x.log() - x - (a + 1).lgamma()).exp()


def _gammaincc_fraction(a, x):
    """Q(a, x) from its continued fraction (modified Lentz); for x >= a + 1."""
    tiny = 1e-300
    b = x + 1 - a
    c = full_like(a, 1 / tiny)
    d = 1 / b
    h = d
    for i in range(1, _MAX_ITERATIONS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = where(d.abs() < tiny, full_like(d, tiny), d)
        c = b + an / c
        c = where(c.abs() < tiny, full_like(c, tiny), c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if bool(((delta - 1).abs() <= 1e-16).all()):
            break
    return h * (a * x.log() - x - a.lgamma()).exp()


def _gammainc_edges(a, x, p, upper):
    """P (or Q) where torch's rules give a fixed value, applied by increasing precedence: NaN for
    a NaN argument, the limits at x = inf and a = inf (NaN for both), the value at x = 0, at a = 0
    (1 for x > 0, NaN at x = 0), and NaN for a negative argument."""
    nan = float("nan")

    def lo_hi(lower_value):  # P's value, and Q's (1 - P) for upper
        return full_like(
            p, nan if lower_value != lower_value else (1 - lower_value) if upper else lower_value
        )

    r = where(a.isnan() | x.isnan(), lo_hi(nan), p)
    inf_x, inf_a = x == float("inf"), a == float("inf")
    r = where(inf_x, lo_hi(1.0), r)
    r = where(inf_a, where(inf_x, lo_hi(nan), lo_hi(0.0)), r)
    r = where(x == 0, lo_hi(0.0), r)
    r = where(a == 0, where(x > 0, lo_hi(1.0), lo_hi(nan)), r)
    return where((x < 0) | (a < 0), lo_hi(nan), r)


def gammainc(alpha, x, upper=False):
    """The regularized lower incomplete gamma P(alpha, x), or with upper=True Q = 1 - P (each
    computed directly where it is the small one), differentiable in both arguments: dP/dx is
    the gamma density and dP/dalpha = -f(x) dx/dalpha (Note [Gamma reparameterization])."""
    alpha, x = broadcast_tensors(alpha, x)
    a = alpha.detach().double()
    xd = x.detach().double()
    positive = xd > 0
    xs = where(positive, xd, ones_like(xd))
    use_series = xs < a + 1
    lower = zeros_like(a)  # P where use_series, else Q
    if bool(use_series.any()):
        lower[use_series] = _gammainc_series(a[use_series], xs[use_series])
    if bool((~use_series).any()):
        lower[~use_series] = _gammaincc_fraction(a[~use_series], xs[~use_series])
    p = where(use_series, lower, 1 - lower)
    q = where(use_series, 1 - lower, lower)
    value = _gammainc_edges(a, xd, where(positive, q if upper else p, full_like(p, 0.0)), upper)
    out = value.to(x.dtype)
    if not (alpha.requires_grad or x.requires_grad):
        return out
    density = ((a - 1) * xs.log() - xs - a.lgamma()).exp()
    density = where(positive, density, zeros_like(density))
    d_alpha = -density * standard_gamma_grad(a, xs).double()
    sign = -1.0 if upper else 1.0
    return (
        out
        + sign * (density.to(x.dtype) * (x - x.detach()))
        + sign * (d_alpha.to(x.dtype) * (alpha - alpha.detach()))
    )


def gamma_rsample(alpha, generator=None):
    """Standard gamma draws (torch's) that carry torch's d x / d alpha to alpha's graph."""
    x = _C._standard_gamma(alpha.detach(), generator)
    if not alpha.requires_grad:
        return x
    grad = _C._standard_gamma_grad(alpha.detach(), x)
    return x + grad * (alpha - alpha.detach())


def dirichlet_rsample(concentration, generator=None):
    """Dirichlet draws (torch's) that carry torch's reparameterized gradient to concentration:
    d x_j / d alpha_i = G_i (delta_ij - x_j), G from the Beta marginals (_dirichlet_grad)."""
    a = concentration.detach()
    x = _C._sample_dirichlet(a, generator)
    if not concentration.requires_grad:
        return x
    total = a.sum(-1, keepdim=True).expand_as(a)
    t = _C._dirichlet_grad(x, a, total) * (concentration - a)
    return x + t - x * t.sum(-1, keepdim=True)
