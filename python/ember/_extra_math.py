"""torch's elementwise and reduction helpers that compose existing ops (autograd comes free)."""

import builtins
import math

import ember as E  # the package being initialised; attributes are read at call time
from ._C import Tensor
from ._type_info import scalar_type_name

__all__ = [
    "xlogy",
    "logaddexp",
    "logaddexp2",
    "deg2rad",
    "rad2deg",
    "sinc",
    "logit",
    "heaviside",
    "float_power",
    "nansum",
    "nanmean",
    "trace",
    "positive",
    "rsub",
    "addmv",
    "addr",
    "addbmm",
    "aminmax",
    "logcumsumexp",
    "ldexp",
    "angle",
    "sgn",
    "dist",
    "gcd",
    "lcm",
    "mvlgamma",
    "is_signed",
    "is_complex",
    "conj",
    "conj_physical",
    "resolve_conj",
    "resolve_neg",
    "is_conj",
    "is_neg",
    "real",
    "isreal",
    "adjoint",
    "renorm",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
    "cov",
    "corrcoef",
    "quantile",
    "nanquantile",
    "nanmedian",
    "msort",
    "cdist",
    "frexp",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "is_same_size",
    "get_device",
]


def _t(x, like=None):
    """A tensor for a Python number (a 0-d tensor, which promotes like a number in binary ops)."""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool)):
        return E.full([], x, dtype=E.result_type(like, x))
    return E.scalar_tensor(x) if isinstance(x, float) else E.tensor(x)


def _float(x):
    return x if x.dtype.is_floating_point else x.to(E.get_default_dtype())


def xlogy(input, other):
    """input * log(other), and 0 where input is 0 (unless other is NaN)."""
    if not isinstance(input, Tensor):
        input = _t(input, other)
    other = _t(other, input)
    # computed in the pair's promoted floating dtype, as torch (log of an int is float32, which
    # would otherwise widen a bfloat16 input)
    dt = E.result_type(input, other)
    dt = dt if dt.is_floating_point else E.get_default_dtype()
    input, other = input.to(dt), other.to(dt)
    out = input * E.log(other)
    return E.where((input == 0) & ~E.isnan(other), E.zeros([], dtype=out.dtype), out)


def _check_float_pair(name, a, b):
    for x in (a, b):
        if isinstance(x, Tensor) and not x.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{scalar_type_name(x.dtype)}'"
            )


def logaddexp(input, other):
    """log(exp(input) + exp(other)) without overflow."""
    _check_float_pair("logaddexp", input, other)
    m = E.maximum(input, other)
    out = m + E.log1p(E.exp(-(input - other).abs()))
    # Equal infinities give NaN in the difference; the answer is that infinity.
    return E.where(E.isinf(m) & (input == other), m, out)


def logaddexp2(input, other):
    """log2(2**input + 2**other) without overflow."""
    _check_float_pair("logaddexp2", input, other)
    m = E.maximum(input, other)
    out = m + E.log1p(E.exp2(-(input - other).abs())) / math.log(2)
    return E.where(E.isinf(m) & (input == other), m, out)


def deg2rad(input):
    return _float(input) * (math.pi / 180)


def rad2deg(input):
    return _float(input) * (180 / math.pi)


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0 (with gradient 0 there)."""
    x = _float(input)
    out_dtype = x.dtype
    if x.dtype in (E.float16, E.bfloat16):  # pi * x rounded to 8 bits would make sinc(1) ~ 3e-4
        x = x.float()
    zero = x == 0
    safe = E.where(zero, E.ones([], dtype=x.dtype), x) * math.pi
    return E.where(zero, E.ones([], dtype=x.dtype), E.sin(safe) / safe).to(out_dtype)


def logit(input, eps=None):
    x = _float(input)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return E.log(x / (1 - x))


def heaviside(input, values):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    step = (input > 0).to(input.dtype)
    return E.where(input == 0, values, step)


def float_power(input, exponent):
    """pow computed in float64."""
    a = input.double() if isinstance(input, Tensor) else input
    b = exponent.double() if isinstance(exponent, Tensor) else exponent
    if not isinstance(a, Tensor):
        a = E.full([], a, dtype=E.float64)
    return E.pow(a, b)


def _nan_zeroed(input):
    if not input.dtype.is_floating_point:
        return input
    return E.where(E.isnan(input), E.zeros([], dtype=input.dtype), input)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = _nan_zeroed(input)
    if dim is None:
        return (
            x.sum(dtype=dtype) if not keepdim else x.sum(tuple(range(x.dim())), True, dtype=dtype)
        )
    return x.sum(dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not input.dtype.is_floating_point and dtype is None:
        raise RuntimeError(
            f"nanmean(): expected input to have floating point dtype but got "
            f"{scalar_type_name(input.dtype)}"
        )
    count = (~E.isnan(input)).sum(dim if dim is not None else tuple(range(input.dim())), keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def trace(input):
    if input.dtype == E.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


def positive(input):
    if input.dtype == E.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input, other, alpha=1):
    return E.sub(other, input, alpha=alpha)


def _beta_alpha(input, product, beta, alpha):
    # beta == 0 ignores input entirely (NaN and inf in it do not propagate), as torch.
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled + E.zeros([], dtype=input.dtype).expand_as(input)
    return scaled + (input if beta == 1 else input * beta)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _beta_alpha(input, E.mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return _beta_alpha(input, E.outer(vec1, vec2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _beta_alpha(input, E.bmm(batch1, batch2).sum(0), beta, alpha)


def aminmax(input, *, dim=None, keepdim=False):
    from . import return_types

    if dim is None:
        if keepdim:
            dims = tuple(range(input.dim()))
            return return_types.aminmax(input.amin(dims, True), input.amax(dims, True))
        return return_types.aminmax(input.amin(), input.amax())
    return return_types.aminmax(input.amin(dim, keepdim), input.amax(dim, keepdim))


def logcumsumexp(input, dim):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{scalar_type_name(input.dtype)}'"
        )
    x = input
    if x.numel() == 0:
        return x.clone()
    m = x.detach().amax(dim, True) if x.dim() else x.detach()
    m = E.where(E.isinf(m), E.zeros([], dtype=x.dtype), m)
    return E.log(E.exp(x - m).cumsum(dim)) + m


def ldexp(input, other):
    """input * 2**other in the pair's promoted floating dtype."""
    dt = E.promote_types(input.dtype, other.dtype)
    dt = dt if dt.is_floating_point else E.get_default_dtype()
    return input.to(dt) * E.pow(2.0, other.to(dt))


