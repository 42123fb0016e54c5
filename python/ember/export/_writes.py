"""Writes into intermediates inside an exported forward: ``y[idx] = v``, ``y.fill_(v)``,
``y.zero_()``.

torch's export (training IR) keeps each as its in-place ATen overload on the written tensor
(``aten.index_put_.default(y, [idx], v)``, ``aten.fill_.Scalar``, ``aten.zero_.default``), later
reads reading the call's result. The capture records the same (``capture``); ``ep.module()`` runs
the overloads. The runtime op set has no writes: ``run_decompositions`` (so ``save``) replaces
each by functional runtime ops (``lower``): fill_/zero_ are full_like/zeros_like, index_put_ by
one index tensor is a ``where`` between the tensor and the values gathered at each position."""

import operator
import sys

__all__ = ["capture", "overloads", "lower"]


def _ember():
    return sys.modules["ember"]


def _fill_scalar(self, value):
    return self.fill_(value)


def _fill_tensor(self, value):
    return self.fill_(value)


def _zero(self):
    return self.zero_()


def _lift_fresh_copy(self):
    return self.clone()


_SCHEMAS = {
    "fill_.Scalar": ("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", _fill_scalar),
    "fill_.Tensor": ("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", _fill_tensor),
    "zero_.default": ("zero_(Tensor(a!) self) -> Tensor(a!)", _zero),
    "lift_fresh_copy.default": ("lift_fresh_copy(Tensor self) -> Tensor", _lift_fresh_copy),
}


def overloads():
    """The write overloads, as (``name.overload``, schema, function) for ``ember.ops.aten``."""
    return ((ov, schema, fn) for ov, (schema, fn) in _SCHEMAS.items())


def _val(a):
    from .. import fx

    return fx.map_arg(a, lambda n: n.meta["val"])


def capture(node, args):
    """``(view steps, overload, arguments after the written tensor, lift)`` of a write into a
    graph value as torch's export records it, from the traced ``node`` and its arguments in
    the export graph; None when the call is no such write (or one kept as captured). A write
    through a subscript's view (``y[0] = 1``: steps ``select.int``) is ``copy_``/``fill_.Tensor``
    on the view, torch's form, later reads reading the base. ``lift``: the last argument is a
    number the capture lifts to a constant tensor of the written tensor's dtype, as torch's
    indexing does."""
    from .. import fx
    from ._aten_names import _index_steps, overload_of

    if not args or not isinstance(args[0], fx.Node):
        return None
    base = args[0].meta.get("val")
    if not isinstance(base, _ember().Tensor):
        return None
    if node.op == "call_method" and node.target == "zero_" and len(args) == 1:
        return [], overload_of("zero_.default"), (), False
    if node.op == "call_method" and node.target == "fill_" and len(args) == 2:
        value = _val(args[1])
        tensor = isinstance(value, _ember().Tensor)
        if tensor and value.dim() != 0:
            return None  # torch's fill_ refuses it; eager raises the same while tracing
        return [], overload_of("fill_.Tensor" if tensor else "fill_.Scalar"), args[1:], False
    if node.op != "call_function" or node.target is not operator.setitem or len(args) != 3:
        return None
    steps = _index_steps(args[1], base.dim())
    if not steps:
        return None
    value, lift = args[2], not isinstance(args[2], fx.Node)
    views = steps[:-1] if steps[-1][0] == "index.Tensor" else steps
    for ov, _ in views:  # the basic components (y[::2], y[None, 1]): a view written through
        if ov not in ("select.int", "slice.Tensor", "unsqueeze.default"):
            return None
    if steps[-1][0] == "index.Tensor":  # y[0, idx] = v: index_put_ on the view, as torch's
        return views, overload_of("index_put_.default"), (steps[-1][1][0], value), lift
    view = base
    for ov, step_args in steps:
        view = overload_of(ov)(view, *step_args)
    # torch's indexing copies a value of the view's size, fills a 0-d one (z[0] = v[0])
    scalar = (lift or value.meta["val"].dim() == 0) and view.dim() > 0
    ov = "fill_.Tensor" if scalar else "copy_.default"
    return steps, overload_of(ov), (value,), lift


