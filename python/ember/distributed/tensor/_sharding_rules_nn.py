"""Sharding rules of DTensor nn.functional operators (_dispatch.py routes to them): softmax,
layer_norm / rms_norm, dropout, cross_entropy, embedding and scaled_dot_product_attention,
whose reduced or gathered dims must stay whole on each rank; and the tensor ops that work
along one dim (sort, topk, cumsum, median, ...), which keep the shards of the other dims.
"""

from ._api import (
    DTensor,
    Partial,
    Replicate,
    Shard,
    _chunk_sizes,
    _lib,
    _MaskPartial,
    _redistribute_local,
)
from ._dispatch_utils import (
    _arg,
    _fallback,
    _first_mesh,
    _is_t,
    _move,
    _orig,
    _spec,
    _sync_rng,
    _wrap,
    _wrap_all,
)

# --- dims that must stay whole -------------------------------------------------------------


def _keep_whole(x, whole_dims, mesh, allow_partial=False):
    """Target placements of x with no Shard on whole_dims and no Partial."""
    target = []
    for p in x._placements if isinstance(x, DTensor) else (Replicate(),) * mesh.ndim:
        if isinstance(p, Shard) and p.dim in whole_dims:
            target.append(Replicate())
        elif isinstance(p, Partial) and not allow_partial:
            target.append(Replicate())
        else:
            target.append(p)
    return tuple(target)


def _softmax(func, name, args, kwargs):
    x = args[0]
    mesh = x._mesh
    dim = _arg(args, kwargs, 1, "dim", None)
    if dim is None:
        return _fallback(func, name, args, kwargs)
    dim %= max(x.ndim, 1)
    target = _keep_whole(x, {dim}, mesh)
    local = _move(x, mesh, target)
    res = func(local, *args[1:], **kwargs)
    return _wrap(res, mesh, target, x._shape)


# op -> (position of its dim argument, the dim's default, what becomes of that dim: "keep",
# "k" (topk: k long) or "reduce" (gone, or 1 with keepdim)). Without a dim (None) the reducing
# ops reduce everything and take the fallback.
_ALONG_DIM = {
    "sort": (1, -1, "keep"),
    "argsort": (1, -1, "keep"),
    "cumsum": (1, None, "keep"),
    "cumprod": (1, None, "keep"),
    "cummax": (1, None, "keep"),
    "cummin": (1, None, "keep"),
    "logcumsumexp": (1, None, "keep"),
    "topk": (2, -1, "k"),
    "kthvalue": (2, -1, "reduce"),
    "median": (1, None, "reduce"),
    "nanmedian": (1, None, "reduce"),
    "mode": (1, -1, "reduce"),
    "argmax": (1, None, "reduce"),
    "argmin": (1, None, "reduce"),
    "var": (1, None, "reduce"),
    "std": (1, None, "reduce"),
    "logsumexp": (1, None, "reduce"),
}


def _along_dim(func, name, args, kwargs):
    """An op along one dim: that dim is gathered, the shards of the others are kept (torch's
    rule), so e.g. sorting the rows of a row-sharded matrix moves no data."""
    x = args[0]
    pos, default, kind = _ALONG_DIM[name]
    dim = _arg(args, kwargs, pos, "dim", default)
    if not isinstance(dim, int) or x.ndim == 0:  # median() of everything, a named dim
        return _fallback(func, name, args, kwargs)
    dim %= x.ndim
    mesh = x._mesh
    target = _keep_whole(x, {dim}, mesh)
    res = func(_move(x, mesh, target), *args[1:], **kwargs)
    shape, out_pl = list(x._shape), target
    first = res if _is_t(res) else res[0]
    if kind == "k":
        shape[dim] = int(_arg(args, kwargs, 1, "k"))
    elif kind == "reduce" and first.ndim == x.ndim:  # keepdim (wherever the overload has it)
        shape[dim] = 1
    elif kind == "reduce":
        del shape[dim]
        out_pl = tuple(Shard(p.dim - (p.dim > dim)) if isinstance(p, Shard) else p for p in target)
    return _wrap_all(res, mesh, tuple(out_pl), tuple(shape))


def _layer_norm(func, name, args, kwargs):
    x = args[0]
    mesh = x._mesh
    shape = _arg(args, kwargs, 1, "normalized_shape")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    whole = set(range(x.ndim - len(shape), x.ndim))
    target = _keep_whole(x, whole, mesh)
    local = _move(x, mesh, target)
    sync = [md for md, p in enumerate(target) if not isinstance(p, Replicate)]
    rest = list(args[1:])
    kw = dict(kwargs)
    for i, key in ((2, "weight"), (3, "bias")):
        v = _arg(args, kwargs, i, key)
        if v is not None and _is_t(v):
            moved = _move(v, mesh, (Replicate(),) * mesh.ndim, sync)
            if key in kw:
                kw[key] = moved
            else:
                rest[i - 1] = moved
    res = func(local, *rest, **kw)
    return _wrap(res, mesh, target, x._shape)


