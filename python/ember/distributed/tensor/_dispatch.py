"""How DTensors compute: a function mode that sends every ember call taking a DTensor to a
sharding rule.

A rule picks the placements its operands must have (redistributing them, differentiably, when
they differ), runs the plain ember function on the local pieces, and wraps the result with the
output placements. Autograd stays the local one: the pieces carry the graph, redistribution is
an autograd Function whose backward moves the gradient back, and a Replicate operand of a
computation that differs between the ranks of a mesh dimension (its output there is Shard or
Partial) gets its gradient summed over that dimension (_sync_grad). So the gradient of every
DTensor, kept as its piece, is laid out as the DTensor itself (Partial's as Replicate).

Operators without a rule run on the whole tensor: their DTensor operands are made Replicate and
the result is a Replicate DTensor (correct, at the price of the gathers).
"""

import threading

from ... import _C, overrides
from . import _api
from ._api import (
    DTensor,
    Partial,
    Replicate,
    Shard,
    _chunk_sizes,
    _lib,
    _redistribute_autograd,
    _redistribute_local,
    _sync_grad,
)

_tls = threading.local()
_MODE = None


class _DTensorMode(overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not any(issubclass(t, _api._DTensorBase) for t in types):
            return func(*args, **kwargs)
        return dispatch(func, args, kwargs)


def activate():
    """Puts the DTensor mode at the bottom of this thread's mode stack (once; it stays)."""
    global _MODE
    if getattr(_tls, "on", False):
        return
    _tls.on = True
    if _MODE is None:
        _MODE = _DTensorMode()
    overrides._enter_outermost(_MODE)


# --- naming the routed function ---------------------------------------------------------------

_PROPS = {}


def _name(func):
    if getattr(func, "__name__", "") == "__get__" and isinstance(
        getattr(func, "__self__", None), property
    ):
        if not _PROPS:
            for n, v in vars(_C.Tensor).items():
                if isinstance(v, property):
                    _PROPS[id(v)] = n
            for owner, n, v in overrides._patches:
                if owner is _C.Tensor and isinstance(v, property):
                    _PROPS[id(v)] = n
        return "prop:" + _PROPS.get(id(func.__self__), "?")
    return getattr(func, "__name__", "")


def _orig(name, module=None):
    return overrides.original(getattr(module or _lib(), name))


# --- helpers ----------------------------------------------------------------------------------


def _is_t(x):
    return isinstance(x, _C.Tensor)


def _spec(x, mesh):
    """(local, shape, placements) of a DTensor, or of a plain tensor taken as Replicate."""
    if isinstance(x, DTensor):
        return x._local_tensor, x._shape, x._placements
    return x, tuple(x.shape), (Replicate(),) * mesh.ndim


def _wrap(out, mesh, placements, shape):
    return DTensor._make(out, mesh, placements, shape)


def _first_mesh(args, kwargs):
    for a in (*args, *kwargs.values()):
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(x, DTensor):
                return x._mesh
    raise AssertionError("no DTensor")


def _move(x, mesh, target, sync_dims=()):
    local, shape, pl = _spec(x, mesh)
    local = _redistribute_autograd(local, shape, mesh, pl, tuple(target))
    return _sync_grad(local, mesh, sync_dims)


def _full(x, mesh):
    if isinstance(x, DTensor):
        return _move(x, mesh, (Replicate(),) * mesh.ndim)
    return x


def _is_inplace(name):
    return (name.endswith("_") and not name.endswith("__")) or (
        name.startswith("__i") and name[3:-2] in _INPLACE_DUNDERS
    )


_INPLACE_DUNDERS = set("add sub mul truediv div floordiv mod pow and or xor matmul".split())


# --- the fallback: compute on whole tensors ------------------------------------------------

_RANDOM = {
    "dropout",
    "uniform_",
    "normal_",
    "bernoulli",
    "bernoulli_",
    "rand_like",
    "randn_like",
    "random_",
    "exponential_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "trunc_normal_",
    "orthogonal_",
}


def _sync_rng(mesh):
    """Every rank draws the same numbers for DTensors: on the first random operator, rank 0's
    generator state is sent to all (torch's DTensor does the same)."""
    if getattr(_tls, "rng_synced", False):
        return
    _tls.rng_synced = True
    lib = _lib()
    from .. import distributed_c10d as c10d

    state = lib.get_rng_state()
    c10d.broadcast(state, src=0)
    lib.set_rng_state(state)


def _fallback(func, name, args, kwargs):
    mesh = _first_mesh(args, kwargs)
    if name in _RANDOM:
        _sync_rng(mesh)

    def conv(a):
        if isinstance(a, (list, tuple)) and any(isinstance(x, DTensor) for x in a):
            return type(a)(_full(x, mesh) for x in a)
        return _full(a, mesh) if isinstance(a, DTensor) else a

    if _is_inplace(name) and args and isinstance(args[0], DTensor):
        self = args[0]
        full = _full(self, mesh)
        full = full.clone() if full is self._local_tensor else full
        rest = [conv(a) for a in args[1:]]
        func(full, *rest, **{k: conv(v) for k, v in kwargs.items()})
        src = tuple(Replicate() for _ in self._placements)
        piece = _redistribute_local(full.detach(), self._shape, mesh, src, self._placements)
        with _lib().no_grad():
            self._local_tensor.copy_(piece)
        return self
    out = func(*[conv(a) for a in args], **{k: conv(v) for k, v in kwargs.items()})
    return _wrap_all(out, mesh, (Replicate(),) * mesh.ndim)


def _wrap_all(out, mesh, placements):
    if _is_t(out):
        return _wrap(out, mesh, placements, tuple(out.shape))
    if isinstance(out, tuple) and any(_is_t(o) for o in out):
        items = [_wrap_all(o, mesh, placements) for o in out]
        try:
            return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
        except TypeError:
            return tuple(items)
    return out


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
        sigmoid_ silu_ gelu_ hardtanh_ leaky_relu_ elu_""".split()
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
                out = Shard(out.dim + out_nd - len(specs[0][1]))
        else:
            for sp, p in zip(specs, pls):
                if isinstance(p, Shard):
                    o = p.dim + out_nd - len(sp[1])
                    if sp[1][p.dim] == out_shape[o]:
                        out = Shard(o)
                        break
        if out is None and any(isinstance(p, Partial) for p in pls):
            partials = [p for p in pls if isinstance(p, Partial)]
            same = all(p == partials[0] for p in partials) and partials[0].reduce_op == "sum"
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
                    targets[i][md] = Shard(d)
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


def _arg(args, kwargs, i, name, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[i] if len(args) > i else default


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
    kind = {"sum": "sum", "mean": "sum", "amax": "max", "amin": "min", "max": "max"}.get(
        name, "min"
    )
    src = list(x._placements)
    target = list(src)
    out_pl = []
    sharded_reduced = False
    for md, p in enumerate(src):
        if isinstance(p, Partial) and (kind != "sum" or p.reduce_op != "sum"):
            target[md] = Replicate()
            p = Replicate()
        if isinstance(p, Shard) and p.dim in dims:
            if indices:
                target[md] = Replicate()
                out_pl.append(Replicate())
                continue
            sharded_reduced = True
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
    lib = _lib()
    if name == "mean" and sharded_reduced:
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
    if indices and isinstance(res, tuple):
        return _wrap_all(res, mesh, tuple(out_pl))
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
        elif isinstance(pa, Partial) and not isinstance(pb, Partial) and pa.reduce_op == "sum":
            out, na, nb = pa, pa, Replicate()
        elif isinstance(pb, Partial) and not isinstance(pa, Partial) and pb.reduce_op == "sum":
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


def _cross_entropy(func, name, args, kwargs):
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
    names = ["weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"]
    opts = {k: _arg(args, kwargs, i + 2, k) for i, k in enumerate(names)}
    if opts["size_average"] is not None or opts["reduce"] is not None:
        return _fallback(func, name, args, kwargs)
    reduction = opts["reduction"] or "mean"
    ignore = -100 if opts["ignore_index"] is None else opts["ignore_index"]
    weight = opts["weight"]
    if weight is not None:
        weight = _move(weight, mesh, (Replicate(),) * mesh.ndim)
    sharded = [md for md, p in enumerate(xt) if isinstance(p, Shard)]
    lx = _move(x, mesh, xt)
    lt = _move(target, mesh, tuple(tt))
    ls = opts["label_smoothing"] or 0.0
    kw = {"weight": weight, "ignore_index": ignore, "label_smoothing": ls}
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
            out_pl.append(Partial())
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


# --- passthrough and properties -----------------------------------------------------------

_SELF_RETURNING = {"requires_grad_", "retain_grad", "share_memory_"}
_LOCAL = {
    "backward",
    "register_hook",
    "register_post_accumulate_grad_hook",
    "data_ptr",
    "element_size",
    "is_contiguous",
    "is_floating_point",
    "is_complex",
    "get_device",
    "untyped_storage",
    "storage_offset",
    "is_shared",
    "is_pinned",
    "type",
}


def _local_call(func, name, args, kwargs):
    self = args[0]
    rest = [a._local_tensor if isinstance(a, DTensor) else a for a in args[1:]]
    kw = {k: (v._local_tensor if isinstance(v, DTensor) else v) for k, v in kwargs.items()}
    if name == "type" and (rest or kw):
        return _fallback(func, name, args, kwargs)
    out = func(self._local_tensor, *rest, **kw)
    return self if name in _SELF_RETURNING else out


def _prop(func, name, args, kwargs):
    x = args[0]
    if name in ("prop:T", "prop:mT"):
        return _transpose(func, name, args, kwargs)
    if name == "prop:data":
        return _wrap(x._local_tensor.detach(), x._mesh, x._placements, x._shape)
    if name in ("prop:real", "prop:imag", "prop:H", "prop:mH"):
        return _fallback(func, name, args, kwargs)
    return func(x._local_tensor)


_RULES = {}


def _register():
    for n in _ELEMENTWISE:
        _RULES[n] = _elementwise
    for n in ("sum", "mean", "amax", "amin", "max", "min"):
        _RULES[n] = _reduction
    for n in ("mm", "matmul", "bmm", "__matmul__", "__rmatmul__", "linear", "addmm"):
        _RULES[n] = _matmul
    for n in ("softmax", "log_softmax"):
        _RULES[n] = _softmax
    _RULES["layer_norm"] = _layer_norm
    _RULES["rms_norm"] = _layer_norm
    _RULES["dropout"] = _dropout
    _RULES["cross_entropy"] = _cross_entropy
    _RULES["embedding"] = _embedding
    _RULES["scaled_dot_product_attention"] = _sdpa
    for n in ("transpose", "swapaxes", "swapdims", "t"):
        _RULES[n] = _transpose
    _RULES["permute"] = _permute
    _RULES["unsqueeze"] = _unsqueeze
    for n in ("view", "reshape", "view_as", "reshape_as", "flatten", "unflatten"):
        _RULES[n] = _reshape
    for n in _LOCAL | _SELF_RETURNING:
        _RULES[n] = _local_call


_register()


def dispatch(func, args, kwargs):
    """Computes func(*args, **kwargs) where some argument is a DTensor."""
    name = _name(func)
    if name.startswith("prop:"):
        return _prop(func, name, args, kwargs)
    if name == "type_as":
        return _elementwise(_orig("to", _C.Tensor), "to", (args[0], args[1].dtype), {})
    rule = _RULES.get(name)
    if (
        rule is None
        or not isinstance(args[0] if args else None, DTensor)
        and rule
        in (
            _reduction,
            _softmax,
            _layer_norm,
            _dropout,
            _transpose,
            _permute,
            _unsqueeze,
            _reshape,
            _local_call,
        )
    ):
        return _fallback(func, name, args, kwargs)
    return rule(func, name, args, kwargs)


__all__ = []
_ = _api