# -- lowering onto the runtime op set ---------------------------------------------------------


def _put_mask(dim, x, mask, mask_shape, tail, values, values_shape, dtype):
    """``x[(slice(None),) * dim + (mask,)] = values`` from runtime ops (``tail``: x's dims after
    the mask's, ``values_shape`` None for a number)."""
    e = _ember()
    m = mask.reshape(tuple(mask_shape) + (1,) * tail) if tail else mask
    if values_shape is None:
        return x.masked_fill(m, values)
    values = values.to(dtype)  # x's, as x[mask] = values writes another dtype's values
    if len(values_shape) == 0:
        return e.where(m, values, x)
    # the k-th True position reads values[k] (values' dim `dim` counts the mask's Trues)
    pos = mask.reshape(-1).long().cumsum(0).sub(1).clamp(min=0).reshape(tuple(mask_shape))
    picked = values[(slice(None),) * dim + (pos,)]
    return e.where(m, picked, x)


def _put_index(dim, ndim, region, x, idx, values, values_shape, dtype):
    """``x[(slice(None),) * dim + (idx,)] = values`` (idx 1-d integers) from runtime ops: each
    position of ``x`` along ``dim`` takes the values of the last entry of idx naming it
    (``region``: the shape of ``x[..., idx, ...]``, ``values_shape`` None for a number)."""
    e = _ember()
    ones = e.ones_like(x, dtype=e.int64)
    pos = ones.cumsum(dim).sub(1).unsqueeze(-1)  # each position's index along dim
    n = ones.sum(dim, keepdim=True).unsqueeze(-1)
    hits = pos.eq(idx).logical_or(pos.sub(n).eq(idx))  # x.shape + (k,); negative idx count back
    order = e.ones_like(idx).cumsum(0)  # 1..k
    best = hits.long().mul(order).amax(-1)  # per position: 1 + the last entry naming it, or 0
    if values_shape is None:
        return x.masked_fill(best.gt(0), values)
    values = values.to(dtype)
    if len(values_shape) == 0:
        return e.where(best.gt(0), values, x)
    one = best.unsqueeze(-1).eq(order)
    # values broadcast to x[..., idx, ...]'s shape, dim `dim` moved last (against `one`)
    perm = [d for d in range(ndim) if d != dim] + [dim]
    v = values.expand(tuple(region)).permute(*perm).unsqueeze(dim)
    picked = e.where(one, v, e.zeros_like(v)).sum(-1)
    return e.where(best.gt(0), picked, x)


def _decomposition(node):
    """A function of the node's arguments computing it from runtime ops, or None."""

    name = getattr(getattr(node.target, "overloadpacket", None), "_name", None)
    ov = getattr(node.target, "_overloadname", None)
    if name in ("zero_", "fill_", "index_put_") and _is_view(node.args[0]):
        return None  # a write through a view _lower_view_writes could not lower: kept
    if name == "zero_" and ov == "default":
        return lambda x: _ember().zeros_like(x)
    if name == "lift_fresh_copy":
        return lambda x: x.clone()
    if name == "fill_" and ov == "Scalar":
        return lambda x, v: _ember().full_like(x, v)
    if name == "fill_" and ov == "Tensor":
        return lambda x, v: _ember().where(_ember().ones_like(x, dtype=_ember().bool), v, x)
    return _put(node)


