"""Reductions and statistics: extremes, variance, norms, NaN-ignoring sums, cumulative and integral
forms, covariance, histograms."""

from .. import _C, return_types
from .._C import Tensor, broadcast_shapes, isnan
from .._type_info import scalar_type_name
from . import _names
from ._util import _check_repeats_in_order, _float, wrap_dim
from .complex import complex as _complex
from .creation import full, linspace, ones, ones_like, zeros
from .index import bucketize, where

__all__ = [
    "max",
    "min",
    "var_mean",
    "var",
    "std_mean",
    "std",
    "norm",
    "nansum",
    "nanmean",
    "logsumexp",
    "aminmax",
    "dist",
    "renorm",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
    "cov",
    "corrcoef",
    "histogram",
]


def _extreme(name, all_fn, dim_fn, binary_fn, input, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return _binary_extreme(binary_fn, input, dim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        return all_fn(input)
    return getattr(return_types, name)(dim_fn(input, dim, keepdim))


def _binary_extreme(binary_fn, input, other):
    """max(a, b)/min(a, b): maximum/minimum, which refuse complex tensors as torch's."""
    if input.dtype.is_complex or (isinstance(other, Tensor) and other.dtype.is_complex):
        raise RuntimeError(f"{binary_fn.__name__} not implemented for complex tensors.")
    return binary_fn(input, other)


def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """max(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    The largest element, or (values, indices) along dim, or the elementwise maximum with a
    tensor."""
    if other is not None:
        return _binary_extreme(_C.maximum, input, other)
    return _extreme("max", _C._max_all, _C._max_dim, _C.maximum, input, dim, keepdim)


def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """min(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    The smallest element, or (values, indices) along dim, or the elementwise minimum with a
    tensor."""
    if other is not None:
        return _binary_extreme(_C.minimum, input, other)
    return _extreme("min", _C._min_all, _C._min_dim, _C.minimum, input, dim, keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    if unbiased is None:
        return 1.0
    return 1.0 if unbiased else 0.0


def _var_args(dim, unbiased, keepdim):
    # var(x, True) is the legacy unbiased flag; var(x, 0) is a dim.
    if isinstance(dim, bool):
        return None, dim, keepdim
    if dim is not None and not isinstance(dim, (int, tuple, list)) and hasattr(dim, "__index__"):
        dim = dim.__index__()  # a numpy integer or a 0-d integer tensor, as torch takes
    return dim, unbiased, keepdim


def _var_mean(input, dim, unbiased, keepdim, correction):
    dim, unbiased, keepdim = _var_args(dim, unbiased, keepdim)
    return _C._var_mean(input, dim, _correction(unbiased, correction), keepdim)


def _check_floating(name, input):
    """torch names var_mean/std_mean in their dtype refusal (std/var share the kernel's text)."""
    if isinstance(input, Tensor) and not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """var_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)

    The variance and the mean over dim, with Bessel's correction set by correction."""
    _check_floating("var_mean", input)
    return _var_mean(input, dim, unbiased, keepdim, correction)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """var(input, dim=None, *, correction=1, keepdim=False) -> Tensor

    The variance over dim (all elements when None), with Bessel's correction set by correction."""
    return _var_mean(input, dim, unbiased, keepdim, correction)[0]


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """std_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)

    The standard deviation and the mean over dim."""
    _check_floating("std_mean", input)
    v, m = _var_mean(input, dim, unbiased, keepdim, correction)
    return v.sqrt(), m


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """std(input, dim=None, *, correction=1, keepdim=False) -> Tensor

    The standard deviation over dim (all elements when None)."""
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """norm(input, p='fro', dim=None, keepdim=False, dtype=None) -> Tensor

    The p-norm (Frobenius by default, 'nuc' for the nuclear norm) over dim or all elements."""
    if p == "fro" or p is None:
        p = 2.0
    elif p == "nuc":
        if dim is None:
            if input.dim() != 2:
                raise RuntimeError(
                    "linalg.matrix_norm: dim must be a 2-tuple. Got "
                    + " ".join(str(d) for d in range(input.dim()))
                )
            dim = (0, 1)
        from ..linalg import matrix_norm

        return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    elif isinstance(p, str):
        raise RuntimeError(f"norm: unknown p '{p}'")
    if dtype is not None or (input.numel() == 0 and float(p) < 0):
        # torch's norm with a dtype is linalg.vector_norm's, with its dtype checks; so is its
        # refusal of a negative p over an empty dim (no identity)
        from ..linalg import vector_norm

        return vector_norm(input, float(p), dim, keepdim, dtype=dtype)
    return _C._norm(input, float(p), dim, keepdim, dtype)


def _nan_zeroed(input):
    if not input.dtype.is_floating_point:
        return input
    return where(isnan(input), zeros([], dtype=input.dtype), input)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The sum over dim, treating NaN as zero."""
    _check_repeats_in_order("nansum", dim, input.dim())
    _no_complex_nansum(input, dim)
    x = _nan_zeroed(input)
    if dim is None:
        return (
            x.sum(dtype=dtype) if not keepdim else x.sum(tuple(range(x.dim())), True, dtype=dtype)
        )
    return x.sum(dim, keepdim, dtype=dtype)


def _no_complex_nansum(input, dim):
    if input.dtype.is_complex:
        if dim is not None:  # torch checks the dims first
            input.sum(dim)
        raise RuntimeError("nansum on CPU does not support complex inputs")


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """nanmean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The mean over dim of the elements that are not NaN."""
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(  # torch checks dtype= before the dims
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {scalar_type_name(dtype)}"
        )
    if not (input.dtype.is_floating_point or input.dtype.is_complex):  # whatever dtype= says
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got "
            f"{scalar_type_name(input.dtype)}"
        )
    _no_complex_nansum(input, dim)
    count = (~isnan(input)).sum(dim if dim is not None else tuple(range(input.dim())), keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def logsumexp(input, dim, keepdim=False):
    """logsumexp(input, dim, keepdim=False, *, out=None) -> Tensor

    The log of the sum of exp(input) over dim, without overflow."""
    if (
        isinstance(dim, (tuple, list))
        and not dim
        and not keepdim
        and input.dim() > 0
        and input.numel() > 0
    ):
        # torch reduces an empty dim list over every dim with keepdim, then refuses to write
        # that all-ones shape into the 0-d result (an empty input skips the write)
        ones = ", ".join(["1"] * input.dim())
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape [{ones}]")
    return _C.logsumexp(input, dim, keepdim)


def aminmax(input, *, dim=None, keepdim=False):
    """aminmax(input, *, dim=None, keepdim=False) -> (Tensor min, Tensor max)

    The minimum and the maximum, over dim or all elements, in one call."""
    from .. import return_types

    if isinstance(input, Tensor) and input.is_complex() and input.numel():  # empty: checks first
        name = scalar_type_name(input.dtype)
        if dim is not None and input.dim() == 0:  # torch's 0-d path checks before its kernel
            raise RuntimeError(f"aminmax not implemented for {name}")
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{name}'")
    if dim is None:
        if input.numel() == 0:  # torch's check for the all-elements form
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                "no identity."
            )
        if keepdim:
            dims = tuple(range(input.dim()))
            return return_types.aminmax((input.amin(dims, True), input.amax(dims, True)))
        return return_types.aminmax((input.amin(), input.amax()))
    if input.numel() == 0 and input.size(dim) == 0:  # size() raises torch's range IndexError
        raise IndexError(
            f"aminmax: Expected reduction dim {dim % input.dim()} to have non-zero size."
        )
    return return_types.aminmax((input.amin(dim, keepdim), input.amax(dim, keepdim)))


def dist(input, other, p=2):
    """dist(input, other, p=2) -> Tensor

    The p-norm of input - other."""
    return (input - other).norm(p)


def renorm(input, p, dim, maxnorm):
    """renorm(input, p, dim, maxnorm) -> Tensor

    input with each slice along dim rescaled so that its p-norm is at most maxnorm."""
    # torch's checks, in its order, before the dim is wrapped
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.dim() < 2:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions"
        )
    dim = wrap_dim(dim, input.dim())
    dims = tuple(d for d in range(input.dim()) if d != dim)
    norms = input.norm(p, dims, keepdim=True)
    scale = where(norms > maxnorm, maxnorm / (norms + 1e-7), ones([], dtype=norms.dtype))
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
    """trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

    The trapezoidal-rule integral of y along dim, over sample points x or spacing dx."""
    if isinstance(x, (int, float)):
        x, dx = None, x
    if y.size(dim) == 0:  # size() raises torch's IndexError for a bad dim (before the dtype)
        return _float(y).sum(dim)
    _trapezoid_check("trapezoid", y, x)
    return _trapezoid_parts(y, x, 1 if dx is None else dx, dim).sum(dim)


def _trapezoid_check(name, y, x):
    if y.dtype == _C.bool or (isinstance(x, Tensor) and x.dtype == _C.bool):
        which = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"{name}: received a bool input for {which}, but bool is not supported")


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapz(y, x=None, *, dx=None, dim=-1) -> Tensor

    The same as trapezoid (torch keeps this older name)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

    The running trapezoidal-rule integral of y along dim."""
    if isinstance(x, (int, float)):
        x, dx = None, x
    _trapezoid_check("cumulative_trapezoid", y, x)
    if y.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if y.size(dim) == 0:
        return _float(y)
    return _trapezoid_parts(y, x, 1 if dx is None else dx, dim).cumsum(dim)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor

    The covariance matrix of the variables in input's rows, optionally weighted."""
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
    real = x.real.dtype if x.dtype.is_complex else x.dtype  # weights and counts stay real
    if w is None:
        total = full([], n, dtype=real)
        avg = x.mean(1)
        norm = total - correction
    else:
        w = w.to(real) if not w.dtype.is_floating_point else w
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
    c = (xw @ xm.t().conj()) / norm
    return c.squeeze() if input.dim() < 2 or c.shape[0] == 1 else c


def corrcoef(input):
    """corrcoef(input) -> Tensor

    The Pearson correlation coefficients of the variables in input's rows."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.dtype.is_complex else d).sqrt()
    c = c / stddev.unsqueeze(1) / stddev.unsqueeze(0)
    if c.dtype.is_complex:  # torch clips the two parts separately
        return _complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """histogram(input, bins, *, range=None, weight=None, density=False) -> (Tensor,
        Tensor)

    Counts (or weights) of input's elements per bin; the last bin includes its right edge."""
    from .. import return_types

    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{scalar_type_name(input.dtype)}'"
        )
    x = input.detach().reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
    else:
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 0.0
        if lo == hi:  # an empty range widens by half a unit each side, as torch's does
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, bins + 1, dtype=input.dtype)
    n = edges.numel() - 1
    idx = bucketize(x, edges, right=True) - 1
    idx = where(x == edges[-1], full([], n - 1, dtype=idx.dtype), idx)
    keep = (idx >= 0) & (idx < n)
    w = ones_like(x) if weight is None else weight.detach().reshape(-1).to(input.dtype)
    hist = zeros(n, dtype=input.dtype).index_add(0, idx[keep], w[keep])
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram((hist, edges))


def _sum_to_size(self, *size):
    """sum_to_size(*size) -> Tensor

    Sums self down to size, over the dims where size would broadcast to self's shape."""
    size = list(size[0]) if len(size) == 1 and not isinstance(size[0], int) else list(size)
    if broadcast_shapes(size, self.shape) != tuple(self.shape):
        raise RuntimeError(
            f"size {{{', '.join(map(str, size))}}} is not expandable to size "
            f"{{{', '.join(map(str, self.shape))}}}."
        )
    lead = self.dim() - len(size)
    dims = list(range(lead)) + [
        lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1
    ]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size)


