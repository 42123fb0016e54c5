"""Sorting and order statistics: sort, top-k, medians, modes, quantiles, cumulative extremes, unique
values."""

from .. import _C, return_types
from .._autocast_policy import fp32 as _autocast_fp32
from .._C import Tensor, cat, int64, isnan
from .._type_info import scalar_type_name
from . import _names
from ._util import wrap_dim
from .creation import full, ones_like, tensor, zeros
from .index import where
from .shape import diff

__all__ = [
    "sort",
    "topk",
    "kthvalue",
    "median",
    "mode",
    "cummax",
    "cummin",
    "unique",
    "unique_consecutive",
    "msort",
    "quantile",
    "nanquantile",
    "nanmedian",
]


def sort(input, dim=-1, descending=False, stable=False):
    """sort(input, dim=-1, descending=False, *, stable=False) -> (Tensor, LongTensor)

    The elements sorted along dim with the indices they came from."""
    return return_types.sort(_C._sort(input, dim, descending, bool(stable)))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """topk(input, k, dim=None, largest=True, sorted=True) -> (Tensor, LongTensor)

    The k largest (or smallest) elements along dim with their indices."""
    return return_types.topk(_C._topk(input, k, dim, largest, sorted))


def kthvalue(input, k, dim=-1, keepdim=False):
    """kthvalue(input, k, dim=None, keepdim=False) -> (Tensor, LongTensor)

    The k-th smallest element along dim with its index."""
    _refuse_bool_rows(input, dim, "kthvalue_cpu")
    if k == 1 and _complex_scalar(input, dim):
        return return_types.kthvalue((input.clone(), zeros((), dtype=int64)))
    if isinstance(input, _C.Tensor) and input.dim() == 0 and input.dtype == _C.bool:
        # torch copies a 0-d input before its kernel's dtype dispatch, which lacks bool
        values, indices = _C._kthvalue(input.to(_C.uint8), k, dim, keepdim)
        return return_types.kthvalue((values.to(_C.bool), indices))
    return return_types.kthvalue(_C._kthvalue(input, k, dim, keepdim))


