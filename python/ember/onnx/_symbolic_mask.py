"""Mappings of boolean-mask indexing and of index assignment: ``x[mask]`` and ``x[...] = v``.

``x[mask]`` selects the positions where `mask` (covering the leading dims of `x`) is True: NonZero
lists them, GatherND reads them. Its length depends on the data, so that dim is dynamic in the
graph (and in the output's declared shape).

``x[index] = v`` (``operator.setitem``, any index ``x[index]`` itself supports, masks included)
is written without a special case per index kind: an int64 tensor numbering the elements of `x`
is indexed the same way, which gives the flat positions the assignment writes; `v` is broadcast to
them and ScatterElements writes it into the flattened `x`. The exporter then rebinds `x` to the
result, so later uses see the assignment (a view of another tensor does not write through)."""

import operator

from .. import _C
from ._graph import Value
from ._registry import operators
from .errors import SymbolicValueError


def _loose(g, out, record=True):
    """Marks dim 0 of `out` as data-dependent (its example size too, to follow it downstream)."""
    g.data_dependent[out.name] = {0}
    ex = g.example
    if record and hasattr(ex, "shape") and len(ex.shape):
        g.data_sizes.add(int(ex.shape[0]))


def _typed(v, dtype, shape):
    v.dtype, v.shape = dtype, shape
    return v


def mask_select(g, x, mask, before=0, record=True):
    """x[(slice(None),) * before + (mask,)]: the rows of x where the bool `mask` is True."""
    k = mask.rank
    if before and k:  # x[:, mask]: the masked dims first, then the result's count back in place
        rank = x.rank
        if before + k > rank:
            raise SymbolicValueError(
                f"getitem: expected a mask of at most {rank - before} dims at dim {before}; got "
                f"{k} dims"
            )
        perm = list(range(before, before + k)) + list(range(before)) + list(range(before + k, rank))
        moved = g.op("Transpose", x, perm=perm)
        moved = _typed(moved, x.dtype, tuple(x.shape[p] for p in perm))
        picked = mask_select(g, moved, mask, record=False)
        back = list(range(1, before + 1)) + [0] + list(range(before + 1, picked.rank))
        out = g.op("Transpose", picked, perm=back)
        g.data_dependent[out.name] = {before}
        ex = g.example
        if hasattr(ex, "shape") and len(ex.shape) > before:
            g.data_sizes.add(int(ex.shape[before]))
        shape = tuple(x.shape[:before]) + (None,) + tuple(x.shape[before + k :])
        return _typed(out, x.dtype, shape)
    if before:
        raise SymbolicValueError("getitem: expected a mask of at least one dim after other indices")
    if k > x.rank:
        raise SymbolicValueError(f"getitem: expected a mask of at most {x.rank} dims; got {k} dims")
    if k == 0:  # x[True] adds a dim of 1, x[False] one of 0
        idx = g.op("NonZero", g.unsqueeze(mask, [0]))
        out = g.op("Gather", g.unsqueeze(x, [0]), g.squeeze(idx, [0]), axis=0)
        _loose(g, out, record)
        return _typed(out, x.dtype, (None,) + tuple(x.shape))
    nz = g.op("NonZero", mask)  # (k, count)
    idx = g.op("Transpose", nz, perm=[1, 0])  # (count, k)
    out = g.op("GatherND", x, idx)
    _loose(g, out, record)
    return _typed(out, x.dtype, (None,) + tuple(x.shape[k:]))


def _positions(g, x):
    """An int64 tensor of x's shape numbering its elements 0, 1, ... in row-major order."""
    n = g.op("ReduceProd", g.shape_of(x), keepdims=0)
    flat = g.op("Range", g.const(0, _C.int64), _typed(n, _C.int64, ()), g.const(1, _C.int64))
    pos = g.op("Reshape", flat, g.shape_of(x))
    return _typed(pos, _C.int64, tuple(x.shape))


@operators(operator.setitem)
def setitem(g, x, index, value):
    """The new value of `x` after ``x[index] = value`` (the exporter rebinds x to it)."""
    if not isinstance(x, Value):
        raise SymbolicValueError(
            f"setitem: expected a tensor to assign into; got {type(x).__name__}"
        )
    from ._symbolic_shape import _getitem

    sel = _getitem(g, _positions(g, x), index)
    flat_idx = g.op("Reshape", sel, g.ints([-1]))
    if isinstance(value, Value):
        v = g.cast(value, x.dtype)
    else:
        v = g.const(value, x.dtype)
    v = g.op("Expand", v, g.shape_of(sel))
    flat_v = g.op("Reshape", v, g.ints([-1]))
    flat_x = g.op("Reshape", x, g.ints([-1]))
    out = g.op("ScatterElements", flat_x, flat_idx, flat_v, axis=0)
    out = g.op("Reshape", out, g.shape_of(x))
    return _typed(out, x.dtype, x.shape)
