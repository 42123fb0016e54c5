"""ember.special: torch.special's functions over ember's ops (Bessel and gamma kernels in C++)."""

import math

from .. import _C
from .._argparse import write_out as _write_out
from .._C import Tensor, exp, get_default_dtype, isnan, lgamma, log, sigmoid, sinc
from .._C import _special_airy_ai as airy_ai  # noqa: F401
from .._C import _special_bessel_j0 as bessel_j0  # noqa: F401
from .._C import _special_bessel_j1 as bessel_j1  # noqa: F401
from .._C import _special_bessel_y0 as bessel_y0  # noqa: F401
from .._C import _special_bessel_y1 as bessel_y1  # noqa: F401
from .._C import _special_i0e as i0e  # noqa: F401
from .._C import _special_i1 as i1
from .._C import _special_i1e as i1e
from .._C import _special_modified_bessel_i0 as modified_bessel_i0  # noqa: F401
from .._C import _special_modified_bessel_i1 as modified_bessel_i1  # noqa: F401
from .._C import _special_modified_bessel_k0 as modified_bessel_k0  # noqa: F401
from .._C import _special_modified_bessel_k1 as modified_bessel_k1  # noqa: F401
from .._C import _special_scaled_modified_bessel_k0 as scaled_modified_bessel_k0  # noqa: F401
from .._C import _special_scaled_modified_bessel_k1 as scaled_modified_bessel_k1  # noqa: F401
from .._C import _special_spherical_bessel_j0 as spherical_bessel_j0  # noqa: F401
from .._ops import _names
from .._ops import elementwise as _elementwise
from .._ops import nn as _nn
from .._ops.creation import full, ones, tensor, zeros
from .._ops.elementwise import mvlgamma
from .._ops.index import where
from .._ops.reduce import logsumexp  # noqa: F401
from .._type_info import scalar_type_name

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
    "spherical_bessel_j0",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "airy_ai",
    "zeta",
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
    """expit(input) -> Tensor

    The logistic sigmoid 1 / (1 + exp(-x))."""
    return sigmoid(input)


def logit(input, eps=None):
    """logit(input, eps=None) -> Tensor

    log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    return _elementwise.logit(input, eps)


def erf(input):
    """erf(input) -> Tensor

    The Gauss error function of each element."""
    return _C.erf(input)


def erfc(input):
    """erfc(input) -> Tensor

    The complementary error function 1 - erf(x), accurate where erf(x) is near 1."""
    return _C.erfc(input)


def erfinv(input):
    """erfinv(input) -> Tensor

    The inverse of erf on (-1, 1), with +-inf at +-1."""
    return _C.erfinv(input)


def erfcx(input):
    """erfcx(input) -> Tensor

    exp(x^2) erfc(x); the product underflows for large x, so there the asymptotic series."""
    x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    big = x > 25
    xs = where(big, zeros([], dtype=x.dtype), x)
    direct = exp(xs * xs) * _C.erfc(xs)
    xb = where(big, x, ones([], dtype=x.dtype))
    inv2 = 1 / (2 * xb * xb)
    series = (1 - inv2 + 3 * inv2 * inv2) / (xb * math.sqrt(math.pi))
    return where(big, series, direct)


def xlogy(input, other):
    """xlogy(input, other) -> Tensor

    input * log(other), taken as 0 where input is 0."""
    return _elementwise.xlogy(input, other)


def xlog1py(input, other):
    """xlog1py(input, other) -> Tensor

    input * log1p(other), taken as 0 where input is 0."""
    return _elementwise.x_times_log("xlog1py", _C.log1p, input, other)


def gammaln(input):
    """gammaln(input) -> Tensor

    The log of the absolute value of the gamma function."""
    return lgamma(input)


def digamma(input):
    """digamma(input) -> Tensor

    The logarithmic derivative of the gamma function, lgamma's first derivative."""
    return _C.digamma(input)


psi = digamma


def gammainc(input, other):
    """gammainc(input, other) -> Tensor

    The regularized lower incomplete gamma P(input, other) (series / continued fraction in
    ember.distributions.samplers; differentiable in both arguments)."""
    from ..distributions.samplers import gammainc as _gammainc  # distributions imports special

    return _gammainc(*_gamma_operands("igamma", input, other))


def _gamma_operands(name, input, other):
    """Both operands in their promoted dtype, which torch's kernel must have (floating)."""
    for pos, (arg, x) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                f"{type(x).__name__}"
            )
    dt = _C.result_type(input, other)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(dt)}'")
    return input.to(dt), other.to(dt)


def gammaincc(input, other):
    """gammaincc(input, other) -> Tensor

    The regularized upper incomplete gamma Q(input, other) = 1 - P(input, other)."""
    from ..distributions.samplers import gammainc as _gammainc

    return _gammainc(*_gamma_operands("igammac", input, other), upper=True)


def polygamma(n, input):
    """polygamma(n, input) -> Tensor

    The n-th derivative of digamma."""
    return _C.polygamma(n, input)


