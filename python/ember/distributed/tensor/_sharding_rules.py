"""Sharding rules of DTensor operators (_dispatch.py routes to them): elementwise operators,
reductions, the matmul family and views. Each takes (func, name, args, kwargs), moves its
operands to the placements it needs, runs func on the local pieces and wraps the result.
The nn.functional rules are in _sharding_rules_nn.py.
"""

from ._api import DTensor, Partial, Replicate, Shard, _chunk_sizes, _is_sum, _lib
from ._dispatch_utils import (
    _arg,
    _fallback,
    _first_mesh,
    _is_inplace,
    _is_t,
    _move,
    _orig,
    _spec,
    _wrap,
    _wrap_all,
)

# --- elementwise ------------------------------------------------------------------------------

_LINEAR = {
    "add",
    "sub",
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "add_",
    "sub_",
    "__iadd__",
    "__isub__",
}
_SCALE = {
    "mul",
    "__mul__",
    "__rmul__",
    "mul_",
    "__imul__",
    "div",
    "__truediv__",
    "div_",
    "__itruediv__",
    "true_divide",
}
_UNARY_LINEAR = {"neg", "__neg__", "clone", "detach", "contiguous", "positive", "__pos__"}
_ELEMENTWISE = (
    _LINEAR
    | _SCALE
    | _UNARY_LINEAR
    | set(
        """relu gelu silu sigmoid tanh exp expm1 log log1p log2 sqrt rsqrt abs pow __pow__
        __rpow__ square sin cos erf erfc clamp clamp_min clamp_max clip maximum minimum where
        masked_fill lt le gt ge eq ne __lt__ __le__ __gt__ __ge__ __eq__ __ne__ logical_and
        logical_or logical_not logical_xor __and__ __or__ __xor__ __invert__ __rand__ __ror__
        __rxor__ reciprocal sign floor ceil round trunc frac softplus leaky_relu elu selu celu
        hardtanh relu6 mish hardswish hardsigmoid logsigmoid tanhshrink softsign addcmul addcdiv
        lerp isnan isinf isfinite nan_to_num float double half bfloat16 long int bool to
        __rtruediv__ __floordiv__ __rfloordiv__ __mod__ __rmod__ floor_divide remainder fmod
        relu_ sigmoid_ tanh_ exp_ clamp_ clamp_min_ clamp_max_ masked_fill_ pow_ __ipow__
        fill_ zero_ copy_ abs_ neg_ sqrt_ lerp_ addcmul_ addcdiv_ detach_ nan_to_num_ square_
        atan2 hypot xlogy logaddexp sinh cosh tan asin acos atan asinh acosh atanh erfinv
        sigmoid_ silu_ gelu_ hardtanh_ leaky_relu_ elu_ isclose""".split()
    )
)


def _broadcast(shapes):
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, v in enumerate(s):
            j = i + nd - len(s)
            if v != 1:
                out[j] = v
    return tuple(out)


def _tensor_slots(args, kwargs):
    slots = [("a", i) for i, a in enumerate(args) if _is_t(a)]
    slots += [("k", k) for k, v in kwargs.items() if _is_t(v)]
    return slots


def _get(args, kwargs, slot):
    return args[slot[1]] if slot[0] == "a" else kwargs[slot[1]]


