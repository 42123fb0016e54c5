"""DTensor.__setitem__ (_dispatch.py routes to it): writes on each rank's own piece.

A key of integers, slices, None and Ellipsis names a box of the global tensor; each rank writes
the part of the box its piece holds (the key's indices shifted to the piece, the others
dropped), so no piece moves. A tensor value is made whole (it is usually small), broadcast to
the box and cut to the rank's part; its gradient is summed over the mesh dims that shard the
target, since each rank used a different part. The write runs on the local piece, so autograd
sees it as an ordinary in-place write. Other keys (index tensors, masks) and Partial targets
take the fallback: the whole tensor is gathered, written and cut back into pieces.
"""

from ._api import DTensor, Partial, Replicate, Shard, _chunk_sizes, _lib
from ._dispatch_utils import _fallback, _is_t, _move


def _piece(x, d):
    """(offset, length) of this rank's piece of tensor dim d."""
    mesh = x._mesh
    start, length = 0, x._shape[d]
    for md, p in enumerate(x._placements):
        if isinstance(p, Shard) and p.dim == d:
            sizes = _chunk_sizes(length, mesh.size(md))
            me = mesh.get_local_rank(md)
            start += sum(sizes[:me])
            length = sizes[me]
    return start, length


def _basic_items(x, key):
    """The key as one item per tensor dim (None entries kept), or None if it is not basic."""
    items = list(key) if isinstance(key, tuple) else [key]
    if any(
        isinstance(v, bool) or not (v is None or v is Ellipsis or isinstance(v, (int, slice)))
        for v in items
    ):
        return None
    used = sum(1 for v in items if v is not None and v is not Ellipsis)
    if used > x.ndim or sum(v is Ellipsis for v in items) > 1:
        return None  # the fallback raises torch's error
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k : k + 1] = [slice(None)] * (x.ndim - used)
        return items
    return items + [slice(None)] * (x.ndim - used)


def _plan(x, items):
    """(local key, box shape, [(box dim, start, stop)] to cut the value to) or None when this
    rank's piece holds no element of the box."""
    local_key, box, cuts, d, empty = [], [], [], 0, False
    for v in items:
        if v is None:
            local_key.append(None)
            box.append(1)
            continue
        n = x._shape[d]
        lo, length = _piece(x, d)
        if isinstance(v, int):
            if not -n <= v < n:
                raise IndexError(f"index {v} is out of bounds for dimension {d} with size {n}")
            i = v % n - lo
            empty = empty or not 0 <= i < length
            local_key.append(i)
        else:
            if v.step is not None and v.step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = v.indices(n)
            count = len(range(start, stop, step))
            if length == n:  # a whole dim: the key as given
                local_key.append(v)
            else:
                first = max(0, -(-(lo - start) // step))
                end = min(count, max(0, -(-(lo + length - start) // step)))
                empty = empty or first >= end
                if first < end:
                    local_key.append(
                        slice(start + first * step - lo, start + (end - 1) * step - lo + 1, step)
                    )
                    cuts.append((len(box), first, end))
            box.append(count)
        d += 1
    return (None if empty else tuple(local_key)), tuple(box), cuts


def _setitem(func, name, args, kwargs):
    x = args[0]
    key, value = args[1], args[2]
    items = _basic_items(x, key) if isinstance(x, DTensor) else None
    if items is None or any(isinstance(p, Partial) for p in x._placements):
        return _fallback(func, name, args, kwargs)
    mesh = x._mesh
    local = x._local_tensor
    if local.requires_grad and local.is_leaf and _lib().is_grad_enabled():
        # raised on every rank, also those whose piece the key misses
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    local_key, box, cuts = _plan(x, items)
    if _is_t(value):
        sync = [md for md, p in enumerate(x._placements) if isinstance(p, Shard)]
        value = _move(value, mesh, (Replicate(),) * mesh.ndim, sync)
        if local_key is not None:
            while value.ndim > len(box) and value.shape[0] == 1:  # as torch: leading 1s go
                value = value[0]
            value = value.expand(box)
            for dim, start, stop in cuts:
                value = value.narrow(dim, start, stop - start)
    if local_key is not None:
        func(local, local_key, value)


RULES = {"__setitem__": _setitem}
