"""Elementwise math composed from the core's ops and comparisons of whole tensors (complex
numbers: complex.py)."""

import builtins
import math

from .. import _C, return_types
from .._C import (
    Tensor,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    broadcast_tensors,
    complex128,
    exp,
    exp2,
    float64,
    from_numpy,
    get_default_dtype,
    isinf,
    isnan,
    lerp,
    lgamma,
    log,
    log1p,
    maximum,
    polygamma,
    result_type,
    stack,
    sub,
)
from .._type_info import scalar_type_name
from . import _names
from ._util import _float, _t
from .creation import full, ones, zeros
from .foreign_guards import reads_values as _reads_values
from .index import where

__all__ = [
    "xlogy",
    "logaddexp",
    "logaddexp2",
    "deg2rad",
    "rad2deg",
    "logit",
    "heaviside",
    "float_power",
    "positive",
    "rsub",
    "ldexp",
    "gcd",
    "lcm",
    "mvlgamma",
    "frexp",
    "nextafter",
    "equal",
    "isclose",
    "allclose",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
]


def xlogy(input, other):
    """xlogy(input, other) -> Tensor

    input * log(other), and 0 where input is 0 (unless other is NaN)."""
    return x_times_log("xlogy", log, input, other)


def x_times_log(name, log_fn, input, other):
    """input * log_fn(other), and 0 where input is 0 (unless other is NaN): xlogy and
    special.xlog1py, either argument a number."""
    # computed in the pair's promoted floating dtype, as torch (log of an int is float32, which
    # would otherwise widen a bfloat16 input); a number becomes a tensor of that dtype directly
    # (through the integer tensor's dtype it would wrap)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = _t(input, other)
    dt = result_type(input, other)
    if dt.is_complex:  # torch's kernel has no complex types (the imaginary part was dropped)
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(dt)}'")
    dt = dt if dt.is_floating_point else get_default_dtype()
    input, other = (
        x.to(dt) if isinstance(x, Tensor) else full([], x, dtype=dt) for x in (input, other)
    )
    out = input * log_fn(other)
    return where((input == 0) & ~isnan(other), zeros([], dtype=out.dtype), out)


def _refuse_complex(kernel, x):
    """torch has no complex kernel for these ops: its dispatch error, naming `kernel`."""
    if x.dtype.is_complex:
        raise NotImplementedError(
            f"\"{kernel}_cpu\" not implemented for '{scalar_type_name(x.dtype)}'"
        )


def _check_float_pair(name, a, b):
    for x in (a, b):
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{scalar_type_name(x.dtype)}'"
            )


def _logaddexp_operands(name, input, other):
    """Both operands in their promoted dtype, which torch's kernel must have (floating, or
    complex for logaddexp)."""
    _both_tensors(name, input, other)
    dt = result_type(input, other)
    if not dt.is_floating_point and not (dt.is_complex and name == "logaddexp"):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(dt)}'")
    return input.to(dt), other.to(dt)


def logaddexp(input, other):
    """logaddexp(input, other) -> Tensor

    log(exp(input) + exp(other)) without overflow."""
    input, other = _logaddexp_operands("logaddexp", input, other)
    if input.dtype.is_complex:  # around the operand of larger real part (Tensor's complex paths)
        from .complex import _where

        first = input.real >= other.real
        m, n = _where(first, input, other), _where(first, other, input)
        return m + (n - m).exp().log1p()
    m = maximum(input, other)
    out = m + log1p(exp(-(input - other).abs()))
    # Equal infinities give NaN in the difference; the answer is that infinity.
    return where(isinf(m) & (input == other), m, out)


def logaddexp2(input, other):
    """logaddexp2(input, other) -> Tensor

    log2(2**input + 2**other) without overflow."""
    input, other = _logaddexp_operands("logaddexp2", input, other)
    m = maximum(input, other)
    out = m + log1p(exp2(-(input - other).abs())) / math.log(2)
    return where(isinf(m) & (input == other), m, out)


def deg2rad(input):
    """deg2rad(input) -> Tensor

    input converted from degrees to radians (integers become the default float dtype)."""
    return _float(input) * (math.pi / 180)