def _elementwise(func, name, args, kwargs):
    mesh = _first_mesh(args, kwargs)
    if name in ("fill_", "zero_", "copy_") and not isinstance(args[0], DTensor):
        return _fallback(func, name, args, kwargs)
    slots = _tensor_slots(args, kwargs)
    specs = [_spec(_get(args, kwargs, s), mesh) for s in slots]
    inplace = _is_inplace(name)
    if name in ("copy_", "type_as"):
        out_shape = specs[0][1]
    else:
        out_shape = _broadcast([sp[1] for sp in specs])
    out_nd = len(out_shape)
    numbers = any(
        isinstance(a, (int, float, complex)) and not isinstance(a, bool) for a in args[1:]
    )
    targets = [list(sp[2]) for sp in specs]
    syncs = [[] for _ in specs]
    out_pl = []
    for md in range(mesh.ndim):
        pls = [sp[2][md] for sp in specs]
        out = None
        if inplace:
            out = pls[0]
            if isinstance(out, Shard):
                out = out._with_dim(out.dim + out_nd - len(specs[0][1]))
        else:
            for sp, p in zip(specs, pls):
                if isinstance(p, Shard):
                    o = p.dim + out_nd - len(sp[1])
                    if sp[1][p.dim] == out_shape[o]:
                        out = p._with_dim(o)
                        break
        if out is None and any(isinstance(p, Partial) for p in pls):
            partials = [p for p in pls if isinstance(p, Partial)]
            same = all(p == partials[0] for p in partials) and _is_sum(partials[0])
            if same and name in _UNARY_LINEAR:
                out = partials[0]
            elif same and name in _LINEAR and not numbers:
                out = partials[0]
            elif same and name in _SCALE and len(partials) == 1:
                if not name.startswith(("div", "__truediv", "__itruediv", "true_divide")) or (
                    isinstance(pls[0], Partial)
                ):
                    out = partials[0]
        if out is None:
            out = Replicate()
        if isinstance(out, Partial) and inplace and not isinstance(pls[0], Partial):
            return _fallback(func, name, args, kwargs)
        for i, (sp, p) in enumerate(zip(specs, pls)):
            if isinstance(out, Shard):
                d = out.dim - (out_nd - len(sp[1]))
                if d >= 0 and sp[1][d] == out_shape[out.dim] and out_shape[out.dim] != 1:
                    targets[i][md] = out._with_dim(d)
                else:
                    targets[i][md] = Replicate()
                    syncs[i].append(md)
            elif isinstance(out, Partial):
                if isinstance(p, Partial):
                    targets[i][md] = p
                elif name in _LINEAR:
                    targets[i][md] = out  # a Replicate addend joins the partial sum once
                else:
                    targets[i][md] = Replicate()
                    syncs[i].append(md)
            else:
                targets[i][md] = Replicate()
        out_pl.append(out)
    if inplace and tuple(targets[0]) != tuple(specs[0][2]):
        return _fallback(func, name, args, kwargs)
    self_obj = args[0] if inplace else None
    args = list(args)
    kwargs = dict(kwargs)
    for i, s in enumerate(slots):
        x = _get(args, kwargs, s)
        if inplace and i == 0:
            local = specs[0][0]
        else:
            local = _move(x, mesh, targets[i], syncs[i])
        if s[0] == "a":
            args[s[1]] = local
        else:
            kwargs[s[1]] = local
    res = func(*args, **kwargs)
    if inplace:
        return self_obj
    return _wrap(res, mesh, tuple(out_pl), out_shape) if _is_t(res) else res


# --- reductions -----------------------------------------------------------------------------

_PARTIAL_OF = {
    "sum": "sum",
    "mean": "sum",
    "amax": "max",
    "amin": "min",
    "max": "max",
    "min": "min",
    "prod": "product",
    "any": "sum",
    "all": "product",
    "count_nonzero": "sum",
}


