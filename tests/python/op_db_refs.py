"""op_db's numpy references for the ops numpy has no single function for."""

from __future__ import annotations

import math

import numpy as np
from op_db_core import (  # noqa: F401
    FLOAT_MAX,
    accumulate,
    is_float,
    tensor,
)

# ----------------------------------------------------------------------------- numpy helpers


def _as_float64(fn):
    """Reference computed in float64 whatever the input kind (int/bool -> float ops)."""

    def ref(*args, **kwargs):
        return fn(
            *[a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args], **kwargs
        )

    return ref


_np_erf = np.vectorize(math.erf, otypes=[np.float64])
_np_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _np_erfinv(y):
    """Inverse error function: Winitzki's approximation refined by Newton steps."""
    y = np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        a = 0.147
        ln = np.log1p(-y * y)
        t = 2 / (np.pi * a) + ln / 2
        x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
        for _ in range(4):
            x = np.where(
                np.isfinite(x),
                x
                - (_np_erf(np.where(np.isfinite(x), x, 0)) - y)
                / (2 / np.sqrt(np.pi) * np.exp(-x * x)),
                x,
            )
    return np.where(np.abs(y) == 1, np.sign(y) * np.inf, x)


def _logcumsumexp_ref(a, dim):
    return a if a.ndim == 0 else np.logaddexp.accumulate(a, axis=dim)


def _axis(a, dim):
    """torch accepts dim 0/-1 on a 0-d tensor; numpy needs axis=None there."""
    if a.ndim == 0 or dim is None:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _reduce(fn):
    """Adapt numpy's (axis, keepdims) reduction to torch's (dim, keepdim)."""

    def ref(a, dim=None, keepdim=False, **kw):
        out = fn(a, axis=_axis(a, dim), keepdims=keepdim and a.ndim > 0, **kw)
        return np.asarray(out)

    return ref


def _sort_key(a, descending):
    return -a.astype(np.float64) if descending else a