def rad2deg(input):
    """rad2deg(input: Tensor, *, out: Optional[Tensor]) -> Tensor

    input converted from radians to degrees (integers become the default float dtype)."""
    return _float(input) * (180 / math.pi)


def logit(input, eps=None):
    """logit(input, eps=None) -> Tensor

    log(p / (1 - p)) of input, first clamped to [eps, 1 - eps] when eps is given."""
    _refuse_complex("logit", input)
    x = _float(input)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return log(x / (1 - x))


def heaviside(input, values):
    """heaviside(input, values) -> Tensor

    The step function: 0 where input < 0, 1 where input > 0, values where input == 0."""
    _both_tensors("heaviside", input, values, "values")
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    step = (input > 0).to(input.dtype)
    return where(input == 0, values, step)


def float_power(input, exponent):
    """float_power(input, exponent) -> Tensor

    pow computed in float64 (complex128 when either operand is complex)."""
    dt = complex128 if builtins.any(_is_complex(x) for x in (input, exponent)) else float64
    a = input.to(dt) if isinstance(input, Tensor) else full([], input, dtype=dt)
    b = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    return a**b  # the Tensor operator, which takes the complex path


def float_power_(self, exponent):
    """float_power_(exponent) -> Tensor

    In-place float_power(): self must already have the result's dtype (float64/complex128)."""
    result = float_power(self, exponent)
    if self.dtype != result.dtype:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {scalar_type_name(self.dtype)} but the "
            f"operation's result requires dtype {scalar_type_name(result.dtype)}"
        )
    return self.copy_(result)


def _is_complex(x):
    return x.dtype.is_complex if isinstance(x, Tensor) else isinstance(x, builtins.complex)


def positive(input):
    """positive(input) -> Tensor

    input itself (unary plus); refused for bool tensors, as torch does."""
    if input.dtype == _C.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input, other, alpha=1):
    """rsub(input, other, *, alpha=1) -> Tensor

    other - alpha * input: sub with its operands swapped."""
    return sub(other, input, alpha=alpha)


def ldexp(input, other):
    """ldexp(input, other) -> Tensor

    input * 2**other, as torch's: a floating input scaled by integer exponents keeps its dtype,
    otherwise the product with pow(2.0, other) (computed in other's dtype, as torch's)."""
    _both_tensors("ldexp", input, other)
    if input.dtype.is_floating_point and not (
        other.dtype.is_floating_point or other.dtype.is_complex
    ):
        if other.dtype == _C.bool:  # torch's exponent kernel has integer types only
            raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
        return input * _C.pow(2.0, other).to(input.dtype)
    return input * (2.0**other)


def _euclid(a, b):
    a, b = a.abs(), b.abs()
    while builtins.bool((b != 0).any()):
        nz = b != 0
        safe = where(nz, b, ones([], dtype=b.dtype))
        a, b = where(nz, b, a), where(nz, a % safe, b)
    return a


def _integer_operands(name, input, other):
    """Both operands broadcast in their promoted dtype, which must be an integer type."""
    _both_tensors(name, input, other)
    dt = result_type(input, other)
    if dt.is_floating_point or dt.is_complex or dt == _C.bool:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(dt)}'")
    return broadcast_tensors(input.to(dt), other.to(dt))


def gcd(input, other):
    """gcd(input, other) -> Tensor

    The elementwise greatest common divisor of two integer tensors (never negative)."""
    return _euclid(*_integer_operands("gcd", input, other))


