"""Complex numbers: constructors, parts as views, conjugation, and the complex paths of the
elementwise, reduction and product ops.

The core stores complex64/complex128 natively and its copy, add/sub/mul/div, eq/ne and sum
kernels take them (with torch's conjugate Wirtinger gradients). The other ops reach complex
tensors here: each is composed from real kernels over the parts (`view_as_real`), so its
gradient follows from the real ops' gradients and matches torch's convention without a formula
of its own. `install()` puts these paths in front of the real functions and Tensor methods: a
call with a complex tensor argument takes the complex path, every other call goes straight on.
"""

import builtins
import functools
import math

from .. import _C
from .._autocast_policy import fp32 as _autocast_fp32
from .._C import Tensor, view_as_complex, view_as_real
from .._ops import _names
from .._type_info import dtype_of_to_call, scalar_type_name
from ._util import wrap_dim
from .complex_cast import copy_guard, warn_discard_imag
from .creation import full, full_like, ones, ones_like, tensor, zeros, zeros_like
from .index import where as _real_where

__all__ = [
    "cfloat",
    "cdouble",
    "complex",
    "polar",
    "view_as_real",
    "view_as_complex",
    "conj",
    "conj_physical",
    "resolve_conj",
    "resolve_neg",
    "is_conj",
    "is_neg",
    "real",
    "imag",
    "angle",
    "sgn",
    "isreal",
    "vdot",
]

cfloat = _C.complex64
cdouble = _C.complex128


# The binding's own is_complex, called directly: while a function mode is active, Tensor's
# attributes are routing wrappers, and the dtype checks here must not reach the modes.
_IS_COMPLEX = Tensor.is_complex


def _is_c(x):
    if not isinstance(x, Tensor):
        return False
    try:
        return _IS_COMPLEX(x)
    except TypeError:  # vmap's BatchedTensor (a function captured before vmap): its own flag
        return x.is_complex()


def _re(z):
    return view_as_real(z).select(-1, 0)


def _im(z):
    return view_as_real(z).select(-1, 1)


def _real_dtype(dtype):
    return _C.float64 if dtype == cdouble else _C.float32


def _complex_dtype(dtype):
    return cdouble if dtype in (cdouble, _C.float64) else cfloat


def _as_complex(x, dtype=None):
    """x (tensor or Python number) as a complex tensor of `dtype` (or x's complex type)."""
    if not isinstance(x, Tensor):
        x = tensor(builtins.complex(x), dtype=dtype or _default_complex())
    if dtype is None:
        dtype = _complex_dtype(x.dtype)
    return x if x.dtype == dtype else x.to(dtype)


def _default_complex():
    return cdouble if _C.get_default_dtype() == _C.float64 else cfloat


def _make(re, im):
    """The complex tensor re + i*im (broadcast, differentiable through both parts)."""
    re, im = _C.broadcast_tensors(re, im)
    # contiguous parts: stack keeps its inputs' layout, and a transposed part would leave the
    # pair dim with strides view_as_complex refuses
    return view_as_complex(_C.stack([re.contiguous(), im.contiguous()], -1))


def complex(real, imag, *, out=None):
    """complex(real, imag, *, out=None) -> Tensor

    The complex tensor real + i * imag from two float or double tensors of the same dtype."""
    _check_parts("complex", real, imag, ("real", "imag"))
    if real.dtype == _C.float16:  # torch's result is complex32, a dtype ember lacks
        raise RuntimeError("complex: complex32 (ComplexHalf) is not supported")
    result = _make(real, imag)
    return out.copy_(result) if out is not None else result


def _check_parts(fn, first, second, names):
    """torch's checks of complex()/polar()'s two tensors, in its order."""
    for pos, (name, x) in enumerate(zip(names, (first, second)), 1):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}"
            )
    a, b = first.dtype, second.dtype
    if not builtins.all(d in (_C.float16, _C.float32, _C.float64) for d in (a, b)):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{scalar_type_name(a)} and {scalar_type_name(b)}"
        )
    if a != b:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(a)} but got scalar type "
            f"{scalar_type_name(b)} for second argument"
        )