def _reduction(func, name, args, kwargs):
    x = args[0]
    mesh = x._mesh
    nd = x.ndim
    dim = _arg(args, kwargs, 1, "dim", None)
    if name in ("max", "min") and (dim is None or not isinstance(dim, int)):
        if dim is not None:  # max(a, b): elementwise
            return _elementwise(func, name, args, kwargs)
        name = "amax" if name == "max" else "amin"
        dims = list(range(nd))
        keepdim = False
        indices = False
    else:
        keepdim = bool(_arg(args, kwargs, 2, "keepdim", False))
        indices = name in ("max", "min")
        if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
            dims = list(range(nd))
        else:
            dims = [dim] if isinstance(dim, int) else list(dim)
        dims = sorted(d % max(nd, 1) for d in dims)
    # the Partial each reduction leaves over a sharded dim, as torch's: any is a sum of
    # booleans (nonzero when one piece has a True), all a product
    kind = _PARTIAL_OF[name]
    # The local autograd of a max/min/product over one piece differentiates that piece's
    # result, not the whole one (which picks or multiplies across the ranks): when the
    # gradient is wanted, the reduced dims are gathered and reduced whole.
    lib = _lib()
    exact = kind in ("max", "min", "product") and x.requires_grad and lib.is_grad_enabled()
    src = list(x._placements)
    target = list(src)
    out_pl = []
    sharded_reduced = False
    even = True  # every reduced sharded dim splits into equal pieces
    for md, p in enumerate(src):
        if isinstance(p, Partial) and (name not in ("sum", "mean") or not _is_sum(p)):
            target[md] = Replicate()
            p = Replicate()
        if isinstance(p, Shard) and p.dim in dims:
            if indices or exact:
                target[md] = Replicate()
                # every rank holds the whole max/min: a valid Partial of that kind
                out_pl.append(Partial(kind) if exact and kind != "product" else Replicate())
                continue
            sharded_reduced = True
            even = even and x._shape[p.dim] % mesh.size(md) == 0
            out_pl.append(Partial(kind))
        elif isinstance(p, Shard):
            shift = 0 if keepdim else sum(1 for d in dims if d < p.dim)
            out_pl.append(Shard(p.dim - shift))
        else:
            out_pl.append(p)
    local = _move(x, mesh, target)
    out_shape = [s for i, s in enumerate(x._shape) if i not in dims or keepdim]
    if keepdim:
        for d in dims:
            out_shape[d] = 1
    if name == "mean" and sharded_reduced and even:
        # torch's rule: the local mean, averaged over the ranks (P(avg)); exact when the pieces
        # are equal, so unequal ones take the global count below instead. Each element's
        # gradient is 1/(global count), as torch's mean backward on the whole tensor: the local
        # mean's 1/(local count) divided by the number of pieces.
        pieces = 1
        for md, (p, q) in enumerate(zip(out_pl, target)):
            if isinstance(p, Partial) and isinstance(q, Shard):
                out_pl[md] = Partial("avg")
                pieces *= mesh.size(md)
        if local.requires_grad:
            local = local.view_as(local)
            local.register_hook(lambda g: g / pieces)
        res = func(local, *args[1:], **kwargs)
    elif name == "mean" and sharded_reduced:
        count = 1
        for d in dims:
            count *= x._shape[d]
        dtype = _arg(args, kwargs, 3, "dtype", None)
        res = _orig("sum")(local, dims, keepdim, dtype=dtype) / count
    elif name in ("amax", "amin") and dims == list(range(nd)) and not keepdim:
        res = _orig(name)(local) if local.numel() else None
        if res is None:
            fill = float("-inf") if name == "amax" else float("inf")
            res = lib.tensor(fill, dtype=local.dtype)
    else:
        rest = list(args[1:])
        res = func(local, *rest, **kwargs)
    if indices and isinstance(res, tuple):  # (values, indices) of max/min over a dim
        return _wrap_all(res, mesh, tuple(out_pl), tuple(out_shape))
    return _wrap(res, mesh, tuple(out_pl), tuple(out_shape))


# --- matmul family -------------------------------------------------------------------------