# ---- torch's grad_fn names (see _names.py) ----

var = _names.named(var, "VarBackward0")
std = _names.named(std, "StdBackward0")
norm = _names.named(
    norm,
    lambda args, kwargs: (
        None if _names.arg(args, kwargs, 1, "p") == "nuc" else "LinalgVectorNormBackward0"
    ),
)
dist = _names.named(dist, "DistBackward0")
cov = _names.named(cov, "SqueezeBackward0")
# torch scales the sum by dx (a number) or halves the sum of the spacings' products
trapezoid = _names.named(
    trapezoid,
    lambda args, kwargs: (
        "MulBackward1" if _names.arg(args, kwargs, 1, "x") is None else "DivBackward1"
    ),
)
std_mean = _names.named(std_mean, "StdMeanBackward0")
nansum = _names.named(nansum, "NansumBackward0")
aminmax = _names.named(aminmax, "AminmaxBackward0")
renorm = _names.named(renorm, "RenormBackward0")


def _extreme_name(name):
    """max()/min() over all elements are torch's MaxBackward1/MinBackward1 (ember's amax)."""

    def namer(args, kwargs):
        whole = _names.arg(args, kwargs, 1, "dim") is None and kwargs.get("other") is None
        return name if whole else None

    return namer


max = _names.named(max, _extreme_name("MaxBackward1"))  # noqa: A001
min = _names.named(min, _extreme_name("MinBackward1"))  # noqa: A001