def _argsort(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return np.zeros((), np.int64)
    return np.argsort(_sort_key(a, descending), axis=dim, kind="stable")


def _sort_ref(a, dim=-1, descending=False, stable=False):
    idx = _argsort(a, dim, descending)
    return (a.copy(), idx) if a.ndim == 0 else (np.take_along_axis(a, idx, dim), idx)


def _reduced_pick(a, dim, keepdim, position):
    """(value, index) of the element at sorted `position` along dim (kthvalue/median)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = np.take(np.argsort(a, axis=dim, kind="stable"), [position(a.shape[dim])], axis=dim)
    vals = np.take_along_axis(a, idx, dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return vals, idx


def _topk_ref(a, k, dim, largest):
    idx = _argsort(a, dim, descending=largest)
    if a.ndim == 0:
        return a.copy(), idx
    idx = np.take(idx, np.arange(k), axis=dim)
    return np.take_along_axis(a, idx, dim), idx


def _minmax_ref(np_val, np_arg):
    def ref(a, dim=None, keepdim=False):
        if dim is None:
            return np.asarray(np_val(a))
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        return np_val(a, axis=dim, keepdims=keepdim), np_arg(a, axis=dim, keepdims=keepdim)

    return ref


def _arg_ref(np_arg):
    def ref(a, dim=None, keepdim=False):
        if dim is None or a.ndim == 0:
            return np.asarray(np_arg(a))
        return np_arg(a, axis=dim, keepdims=keepdim)

    return ref


def _cummax_ref(a, dim):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(a, dim, -1)
    best = np.maximum.accumulate(moved, axis=-1)
    # the running max only changes where an element equals it: the index is the latest such spot
    hits = np.where(moved == best, np.arange(moved.shape[-1]), 0)
    idx = np.maximum.accumulate(hits, axis=-1) if moved.size else hits
    return np.moveaxis(best, -1, dim), np.moveaxis(idx, -1, dim)


def _mode_ref(a, dim=-1, keepdim=False):
    def row_mode(row):
        vals, counts = np.unique(row, return_counts=True)
        best = vals[np.argmax(counts)]  # most frequent, smallest on ties
        return np.asarray(best), np.asarray(np.nonzero(row == best)[0][-1])

    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    dim = dim % a.ndim
    if a.size == 0:
        shape = a.shape[:dim] + ((1,) if keepdim else ()) + a.shape[dim + 1 :]
        return np.zeros(shape, a.dtype), np.zeros(shape, np.int64)
    moved = np.moveaxis(a, dim, -1)
    rows = [row_mode(r) for r in moved.reshape(-1, moved.shape[-1])]
    vals = np.array([r[0] for r in rows], a.dtype).reshape(moved.shape[:-1])
    idx = np.array([r[1] for r in rows], np.int64).reshape(moved.shape[:-1])
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _gather(x, idx, dim, reduced, keepdim=False):
    """x's elements picked by idx along dim: turns an index output into the values it
    points at, so that any index of a tied element is accepted."""
    x, idx = np.asarray(x), np.asarray(idx).astype(np.int64)
    if x.ndim == 0:
        return np.where(idx == 0, x, np.nan)
    if dim is None:
        return x.reshape(-1)[idx]
    if reduced and not keepdim:
        return np.take_along_axis(x, np.expand_dims(idx, dim), dim).squeeze(dim)
    return np.take_along_axis(x, idx, dim)


def gather_indices(*, reduced, default_dim=-1, index_only=False):
    """canonicalize for ops returning indices into args[0] along kwargs['dim']."""

    def canon(outs, args, kwargs):
        dim = kwargs.get("dim", default_dim)
        if kwargs.get("stable") or (len(outs) < 2 and not index_only):
            return (
                outs  # stable sorts define the exact indices; full max/min/median give no indices
            )
        g = _gather(args[0], outs[-1], dim, reduced, kwargs.get("keepdim", False))
        return (g,) if index_only else (outs[0], g)

    return canon


def _topk_canon(outs, args, kwargs):
    values, gathered = gather_indices(reduced=False)(outs, args, kwargs)
    if kwargs.get("sorted", True):
        return values, gathered
    dim = kwargs.get("dim", -1)
    return np.sort(values, axis=dim), np.sort(gathered, axis=dim)


def _unique_ref(a, sorted=True, return_inverse=False, return_counts=False):
    vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True)
    out = [vals]
    if return_inverse:
        out.append(np.asarray(inv).reshape(a.shape))
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_canon(outs, args, kwargs):
    """Sorted uniques; the inverse as the values it reconstructs; counts in sorted order."""
    vals = np.asarray(outs[0])
    order = np.argsort(vals, kind="stable")
    canon = [vals[order]]
    rest = list(outs[1:])
    if kwargs.get("return_inverse"):
        canon.append(vals[np.asarray(rest.pop(0)).astype(np.int64)])
    if kwargs.get("return_counts"):
        canon.append(np.asarray(rest.pop(0))[order])
    return tuple(canon)


def _histc_ref(a, bins=100, min=0, max=0):
    lo, hi = (float(a.min()), float(a.max())) if min == max and a.size else (min, max)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(a, bins=bins, range=(lo, hi))[0]


def _norm_ref(a, p="fro", dim=None, keepdim=False):
    axis = _axis(a, dim)
    absval = np.abs(a)
    if p == "fro" or p == 2:
        return np.sqrt(np.sum(absval**2, axis=axis, keepdims=keepdim))
    if p == math.inf:
        return np.max(absval, axis=axis, keepdims=keepdim)
    return np.sum(absval**p, axis=axis, keepdims=keepdim) ** (1 / p)


def _logsumexp_ref(a, dim, keepdim=False):
    axis = _axis(a, dim)
    if a.size == 0:
        return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdim))
    m = np.max(a, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    return out if keepdim or a.ndim == 0 else np.squeeze(out, axis)


def _var_ref(np_fn):
    def ref(a, dim=None, *, correction=None, unbiased=None, keepdim=False):
        ddof = correction if correction is not None else (0 if unbiased is False else 1)
        return np_fn(a, axis=_axis(a, dim), ddof=ddof, keepdims=keepdim and a.ndim > 0)

    return ref


def _var_mean_ref(a, dim=None, *, correction=None, unbiased=None, keepdim=False):
    var = _var_ref(np.var)(a, dim, correction=correction, unbiased=unbiased, keepdim=keepdim)
    return var, _reduce(np.mean)(a, dim, keepdim)


def _split_ref(a, split_size_or_sections, dim=0):
    n = a.shape[dim]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        sizes = [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = list(split_size_or_sections)
    return tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim))


def _chunk_ref(a, chunks, dim=0):
    # torch.chunk uses chunks of ceil(n / chunks) and may return fewer than `chunks` pieces
    return _split_ref(a, -(-a.shape[dim] // chunks), dim)


def _broadcast_to_ref(a, shape):
    # -1 keeps the input's size in that (trailing-aligned) dim
    lead = len(shape) - a.ndim
    return np.broadcast_to(
        a, tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
    ).copy()


def _nan_to_num_ref(a, nan=0.0, posinf=None, neginf=None, *, _dtype):
    if not is_float(_dtype):
        return a.copy()
    big = FLOAT_MAX[_dtype]
    return np.nan_to_num(
        a,
        nan=nan,
        posinf=big if posinf is None else posinf,
        neginf=-big if neginf is None else neginf,
    )


def _clamp_ref(a, min=None, max=None):
    out = a
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)  # min > max gives max, as in torch
    return out


def _div_ref(a, b, rounding_mode=None):
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    q = np.true_divide(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return np.trunc(q) if rounding_mode == "trunc" else q


def _addmm_ref(inp, a, b, *, beta=1, alpha=1):
    prod = alpha * np.matmul(a, b)
    return prod if beta == 0 else beta * inp + prod  # beta=0 ignores input, nan included


_GATHER_REDUCED = gather_indices(reduced=True)
