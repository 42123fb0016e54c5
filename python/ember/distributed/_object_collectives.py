"""The object collectives (torch.distributed.distributed_c10d's): pickled bytes in uint8
tensors, moved by the tensor collectives."""

import io
import pickle

from .. import _C as _C_root
from ._collectives import _pg, all_gather_single, broadcast, gather, scatter
from ._groups import _peer


def _to_tensor(obj):
    import numpy as np  # (not at import: `import ember` leaves numpy unloaded)

    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    data = np.frombuffer(buf.getbuffer(), dtype=np.uint8).copy()
    return _C_root.from_numpy(data), len(data)


def _from_tensor(t, size):
    return pickle.loads(t.numpy()[:size].tobytes())


def _bytes(n):
    import numpy as np

    return _C_root.from_numpy(np.zeros(n, dtype=np.uint8))


def _long(values):
    import numpy as np

    return _C_root.from_numpy(np.asarray(values, dtype=np.int64))


def _padded(obj, g):
    """obj pickled into a byte tensor as wide as the group's widest, and every rank's size."""
    t, size = _to_tensor(obj)
    sizes = _long([0] * g.size())
    all_gather_single(sizes, _long([size]), group=g)
    sizes = sizes.tolist()
    padded = _bytes(max(sizes))
    padded[:size] = t
    return padded, sizes


def all_gather_object(object_list, obj, group=None):
    """all_gather_object(object_list, obj, group=None) -> None

    object_list[r] receives group rank r's obj (any picklable object); entries past the group's
    size are left as they are."""
    g = _pg(group, "all_gather_object")
    if g is None:
        return
    n = g.size()
    if len(object_list) < n:  # a longer list keeps its extra entries, as torch's
        raise ValueError(
            f"all_gather_object: expected object_list of {n} entries; got {len(object_list)}"
        )
    padded, sizes = _padded(obj, g)
    width = len(padded)
    out = _bytes(width * n)
    all_gather_single(out, padded, group=g)
    for r in range(n):
        object_list[r] = _from_tensor(out[r * width : (r + 1) * width], sizes[r])


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """gather_object(obj, object_gather_list=None, dst=None, group=None) -> None

    Rank dst's object_gather_list[r] receives group rank r's obj."""
    g = _pg(group, "gather_object")
    if g is None:
        return
    n = g.size()
    root = (
        group_dst if group_dst is not None else _peer(g, 0 if dst is None else dst, "gather_object")
    )
    me = g.rank() == root
    if me and (object_gather_list is None or len(object_gather_list) < n):
        raise ValueError(
            f"gather_object: expected object_gather_list of {n} entries on the destination rank"
        )
    padded, sizes = _padded(obj, g)
    outs = [_bytes(len(padded)) for _ in range(n)] if me else None
    gather(padded, outs, group=g, group_dst=root)
    if me:
        for r in range(n):
            object_gather_list[r] = _from_tensor(outs[r], sizes[r])


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """broadcast_object_list(object_list, src=None, group=None, device=None) -> None

    Replaces object_list's entries on every rank with rank src's (same length everywhere)."""
    g = _pg(group, "broadcast_object_list")
    if g is None:
        return
    root = (
        group_src
        if group_src is not None
        else _peer(g, 0 if src is None else src, "broadcast_object_list")
    )
    if g.rank() == root:
        parts = [_to_tensor(o) for o in object_list]
        sizes = _long([s for _, s in parts])
    else:
        sizes = _long([0] * len(object_list))
    broadcast(sizes, group=g, group_src=root)
    total = int(sizes.sum().item()) if len(object_list) else 0
    if g.rank() == root:
        data = _C_root.cat([t for t, _ in parts]) if parts else _bytes(0)
    else:
        data = _bytes(total)
    broadcast(data, group=g, group_src=root)
    if g.rank() != root:
        off = 0
        for i, s in enumerate(sizes.tolist()):
            object_list[i] = _from_tensor(data[off : off + s], s)
            off += s


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=None, group=None, group_src=None
):
    """scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
        group=None) -> None

    scatter_object_output_list[0] receives rank src's scatter_object_input_list[rank]."""
    g = _pg(group, "scatter_object_list")
    if g is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    root = (
        group_src
        if group_src is not None
        else _peer(g, 0 if src is None else src, "scatter_object_list")
    )
    me = g.rank() == root
    if me:
        parts = [_to_tensor(o) for o in scatter_object_input_list]
        width = _long([max(s for _, s in parts)])
    else:
        width = _long([0])
    broadcast(width, group=g, group_src=root)
    w = int(width.item())
    ins = None
    sizes_in = None
    if me:
        ins = []
        for t, s in parts:
            p = _bytes(w)
            p[:s] = t
            ins.append(p)
        sizes_in = [_long([s]) for _, s in parts]
    out = _bytes(w)
    size = _long([0])
    scatter(out, ins, group=g, group_src=root)
    scatter(size, sizes_in, group=g, group_src=root)
    scatter_object_output_list[0] = _from_tensor(out, int(size.item()))
