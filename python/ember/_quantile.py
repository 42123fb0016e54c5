"""quantile, nanquantile and nanmedian: sort along the dim, then pick or interpolate ranks."""

import ember as E  # the package being initialised; attributes are read at call time
from ._C import Tensor

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _prepare(name, input, q, dim, interpolation):
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _MODES:
        raise ValueError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest. Got {interpolation}"
        )
    scalar_q = not isinstance(q, Tensor) or q.dim() == 0
    qt = q if isinstance(q, Tensor) else E.tensor(float(q), dtype=input.dtype)
    if qt.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if qt.dtype != input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if bool(((qt < 0) | (qt > 1)).any()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input.movedim(dim, -1)
    if x.dim() == 0:
        x = x.reshape(1)
    if x.shape[-1] == 0:
        raise IndexError(f"{name}() input tensor must be non-empty")
    return x, qt.reshape(-1), scalar_q


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    x, qt, scalar_q = _prepare(name, input, q, dim, interpolation)
    s = x.sort(-1).values  # NaN sorts last
    nan = E.isnan(s)
    n = x.shape[-1]
    count = (~nan).sum(-1, keepdim=True) if ignore_nan else E.full(list(s.shape[:-1]) + [1], n)
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
    out = E.where(bad, E.full([], float("nan"), dtype=x.dtype), out).squeeze(-1)
    if keepdim:
        if dim is None:
            out = out.reshape([out.shape[0]] + [1] * input.dim())
        else:
            out = out.unsqueeze(dim % input.dim() + 1 if input.dim() else 1)
            if input.dim() == 0:
                out = out.squeeze(-1)
    return out[0] if scalar_q else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN values (NaN where there are none)."""
    from . import return_types

    x = input.reshape(-1) if dim is None else input
    d = -1 if dim is None else dim
    if x.dim() == 0:
        x = x.reshape(1)
        d = 0
    if x.shape[d] == 0 and dim is None:
        return E.full([], float("nan"), dtype=input.dtype)
    values, indices = x.sort(d)
    valid = ~E.isnan(x) if x.dtype.is_floating_point else E.ones_like(x, dtype=E.bool)
    k = valid.sum(d, keepdim=True)
    pick = (k - 1).clamp(min=0) // 2
    v, i = values.gather(d, pick), indices.gather(d, pick)
    if dim is None:
        return v.reshape([])
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    if input.dim() == 0:
        v, i = v.reshape([]), i.reshape([])
    return return_types.nanmedian(v, i)