def _dropout(func, name, args, kwargs):
    x = args[0]
    mesh = x._mesh
    p = _arg(args, kwargs, 1, "p", 0.5)
    training = _arg(args, kwargs, 2, "training", True)
    inplace = _arg(args, kwargs, 3, "inplace", False)
    if not training or p == 0:
        return x
    if inplace:
        return _fallback(func, name, args, kwargs)
    _sync_rng(mesh)
    lib = _lib()
    # the mask of the whole tensor, drawn alike on every rank; each takes its piece
    mask = func(lib.ones(x._shape, dtype=x.dtype), p, True)
    src = (Replicate(),) * mesh.ndim
    pieces = tuple(Replicate() if isinstance(q, Partial) else q for q in x._placements)
    mask = _redistribute_local(mask, x._shape, mesh, src, pieces)
    return _wrap(x._local_tensor * mask, mesh, x._placements, x._shape)


# the options after (input, target), by position, of the class-index losses
_CLASS_LOSS_OPTIONS = {
    "cross_entropy": (
        "weight",
        "size_average",
        "ignore_index",
        "reduce",
        "reduction",
        "label_smoothing",
    ),
    "nll_loss": ("weight", "size_average", "ignore_index", "reduce", "reduction"),
}


def _cross_entropy(func, name, args, kwargs):
    """cross_entropy and nll_loss of class indices: the class dim whole, the target following
    the input's other shards (torch's rule); a reduction over a sharded batch leaves
    Partial(sum), the mean divided by the total weight of every rank. torch's Partial(avg)
    averages the ranks' own means, which ignored targets or class weights bias and pieces of
    unequal size make it refuse: ember gives the whole batch's value and gradient."""
    public = name.rpartition(".")[2]
    x, target = args[0], _arg(args, kwargs, 1, "target")
    mesh = _first_mesh(args, kwargs)
    if not isinstance(x, DTensor) or target.dtype.is_floating_point:
        return _fallback(func, name, args, kwargs)
    cdim = 1 if x.ndim > 1 else 0
    xt = _keep_whole(x, {cdim}, mesh)
    tt = []
    for p in xt:
        if isinstance(p, Shard):
            tt.append(Shard(p.dim - (1 if p.dim > cdim else 0)))
        else:
            tt.append(Replicate())
    names = _CLASS_LOSS_OPTIONS[public]
    opts = {k: _arg(args, kwargs, i + 2, k) for i, k in enumerate(names)}
    if opts["size_average"] is not None or opts["reduce"] is not None:
        return _fallback(func, name, args, kwargs)
    reduction = opts["reduction"] or "mean"
    ignore = -100 if opts["ignore_index"] is None else opts["ignore_index"]
    weight = opts["weight"]
    smoothing = opts.get("label_smoothing") or 0.0
    if public == "cross_entropy" and weight is None and not smoothing:
        from .parallel import _loss

        if _loss.active():
            out = _loss.cross_entropy(x, target, ignore, reduction)
            if out is not None:
                return out
    if weight is not None:
        weight = _move(weight, mesh, (Replicate(),) * mesh.ndim)
    sharded = [md for md, p in enumerate(xt) if isinstance(p, Shard)]
    lx = _move(x, mesh, xt)
    lt = _move(target, mesh, tuple(tt))
    kw = {"weight": weight, "ignore_index": ignore}
    if public == "cross_entropy":
        kw["label_smoothing"] = smoothing
    if reduction == "none" or not sharded:
        res = func(lx, lt, reduction=reduction, **kw)
        pl = tuple(tt) if reduction == "none" else (Replicate(),) * mesh.ndim
        shape = tuple(target.shape) if reduction == "none" else ()
        return _wrap(res, mesh, pl, shape)
    total = func(lx, lt, reduction="sum", **kw)
    pl = tuple(Partial() if md in sharded else Replicate() for md in range(mesh.ndim))
    if reduction == "mean":
        lib = _lib()
        with lib.no_grad():
            valid = (lt != ignore).to(lib.float64)
            if weight is not None:
                valid = valid * weight.to(lib.float64)[lt.clamp(min=0)]
            denom = valid.sum().reshape(1)
            from .. import distributed_c10d as c10d

            for md in sharded:
                c10d.all_reduce(denom, group=mesh.get_group(md))
        total = total / denom.to(total.dtype)[0]
    return _wrap(total, mesh, pl, ())


