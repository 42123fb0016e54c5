"""ember.special: torch.special's functions over ember's ops (Bessel and gamma kernels in C++)."""

import math

import ember as E
from .._C import _special_i0e as i0e, _special_i1 as i1, _special_i1e as i1e  # noqa: F401

__all__ = [
    "expit",
    "logit",
    "erf",
    "erfc",
    "erfinv",
    "erfcx",
    "xlogy",
    "xlog1py",
    "gammaln",
    "digamma",
    "psi",
    "gammainc",
    "gammaincc",
    "polygamma",
    "multigammaln",
    "log_softmax",
    "softmax",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "sinc",
    "entr",
    "ndtr",
    "ndtri",
    "log_ndtr",
    "log1p",
    "expm1",
    "exp2",
    "round",
    "logsumexp",
]


def expit(input):
    return E.sigmoid(input)


def logit(input, eps=None):
    return E.logit(input, eps)


def erf(input):
    return E.erf(input)


def erfc(input):
    return E.erfc(input)


def erfinv(input):
    return E.erfinv(input)


def erfcx(input):
    """exp(x^2) erfc(x); the product underflows for large x, so there the asymptotic series."""
    x = input if input.dtype.is_floating_point else input.to(E.get_default_dtype())
    big = x > 25
    xs = E.where(big, E.zeros([], dtype=x.dtype), x)
    direct = E.exp(xs * xs) * E.erfc(xs)
    xb = E.where(big, x, E.ones([], dtype=x.dtype))
    inv2 = 1 / (2 * xb * xb)
    series = (1 - inv2 + 3 * inv2 * inv2) / (xb * math.sqrt(math.pi))
    return E.where(big, series, direct)


def xlogy(input, other):
    return E.xlogy(input, other)


def xlog1py(input, other):
    if not isinstance(input, E.Tensor):
        input = E.tensor(input, dtype=other.dtype)
    out = input * E.log1p(other)
    return E.where((input == 0) & ~E.isnan(other), E.zeros([], dtype=out.dtype), out)


def gammaln(input):
    return E.lgamma(input)


def digamma(input):
    return E.digamma(input)


psi = digamma


def gammainc(input, other):
    """The regularized lower incomplete gamma P(input, other) (series / continued fraction in
    ember.distributions.samplers; differentiable in both arguments)."""
    from ..distributions.samplers import gammainc as _gammainc  # distributions imports special

    return _gammainc(input, other)


def gammaincc(input, other):
    """The regularized upper incomplete gamma Q(input, other) = 1 - P(input, other)."""
    from ..distributions.samplers import gammainc as _gammainc

    return _gammainc(input, other, upper=True)


def polygamma(n, input):
    return E.polygamma(n, input)


def multigammaln(input, p):
    return E.mvlgamma(input, p)


def log_softmax(input, dim, *, dtype=None):
    return E.log_softmax(input, dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    return E.softmax(input, dim, dtype=dtype)


def i0(input):
    return E.i0(input)


def sinc(input):
    return E.sinc(input)


def entr(input):
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    x = input if input.dtype.is_floating_point else input.to(E.get_default_dtype())
    pos = x > 0
    safe = E.where(pos, x, E.ones([], dtype=x.dtype))
    out = E.where(pos, -safe * E.log(safe), E.zeros([], dtype=x.dtype))
    out = E.where(x < 0, E.full([], -math.inf, dtype=x.dtype), out)
    return E.where(E.isnan(x), x, out)


def ndtr(input):
    x = input if input.dtype.is_floating_point else input.to(E.get_default_dtype())
    return 0.5 * E.erfc(-x / math.sqrt(2))


def ndtri(input):
    x = input if input.dtype.is_floating_point else input.to(E.get_default_dtype())
    return math.sqrt(2) * E.erfinv(2 * x - 1)


def log_ndtr(input):
    x = input if input.dtype.is_floating_point else input.to(E.get_default_dtype())
    # For very negative x, erfc underflows: log(erfcx(-x/sqrt2)/2) - x^2/2 stays finite.
    t = -x / math.sqrt(2)
    return E.where(x < -5, E.log(erfcx(t) / 2) - t * t, E.log(ndtr(x)))


def log1p(input):
    return E.log1p(input)


def expm1(input):
    return E.expm1(input)


def exp2(input):
    return E.exp2(input)


def round(input, *, decimals=0):  # noqa: A001
    return E.round(input, decimals=decimals)


def logsumexp(input, dim, keepdim=False):
    return E.logsumexp(input, dim, keepdim)