@_autocast_fp32
def polar(abs, angle, *, out=None):
    """polar(abs, angle, *, out=None) -> Tensor

    The complex tensor abs * (cos(angle) + i * sin(angle))."""
    _check_parts("polar", abs, angle, ("abs", "angle"))
    if abs.dtype == _C.float16:
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    result = complex(abs * _C.cos(angle), abs * _C.sin(angle))
    return out.copy_(result) if out is not None else result


polar = _names.named(polar, "PolarBackward0")


def conj(input):
    """conj(input) -> Tensor

    The complex conjugate; a real tensor is returned as it is. ember computes it eagerly (a new
    tensor, is_conj() False), which reads the same as torch's lazy conjugate view."""
    return _C.conj_physical(input) if _is_c(input) else input


def conj_physical(input, *, out=None):
    """conj_physical(input, *, out=None) -> Tensor

    The complex conjugate computed into a new tensor; a real tensor is returned as it is."""
    result = _C.conj_physical(input)
    return out.copy_(result) if out is not None else result


def resolve_conj(input):
    """resolve_conj(input) -> Tensor

    input itself: ember's conjugates are already materialized."""
    return input


resolve_neg = resolve_conj


def is_conj(input):
    """is_conj(input) -> bool

    Always False: ember conjugates eagerly, so no tensor carries a conjugate bit."""
    return False


def is_neg(input):
    """is_neg(input) -> bool

    Always False: ember negates eagerly, so no tensor carries a negative bit."""
    return False


def real(input):
    """real(input) -> Tensor

    The real part: a view of a complex tensor's real parts; a real tensor is returned as it is."""
    return _re(input) if _is_c(input) else input


