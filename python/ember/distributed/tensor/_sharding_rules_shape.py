"""Sharding rules of the DTensor operators that select, join or rearrange elements (_dispatch.py
routes to them): cat/stack, split/chunk/unbind/narrow/select, expand/repeat/squeeze,
flip/roll, index_select/gather and indexing; and zeros_like and its kin, which keep the layout.

Each output element is a copy of one input element, so torch's rule keeps every placement the
operator does not touch: a Shard(d) whose dim d the operator leaves whole (not concatenated,
split, flipped, indexed or expanded) stays sharded, moved to where d lands in the output, and
a Partial stays Partial; a Shard of a touched dim is gathered first (Replicate). The operator
then runs on the local pieces with its own arguments, since those only name untouched sizes.
"""

from ._api import DTensor, Partial, Replicate, Shard, _lib
from ._dispatch_utils import _arg, _fallback, _full, _is_t, _move, _orig, _spec, _wrap

# --- shared: placements that follow an untouched dim ------------------------------------------


def _follow(x, touched, where):
    """(target, output) placements of x for an operator that touches the input dims `touched`
    and moves the others: input dim d lands on output dim where(d)."""
    target, out = [], []
    for p in x._placements:
        if isinstance(p, Shard) and p.dim in touched:
            target.append(Replicate())
            out.append(Replicate())
        elif isinstance(p, Shard):
            target.append(p)
            out.append(Shard(where(p.dim)))
        else:
            target.append(p)
            out.append(p)
    return target, out


def _global_shape(local, target, out_pl, in_shape):
    """The global shape of a local result: its sharded dims get the input's whole size."""
    shape = list(local.shape)
    for t, o in zip(target, out_pl):
        if isinstance(o, Shard):
            shape[o.dim] = in_shape[t.dim]
    return tuple(shape)


def _wrap_each(res, mesh, target, out_pl, in_shape):
    if _is_t(res):
        return _wrap(res, mesh, tuple(out_pl), _global_shape(res, target, out_pl, in_shape))
    return tuple(_wrap_each(r, mesh, target, out_pl, in_shape) for r in res)


def _local_args(args, kwargs, mesh):
    """The arguments after the first with every DTensor whole (index tensors)."""

    def conv(a):
        if isinstance(a, DTensor):
            return _full(a, mesh)
        if isinstance(a, (list, tuple)) and any(isinstance(v, DTensor) for v in a):
            return type(a)(conv(v) for v in a)
        return a

    return [conv(a) for a in args[1:]], {k: conv(v) for k, v in kwargs.items()}


def _run(func, args, kwargs, touched, where, call=None):
    x = args[0]
    mesh = x._mesh
    target, out_pl = _follow(x, touched, where)
    local = _move(x, mesh, target)
    if call is not None:
        res = call(local)
    else:
        rest, kw = _local_args(args, kwargs, mesh)
        res = func(local, *rest, **kw)
    return _wrap_each(res, mesh, target, out_pl, x._shape)


def _dims(value, nd):
    if value is None:
        return set(range(nd))
    if isinstance(value, int):
        return {value % max(nd, 1)}
    return {int(d) % max(nd, 1) for d in value}


def _same(d):
    return d


# --- one dim split, selected or flipped --------------------------------------------------------

# op -> (position of its dim argument, the dim's default, whether the dim goes away)
_ALONG = {
    "split": (2, 0, False),
    "split_with_sizes": (2, 0, False),
    "chunk": (2, 0, False),
    "tensor_split": (2, 0, False),
    "narrow": (1, None, False),
    "index_select": (1, None, False),
    "unbind": (1, 0, True),
    "select": (1, None, True),
}


def _along(func, name, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor):
        return _fallback(func, name, args, kwargs)
    pos, default, removes = _ALONG[name]
    nd = x.ndim
    dim = _arg(args, kwargs, pos, "dim", default) % max(nd, 1)
    if name == "unbind" and any(isinstance(p, Shard) and p.dim == dim for p in x._placements):
        raise RuntimeError(
            f"unbind: Attempted to unbind along the sharded dimension {dim}. It cannot be "
            "performed without redistribution, which is disallowed by the current operator."
        )
    where = (lambda d: d - (d > dim)) if removes else _same
    return _run(func, args, kwargs, {dim}, where)


def _flip_roll(func, name, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor):
        return _fallback(func, name, args, kwargs)
    if name == "flip":
        dims = _arg(args, kwargs, 1, "dims")
        if isinstance(dims, int) or len(args) > 2:
            dims = args[1:]
    else:  # roll without dims rolls the flattened tensor: every dim is touched
        dims = _arg(args, kwargs, 2, "dims", None)
    return _run(func, args, kwargs, _dims(dims, x.ndim), _same)


