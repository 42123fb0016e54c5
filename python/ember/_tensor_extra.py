"""Tensor methods and top-level in-place forms for the functions of _extra_math, _extra_shape,
ember.linalg and ember.special: each method calls the function of the same name."""

import math

import ember as E  # the package being initialised; attributes are read at call time
from . import _C
from ._C import Tensor
from ._type_info import scalar_type_name


def _method(fn_name):
    def method(self, *args, **kwargs):
        return getattr(E, fn_name)(self, *args, **kwargs)

    method.__name__ = fn_name
    return method


def _inplace(fn_name):
    # torch refuses in-place results its dtype cannot hold (e.g. float into long).
    def method(self, *args, **kwargs):
        result = getattr(E, fn_name)(self, *args, **kwargs)
        if not E.can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"result type {scalar_type_name(result.dtype)} can't be cast to the desired "
                f"output type {scalar_type_name(self.dtype)}"
            )
        return self.copy_(result)

    method.__name__ = fn_name + "_"
    return method


_METHODS = (
    "addbmm addmv addr adjoint aminmax angle conj conj_physical corrcoef cov cross deg2rad det "
    "diag_embed diagflat diff digamma dist dsplit float_power frexp gcd heaviside hsplit i0 "
    "index_copy inverse is_conj is_neg isreal kron lcm ldexp lgamma logaddexp logaddexp2 "
    "logcumsumexp logdet logit masked_scatter matrix_power msort mvlgamma nanmean nanmedian "
    "nanquantile nansum pinverse positive put qr quantile rad2deg ravel real renorm resolve_conj "
    "resolve_neg rot90 sgn sinc slogdet svd take_along_dim tensor_split trace unique_consecutive "
    "vsplit xlogy cholesky matrix_exp diagonal_scatter select_scatter slice_scatter vdot lu "
    "histogram nextafter "
    "cholesky_solve cholesky_inverse triangular_solve"
).split()
_INPLACE = (
    "addbmm addmv addr cumprod deg2rad digamma float_power gcd heaviside i0 index_copy lcm ldexp "
    "lgamma logit masked_scatter mvlgamma nan_to_num put rad2deg renorm sgn sinc xlogy nextafter"
).split()
for _n in _METHODS:
    if not hasattr(Tensor, _n):
        setattr(Tensor, _n, _method(_n))
for _n in _INPLACE:
    if not hasattr(Tensor, _n + "_"):
        setattr(Tensor, _n + "_", _inplace(_n))


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return self.copy_(E.addmm(self, mat1, mat2, beta=beta, alpha=alpha))


def _baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return self.copy_(E.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha))


def _polygamma(self, n):
    return E.polygamma(n, self)


def _polygamma_(self, n):
    return self.copy_(E.polygamma(n, self))


def _geometry(view_fn):
    def method(self, *args):
        return _C._set_geometry_(self, view_fn(self, *args))

    return method


def _fill_diagonal_(self, fill_value, wrap=False):
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    import numpy as np

    rows, cols = self.shape[0], self.shape[1]
    mask = np.zeros(tuple(self.shape), dtype=bool)
    if self.dim() > 2:
        idx = np.arange(rows)
        mask[(idx,) * self.dim()] = True
    else:
        # Tall matrices wrap after every cols + 1 rows when asked, as torch (and numpy).
        step = cols + 1
        flat = mask.reshape(-1)
        end = rows * cols if wrap else min(rows, cols) * cols
        flat[0:end:step] = True
    return self.masked_fill_(E.from_numpy(mask), fill_value)


def _sum_to_size(self, *size):
    size = list(size[0]) if len(size) == 1 and not isinstance(size[0], int) else list(size)
    if E.broadcast_shapes(size, self.shape) != tuple(self.shape):
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


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **_):
    return E.empty_strided(size, stride, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _apply_(self, callable):
    values = [callable(v) for v in self.reshape(-1).tolist()]
    return self.copy_(E.tensor(values, dtype=self.dtype).reshape(self.shape))


def _map_(self, other, callable):
    other = other.expand_as(self)
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other.reshape(-1).tolist())]
    return self.copy_(E.tensor(values, dtype=self.dtype).reshape(self.shape))