def median(input, dim=None, keepdim=False):
    """median(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    The median of all elements, or (values, indices) of the lower median along dim."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(
            f"median(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if dim is None:
        if input.numel() == 0 and not input.dtype.is_floating_point:
            return _nan_as(input.dtype)
        return _C._median_all(input)
    _refuse_bool_rows(input, dim, "median_out")
    return return_types.median(_C._median_dim(input, dim, keepdim))


def _refuse_bool_rows(input, dim, kernel):
    """torch's dim-wise median/kthvalue kernels lack bool: they refuse once dim is checked and
    non-empty, even when another dim leaves no rows (an empty reduced dim is an IndexError)."""
    if not isinstance(input, _C.Tensor) or input.dtype != _C.bool or not isinstance(dim, int):
        return
    if input.dim() == 0:
        if dim in (-1, 0) and kernel != "kthvalue_cpu":  # kthvalue copies a 0-d input first
            raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
        return
    if -input.dim() <= dim < input.dim() and input.shape[dim] != 0:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _nan_as(dtype):
    """torch's median of nothing: NaN cast to dtype as x86 converts it (the integer
    indefinite, INT_MIN, truncated to the narrow types; True for bool)."""
    name = str(dtype).rsplit(".", 1)[-1]
    value = {"int64": -(2**63), "int32": -(2**31), "bool": True}.get(name, 0)
    if dtype.is_complex:
        value = complex("nan")
    return full([], value, dtype=dtype)


def mode(input, dim=-1, keepdim=False):
    """mode(input, dim=-1, keepdim=False) -> (Tensor, LongTensor)

    The most frequent value along dim with an index where it occurs."""
    if _complex_scalar(input, dim):
        return return_types.mode((input.clone(), zeros((), dtype=int64)))
    return return_types.mode(_C._mode(input, dim, keepdim))


def _complex_scalar(input, dim):
    """A 0-d complex input reduced over its one dim: torch returns it (index 0) without the
    kernel, which lacks complex."""
    return isinstance(input, Tensor) and input.dim() == 0 and input.is_complex() and dim in (-1, 0)


def cummax(input, dim):
    """cummax(input, dim) -> (Tensor, LongTensor)

    The running maximum along dim with the index of each maximum."""
    if _complex_scalar(input, dim):
        return return_types.cummax((input.clone(), zeros((), dtype=int64)))
    return return_types.cummax(_C._cummax(input, _cum_dim(input, dim)))


def _cum_dim(input, dim):
    """dim for cummax/cummin: torch returns an empty input's (empty) results without wrapping
    dim, so any int passes there (0 gives the same results)."""
    empty = isinstance(input, _C.Tensor) and input.numel() == 0 and input.dim() > 0
    return 0 if empty and type(dim) is int else dim


def cummin(input, dim):
    """cummin(input, dim) -> (Tensor, LongTensor)

    The running minimum along dim with the index of each minimum."""
    if _complex_scalar(input, dim):
        return return_types.cummin((input.clone(), zeros((), dtype=int64)))
    return return_types.cummin(_C._cummin(input, _cum_dim(input, dim)))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """unique(input, sorted=True, return_inverse=False, return_counts=False,
        dim=None) -> tuple[Tensor, Tensor, Tensor]

    The distinct elements (sorted), optionally with inverse indices and counts."""
    values, inverse, counts = _C._unique(input, sorted, return_inverse, return_counts, dim)
    out = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive(input, return_inverse=False, return_counts=False,
        dim=None) -> Tensor or tuple

    Collapses each run of equal consecutive elements (or slices along dim) to one."""
    x = input.reshape(-1) if dim is None else input.movedim(dim, 0)
    n = x.shape[0]
    if n == 0:
        values, starts = x, zeros(0, dtype=int64)
    else:
        change = x[1:] != x[:-1]
        if x.dim() > 1:
            change = change.reshape(n - 1, -1).any(1)
        starts = cat([zeros(1, dtype=_C.bool), change]).nonzero().reshape(-1)
        starts = cat([zeros(1, dtype=int64), starts])
        values = x.index_select(0, starts)
    values = values if dim is None else values.movedim(0, dim)
    out = [values]
    if return_inverse:
        group = zeros(n, dtype=int64)
        if n:
            group = cat([zeros(1, dtype=int64), change.long()]).cumsum(0)
        out.append(group.reshape(input.shape) if dim is None else group)
    if return_counts:
        out.append(diff(starts, append=tensor([n])) if n else zeros(0, dtype=int64))
    return out[0] if len(out) == 1 else tuple(out)