def _matmul(func, name, args, kwargs):
    if name in ("__rmatmul__",):
        a, b = args[1], args[0]
        func, name = _orig("matmul"), "matmul"
    elif name == "addmm":
        bias, a, b = args[0], args[1], args[2]
        beta = kwargs.get("beta", 1)
        alpha = kwargs.get("alpha", 1)
        # inside a rule the mode is off: DTensor arithmetic goes through the rules directly
        mm = _matmul(_orig("mm"), "mm", (a, b), {})
        if alpha != 1:
            mm = _elementwise(_orig("mul"), "mul", (mm, alpha), {})
        if beta != 1:
            bias = _elementwise(_orig("mul"), "mul", (bias, beta), {})
        return _elementwise(_orig("add"), "add", (mm, bias), {})
    else:
        a, b = args[0], args[1]
    mesh = _first_mesh((a, b), {})
    linear = name == "linear"
    bias = _arg(args, kwargs, 2, "bias", None) if linear else None
    la, sa, pa_all = _spec(a, mesh)
    lb, sb, pb_all = _spec(b, mesh)
    an, bn = len(sa), len(sb)
    if an < 2 or bn < 2 or (linear and bn != 2):
        if linear and bn == 2 and an == 1:
            pass
        else:
            return _fallback(func, name, args, kwargs)
    out_nd = max(an, bn)

    def role_a(d):
        if d == an - 1:
            return ("k", None)
        if d == an - 2:
            return ("n", out_nd - 2)
        return ("b", d + out_nd - an)

    def role_b(d):
        if linear:
            return ("m", out_nd - 1) if d == 0 else ("k", None)
        if d == bn - 2:
            return ("k", None)
        if d == bn - 1:
            return ("m", out_nd - 1)
        return ("b", d + out_nd - bn)

    out_shape = list(_broadcast([sa[:-2], sb[:-2]])) if not linear else list(sa[:-1])
    if not linear:
        out_shape += [sa[-2], sb[-1]]
    else:
        out_shape += [sb[0]]
    ta, tb, sync_a, sync_b, out_pl = [], [], [], [], []
    for md in range(mesh.ndim):
        pa, pb = pa_all[md], pb_all[md]
        ra = role_a(pa.dim) if isinstance(pa, Shard) else None
        rb = role_b(pb.dim) if isinstance(pb, Shard) else None
        if ra is not None and ra[0] == "b" and sa[pa.dim] != out_shape[ra[1]]:
            ra, pa = None, Replicate()
        if rb is not None and rb[0] == "b" and sb[pb.dim] != out_shape[rb[1]]:
            rb, pb = None, Replicate()
        out = None
        if ra and ra[0] in ("b", "n") and rb and rb[0] == "b" and ra[1] == rb[1]:
            out, na, nb = Shard(ra[1]), pa, pb
        elif ra and ra[0] in ("b", "n"):
            out, na, nb = Shard(ra[1]), pa, Replicate()
        elif rb and rb[0] == "m":
            out, na, nb = Shard(rb[1]), Replicate(), pb
        elif ra and ra[0] == "k":
            kb = 1 if linear else bn - 2
            out, na, nb = Partial(), pa, Shard(kb)
        elif rb and rb[0] == "k":
            out, na, nb = Partial(), Shard(an - 1), pb
        elif isinstance(pa, Partial) and not isinstance(pb, Partial) and _is_sum(pa):
            out, na, nb = pa, pa, Replicate()
        elif isinstance(pb, Partial) and not isinstance(pa, Partial) and _is_sum(pb):
            out, na, nb = pb, Replicate(), pb
        else:
            out, na, nb = Replicate(), Replicate(), Replicate()
        ta.append(na)
        tb.append(nb)
        if isinstance(na, Replicate) and not isinstance(out, Replicate):
            sync_a.append(md)
        if isinstance(nb, Replicate) and not isinstance(out, Replicate):
            sync_b.append(md)
        out_pl.append(out)
    la = _move(a, mesh, ta, sync_a)
    lb = _move(b, mesh, tb, sync_b)
    if linear:
        res = _orig("linear", _nn_functional())(la, lb)
    else:
        res = func(la, lb)
    out = _wrap(res, mesh, tuple(out_pl), tuple(out_shape))
    if bias is not None:
        out = _elementwise(_orig("add"), "add", (out, bias), {})
    return out


def _nn_functional():
    from ...nn import functional

    return functional


# --- views -----------------------------------------------------------------------------------


def _remap(func, name, args, kwargs, mapping, out_shape, local_args):
    """A view whose output dim mapping[d] is input dim d (None: the dim goes away)."""
    x = args[0]
    mesh = x._mesh
    target, out_pl = [], []
    for p in x._placements:
        if isinstance(p, Shard):
            o = mapping.get(p.dim)
            if o is None:
                target.append(Replicate())
                out_pl.append(Replicate())
            else:
                target.append(p)
                out_pl.append(Shard(o))
        else:
            target.append(p)
            out_pl.append(p)
    local = _move(x, mesh, target)
    res = func(local, *local_args(target), **kwargs)
    return _wrap(res, mesh, tuple(out_pl), tuple(out_shape))


def _transpose(func, name, args, kwargs):
    x = args[0]
    nd = x.ndim
    if name in ("t", "prop:T"):
        if nd < 2:
            return x
        d0, d1 = 0, 1
    elif name == "prop:mT":
        d0, d1 = nd - 2, nd - 1
    else:
        d0 = _arg(args, kwargs, 1, "dim0") % nd
        d1 = _arg(args, kwargs, 2, "dim1") % nd
    perm = list(range(nd))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    mapping = {perm[i]: i for i in range(nd)}
    shape = [x._shape[perm[i]] for i in range(nd)]
    t = _orig("transpose")
    return _remap(lambda loc: t(loc, d0, d1), "transpose", (x,), {}, mapping, shape, lambda tg: ())


def _permute(func, name, args, kwargs):
    x = args[0]
    dims = _arg(args, kwargs, 1, "dims")
    if not isinstance(dims, (list, tuple)):
        dims = args[1:]
    nd = x.ndim
    dims = [d % nd for d in dims]
    mapping = {dims[i]: i for i in range(nd)}
    shape = [x._shape[d] for d in dims]
    p = _orig("permute")
    return _remap(lambda loc: p(loc, dims), name, (x,), {}, mapping, shape, lambda tg: ())


