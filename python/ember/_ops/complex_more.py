"""More complex paths (see complex.py): random draws, item assignment, triangles, scans,
contractions (einsum, tensordot, addmm and kin) and norms, each composed over real kernels so
that its gradient follows torch's conjugate Wirtinger convention from the real ops' gradients."""

import builtins
import functools
import math

from .. import _C
from .._C import Tensor, view_as_complex, view_as_real
from . import complex_reduce as _complex_reduce
from ._util import wrap_dim
from .complex import (
    _abs_c,
    _as_complex,
    _complex_dtype,
    _exp,
    _im,
    _in_place,
    _is_c,
    _log,
    _make,
    _matmul_parts,
    _re,
    _real_dtype,
    _sin,
    _where,
)
from .creation import ones_like, tensor
from .index import where as _real_where

_IS_COMPLEX = Tensor.is_complex


def _vc(x):
    return view_as_complex(x.contiguous())


# --- random draws ----------------------------------------------------------------------------


def normal_c_(self, mean, std, generator):
    """normal_ for a complex tensor: each part drawn with std / sqrt(2) around the parts of
    mean (a complex mean shifts both parts)."""
    m = builtins.complex(mean)
    r = view_as_real(self)
    # a real mean goes into the draw as torch's kernel takes it (the same rounding)
    _C._normal_(r, m.real if m.imag == 0 else 0.0, float(std) / math.sqrt(2.0), generator)
    if m.imag != 0:
        r.select(-1, 0).add_(m.real)
        r.select(-1, 1).add_(m.imag)
    return self


# --- item assignment -------------------------------------------------------------------------


def setitem_guard(orig):
    """Tensor.__setitem__ that accepts a Python complex value for a complex tensor (behind the
    C++ guard, so a real tensor's assignment costs no Python frame)."""

    def path(self, index, value):
        if isinstance(value, builtins.complex):
            value = tensor(value, dtype=self.dtype)
        return orig(self, index, value)

    return functools.update_wrapper(_C._complex_guard(orig, path, 1), orig)


# --- triangles, scans ------------------------------------------------------------------------


def _tri(fn, z, diagonal=0, *, out=None):
    if z.dim() < 2:
        raise RuntimeError(f"{fn.__name__}: input tensor must have at least 2 dimensions")
    result = _vc(fn(view_as_real(z).movedim(-1, 0), diagonal).movedim(0, -1))
    return out.copy_(result) if out is not None else result


def _cumsum(z, dim, *, dtype=None, out=None):
    if dtype is not None:
        z = z.to(dtype)
    if not z.is_complex():  # a real dtype= casts first (torch's warning), then the real scan
        return _C.cumsum(z, dim, out=out) if out is not None else _C.cumsum(z, dim)
    d = wrap_dim(dim, z.dim())
    result = _vc(_C.cumsum(view_as_real(z), d)) if z.dim() else z.clone()
    return out.copy_(result) if out is not None else result


def _cumprod(z, dim, *, dtype=None, out=None):
    """Inclusive product scan by doubling (Hillis-Steele): log2(n) complex multiplies."""
    if dtype is not None:
        z = z.to(dtype)
    if not z.is_complex():
        return _C.cumprod(z, dim, out=out) if out is not None else _C.cumprod(z, dim)
    d = wrap_dim(dim, z.dim())
    if z.dim() == 0:
        return z.clone()
    x = z.movedim(d, 0)
    n, shift = x.shape[0], 1
    while shift < n:
        head = x[:shift]
        x = _C.cat([view_as_real(head), view_as_real(x[shift:] * x[: n - shift])], 0)
        x = _vc(x)
        shift *= 2
    result = x.movedim(0, d)
    return out.copy_(result) if out is not None else result


def _lerp(z, end, weight, *, out=None):
    """torch's lerp formulas for complex operands: z + w (end - z) where |w| < 0.5, else
    end - (end - z) (1 - w), each exact at its end."""
    w_tensor = isinstance(weight, Tensor)
    if end.dtype != z.dtype or (w_tensor and weight.dim() and weight.dtype != z.dtype):
        return _C.lerp(z, end, weight)  # the real op's dtype checks (torch's texts)
    d = end - z
    if w_tensor:
        w = weight.to(z.dtype)
        result = _where(w.abs() < 0.5, z + w * d, end - d * (1 - w))
    else:
        result = z + weight * d if abs(weight) < 0.5 else end - d * (1 - weight)
    return out.copy_(result) if out is not None else result