def msort(input):
    """msort(input: Tensor) -> Tensor

    input sorted along its first dimension."""
    return input.sort(0).values


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _prepare(input, q, dim, interpolation):
    # torch's checks in its order, worded "quantile()" for nanquantile too: a Python q's range,
    # the interpolation, then the input (non-empty before its dtype), q's rank and dtype
    if not isinstance(q, Tensor) and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q):g}")
    if interpolation not in _MODES:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    scalar_q = not isinstance(q, Tensor) or q.dim() == 0
    if isinstance(q, Tensor) and q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    qt = q if isinstance(q, Tensor) else tensor(float(q), dtype=input.dtype)
    if qt.dtype != input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    x = input.reshape(-1) if dim is None else input.movedim(dim, -1)
    if x.dim() == 0:
        x = x.reshape(1)
    if bool(((qt < 0) | (qt > 1)).any()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return x, qt.reshape(-1), scalar_q


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    x, qt, scalar_q = _prepare(input, q, dim, interpolation)
    s = x.sort(-1).values  # NaN sorts last
    nan = isnan(s)
    n = x.shape[-1]
    count = (~nan).sum(-1, keepdim=True) if ignore_nan else full(list(s.shape[:-1]) + [1], n)
    # ranks: (Q, ..., 1) positions into the sorted rows.
    last = (count - 1).clamp(min=0).to(x.dtype)
    ranks = qt.reshape([-1] + [1] * s.dim()) * last
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    lo_i, hi_i = ranks.floor().long(), ranks.ceil().long()
    rows = s.expand([qt.shape[0]] + list(s.shape))
    lo, hi = rows.gather(-1, lo_i), rows.gather(-1, hi_i)
    if interpolation == "midpoint":
        out = lo + (hi - lo) * 0.5
    else:
        out = lo + (hi - lo) * (ranks - ranks.floor())
    # A row with NaN (or, for nanquantile, with only NaN) has a NaN quantile.
    bad = (count == 0) if ignore_nan else nan.any(-1, keepdim=True)
    out = where(bad, full([], float("nan"), dtype=x.dtype), out).squeeze(-1)
    if keepdim:
        if dim is None:
            out = out.reshape([out.shape[0]] + [1] * input.dim())
        else:
            out = out.unsqueeze(dim % input.dim() + 1 if input.dim() else 1)
            if input.dim() == 0:
                out = out.squeeze(-1)
    return out[0] if scalar_q else out


@_autocast_fp32  # on torch's CPU autocast float32 list
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile(input, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor

    The q-th quantiles along dim (all elements when None), interpolating between ranks."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@_autocast_fp32
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor

    quantile ignoring NaN values."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


def _median_reads_values(input, dim):
    """Whether torch's median kernel runs (its dtype check): not over an empty dim, which is
    the IndexError checked later."""
    if dim is None:
        return input.numel() > 0
    d = wrap_dim(dim, input.dim())
    return input.dim() == 0 or input.shape[d] != 0


def nanmedian(input, dim=None, keepdim=False):
    """nanmedian(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    The lower median of the non-NaN values (NaN where there are none)."""
    from .. import return_types

    if (
        dim is None
        and input.numel() == 0
        and not (input.dtype.is_floating_point or input.dtype.is_complex)
    ):
        return _nan_as(input.dtype)  # before the dtype check: torch fills the empty result
    if input.dtype == _C.bool and dim is None and input.numel():
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
    _refuse_bool_rows(input, dim, "median_out")
    if input.dtype.is_complex and _median_reads_values(input, dim):  # before sort's refusal
        kernel = "median_cpu" if dim is None else "median_out"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{scalar_type_name(input.dtype)}'"
        )
    x = input.reshape(-1) if dim is None else input
    d = -1 if dim is None else dim
    if x.dim() == 0:
        if dim is not None and not -1 <= dim <= 0:  # a 0-d tensor's dims are [-1, 0] as torch's
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
            )
        x = x.reshape(1)
        d = 0
    if x.shape[d] == 0 and dim is None:
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            return _nan_as(input.dtype)
        return full([], float("nan"), dtype=input.dtype)
    if x.shape[d] == 0 and input.dim() > 0:
        raise IndexError(f"median(): Expected reduction dim {d % x.dim()} to have non-zero size.")
    values, indices = x.sort(d, stable=True)  # torch's ties: the first position
    valid = ~isnan(x) if x.dtype.is_floating_point else ones_like(x, dtype=_C.bool)
    k = valid.sum(d, keepdim=True)
    pick = (k - 1).clamp(min=0) // 2
    v, i = values.gather(d, pick), indices.gather(d, pick)
    if dim is None:
        return v.reshape([])
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    if input.dim() == 0:
        v, i = v.reshape([]), i.reshape([])
    return return_types.nanmedian((v, i))


# torch's grad_fn names (see _names.py): the overall median and the one along a dim
nanmedian = _names.named(
    nanmedian,
    lambda args, kwargs: (
        "NanmedianBackward0" if _names.arg(args, kwargs, 1, "dim") is None else "NanmedianBackward1"
    ),
)