def imag(input):
    """imag(input) -> Tensor

    The imaginary part of a complex tensor, as a view into its memory."""
    if not _is_c(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _im(input)


def isreal(input):
    """isreal(input) -> Tensor

    A bool tensor that is True where the element's imaginary part is zero."""
    if _is_c(input):
        return _im(input) == 0
    return ones_like(input, dtype=_C.bool)


def _abs_c(z):
    from ..autograd.function import Function

    class _Abs(Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return _C.hypot(_re(z), _im(z))

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            return grad * _sgn_c(z)

    return _Abs.apply(z)


def _sgn_c(z):
    r = _C.hypot(_re(z), _im(z))
    safe = _real_where(r == 0, ones_like(r), r)
    out = z / safe
    return _where(r == 0, zeros_like(z), out) if builtins.bool((r == 0).any()) else out


def _angle_c(z):
    return _C.atan2(_im(z), _re(z))


def angle(input, *, out=None):
    """angle(input, *, out=None) -> Tensor

    The argument of each element in radians: atan2(imag, real) for complex input; pi for
    negative reals and 0 otherwise for real input (NaN stays NaN)."""
    if _is_c(input):
        result = _angle_c(input)
    else:
        x = input if input.dtype.is_floating_point else input.to(_C.get_default_dtype())
        result = _real_where(x < 0, full([], math.pi, dtype=x.dtype), zeros([], dtype=x.dtype))
        result = _real_where(_C.isnan(x), x, result)
    return out.copy_(result) if out is not None else result


def sgn(input, *, out=None):
    """sgn(input, *, out=None) -> Tensor

    z / abs(z) for complex elements (0 where z is 0); the sign for real tensors."""
    result = _sgn_c(input) if _is_c(input) else input.sign()
    return out.copy_(result) if out is not None else result


def vdot(input, other, *, out=None):
    """vdot(input, other, *, out=None) -> Tensor

    The dot product of two 1-d tensors with the first conjugated: sum(conj(input) * other)."""
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    result = (conj(input) * other).sum() if (_is_c(input) or _is_c(other)) else _C.dot(input, other)
    return out.copy_(result) if out is not None else result


# --- complex paths of existing ops ---------------------------------------------------------------


def _exp(z):
    x, y = _re(z), _im(z)
    e = _C.exp(x)
    re, im = e * _C.cos(y), e * _C.sin(y)
    if not bool(_C.isfinite(e).all()) or not bool(_C.isfinite(y).all()):
        # C99's cexp at the edges, as torch's: a zero angle gives exp(x) + 0i exactly (3**300
        # is inf + 0i, not inf + nan i); x = +inf with a non-finite angle is inf + nan i, and
        # x = -inf with one is 0 + 0i
        flat = y == 0
        re, im = _real_where(flat, e, re), _real_where(flat, y, im)
        bad_y = ~_C.isfinite(y)
        up, down = (x == math.inf) & bad_y, (x == -math.inf) & bad_y
        re = _real_where(up, full_like(re, math.inf), _real_where(down, zeros_like(re), re))
        im = _real_where(up, full_like(im, math.nan), _real_where(down, zeros_like(im), im))
    return _make(re, im)


def _log(z):
    return _make(_C.log(_abs_c(z)), _angle_c(z))


def _sqrt(z):
    r, t = _C.sqrt(_abs_c(z)), _angle_c(z) * 0.5
    return _make(r * _C.cos(t), r * _C.sin(t))


def _sin(z):
    x, y = _re(z), _im(z)
    return _make(_C.sin(x) * _C.cosh(y), _C.cos(x) * _C.sinh(y))


def _cos(z):
    x, y = _re(z), _im(z)
    return _make(_C.cos(x) * _C.cosh(y), -(_C.sin(x) * _C.sinh(y)))


def _sinh(z):
    x, y = _re(z), _im(z)
    return _make(_C.sinh(x) * _C.cos(y), _C.cosh(x) * _C.sin(y))


def _cosh(z):
    x, y = _re(z), _im(z)
    return _make(_C.cosh(x) * _C.cos(y), _C.sinh(x) * _C.sin(y))


def _tanh(z):
    x2, y2 = _re(z) * 2, _im(z) * 2
    d = _C.cosh(x2) + _C.cos(y2)
    return _make(_C.sinh(x2) / d, _C.sin(y2) / d)


def _tan(z):
    x2, y2 = _re(z) * 2, _im(z) * 2
    d = _C.cos(x2) + _C.cosh(y2)
    return _make(_C.sin(x2) / d, _C.sinh(y2) / d)


def _reciprocal(z):
    x, y = _re(z), _im(z)
    d = x * x + y * y
    return _make(x / d, -y / d)


def _neg(z):
    # each part negated, as torch's: z * -1 would give -1 + 0j for 1 + 0j (torch: -1 - 0j)
    return view_as_complex(_C.neg(view_as_real(z)))


_neg = _names.named(_neg, "NegBackward0")


def _square(z):
    return z * z


def _sigmoid(z):
    return _reciprocal(_exp(_neg(z)) + 1)


def _rsqrt(z):
    return _reciprocal(_sqrt(z))


def _log10(z):
    return _log(z) / math.log(10.0)


def _log2(z):
    return _log(z) / math.log(2.0)


def _pow(input, exponent):
    if not isinstance(input, Tensor):  # a Python number raised to a complex tensor
        base = _as_complex(input, _complex_dtype(exponent.dtype))
        return _exp(exponent * _log(base))
    if not isinstance(exponent, Tensor) and not isinstance(exponent, builtins.complex):
        if exponent == 2:
            return input * input
        if exponent == 1:
            return input * 1
        if exponent == 0:
            return ones_like(input)
    # the log in the promoted dtype: int64 ** complex128 is computed in complex128, as torch's
    z = _as_complex(input, _complex_dtype(_C.result_type(input, exponent)))
    return _exp(_log(z) * exponent)


def _real_pair_op(fn):
    """An op over the parts: fn applied to the real view, the pair dim kept last."""

    def run(z, *args, **kwargs):
        return view_as_complex(fn(view_as_real(z), *args, **kwargs).contiguous())

    return run


def _prod(input, dim=None, keepdim=False, *, dtype=None):
    z = input if dtype is None else input.to(dtype)
    if not z.is_complex():  # a real dtype= casts first (torch's warning), then the real op
        return _C.prod(z, keepdim=keepdim) if dim is None else _C.prod(z, dim, keepdim)
    if dim is not None and z.dim() == 0:  # the value itself, once sum has checked dim
        return z.sum(dim, keepdim)
    if dim is None:
        z, dim = z.reshape(-1), 0
    dim = wrap_dim(dim, z.dim())
    z = z.movedim(dim, 0)
    while z.shape[0] > 1:
        n = z.shape[0]
        half = n // 2
        head = z[:half] * z[half : 2 * half]
        z = _cat([head, z[2 * half :]], 0) if n % 2 else head
    if z.shape[0] == 0:
        z = ones((1,) + tuple(z.shape[1:]), dtype=z.dtype)
    z = z.movedim(0, dim) if keepdim else z.squeeze(0)
    return z


def _same_dtype(what, a, b):
    """torch's products take one dtype: a complex operand does not promote the other."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype != b.dtype:
        raise RuntimeError(
            f"{what}: expected both operands to have the same dtype, but got "
            f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}"
        )


def _matmul_parts(fn, a, b):
    ct = _complex_dtype(_C.promote_types(a.dtype, b.dtype))
    if not _is_c(a):
        a2 = a.to(_real_dtype(ct))
        b = _as_complex(b, ct)
        return _make(fn(a2, _re(b)), fn(a2, _im(b)))
    if not _is_c(b):
        b2 = b.to(_real_dtype(ct))
        a = _as_complex(a, ct)
        return _make(fn(_re(a), b2), fn(_im(a), b2))
    a, b = _as_complex(a, ct), _as_complex(b, ct)
    ar, ai, br, bi = _re(a), _im(a), _re(b), _im(b)
    return _make(fn(ar, br) - fn(ai, bi), fn(ar, bi) + fn(ai, br))


def _dot(a, b):
    return (a * b).sum()


def _checked(what, path):
    """dot's complex path: torch's dot takes one dtype. (The matrix products keep promoting a
    real operand to complex, as numpy does: ember's own callers and tests rely on it.)"""

    def run(a, b, *args, **kwargs):
        _same_dtype(what, a, b)
        return path(a, b, *args, **kwargs)

    return run


def _isnan(z):
    return _C.isnan(_re(z)) | _C.isnan(_im(z))


def _isinf(z):
    return _C.isinf(_re(z)) | _C.isinf(_im(z))


def _isfinite(z):
    return _C.isfinite(_re(z)) & _C.isfinite(_im(z))


def _isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    for pos, (name, x) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(x, Tensor):  # the parser's refusal
            raise TypeError(
                f"isclose(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{type(x).__name__}"
            )
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"{scalar_type_name(input.dtype)} did not match {scalar_type_name(other.dtype)}"
        )
    ct = _complex_dtype(_C.promote_types(input.dtype, other.dtype))
    a, b = _as_complex(input, ct), _as_complex(other, ct)
    diff = _abs_c(a - b)
    ok = diff <= atol + rtol * _abs_c(b)
    ok = ok | (a == b)
    if equal_nan:
        ok = ok | (_isnan(a) & _isnan(b))
    return ok


def _allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(_isclose(input, other, rtol, atol, equal_nan).all())


def _cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    if builtins.any(t.dim() != 1 or t.shape[0] != 0 for t in tensors):
        # torch's legacy rule: a 1-D empty tensor is skipped beside tensors of other shapes
        tensors = [t for t in tensors if t.dim() != 1 or t.shape[0] != 0]
    ct = tensors[0].dtype
    for t in tensors[1:]:
        ct = _C.promote_types(ct, t.dtype)
    d = wrap_dim(dim, tensors[0].dim())
    parts = [view_as_real(_as_complex(t, ct)) for t in tensors]
    result = view_as_complex(_C.cat(parts, d).contiguous())
    return out.copy_(result) if out is not None else result


def _stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    d = wrap_dim(dim, tensors[0].dim() + 1)
    return _cat([t.unsqueeze(d) for t in tensors], d, out=out)


def _where(condition, input, other):
    ct = _complex_dtype(
        _C.promote_types(
            input.dtype if isinstance(input, Tensor) else _default_complex(),
            other.dtype if isinstance(other, Tensor) else _default_complex(),
        )
    )
    a, b = _as_complex(input, ct), _as_complex(other, ct)
    c = condition.unsqueeze(-1)
    return view_as_complex(_real_where(c, view_as_real(a), view_as_real(b)).contiguous())


def _dim_op(fn):
    """An op taking `dims` that must not reach the trailing pair dim: dims made non-negative."""

    def run(z, *args, **kwargs):
        return view_as_complex(fn(view_as_real(z), *args, **kwargs).contiguous())

    return run


def _flip(z, dims):
    if z.dim() == 0:  # nothing to reorder: the real op checks the dims, as torch's
        return _make(_C.flip(_re(z), dims), _im(z))
    dims = [d % z.dim() for d in ([dims] if isinstance(dims, int) else dims)]
    return view_as_complex(_C.flip(view_as_real(z), dims).contiguous())


def _roll(z, shifts, dims=None):
    if z.dim() == 0:
        return _make(_C.roll(_re(z), shifts, dims if dims is not None else []), _im(z))
    if dims is None:
        return _roll(z.reshape(-1), shifts, 0).reshape(z.shape)
    dims = [d % z.dim() for d in ([dims] if isinstance(dims, int) else dims)]
    return view_as_complex(_C.roll(view_as_real(z), shifts, dims).contiguous())


def _index_select(z, dim, index):
    return view_as_complex(_C.index_select(view_as_real(z), dim % z.dim(), index).contiguous())


def _mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {scalar_type_name(dtype)}"
        )
    z = input if dtype is None else input.to(dtype)
    total = z.sum() if dim is None else z.sum(dim, keepdim)  # checks dim (a 0-d z takes 0, -1)
    # the count of elements per result: 0 over an empty dim (nan + nan i, as torch's 0 / 0)
    return total / (z.numel() // total.numel() if total.numel() else 1)


def _recip_any(b):
    return _reciprocal(b) if _is_c(b) else 1 / b


def _div(input, other, *, rounding_mode=None, out=None):
    """input / other with a complex operand, as input * (1 / other): the core's division
    gradient for complex operands needs a complex negation the core lacks."""
    if rounding_mode is not None:
        raise RuntimeError("div: rounding_mode is not supported for complex inputs")
    if not isinstance(other, Tensor) and other == 0:  # Python's 1 / 0 raises: divide by a 0-d
        other = (  # tensor of it, as torch's wrapped number
            _as_complex(other, input.dtype if _is_c(input) else _complex_dtype(input.dtype))
            if isinstance(other, builtins.complex)
            else tensor(0.0)  # torch divides by |0|
        )
    if not isinstance(other, Tensor):
        if not _is_c(input):  # a half input meets the number's reciprocal in complex64
            input = input.to(_complex_dtype(input.dtype))
        result = input * (1 / other)
    elif not isinstance(input, Tensor):
        if not _is_c(other):  # torch.div(number, half tensor) divides in complex64
            other = other.to(_real_dtype(_complex_dtype(other.dtype)))
        result = _recip_any(other) * input
    else:
        if not _is_c(other):  # a half divisor's reciprocal is taken in the result's precision
            other = other.to(_real_dtype(_C.promote_types(input.dtype, other.dtype)))
        result = input * _recip_any(other)
    result = _by_complex_zero(input, other, result)
    return out.copy_(result) if out is not None else result


def _by_complex_zero(input, other, result):
    """c10's complex division by exactly 0 + 0i: each part of input over |0| (inf, or nan for
    0 / 0), where input * (1 / other) gives nan + nan i (or -inf for a -0.0)."""
    if not isinstance(other, Tensor) or not _is_c(result):
        return result
    zero = _C.eq(_re(other), 0) & _C.eq(_im(other), 0) if _is_c(other) else _C.eq(other, 0)
    if not bool(zero.any()):
        return result
    num = _as_complex(input, result.dtype)
    re = _real_where(zero, _re(num) / 0.0, _re(result))
    im = _real_where(zero, _im(num) / 0.0, _im(result))
    return _make(re, im)


def _rdiv(self, other):
    return _recip_any(self) * other  # torch's __rtruediv__: reciprocal, then the product


# (name, complex path, which positional args may be complex)
_PATHS = {
    "exp": (_exp, 1),
    "log": (_log, 1),
    "log10": (_log10, 1),
    "log2": (_log2, 1),
    "sqrt": (_sqrt, 1),
    "rsqrt": (_rsqrt, 1),
    "sin": (_sin, 1),
    "cos": (_cos, 1),
    "tan": (_tan, 1),
    "sinh": (_sinh, 1),
    "cosh": (_cosh, 1),
    "tanh": (_tanh, 1),
    "sigmoid": (_sigmoid, 1),
    "reciprocal": (_reciprocal, 1),
    "neg": (_neg, 1),
    "negative": (_neg, 1),
    "square": (_square, 1),
    "abs": (_abs_c, 1),
    "absolute": (_abs_c, 1),
    "pow": (_pow, 2),
    "prod": (_prod, 1),
    "mean": (_mean, 1),
    "matmul": (functools.partial(_matmul_parts, _C.matmul), 2),
    "mm": (functools.partial(_matmul_parts, _C.mm), 2),
    "bmm": (functools.partial(_matmul_parts, _C.bmm), 2),
    "mv": (functools.partial(_matmul_parts, _C.mv), 2),
    "dot": (_checked("dot", _dot), 2),
    "inner": (_dot, 2),
    "isnan": (_isnan, 1),
    "isinf": (_isinf, 1),
    "isfinite": (_isfinite, 1),
    "isclose": (_isclose, 2),
    "allclose": (_allclose, 2),
    "flip": (_flip, 1),
    "roll": (_roll, 1),
    "index_select": (_index_select, 1),
    "vdot": (vdot, 2),
    "div": (_div, 2),
    "divide": (_div, 2),
    "true_divide": (_div, 2),
}
_LIST_PATHS = {"cat": _cat, "concat": _cat, "concatenate": _cat, "stack": _stack}
_METHOD_EXTRA = {
    "__neg__": (_neg, 1),
    "__abs__": (_abs_c, 1),
    "__pow__": (_pow, 2),
    "__matmul__": (functools.partial(_matmul_parts, _C.matmul), 2),
    "__rmatmul__": (lambda a, b: _matmul_parts(_C.matmul, b, a), 2),
    "__truediv__": (_div, 2),
    "__rtruediv__": (_rdiv, 2),
    "__rpow__": (lambda self, other: _pow(other, self), 2),
}


def _in_place(path):
    """The in-place form of a complex path: the result written into self (a complex result
    into a real self is torch's cast error)."""

    def run(self, *args):
        result = path(self, *args)
        if not _is_c(self):
            raise RuntimeError(
                f"result type {scalar_type_name(result.dtype)} can't be cast to the desired output "
                f"type {scalar_type_name(self.dtype)}"
            )
        return self.copy_(result)

    return run


def _no_complex(name):
    def run(a, b, *args, **kwargs):
        if not isinstance(a, Tensor):  # the parser's refusals come first
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}"
            )
        if not isinstance(b, Tensor):
            raise TypeError(
                f"{name}(): argument 'other' (position 2) must be Tensor, not {type(b).__name__}"
            )
        raise RuntimeError(f"{name} not implemented for complex tensors.")

    return run