def _unsqueeze(func, name, args, kwargs):
    x = args[0]
    d = _arg(args, kwargs, 1, "dim") % (x.ndim + 1)
    mapping = {i: (i if i < d else i + 1) for i in range(x.ndim)}
    shape = list(x._shape)
    shape.insert(d, 1)
    u = _orig("unsqueeze")
    return _remap(lambda loc: u(loc, d), name, (x,), {}, mapping, shape, lambda tg: ())


def _view_groups(src, dst):
    """Pairs (in dims, out dims) of the runs of dims whose sizes multiply alike."""
    groups, i, j = [], 0, 0
    while i < len(src) or j < len(dst):
        gi, gj = [], []
        pi = pj = 1
        while True:
            if pi == pj and gi and gj:
                break
            if (pi <= pj or j >= len(dst)) and i < len(src):
                pi *= src[i]
                gi.append(i)
                i += 1
            elif j < len(dst):
                pj *= dst[j]
                gj.append(j)
                j += 1
            else:
                break
        while i < len(src) and src[i] == 1 and pi == pj:
            gi.append(i)
            i += 1
        while j < len(dst) and dst[j] == 1 and pi == pj:
            gj.append(j)
            j += 1
        groups.append((gi, gj))
    return groups


def _reshape(func, name, args, kwargs):
    x = args[0]
    mesh = x._mesh
    src = list(x._shape)
    if name in ("view_as", "reshape_as"):
        dst = list(args[1].shape)
    elif name == "flatten":
        nd = max(x.ndim, 1)
        s = _arg(args, kwargs, 1, "start_dim", 0) % nd
        e = _arg(args, kwargs, 2, "end_dim", -1) % nd
        n = 1
        for v in src[s : e + 1]:
            n *= v
        dst = src[:s] + [n] + src[e + 1 :]
    elif name == "unflatten":
        d = _arg(args, kwargs, 1, "dim") % x.ndim
        sizes = list(_arg(args, kwargs, 2, "sizes"))
        dst = src[:d] + sizes + src[d + 1 :]
    else:
        shape = args[1:] if len(args) > 2 or not isinstance(args[1], (list, tuple)) else args[1]
        if "shape" in kwargs or "size" in kwargs:
            shape = kwargs.get("shape", kwargs.get("size"))
        if len(args) == 2 and not isinstance(args[1], (list, tuple, int)):
            return _fallback(func, name, args, kwargs)  # view(dtype)
        dst = [int(v) for v in shape]
    total = 1
    for v in src:
        total *= v
    if -1 in dst:
        known = 1
        for v in dst:
            if v != -1:
                known *= v
        dst[dst.index(-1)] = total // known if known else 0
    if 0 in src:
        return _fallback(func, name, args, kwargs)
    groups = _view_groups(src, dst)
    where = {}
    for gi, gj in groups:
        for d in gi:
            where[d] = (gi, gj)
    counts = {}
    for p in x._placements:
        if isinstance(p, Shard):
            counts[p.dim] = counts.get(p.dim, 0) + 1
    target, out_pl = [], []
    local_dst = list(dst)
    for md, p in enumerate(x._placements):
        if not isinstance(p, Shard):
            target.append(p)
            out_pl.append(p)
            continue
        gi, gj = where[p.dim]
        ok = counts[p.dim] == 1
        real_i = [d for d in gi if src[d] != 1]
        real_j = [d for d in gj if dst[d] != 1]
        o = None
        if ok and real_i and real_i[0] == p.dim and real_j:
            o = real_j[0]
            n = mesh.size(md)
            rest_in = 1
            for d in real_i[1:]:
                rest_in *= src[d]
            rest_out = 1
            for d in real_j[1:]:
                rest_out *= dst[d]
            want = [s * rest_in for s in _chunk_sizes(src[p.dim], n)]
            have = [s * rest_out for s in _chunk_sizes(dst[o], n)]
            if want != have:
                o = None
        if o is None:
            target.append(Replicate())
            out_pl.append(Replicate())
        else:
            target.append(p)
            out_pl.append(Shard(o))
            local_dst[o] = _chunk_sizes(dst[o], mesh.size(md))[mesh.get_local_rank(md)]
    local = _move(x, mesh, target)
    res = _orig("reshape")(local, local_dst) if name != "view" else local.view(local_dst)
    return _wrap(res, mesh, tuple(out_pl), tuple(dst))