def _put(node):
    """A function of an index_put node's arguments computing its result, or None."""
    from .. import fx

    name = _packet(node)
    if name not in ("index_put_", "index_put") or len(node.args) != 3 or node.kwargs:
        return None
    x, indices, values = node.args
    given = [(d, i) for d, i in enumerate(indices) if i is not None]
    if len(given) != 1 or not isinstance(given[0][1], fx.Node):
        return None
    dim, index = given[0]
    xv, iv = x.meta["val"], index.meta["val"]
    vs = tuple(values.meta["val"].shape) if isinstance(values, fx.Node) else None

    def index_of(indices):
        return indices[dim]

    if iv.dtype == _ember().bool:
        region = xv.shape[:dim] + (int(iv.sum()),) + xv.shape[dim + iv.dim() :]
        if vs is not None and len(vs) > 0 and vs != tuple(region):
            return None  # broadcast values: not lowered
        tail = xv.dim() - dim - iv.dim()
        return lambda x, ind, v: _put_mask(dim, x, index_of(ind), iv.shape, tail, v, vs, xv.dtype)
    if iv.dim() != 1 or iv.dtype not in (_ember().int64, _ember().int32):
        return None
    region = xv.shape[:dim] + iv.shape + xv.shape[dim + 1 :]
    return lambda x, ind, v: _put_index(dim, xv.dim(), region, x, index_of(ind), v, vs, xv.dtype)


def lower(graph):
    """``graph`` with each write replaced by runtime ops computing its result (a new Graph; the
    same one when there is none)."""
    from ._decomp import apply

    return apply(_lower_view_writes(graph), None, find=_decomposition)


# -- writes through views: y[0] = v is copy_/fill_ on select(y, 0, 0), later reads read y ------

_STEPS = ("select", "slice", "unsqueeze")
# ops whose result shares its input's memory (a write through it would change the input too)
_VIEWS = frozenset(
    "view reshape transpose t permute unsqueeze squeeze expand expand_as flatten unflatten "
    "alias detach narrow split split_with_sizes chunk unbind as_strided movedim view_as "
    "reshape_as diagonal unfold".split()
)


def _packet(node):
    return getattr(getattr(node.target, "overloadpacket", None), "_name", None)


def _chain(node):
    """(base, [(overload name, args)] from the base to ``node``) of a select/slice chain."""
    steps = []
    while node.op == "call_function" and _packet(node) in _STEPS:
        steps.append((f"{_packet(node)}.{node.target._overloadname}", tuple(node.args[1:])))
        node = node.args[0]
    return node, steps[::-1]


def _view_write(node):
    return node.op == "call_function" and (
        (_packet(node) == "copy_" and not node.kwargs)
        or (_packet(node) == "fill_" and node.target._overloadname == "Tensor")
        or _packet(node) == "index_put_"
    )


def _aliased_reads(base, write, pos):
    """Whether a view of ``base`` other than the write's own is read after ``write`` (it would
    see the write in eager; a functional program would not), or the base is itself a view.
    Another write through a view is no read: it is lowered from the base's value then."""
    if base.op == "placeholder" or _is_view(base):
        return True
    own, cur = set(), write.args[0]
    while cur is not base:
        own.add(cur)
        cur = cur.args[0]
    todo = [u for u in base.users if u is not write]
    while todo:
        n = todo.pop()
        if _is_view(n):
            reads = [u for u in n.users if not _is_view(u) and not _view_write(u)]
            if n not in own and any(pos[u] > pos[write] for u in reads):
                return True
            todo.extend(n.users)
    return False


def _is_view(n):
    return getattr(n, "op", None) == "call_function" and (
        _packet(n) in _STEPS or _packet(n) in _VIEWS or n.target is operator.getitem
    )


def _region(shape, steps):
    """The part of a tensor of ``shape`` a chain reads: per base dim ``(first, step, count)``
    (positions first, first + step, ...), and the view's dims as base dims (None: a dim an
    unsqueeze added)."""
    part = [(0, 1, n) for n in shape]
    dims = list(range(len(shape)))
    for ov, args in steps:
        if ov == "unsqueeze.default":
            d = args[0]
            dims.insert(d + len(dims) + 1 if d < 0 else d, None)
            continue
        d = args[0]
        bd = dims[d]
        first, step, count = part[bd] if bd is not None else (0, 1, 1)
        if ov == "select.int":
            dims.pop(d)
            i = args[1] + count if args[1] < 0 else args[1]
            if bd is not None:
                part[bd] = (first + i * step, step, 1)
            continue
        start, end, stride = (list(args[1:]) + [None, None, 1])[:3]
        lo, hi, st = slice(start, end, stride).indices(count)
        if bd is not None:
            part[bd] = (first + lo * step, step * st, len(range(lo, hi, st)))
    return part, dims