def _no_clamp(input, min=None, max=None, *, out=None):
    """clamp/clip refuse complex tensors (no order), after clamp's own check that a bound is
    given (clamp_min/clamp_max of a tensor bound reach the maximum/minimum kernels' refusal)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    raise NotImplementedError("clamp is not supported for complex types")


def _nonzero(x):
    if _is_c(x):
        return _C.ne(_re(x), 0) | _C.ne(_im(x), 0)
    return x if not isinstance(x, Tensor) else _C.ne(x, 0)


def _logical(fn):
    """A logical op with a complex operand: a complex value is true where it is nonzero."""

    def run(a, b, *, out=None):
        result = fn(_nonzero(a), _nonzero(b))
        return out.copy_(result) if out is not None else result

    return run


def _no_inplace_abs(z):
    raise RuntimeError("In-place abs is not supported for complex tensors.")


for _name in (
    "exp log log10 log2 sqrt rsqrt sin cos tan sinh cosh tanh sigmoid reciprocal neg "
    "negative square"
).split():
    _METHOD_EXTRA[_name + "_"] = (_in_place(_PATHS[_name][0]), 1)
_METHOD_EXTRA["pow_"] = (_in_place(_pow), 2)
_METHOD_EXTRA["__ipow__"] = (_in_place(_pow), 2)
for _name in ("maximum", "minimum", "fmax", "fmin"):
    _PATHS[_name] = (_no_complex(_name), 2)
for _name in ("logical_and", "logical_or", "logical_xor"):
    _PATHS[_name] = (_logical(getattr(_C, _name)), 2)
_PATHS["logical_not"] = (lambda z: ~_nonzero(z), 1)
for _name in ("logical_and", "logical_or", "logical_xor", "logical_not"):
    # in place, the bool result is written in self's dtype (1 + 0j for a complex self)
    _METHOD_EXTRA[_name + "_"] = (
        functools.partial(
            lambda path, self, *other: self.copy_(path(self, *other)), _PATHS[_name][0]
        ),
        1 if _name == "logical_not" else 2,
    )


def _unsupported(name):
    def run(*args, **kwargs):
        raise RuntimeError(f"{name} is not supported for complex tensors.")

    return run


for _name in ("deg2rad", "rad2deg"):
    _PATHS[_name] = (_unsupported(_name), 1)
    _METHOD_EXTRA[_name + "_"] = (_unsupported(_name), 1)
for _name in ("clamp", "clip"):
    _PATHS[_name] = (_no_clamp, 1)
    _METHOD_EXTRA[_name + "_"] = (_no_clamp, 1)
_METHOD_EXTRA["abs_"] = (_no_inplace_abs, 1)
del _name


def _guard(orig, path, nargs):
    """orig behind ember._C._complex_guard: complex arguments go to path (checked in C++, so a
    real call costs no Python frame)."""
    return functools.update_wrapper(_C._complex_guard(orig, path, nargs), orig)


def _list_guard(orig, path):
    return _guard(orig, path, -1)


def _where_guard(orig):
    @functools.wraps(orig)
    def f(condition, *args, **kwargs):
        if len(args) == 2 and builtins.any(
            _is_c(a) or isinstance(a, builtins.complex) for a in args
        ):
            return _where(condition, *args)
        return orig(condition, *args, **kwargs)

    return f


def _to_guard(orig):
    """Tensor.to that warns for a complex -> real cast (complex_cast.py) and keeps the gradient
    of a real tensor made complex (the core's copy records no gradient into a complex result):
    such a cast becomes complex(x, 0)."""

    @functools.wraps(orig)
    def to(self, *args, **kwargs):
        dt = dtype_of_to_call(args, kwargs)
        if dt is not None and self.dtype.is_complex and not dt.is_complex:
            warn_discard_imag()
        if (
            dt is not None
            and dt.is_complex
            and not self.dtype.is_complex
            and self.requires_grad
            and _C.is_grad_enabled()
        ):
            x = orig(self, _real_dtype(dt))
            return _make(x, zeros_like(x))
        return orig(self, *args, **kwargs)

    return to


def _set_part(which):
    def setter(self, value):
        if not _is_c(self) and which == 1:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        part = (_re(self) if which == 0 else _im(self)) if _is_c(self) else self
        part.copy_(value if isinstance(value, Tensor) else tensor(value))

    return setter


def _real_property(self):
    return real(self)


def _imag_property(self):
    return imag(self)


PROPERTY_DOCS = {
    "real": "real -> Tensor\n\nThe real parts of a complex tensor as a view (settable); a real "
    "tensor itself.",
    "imag": "imag -> Tensor\n\nThe imaginary parts of a complex tensor as a view (settable).",
}


def guarded_functions(namespace):
    """{name: function} for the package root: each public function of `namespace` that has a
    complex path, wrapped to take that path when a tensor argument is complex."""
    out = {}
    for name, (path, nargs) in _PATHS.items():
        if name in namespace:
            out[name] = _guard(namespace[name], path, nargs)
    for name, path in _LIST_PATHS.items():
        if name in namespace:
            out[name] = _list_guard(namespace[name], path)
    if "where" in namespace:
        out["where"] = _where_guard(namespace["where"])
    from .._numpy_kwargs import accepting_numpy_names
    from . import complex_more as more

    for name, (path, nargs) in more.PATHS.items():
        if name in namespace:  # numpy's axis/keepdims kept for a Python function behind the guard
            out[name] = _guard(
                accepting_numpy_names(namespace[name]), accepting_numpy_names(path), nargs
            )
    if "einsum" in namespace:
        out["einsum"] = more.einsum_guard(namespace["einsum"])
    return out


def tensor_methods(current):
    """{name: attribute} for Tensor's table (ember/_ops/_tensor_methods.py): the complex paths
    in front of the methods `current(name)` gives, the parts as settable properties, and the
    conjugation and stft methods."""
    from .spectral import istft, stft

    out = {}
    for name, (path, nargs) in builtins.list(_PATHS.items()) + builtins.list(_METHOD_EXTRA.items()):
        orig = current(name)
        if orig is not None:
            out[name] = _guard(orig, path, nargs)
    from .._numpy_kwargs import accepting_numpy_names
    from . import complex_more as more

    for name, (path, nargs) in more.PATHS.items():
        if current(name) is not None:
            out[name] = _guard(
                accepting_numpy_names(current(name)), accepting_numpy_names(path), nargs
            )
    if current("__setitem__") is not None:
        out["__setitem__"] = more.setitem_guard(current("__setitem__"))
    if current("to") is not None:
        out["to"] = _to_guard(current("to"))
    if current("copy_") is not None:
        out["copy_"] = copy_guard(current("copy_"))
    out["real"] = property(_real_property, _set_part(0), doc=PROPERTY_DOCS["real"])
    out["imag"] = property(_imag_property, _set_part(1), doc=PROPERTY_DOCS["imag"])
    for name in (
        "conj",
        "conj_physical",
        "resolve_conj",
        "resolve_neg",
        "is_conj",
        "is_neg",
        "angle",
        "sgn",
        "isreal",
    ):
        out[name] = globals()[name]
    out["stft"] = stft
    out["istft"] = istft
    return out