def _squeeze(func, name, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor):
        return _fallback(func, name, args, kwargs)
    nd = x.ndim
    dims = _dims(_arg(args, kwargs, 1, "dim", None), nd)
    gone = sorted(d for d in dims if x._shape[d] == 1)
    # a squeezed dim has one element: it is whole on the rank that holds it, so it is gathered
    local_dims = tuple(gone)
    sq = _lib().squeeze
    return _run(
        func,
        args,
        kwargs,
        set(gone),
        lambda d: d - sum(1 for g in gone if g < d),
        lambda loc: sq(loc, local_dims) if local_dims else loc.view_as(loc),
    )


# --- expand / repeat -------------------------------------------------------------------------


def _sizes(args, kwargs, key):
    if key in kwargs:
        return [int(v) for v in kwargs[key]]
    rest = args[1:]
    if len(rest) == 1 and not isinstance(rest[0], int):
        rest = rest[0]
    return [int(v) for v in rest]


def _expand(func, name, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor):
        return _fallback(func, name, args, kwargs)
    if name == "expand_as":
        sizes = list(args[1].shape if len(args) > 1 else kwargs["other"].shape)
        kwargs = {}
    else:
        sizes = _sizes(args, kwargs, "size")
    nd = x.ndim
    lead = len(sizes) - nd
    if lead < 0:
        return _fallback(func, name, args, kwargs)  # the local call raises torch's error
    touched = {d for d in range(nd) if sizes[d + lead] not in (-1, x._shape[d])}
    # the untouched dims keep each rank's own length
    local_sizes = [
        -1 if i >= lead and (i - lead) not in touched else s for i, s in enumerate(sizes)
    ]
    return _run(func, args, {}, touched, lambda d: d + lead, lambda loc: loc.expand(local_sizes))


def _broadcast_tensors(func, name, args, kwargs):
    """Each DTensor expanded to the broadcast shape (expand's rule: the shards stay)."""
    ts = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    if kwargs or not ts or not all(isinstance(t, DTensor) for t in ts):
        return _fallback(func, name, args, kwargs)
    shape = list(_lib().broadcast_shapes(*(t.shape for t in ts)))
    expand = _orig("expand", _lib().Tensor)
    return tuple(_expand(expand, "expand", (t, shape), {}) for t in ts)


def _repeat(func, name, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor):
        return _fallback(func, name, args, kwargs)
    reps = _sizes(args, kwargs, "repeats")
    nd = x.ndim
    lead = len(reps) - nd
    if lead < 0:
        return _fallback(func, name, args, kwargs)
    touched = {d for d in range(nd) if reps[d + lead] != 1}
    return _run(func, args, kwargs, touched, lambda d: d + lead)


# --- indexing ------------------------------------------------------------------------------


def _index_plan(x, index):
    """(touched input dims, where untouched input dims land) of x[index], or None where the
    rule does not apply (boolean masks, integers beside index tensors)."""
    items = list(index) if isinstance(index, tuple) else [index]
    lib = _lib()

    def is_tensor_index(v):
        if _is_t(v):
            return v.dtype != lib.bool
        return isinstance(v, list)

    if any(v is Ellipsis for v in items):
        k = items.index(Ellipsis)
        used = sum(1 for v in items if v is not None and v is not Ellipsis)
        items[k : k + 1] = [slice(None)] * (x.ndim - used)
    if any(isinstance(v, bool) or (_is_t(v) and v.dtype == lib.bool) for v in items):
        return None
    tensors = [i for i, v in enumerate(items) if is_tensor_index(v)]
    if tensors and any(isinstance(v, int) for v in items):
        return None
    items += [slice(None)] * (x.ndim - sum(1 for v in items if v is not None))
    adjacent = not tensors or tensors == list(range(tensors[0], tensors[-1] + 1))
    if tensors:
        shapes = [tuple(v.shape) if _is_t(v) else (len(v),) for v in (items[i] for i in tensors)]
        from ._sharding_rules import _broadcast

        b_nd = len(_broadcast(shapes))
    touched, land = set(), {}
    d = 0
    o = 0 if adjacent or not tensors else b_nd
    for i, v in enumerate(items):
        if v is None:
            o += 1
        elif isinstance(v, int):
            touched.add(d)
            d += 1
        elif isinstance(v, slice):
            full = v.start in (None, 0) and v.stop is None and v.step in (None, 1)
            if full:
                land[d] = o
            else:
                touched.add(d)
            d += 1
            o += 1
        else:
            touched.add(d)
            d += 1
            if adjacent and i == tensors[0]:
                o += b_nd
    return touched, land


def _getitem(func, name, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor) or len(args) != 2:
        return _fallback(func, name, args, kwargs)
    plan = _index_plan(x, args[1])
    if plan is None:
        return _fallback(func, name, args, kwargs)
    touched, land = plan
    return _run(func, args, kwargs, touched, land.__getitem__)


# --- operators whose operands must agree: cat, stack, gather ------------------------------------


def _cost(src, dst):
    """A rough price of moving one placement to another, after torch's choice between
    candidate layouts: nothing moves from Replicate, an all-reduce costs twice a gather."""
    if src == dst or isinstance(src, Replicate):
        return 0
    if isinstance(dst, Partial):
        return float("inf")
    if isinstance(src, Partial) and isinstance(dst, Replicate):
        return 2
    return 1