class _RemovableHandle:
    """Returned by register_post_accumulate_grad_hook; remove() drops the hook (and so the
    reference to the tensor its closure held)."""

    def __init__(self, box):
        self._box = box

    def remove(self):
        self._box.clear()


def _register_post_accumulate_grad_hook(self, hook):
    box = [hook, self]

    def run():
        if box:
            box[0](box[1])

    _C._register_post_accumulate_grad_hook(self, run)
    return _RemovableHandle(box)


def _H(self):
    if self.dim() not in (0, 2):
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
        )
    return self.t() if self.dim() == 2 else self


def _is_same_size(self, other):
    return tuple(self.shape) == tuple(other.shape)


def _is_nonzero(self):
    return E.is_nonzero(self)


def _is_signed(self):
    return self.dtype.is_signed


def _identity(self, *args, **kwargs):
    return self


def _false(self, *args, **kwargs):
    return False


for _n, _fn in (
    ("addmm_", _addmm_),
    ("baddbmm_", _baddbmm_),
    ("polygamma", _polygamma),
    ("polygamma_", _polygamma_),
    ("fill_diagonal_", _fill_diagonal_),
    ("sum_to_size", _sum_to_size),
    ("new_empty_strided", _new_empty_strided),
    ("apply_", _apply_),
    ("map_", _map_),
    ("is_same_size", _is_same_size),
    ("is_nonzero", _is_nonzero),
    ("is_signed", _is_signed),
    ("transpose_", _geometry(lambda t, a, b: t.transpose(a, b))),
    ("swapaxes_", _geometry(lambda t, a, b: t.transpose(a, b))),
    ("swapdims_", _geometry(lambda t, a, b: t.transpose(a, b))),
    ("t_", _geometry(lambda t: t.t())),
    ("pin_memory", _identity),
    ("is_pinned", _false),
    ("get_device", lambda self: -1),
    ("register_post_accumulate_grad_hook", _register_post_accumulate_grad_hook),
):
    if not hasattr(Tensor, _n):
        setattr(Tensor, _n, _fn)
Tensor.H = property(_H)
Tensor.mH = property(lambda self: self.mT)

# Top-level in-place forms torch exposes (torch.exp_(x) ...): each is the method of that name.
_TOP_INPLACE = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ "
    "atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ exp2_ exp_ "
    "expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ lcm_ ldexp_ log10_ log1p_ log2_ log_ logit_ "
    "nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ "
    "sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_ index_put_ detach_ detach clamp_max "
    "clamp_min fill"
).split()


def _top(name):
    method = name if name != "fill" else "fill_"

    def fn(input, *args, **kwargs):
        if name == "fill":
            return getattr(input.clone(), method)(*args, **kwargs)
        return getattr(input, method)(*args, **kwargs)

    fn.__name__ = name
    return fn


__all__ = []
for _n in _TOP_INPLACE:
    globals()[_n] = _top(_n)
    __all__.append(_n)
del _n, _fn


def _sampler(draw):
    # Samplers by inverse transform of uniform draws from the same generator as uniform_.
    def method(self, *args, generator=None):
        with E.no_grad():
            u = E.empty(self.shape, dtype=E.float64).uniform_(generator=generator)
            return self.copy_(draw(u, *args))

    return method


Tensor.cauchy_ = _sampler(
    lambda u, median=0.0, sigma=1.0: median + sigma * E.tan(math.pi * (u - 0.5))
)
Tensor.log_normal_ = _sampler(
    lambda u, mean=1.0, std=2.0: E.exp(mean + std * math.sqrt(2) * E.erfinv(2 * u - 1))
)
# 1 - u lies in (0, 1], so the logarithm is finite; the result counts trials, from 1.
Tensor.geometric_ = _sampler(lambda u, p: E.ceil(E.log1p(-u) / math.log1p(-p)).clamp(min=1))