def multigammaln(input, p):
    """multigammaln(input, p) -> Tensor

    The log of the multivariate gamma function of dimension p."""
    return mvlgamma(input, p)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax(input, dim, *, dtype=None) -> Tensor

    log(softmax(input)) along dim, computed stably, optionally in dtype."""
    return _nn.log_softmax(input, dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """softmax(input, dim, *, dtype=None) -> Tensor

    exp(input) normalized to sum to 1 along dim, optionally computed in dtype."""
    return _nn.softmax(input, dim, dtype=dtype)


def i0(input):
    """i0(input) -> Tensor

    The modified Bessel function of the first kind and order 0."""
    return _C.i0(input)


def entr(input):
    """entr(input) -> Tensor

    -x log x for x > 0, 0 at 0, -inf for x < 0."""
    x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    pos = x > 0
    safe = where(pos, x, ones([], dtype=x.dtype))
    out = where(pos, -safe * log(safe), zeros([], dtype=x.dtype))
    out = where(x < 0, full([], -math.inf, dtype=x.dtype), out)
    return where(isnan(x), x, out)


def ndtr(input):
    """ndtr(input) -> Tensor

    The standard normal cumulative distribution function."""
    x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    return 0.5 * _C.erfc(-x / math.sqrt(2))


def ndtri(input):
    """ndtri(input) -> Tensor

    The inverse of the standard normal CDF (the probit function)."""
    x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    return math.sqrt(2) * _C.erfinv(2 * x - 1)


def log_ndtr(input):
    """log_ndtr(input) -> Tensor

    The log of the standard normal CDF, finite far into the left tail."""
    x = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    # For very negative x, erfc underflows: log(erfcx(-x/sqrt2)/2) - x^2/2 stays finite.
    t = -x / math.sqrt(2)
    return where(x < -5, log(erfcx(t) / 2) - t * t, log(ndtr(x)))


def log1p(input):
    """log1p(input) -> Tensor

    log(1 + x), accurate for x near zero."""
    return _C.log1p(input)


def expm1(input):
    """expm1(input) -> Tensor

    exp(x) - 1, accurate for x near zero."""
    return _C.expm1(input)


def exp2(input):
    """exp2(input) -> Tensor

    2 raised to the power of each element."""
    return _C.exp2(input)


def round(input, *, decimals=0):  # noqa: A001
    """round(input, *, decimals=0) -> Tensor

    Rounds half to even, to the given number of decimals."""
    return _C.round(input, decimals=decimals)


def _two_args(name, first, second, a, b, out):
    """Calls the C++ op `_special_<name>` as torch's overloads (Tensor, Tensor), (Number, Tensor)
    and (Tensor, Number) allow: a Python number becomes a 0-d tensor, which promotes as torch's
    wrapped numbers do here."""
    a_num, b_num = not isinstance(a, Tensor), not isinstance(b, Tensor)
    if a_num and b_num:
        raise TypeError(
            f"special_{name}() received an invalid combination of arguments - got "
            f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
            f" * (Tensor {first}, Tensor {second}, *, Tensor out = None)\n"
            f" * (Number {first}, Tensor {second}, *, Tensor out = None)\n"
            f" * (Tensor {first}, Number {second}, *, Tensor out = None)\n"
        )
    if a_num:
        a = tensor(a)
    if b_num:
        b = tensor(b)
    result = getattr(_C, f"_special_{name}")(a, b)
    return result if out is None else _write_out(f"special_{name}", result, out)


def zeta(input, other, *, out=None):
    """zeta(input, other, *, out=None) -> Tensor

    The Hurwitz zeta function, the sum over k >= 0 of (k + other)^-input."""
    return _two_args("zeta", "self", "other", input, other, out)


def _polynomial(name, doc):
    def fn(input, n, *, out=None):
        return _two_args(name, "x", "n", input, n, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}(input, n, *, out=None) -> Tensor\n\n    {doc}"
    return fn


chebyshev_polynomial_t = _polynomial(
    "chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind T_n(input)."
)
chebyshev_polynomial_u = _polynomial(
    "chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind U_n(input)."
)
chebyshev_polynomial_v = _polynomial(
    "chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind V_n(input)."
)
chebyshev_polynomial_w = _polynomial(
    "chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind W_n(input)."
)
shifted_chebyshev_polynomial_t = _polynomial(
    "shifted_chebyshev_polynomial_t", "T_n(2 * input - 1), the shifted Chebyshev polynomial."
)
shifted_chebyshev_polynomial_u = _polynomial(
    "shifted_chebyshev_polynomial_u", "U_n(2 * input - 1), the shifted Chebyshev polynomial."
)
shifted_chebyshev_polynomial_v = _polynomial(
    "shifted_chebyshev_polynomial_v", "V_n(2 * input - 1), the shifted Chebyshev polynomial."
)
shifted_chebyshev_polynomial_w = _polynomial(
    "shifted_chebyshev_polynomial_w", "W_n(2 * input - 1), the shifted Chebyshev polynomial."
)
hermite_polynomial_h = _polynomial(
    "hermite_polynomial_h", "The physicists' Hermite polynomial H_n(input)."
)
hermite_polynomial_he = _polynomial(
    "hermite_polynomial_he", "The probabilists' Hermite polynomial He_n(input)."
)
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "The Laguerre polynomial L_n(input).")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "The Legendre polynomial P_n(input).")


# torch's grad_fn name (see ember/_ops/_names.py); xlogy is ember.xlogy's
xlog1py = _names.named(xlog1py, "SpecialXlog1PyBackward0")