def _read_view(b, steps):
    """The view a chain reads of ``b``, from runtime ops (getitem, unsqueeze)."""
    for ov, args in steps:
        if ov == "unsqueeze.default":
            b = b.unsqueeze(args[0])
        elif ov == "select.int":
            b = b[(slice(None),) * args[0] + (args[1],)]
        else:
            start, end, stride = (list(args[1:]) + [None, None, 1])[:3]
            b = b[(slice(None),) * args[0] + (slice(start, end, stride),)]
    return b


def _write_through(shape, dtype, steps, scalar):
    """A function of (base, value) giving the base after writing value into its view."""
    part, dims = _region(shape, steps)
    sizes = [1 if d is None else part[d][2] for d in dims]
    numel = 1
    for n in sizes:
        numel *= n

    def compute(b, v):
        e = _ember()
        ones = e.ones_like(b, dtype=e.int64)
        inside = e.ones_like(b, dtype=e.bool)
        pos = {}  # base dim -> each position's index along the view's dim
        for d, (first, step, count) in enumerate(part):
            rel = ones.cumsum(d).sub(1 + first)
            pos[d] = rel if step == 1 else rel // step
            if (first, step, count) == (0, 1, shape[d]):
                continue
            ok = rel.ge(0).logical_and(rel.lt(count * step))
            if step != 1:
                ok = ok.logical_and(pos[d].mul(step).eq(rel))
            inside = inside.logical_and(ok)
        v = v.to(dtype)
        if scalar or numel == 0:
            return e.where(inside, v, b) if numel else b
        flat, stride = ones.sub(1), 1  # each position's place in the view, row-major
        for d, n in zip(reversed(dims), reversed(sizes)):
            if d is not None:
                flat = flat.add(pos[d].mul(stride))
            stride *= n
        picked = v.expand(tuple(sizes)).reshape(-1)[flat.clamp(0, numel - 1)]
        return e.where(inside, picked, b)

    return compute


def _index_put_through(shape, dtype, steps, put):
    """A function of (base, indices, values) giving the base after ``index_put_`` on its view
    (``put``: the functional index_put of the view's value)."""
    write = _write_through(shape, dtype, steps, False)
    return lambda b, ind, v: write(b, put(_read_view(b, steps), ind, v))


def _lower_view_writes(graph):
    """Each copy_/fill_ through a select/slice chain of a tensor becomes that tensor's new
    value (later reads read it); a write whose views are read elsewhere afterwards stays (save
    refuses it by name). A new Graph; ``graph`` itself when there is nothing to lower."""
    from .. import fx
    from ._decomp import splice

    nodes = list(graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    writes = {}
    for n in nodes:
        if _view_write(n) and isinstance(n.args[0], fx.Node):
            base, steps = _chain(n.args[0])
            if _packet(n) == "index_put_" and _put(n) is None:
                continue
            if steps and not _aliased_reads(base, n, pos):
                writes[n] = (base, steps)
    if not writes:
        return graph
    new, env, current = fx.Graph(), {}, {}

    def read(n):
        return current.get(n, env[n])

    for node in nodes:
        if node not in writes:
            env[node] = new.node_copy(node, read)
            env[node].meta.update(node.meta)
            continue
        base, steps = writes[node]
        bval = base.meta["val"]
        shape = tuple(bval.shape)
        if _packet(node) == "index_put_":
            fn = _index_put_through(shape, bval.dtype, steps, _put(node))
            args = (base, *node.args[1:])
        else:
            scalar = _packet(node) == "fill_" or node.args[1].meta["val"].dim() == 0
            fn = _write_through(shape, bval.dtype, steps, scalar)
            args = (base, node.args[1])
        current[base] = splice(new, fn, args, read, node.meta)
        current[base].meta["val"] = base.meta["val"]  # its size and dtype
        env[node] = current[base]
    for node in reversed(list(new.nodes)):  # the chains the writes read: unused now
        if node.op == "call_function" and not node.users and _packet(node) in _STEPS:
            new.erase_node(node)
    new.lint()
    return new