def lcm(input, other):
    """lcm(input, other) -> Tensor

    The elementwise least common multiple of two integer tensors (never negative)."""
    input, other = _integer_operands("lcm", input, other)
    g = _euclid(input, other)
    safe = where(g == 0, ones([], dtype=g.dtype), g)
    return where(g == 0, g, (input // safe * other).abs())


def mvlgamma(input, p):
    """mvlgamma(input, p) -> Tensor

    The log of the multivariate gamma function of dimension p, elementwise."""
    if isinstance(input, Tensor) and input.dtype == _C.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    _refuse_complex("arange", input)  # torch fails in the arange of its offsets
    x = _float(input)
    terms = stack([lgamma(x - j / 2) for j in range(p)]).sum(0)
    return terms + p * (p - 1) / 4 * math.log(math.pi)


@_reads_values
def frexp(input):
    """frexp(input) -> (Tensor mantissa, Tensor exponent)

    Splits input into mantissa in [0.5, 1) and integer exponent with input = m * 2 ** e."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    import numpy as np

    x = input.detach()
    # numpy has no bfloat16: its values are exact in float32, and so are their mantissas
    a = (x.float() if x.dtype == _C.bfloat16 else x).numpy()
    m, e = np.frexp(a)
    mantissa = from_numpy(m.astype(a.dtype)).to(input.dtype)
    return return_types.frexp((mantissa, from_numpy(e.astype(np.int32))))


def nextafter(input, other):
    """nextafter(input, other) -> Tensor

    The next representable value after input in the direction of other."""
    import numpy as np

    _both_tensors("nextafter", input, other)
    dtype = result_type(input, other)
    if not dtype.is_floating_point:
        raise NotImplementedError(
            f'"nextafter_cpu" not implemented for \'{scalar_type_name(dtype)}\''
        )
    a, b = broadcast_tensors(input.to(dtype), other.to(dtype))
    if dtype == _C.bfloat16:  # numpy has no bfloat16: step its bits (as uint16) directly
        bits = a.detach().view(_C.int16).numpy().view(np.uint16).astype(np.int32)
        x, y = a.detach().float().numpy(), b.detach().float().numpy()
        up = (y > x) == (x > 0)
        step = np.where(x == 0, np.where(y > 0, 1, 0x8001) - bits, np.where(up, 1, -1))
        out = (bits + step).astype(np.uint16)
        out = np.where(x == y, b.detach().view(_C.int16).numpy().view(np.uint16), out)
        out = np.where(np.isnan(x) | np.isnan(y), np.uint16(0x7FC0), out)
        return from_numpy(np.array(out.view(np.int16))).view(_C.bfloat16)
    out = np.nextafter(a.detach().numpy(), b.detach().numpy())
    return from_numpy(np.array(out, copy=True))  # np.array keeps a 0-d result 0-d


def equal(input, other):
    """equal(input, other) -> bool

    True if both tensors have the same shape and elements."""
    _both_tensors("equal", input, other)
    if input.is_quantized:
        from .quantized import _equal

        return _equal(input, other)
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all())


def _both_tensors(fn, input, other, second="other"):
    for pos, (name, x) in enumerate((("input", input), (second, other)), 1):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}"
            )


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor

    Where |input - other| <= atol + rtol * |other| (and, with equal_nan, NaN meets NaN)."""
    _both_tensors("isclose", input, other)
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"{scalar_type_name(input.dtype)} did not match {scalar_type_name(other.dtype)}"
        )
    if rtol < 0 or atol < 0:
        which, value = ("rtol", rtol) if rtol < 0 else ("atol", atol)
        raise RuntimeError(f"{which} must be greater than or equal to zero, but got {value:g}")
    close = input == other
    if equal_nan and input.dtype.is_floating_point:
        close = close | (input.isnan() & other.isnan())
    if rtol == 0 and atol == 0:  # the inequality degenerates to the equality above
        return close
    # integer and bool inputs are compared in the default float dtype (their difference would
    # wrap), as torch
    if not input.dtype.is_floating_point and not input.dtype.is_complex:
        input, other = input.to(get_default_dtype()), other.to(get_default_dtype())
    allowed = atol + (rtol * other).abs()
    actual = (input - other).abs()
    # an infinite difference is never within tolerance (rtol * inf would admit it): infinities
    # are close only to themselves, through the == above
    return close | (actual.isfinite() & (actual <= allowed))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
        equal_nan: bool = False) -> bool

    True if isclose holds for every element pair."""
    _both_tensors("allclose", input, other)
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


# NumPy-style names torch keeps for its inverse trigonometric functions.
arccos, arccosh, arcsin, arcsinh = acos, acosh, asin, asinh

arctan, arctanh = atan, atanh


# --- method forms (installed by _tensor_methods) -----------------------------------------


def lerp_(self, end, weight):
    """lerp_(end, weight) -> Tensor

    In-place form of lerp()."""
    return self.copy_(lerp(self, end, weight))


def _refuse_complex_bound(self, bound, kernel, inplace):
    """torch refuses clamp_min/clamp_max of a complex tensor as clamp does for a number bound,
    and through maximum's/minimum's kernel for a tensor bound (after the in-place shape check)."""
    if not self.dtype.is_complex:
        return
    if not isinstance(bound, Tensor):
        raise NotImplementedError("clamp is not supported for complex types")
    shape = list(_C.broadcast_shapes(self.shape, bound.shape))
    if inplace and shape != list(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {shape}"
        )
    raise NotImplementedError(
        f"\"{kernel}_cpu\" not implemented for '{scalar_type_name(self.dtype)}'"
    )


def clamp_min(self, min):
    """clamp_min(min) -> Tensor

    Clamps self from below at min."""
    if self.is_quantized:  # torch has no quantized kernel for it
        _C._quantized.check_bounds(self, "clamp_min", min, None)
    _refuse_complex_bound(self, min, "maximum", False)
    return self.clamp(min=min)


def clamp_max(self, max):
    """clamp_max(max) -> Tensor

    Clamps self from above at max."""
    if self.is_quantized:  # torch has no quantized kernel for it
        _C._quantized.check_bounds(self, "clamp_max", None, max)
    _refuse_complex_bound(self, max, "minimum", False)
    return self.clamp(max=max)


def clamp_min_(self, min):
    """clamp_min_(min) -> Tensor

    In-place form of clamp_min()."""
    if self.is_quantized:  # torch has no quantized kernel for it
        _C._quantized.check_bounds(self, "clamp_min", min, None)
    _refuse_complex_bound(self, min, "maximum", True)
    return self.clamp_(min=min)


def clamp_max_(self, max):
    """clamp_max_(max) -> Tensor

    In-place form of clamp_max()."""
    if self.is_quantized:  # torch has no quantized kernel for it
        _C._quantized.check_bounds(self, "clamp_max", None, max)
    _refuse_complex_bound(self, max, "minimum", True)
    return self.clamp_(max=max)


def _polygamma(self, n):
    """polygamma(n) -> Tensor

    polygamma(n, self): the n-th derivative of digamma."""
    return polygamma(n, self)


def _polygamma_(self, n):
    """polygamma_(n) -> Tensor

    In-place form of polygamma()."""
    return self.copy_(polygamma(n, self))


# ---- torch's grad_fn names (see _names.py) ----


def _scalar_overload(name):
    """torch's overloads: Tensor-Tensor `name`0, Scalar-Tensor `name`1, Tensor-Scalar `name`2."""

    def namer(args, kwargs):
        a, b = _names.arg(args, kwargs, 0, "input"), _names.arg(args, kwargs, 1, "other")
        if not isinstance(a, Tensor):
            return f"{name}1"
        return f"{name}0" if isinstance(b, Tensor) else f"{name}2"

    return namer


def _bound_name(name, key):
    """clamp_min/clamp_max: a number bound `name`0, a tensor bound `name`1."""

    def namer(args, kwargs):
        return f"{name}{1 if isinstance(_names.arg(args, kwargs, 1, key), Tensor) else 0}"

    return namer


xlogy = _names.named(xlogy, _scalar_overload("XlogyBackward"))
logaddexp = _names.named(logaddexp, "LogaddexpBackward0")
logit = _names.named(logit, "LogitBackward0")
logaddexp2 = _names.named(logaddexp2, "Logaddexp2Backward0")
rsub = _names.named(
    rsub,
    lambda args, kwargs: (
        "RsubBackward0"
        if isinstance(_names.arg(args, kwargs, 1, "other"), Tensor)
        else "RsubBackward1"
    ),
)
clamp_min = _names.named(clamp_min, _bound_name("ClampMinBackward", "min"))
clamp_max = _names.named(clamp_max, _bound_name("ClampMaxBackward", "max"))