def _cheapest(candidates, current):
    """The candidate (a tuple of placements per operand) that moves the operands least; the
    first among equals."""
    return min(
        candidates,
        key=lambda c: sum(_cost(s, t) for s, t in zip(current, c[1:])),
    )


def _cat(func, name, args, kwargs):
    tensors = list(_arg(args, kwargs, 0, "tensors"))
    xs = [t for t in tensors if isinstance(t, DTensor)]
    mesh = xs[0]._mesh
    specs = [_spec(t, mesh) for t in tensors]
    nd = len(specs[0][1])
    stack = name == "stack"
    if any(len(s[1]) != nd for s in specs) or (nd == 0 and not stack):
        return _fallback(func, name, args, kwargs)
    dim = _arg(args, kwargs, 1, "dim", 0)
    dim %= nd + 1 if stack else nd
    targets = [[] for _ in tensors]
    out_pl = []
    for md in range(mesh.ndim):
        pls = [s[2][md] for s in specs]
        if stack:
            pick = _merge(pls)
        else:
            options = [Replicate() if p == Shard(dim) else p for p in pls]
            cands = [(o, *([o] * len(pls))) for o in dict.fromkeys(options)]
            pick = _cheapest(cands, pls)[0]
        for t in targets:
            t.append(pick)
        out_pl.append(
            Shard(pick.dim + (stack and pick.dim >= dim)) if isinstance(pick, Shard) else pick
        )
    locals_ = [_move(t, mesh, tg) for t, tg in zip(tensors, targets)]
    rest = {k: v for k, v in kwargs.items() if k not in ("tensors", "dim")}
    res = func(locals_, dim, **rest)
    shape = list(res.shape)
    for p in out_pl:
        if isinstance(p, Shard):
            src = p.dim - (stack and p.dim > dim)
            shape[p.dim] = specs[0][1][src]
    return _wrap(res, mesh, tuple(out_pl), tuple(shape))


def _merge(pls):
    """torch's placement that the operands of stack follow: Partial, then Shard, then
    Replicate; two different Partials or Shards give Replicate."""
    cur = pls[0]
    for new in pls[1:]:
        if cur == new:
            continue
        if isinstance(cur, Replicate) or isinstance(cur, Partial) and isinstance(new, Shard):
            cur = new
        elif isinstance(new, type(cur)):  # two different Partials or Shards
            cur = Replicate()
    return cur


def _gather(func, name, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor):
        return _fallback(func, name, args, kwargs)
    mesh = x._mesh
    nd = x.ndim
    dim = _arg(args, kwargs, 1, "dim") % max(nd, 1)
    index = _arg(args, kwargs, 2, "index")
    _, ishape, ipl = _spec(index, mesh)
    # (output, input, index) per mesh dim, after torch's gather strategy; a dim other than the
    # gathered one is sharded alike only where input and index have the same length there
    # (each rank's rows of the index then pick from its own rows of the input)
    cands = [(Replicate(),) * 3, (Shard(dim), Replicate(), Shard(dim))]
    if len(ishape) == nd:
        cands += [(Shard(d),) * 3 for d in range(nd) if d != dim and ishape[d] == x._shape[d]]
    tx, ti, out_pl, sync = [], [], [], []
    for md in range(mesh.ndim):
        o, a, b = _cheapest(cands, (x._placements[md], ipl[md]))
        tx.append(a)
        ti.append(b)
        out_pl.append(o)
        if isinstance(a, Replicate) and isinstance(o, Shard):
            sync.append(md)
    local = _move(x, mesh, tx, sync)
    lidx = _move(index, mesh, ti)
    kw = {k: v for k, v in kwargs.items() if k not in ("dim", "index")}
    res = func(local, dim, lidx, **kw)
    return _wrap(res, mesh, tuple(out_pl), tuple(ishape))


def _like(func, name, args, kwargs):
    """zeros_like and its kin: each rank makes its piece, laid out as the input (a Partial
    input gives Replicate, as torch's)."""
    x = args[0]
    if not isinstance(x, DTensor) or any(isinstance(p, Partial) for p in x._placements):
        return _fallback(func, name, args, kwargs)
    res = func(x._local_tensor, *args[1:], **kwargs)
    return _wrap(res, x._mesh, x._placements, x._shape)


RULES = {
    **dict.fromkeys(("zeros_like", "ones_like", "empty_like", "full_like"), _like),
    **dict.fromkeys(_ALONG, _along),
    "flip": _flip_roll,
    "roll": _flip_roll,
    "squeeze": _squeeze,
    "expand": _expand,
    "expand_as": _expand,
    "broadcast_tensors": _broadcast_tensors,
    "repeat": _repeat,
    "__getitem__": _getitem,
    "cat": _cat,
    "concat": _cat,
    "concatenate": _cat,
    "stack": _cat,
    "gather": _gather,
}