# --- contractions ----------------------------------------------------------------------------


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _pair_matrix(z):
    """[[re, -im], [im, re]] in two trailing dims: complex products become matrix products."""
    r, i = view_as_real(z).select(-1, 0), view_as_real(z).select(-1, 1)
    return _C.stack([_C.stack([r, -i], -1), _C.stack([i, r], -1)], -2)


def einsum_c(equation, *operands):
    """einsum with complex operands as one real einsum: every complex operand but the last as
    its 2x2 real matrix, chained through fresh indices, the last as its (re, im) pair."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if not arrow:
        seen = [c for c in lhs if c.isalpha()]
        out = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(seen) if seen.count(c) == 1)
        )
    ct = operands[0].dtype
    for t in operands[1:]:
        ct = _C.promote_types(ct, t.dtype)
    ct = _complex_dtype(ct)
    free = [c for c in _LETTERS if c not in eq]
    cidx = [k for k, t in enumerate(operands) if _is_c(t)]
    ops, subs = [], []
    for k, t in enumerate(operands):
        if k not in cidx:
            ops.append(t.to(_real_dtype(ct)))
            subs.append(ins[k])
            continue
        j = cidx.index(k)
        t = _as_complex(t, ct)
        if j == len(cidx) - 1:
            ops.append(view_as_real(t))
            subs.append(ins[k] + free[j])
        else:
            ops.append(_pair_matrix(t))
            subs.append(ins[k] + free[j] + free[j + 1])
    result = _C.einsum(",".join(subs) + "->" + out + free[0], *ops)
    return _vc(result)


def einsum_guard(orig):
    @functools.wraps(orig)
    def einsum(*args):
        if args and isinstance(args[0], str):
            ops = args[1:]
            if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
                ops = ops[0]
            if builtins.any(_is_c(t) for t in ops):
                return einsum_c(args[0], *ops)
        elif builtins.any(_is_c(t) for t in args[0::2]):
            return einsum_c(*_sublist_equation(args))
        return orig(*args)

    return einsum


def _sublist_equation(args):
    from .products import _sublist_letters

    ops = list(args[0::2][: len(args) // 2])
    eq = ",".join(_sublist_letters(s) for s in args[1::2])
    if len(args) % 2 == 1:
        eq += "->" + _sublist_letters(args[-1])
    return (eq, *ops)


def _tensordot(a, b, dims=2, out=None):
    from .products import tensordot

    result = _matmul_parts(lambda x, y: tensordot(x, y, dims), a, b)
    return out.copy_(result) if out is not None else result


def _addmm_family(fn):
    def run(input, a, b, *, beta=1, alpha=1, out=None):
        product = _matmul_parts(fn, a, b)
        if alpha != 1:
            product = product * alpha
        if beta == 0:
            result = product.expand(_C.broadcast_shapes(product.shape, input.shape))
        else:
            result = (input * beta if beta != 1 else input) + product
        return out.copy_(result) if out is not None else result

    return run


def _addbmm_product(a, b):
    return _C.bmm(a, b).sum(0)


# --- norms -----------------------------------------------------------------------------------


def _norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    from .reduce import norm

    if p == "nuc":
        from ..linalg import matrix_norm

        return matrix_norm(input, "nuc", dim if dim is not None else (0, 1), keepdim)
    if dtype is not None and dtype.is_complex:
        dtype = _real_dtype(dtype)
    return norm(_abs_c(input), p, dim, keepdim, dtype)


def _diag(z, diagonal=0, *, out=None):
    from .complex import _make

    if z.dim() not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {z.dim()}D")
    if z.dim() == 1:
        r = view_as_real(z)
        result = _make(_C.diag(r.select(-1, 0), diagonal), _C.diag(r.select(-1, 1), diagonal))
    else:
        result = z.diagonal(diagonal).clone()
    return out.copy_(result) if out is not None else result


def _var(z, *args, **kwargs):
    """var of complex z: the variance of the parts summed (real, as torch's)."""
    r = view_as_real(z)
    return r.select(-1, 0).var(*args, **kwargs) + r.select(-1, 1).var(*args, **kwargs)


def _std(z, *args, **kwargs):
    return _var(z, *args, **kwargs).sqrt()


def _masked_select(z, mask):
    z, mask = _C.broadcast_tensors(z, mask)
    r = view_as_real(z)
    return _vc(r.masked_select(mask.unsqueeze(-1).expand(r.shape)).reshape(-1, 2))


def _index_add_(self, dim, index, source, *, alpha=1):
    from .complex import _as_complex

    if isinstance(alpha, builtins.complex) or _is_c(alpha):
        source = source * alpha
        alpha = 1
    view_as_real(self).index_add_(
        dim % builtins.max(self.dim(), 1),
        index,
        view_as_real(_as_complex(source, self.dtype)),
        alpha=alpha,
    )
    return self


def complex_linear_guard(orig):
    """F.linear behind the C++ guard: a complex input or weight gives x W^T + b over complex
    products."""

    def path(input, weight, bias=None):
        out = _matmul_parts(_C.matmul, input, weight.mT)
        return out + bias if bias is not None else out

    return functools.update_wrapper(_C._complex_guard(orig, path, 2), orig)


# --- exp and log near zero ----------------------------------------------------------------


def _expm1(z):
    """exp(z) - 1 without the cancellation near 0: expm1(x) cos(y) - 2 sin(y/2)^2 for the real
    part, exp(x) sin(y) for the imaginary one."""
    x, y = _re(z), _im(z)
    half = _C.sin(y * 0.5)
    return _make(_C.expm1(x) * _C.cos(y) - 2 * half * half, _C.exp(x) * _C.sin(y))


def _log1p(z):
    """log(1 + z): near 0 (|z| < 1/2) as log1p(x (x + 2) + y^2) / 2 + i atan2(y, 1 + x), without
    the cancellation; elsewhere log(1 + z), whose squares cannot overflow."""
    x, y = _re(z), _im(z)
    small = _abs_c(z) < 0.5
    near = _make(0.5 * _C.log1p(x * (x + 2) + y * y), _C.atan2(y, x + 1))
    far = _log(z + 1)
    return _make(_real_where(small, _re(near), _re(far)), _real_where(small, _im(near), _im(far)))


def _exp2(z):
    return _exp(z * math.log(2.0))


def _sinc(z):
    """sin(pi z) / (pi z), 1 at 0 (the division runs on 1 there, so no nan reaches a gradient)."""
    zero = (_re(z) == 0) & (_im(z) == 0)
    safe = _make(_real_where(zero, ones_like(_re(z)), _re(z)), _im(z)) * math.pi
    out = _sin(safe) / safe
    return _make(_real_where(zero, ones_like(_re(out)), _re(out)), _im(out))


# --- inverse trigonometric and hyperbolic functions ------------------------------------------
# Kahan's forms ("Branch cuts for complex elementary functions", 1987): built from square roots
# of 1 +- z, they keep full precision near 0 and near +-1 and put the cuts where C99 (and so
# torch) puts them, the sign of a zero imaginary part choosing the side. Not rescaled for
# |z| near the overflow threshold, where the squares in atanh overflow.


_INF = float("inf")


def _full(t, value):
    return ones_like(t) * value


def _sqrt_parts(x, y):
    """The principal square root of x + iy as (re, im): t = sqrt((|x| + |z|) / 2) for the larger
    part, y / 2t for the other, so a zero part comes out an exact (signed) zero."""
    t = _C.sqrt((_C.abs(x) + _C.hypot(x, y)) * 0.5)
    other = y / (2 * _real_where(t == 0, ones_like(t), t))  # t = 0 only at z = 0, where y is 0
    neg = x < 0
    return _real_where(neg, _C.abs(other), t), _real_where(neg, _C.copysign(t, y), other)


def _sqrt(z):
    """The principal square root by parts (an exact zero part: sqrt(-4) is 2j, not 1e-16 + 2j),
    with C99's limit where the imaginary part is infinite (inf + i y, whatever x is)."""
    y = _im(z)
    re, im = _sqrt_parts(_re(z), y)
    iny = _C.isinf(y)
    return _make(_real_where(iny, _full(re, _INF), re), _real_where(iny, y, im))


def _one_minus_plus(z):
    """sqrt(1 - z) and sqrt(1 + z) as parts, 1 - z negating y itself (its zero's sign picks the
    side of the cut)."""
    x, y = _re(z), _im(z)
    return _sqrt_parts(1 - x, -y), _sqrt_parts(1 + x, y)


def _times_i(z):
    return _make(-_im(z), _re(z))  # i z, exact in both parts (no 0 * inf, signed zeros kept)


def _over_i(z):
    return _make(_im(z), -_re(z))  # -i z


def _at_infinity(z, re, im):
    """re + i im where z has an infinite part (C99's limits; the formulas give inf - inf or
    inf / inf there)."""
    x, y = _re(z), _im(z)
    inf = _C.isinf(x) | _C.isinf(y)
    return lambda out: _make(_real_where(inf, re, _re(out)), _real_where(inf, im, _im(out)))


def _asin(z):
    x, y = _re(z), _im(z)
    (ar, ai), (br, bi) = _one_minus_plus(z)
    limit = _at_infinity(
        z, _C.copysign(_C.atan2(_C.abs(x), _C.abs(y)), x), _C.copysign(_full(y, _INF), y)
    )
    return limit(_make(_C.atan2(x, ar * br - ai * bi), _C.asinh(ar * bi - ai * br)))


def _acos(z):
    x, y = _re(z), _im(z)
    (ar, ai), (br, bi) = _one_minus_plus(z)
    limit = _at_infinity(z, _C.atan2(_C.abs(y), x), -_C.copysign(_full(y, _INF), y))
    im = _C.asinh(br * ai - bi * ar)
    if z.dtype == _C.complex128:  # torch's complex128 kernel gives +0 on both sides of (-1, 1)
        im = im + 0.0  # (C99's, and torch's complex64's, is -0 above the segment)
    return limit(_make(2 * _C.atan2(ar, br), im))


def _acosh(z):
    x, y = _re(z), _im(z)
    (ar, ai), (br, bi) = _sqrt_parts(x - 1, y), _sqrt_parts(x + 1, y)
    limit = _at_infinity(z, _full(x, _INF), _C.copysign(_C.atan2(_C.abs(y), x), y))
    return limit(_make(_C.asinh(ar * br + ai * bi), 2 * _C.atan2(ai, br)))


def _asinh(z):
    return _over_i(_asin(_times_i(z)))


def _atanh(z):
    """Computed for |x| and given x's sign back (atanh is odd), so 4|x| / ((1 - |x|)^2 + y^2)
    never cancels against the 1 of log1p."""
    x, y = _re(z), _im(z)
    ax = _C.abs(x)
    re = 0.25 * _C.log1p(4 * ax / ((1 - ax) * (1 - ax) + y * y))
    limit = _at_infinity(z, _C.copysign(_full(x, 0.0), x), _C.copysign(_full(y, math.pi / 2), y))
    return limit(_make(_C.copysign(re, x), 0.5 * _C.atan2(2 * y, (1 - x) * (1 + x) - y * y)))


def _atan(z):
    return _over_i(_atanh(_times_i(z)))


_INVERSE = {
    "asin": _asin,
    "acos": _acos,
    "atan": _atan,
    "asinh": _asinh,
    "acosh": _acosh,
    "atanh": _atanh,
    "arcsin": _asin,
    "arccos": _acos,
    "arctan": _atan,
    "arcsinh": _asinh,
    "arccosh": _acosh,
    "arctanh": _atanh,
}


# (name, path, which positional args may be complex), as complex._PATHS
PATHS = {
    "sqrt": (_sqrt, 1),
    "expm1": (_expm1, 1),
    "log1p": (_log1p, 1),
    "exp2": (_exp2, 1),
    "sinc": (_sinc, 1),
    "cumsum": (_cumsum, 1),
    "cumprod": (_cumprod, 1),
    "lerp": (_lerp, 2),
    "triu": (functools.partial(_tri, _C.triu), 1),
    "tril": (functools.partial(_tri, _C.tril), 1),
    "tensordot": (_tensordot, 2),
    "norm": (_norm, 1),
    "diag": (_diag, 1),
    "var": (_var, 1),
    "std": (_std, 1),
    "masked_select": (_masked_select, 1),
    "index_add_": (_index_add_, 1),
}
# The addmm family is guarded on (input, first factor): torch requires one dtype across the
# three tensors, so a complex second factor alone is an error either way.
PATHS.update({name: (path, 1) for name, path in _INVERSE.items()})
# the in-place forms write the complex result into self (a real self is torch's cast error)
PATHS.update(
    {
        name + "_": (_in_place(path), 1)
        for name, path in (
            *_INVERSE.items(),
            ("sqrt", _sqrt),
            ("expm1", _expm1),
            ("log1p", _log1p),
            ("exp2", _exp2),
            ("sinc", _sinc),
        )
    }
)
PATHS.update(
    {
        "addmm": (_addmm_family(_C.mm), 2),
        "addmv": (_addmm_family(_C.mv), 2),
        "baddbmm": (_addmm_family(_C.bmm), 2),
        "addbmm": (_addmm_family(_addbmm_product), 2),
        "addr": (_addmm_family(lambda a, b: a.unsqueeze(-1) * b), 2),
    }
)
PATHS.update(_complex_reduce.PATHS)  # all/any, logsumexp, var_mean ... (complex_reduce.py)