def angle(input):
    x = _float(input)
    out = E.where(x < 0, E.full([], math.pi, dtype=x.dtype), E.zeros([], dtype=x.dtype))
    return E.where(E.isnan(x), x, out)


def sgn(input):
    return input.sign()


def dist(input, other, p=2):
    return (input - other).norm(p)


def _euclid(a, b):
    a, b = a.abs(), b.abs()
    while builtins.bool((b != 0).any()):
        nz = b != 0
        safe = E.where(nz, b, E.ones([], dtype=b.dtype))
        a, b = E.where(nz, b, a), E.where(nz, a % safe, b)
    return a


def gcd(input, other):
    if input.dtype.is_floating_point or other.dtype.is_floating_point:
        raise NotImplementedError("\"gcd_cpu\" not implemented for 'Float'")
    a, b = E.broadcast_tensors(input, other)
    return _euclid(a, b)


def lcm(input, other):
    g = gcd(input, other)
    safe = E.where(g == 0, E.ones([], dtype=g.dtype), g)
    return E.where(g == 0, g, (input // safe * other).abs())


def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _float(input)
    terms = E.stack([E.lgamma(x - j / 2) for j in range(p)]).sum(0)
    return terms + p * (p - 1) / 4 * math.log(math.pi)


def is_signed(input):
    return input.dtype.is_signed


def is_complex(input):
    return False


def conj(input):
    return input


conj_physical = resolve_conj = resolve_neg = conj


def is_conj(input):
    return False


is_neg = is_conj


def real(input):
    return input


def isreal(input):
    return E.ones_like(input, dtype=E.bool)


def adjoint(input):
    return input.mT


def renorm(input, p, dim, maxnorm):
    dims = tuple(d for d in range(input.dim()) if d != dim % input.dim())
    norms = input.norm(p, dims, keepdim=True)
    scale = E.where(norms > maxnorm, maxnorm / (norms + 1e-7), E.ones([], dtype=norms.dtype))
    return input * scale.detach() if not input.requires_grad else input * scale


def _trapezoid_parts(y, x, dx, dim):
    n = y.shape[dim]
    left, right = y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)
    if x is None:
        return (left + right) * (dx / 2)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[dim] = n - 1
        dxs = (x[1:] - x[:-1]).reshape(shape)
    else:
        dxs = x.narrow(dim, 1, x.shape[dim] - 1) - x.narrow(dim, 0, x.shape[dim] - 1)
    return (left + right) * dxs / 2


def trapezoid(y, x=None, *, dx=None, dim=-1):
    if isinstance(x, (int, float)):
        x, dx = None, x
    if y.shape[dim] == 0:
        return _float(y).sum(dim)
    return _trapezoid_parts(y, x, 1 if dx is None else dx, dim).sum(dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    if isinstance(x, (int, float)):
        x, dx = None, x
    if y.shape[dim] == 0:
        return _float(y)
    return _trapezoid_parts(y, x, 1 if dx is None else dx, dim).cumsum(dim)


def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an "
            f"input with {input.dim()} dimensions"
        )
    x = input if input.dim() == 2 else input.reshape(1, -1)
    x = _float(x)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        total = E.full([], n, dtype=x.dtype)
        avg = x.mean(1)
        norm = total - correction
    else:
        w = w.to(x.dtype) if not w.dtype.is_floating_point else w
        total = w.sum()
        avg = (x * w).sum(1) / total
        if correction == 0:
            norm = total
        elif aweights is None:
            norm = total - correction
        else:
            norm = total - correction * (w * aweights).sum() / total
    norm = norm.clamp(min=0)
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = E.mm(xw, xm.t()) / norm
    return c.squeeze() if input.dim() < 2 or c.shape[0] == 1 else c


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt()
    c = c / stddev.unsqueeze(1) / stddev.unsqueeze(0)
    return c.clamp(-1, 1)


def msort(input):
    return input.sort(0).values


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return diff.norm(p, -1)


def frexp(input):
    from . import return_types

    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    a = input.detach().numpy()
    import numpy as np

    m, e = np.frexp(a)
    return return_types.frexp(E.from_numpy(m.astype(a.dtype)), E.from_numpy(e.astype(np.int32)))


from ._quantile import nanmedian, nanquantile, quantile  # noqa: E402


# NumPy-style names torch keeps for its inverse trigonometric functions.
arccos, arccosh, arcsin, arcsinh = E.acos, E.acosh, E.asin, E.asinh
arctan, arctanh = E.atan, E.atanh


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def get_device(input):
    return -1