def _cross_entropy_kernel(func, name, args, kwargs):
    """ember._C._nn.cross_entropy(input, target, weight, reduction, ignore_index,
    label_smoothing) and nll_loss(input, target, weight, reduction, ignore_index), which
    nn.functional's losses call (so one kept before any mesh existed reaches the DTensor mode),
    as the public function's call (torch's enum reduction)."""
    public = name.rpartition(".")[2]
    count = 6 if public == "cross_entropy" else 5
    if kwargs or len(args) != count or args[3] not in (0, 1, 2):
        return _fallback(func, name, args, kwargs)
    opts = {
        "weight": args[2],
        "reduction": ("none", "mean", "sum")[args[3]],
        "ignore_index": args[4],
    }
    if public == "cross_entropy":
        opts["label_smoothing"] = args[5]
    return _cross_entropy(_orig(public, _lib().nn.functional), public, args[:2], opts)


def _embedding(func, name, args, kwargs):
    idx, weight = args[0], args[1]
    mesh = _first_mesh(args, kwargs)
    li, si, pi = _spec(idx, mesh)
    lw, sw, pw = _spec(weight, mesh)
    padding_idx = _arg(args, kwargs, 2, "padding_idx", None)
    if _arg(args, kwargs, 3, "max_norm", None) is not None:
        return _fallback(func, name, args, kwargs)
    out_shape = (*si, sw[1])
    ti, tw, out_pl, sync_w, vocab = [], [], [], [], None
    for md in range(mesh.ndim):
        a, w = pi[md], pw[md]
        if isinstance(a, Partial):
            a = Replicate()
        if isinstance(w, Shard) and w.dim == 1 and isinstance(a, Replicate):
            ti.append(a)
            tw.append(w)
            out_pl.append(Shard(len(out_shape) - 1))
        elif isinstance(w, Shard) and w.dim == 0 and isinstance(a, Replicate) and vocab is None:
            ti.append(a)
            tw.append(w)
            # torch's placement of a lookup into a row-sharded table: each rank's rows, zeros
            # for the indices another rank holds (so it sums like Partial())
            out_pl.append(_MaskPartial("sum", _lib().Size(sw), 0))
            vocab = md
        else:
            ti.append(a)
            tw.append(Replicate())
            out_pl.append(Shard(a.dim) if isinstance(a, Shard) else Replicate())
            if isinstance(a, Shard):
                sync_w.append(md)
    li = _move(idx, mesh, ti)
    lw = _move(weight, mesh, tw, sync_w)
    if vocab is None:
        res = func(li, lw, padding_idx)
    else:
        n, me = mesh.size(vocab), mesh.get_local_rank(vocab)
        sizes = _chunk_sizes(sw[0], n)
        start = sum(sizes[:me])
        outside = (li < start) | (li >= start + sizes[me])
        local_idx = (li - start).masked_fill(outside, 0)
        pad = padding_idx
        if pad is not None:
            pad = pad % sw[0]
            pad = pad - start if start <= pad < start + sizes[me] else None
        if sizes[me] == 0:  # an empty piece of the table: this rank adds nothing
            res = (lw.sum() * 0).expand(*li.shape, sw[1]).contiguous()
        else:
            res = func(local_idx, lw, pad)
            res = res.masked_fill(outside.unsqueeze(-1), 0.0)
    return _wrap(res, mesh, tuple(out_pl), out_shape)


def _sdpa(func, name, args, kwargs):
    q, k, v = args[0], args[1], args[2]
    mesh = _first_mesh(args, kwargs)
    mask = _arg(args, kwargs, 3, "attn_mask", None)
    if (_arg(args, kwargs, 4, "dropout_p", 0.0) or 0.0) > 0 or isinstance(mask, DTensor):
        return _fallback(func, name, args, kwargs)
    nd = len(_spec(q, mesh)[1])
    target = _keep_whole(q, {nd - 2, nd - 1}, mesh)
    sync = [md for md, p in enumerate(target) if not isinstance(p, Replicate)]
    lq = _move(q, mesh, target)
    lk = _move(k, mesh, target)
    lv = _move(v, mesh, target)
    del sync
    res = func(lq, lk, lv, *args[3:], **kwargs)
    shape = (*_spec(q, mesh)[1][:-1], _spec(v, mesh)[1][-1])
    return _wrap(res, mesh, target, shape)
