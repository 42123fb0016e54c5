"""Lowerings: how each public ember callable (and operator.* / Tensor method) becomes pointwise
expressions, row kernels (reductions, softmax, layer_norm, losses), views, or eager calls of
the primitives that stay eager (GEMM, convolution). Note [Inductor scheduling] in graph.py says
how the results fuse; the row-kernel, loss and GEMM/conv-epilogue lowerings are in
lowering_rows.py. A lowering raises NotLowered for a case it does not cover (an unusual
argument, an integer result): the node then runs eagerly, unchanged.
"""

from __future__ import annotations

import operator

from .ir import (
    Const,
    Load,
    Op,
    Val,
    contiguous_strides,
    numel,
    remap_loads,
    view_strides,
)

FLOATS = ("float32", "float64")


class NotLowered(Exception):
    pass


_table: dict | None = None


def lookup(node):
    table = _lowerings()
    if node.op == "call_method":
        return table.get(("method", node.target))
    if node.op == "call_function":
        try:
            return table.get(node.target)
        except TypeError:  # unhashable target
            return None
    return None


# ---------------------------------------------------------------------------- argument helpers


def _bind(node, sig):
    """{name: value} from the node's args/kwargs by a signature of names / (name, default)."""
    out = {}
    args = list(node.args)
    for i, entry in enumerate(sig):
        name, default = (entry, NotLowered) if isinstance(entry, str) else entry
        if i < len(args):
            out[name] = args[i]
        elif name in node.kwargs:
            out[name] = node.kwargs[name]
        elif default is NotLowered:
            raise NotLowered
        else:
            out[name] = default
    names = {e if isinstance(e, str) else e[0] for e in sig}
    if len(args) > len(sig) or any(k not in names for k in node.kwargs):
        raise NotLowered
    return out


def _resolve(G, value, fuses=True):
    from .graph import is_node

    if is_node(value):
        return G.arg_value(value, fuses)
    return value


def _args(G, node, sig, fuses=True):
    return {k: _resolve(G, v, fuses) for k, v in _bind(node, sig).items()}


def _meta(G, node):
    m = G.tensor_meta(node)
    return tuple(m.shape), str(m.dtype).rsplit(".", 1)[-1]


def _is_num(x):
    return isinstance(x, (bool, int, float))


def _broadcast(*shapes):
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(nd):
        sizes = {s[d - nd + len(s)] for s in shapes if d - nd + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise NotLowered
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def expand(val, shape):
    """`val` broadcast (right-aligned) to `shape`."""
    if val.shape == tuple(shape):
        return val.expr
    pad = len(shape) - len(val.shape)

    def fn(ld):
        st = [0] * pad + list(ld.strides)
        return ld.offset, [
            0 if (d >= pad and val.shape[d - pad] == 1 and shape[d] != 1) else st[d]
            for d in range(len(shape))
        ]

    return remap_loads(val.expr, fn)


def cast(expr, dtype):
    return expr if expr.dtype == dtype else Op("cast", [expr], dtype)


def operand(x, shape, dtype):
    if isinstance(x, Val):
        return cast(expand(x, shape), dtype)
    if _is_num(x):
        return Const(x, dtype)
    raise NotLowered


def pw(name, operands, shape, out, compute=None, **params):
    """A pointwise Op over `shape` with result dtype `out`, operands cast to `compute`."""
    compute = compute or out
    return Val(shape, out, Op(name, [operand(o, shape, compute) for o in operands], out, **params))


def _promote(operands):
    dts = [o.dtype for o in operands if isinstance(o, Val)]
    if any(d in FLOATS for d in dts):
        return "float64" if "float64" in dts else "float32"
    if any(isinstance(o, float) for o in operands):
        return "float32"
    raise NotLowered


def _float_out(G, node):
    shape, out = _meta(G, node)
    if out not in FLOATS:
        raise NotLowered
    return shape, out


# ---------------------------------------------------------------------------- pointwise


def _unary(name, sig=(), fixed=None):
    def lower(G, node):
        a = _args(G, node, ("input",) + tuple(sig))
        if a.pop("inplace", False):
            raise NotLowered
        shape, out = _float_out(G, node)
        params = dict(fixed or {})
        params.update(a)
        x = params.pop("input")
        if not isinstance(x, Val) or any(
            v is not None and not _is_num(v) and not isinstance(v, str) for v in params.values()
        ):
            raise NotLowered
        return pw(name, [x], shape, out, **params)

    return lower


def _binary(name, sig=("input", "other"), swap=False):
    def lower(G, node):
        a = _args(G, node, sig)
        alpha = a.pop("alpha", 1)
        vals = list(a.values())
        if swap:
            vals.reverse()
        shape, out = _float_out(G, node)
        if not any(isinstance(v, Val) for v in vals) or not _is_num(alpha):
            raise NotLowered
        params = {"alpha": alpha} if name in ("add", "sub") else {}
        return pw(name, vals, shape, out, **params)

    return lower


def _compare(name):
    def lower(G, node):
        a = _args(G, node, ("input", "other"))
        shape, out = _meta(G, node)
        if out != "bool":
            raise NotLowered
        vals = [a["input"], a["other"]]
        return pw(name, vals, shape, "bool", compute=_promote(vals))

    return lower


def _logical(name, arity=2):
    def lower(G, node):
        a = _args(G, node, ("input", "other")[:arity])
        shape, out = _meta(G, node)
        vals = list(a.values())
        if out != "bool" or not all(isinstance(v, Val) and v.dtype == "bool" for v in vals):
            raise NotLowered
        return pw(name, vals, shape, "bool")

    return lower


def _isnan(G, node):
    a = _args(G, node, ("input",))
    shape, out = _meta(G, node)
    x = a["input"]
    if out != "bool" or x.dtype not in FLOATS:
        raise NotLowered
    return pw("isnan", [x], shape, "bool", compute=x.dtype)


def _pow(G, node):
    a = _args(G, node, ("input", "exponent"))
    shape, out = _float_out(G, node)
    if isinstance(a["input"], Val) and _is_num(a["exponent"]):
        return pw("pow_scalar", [a["input"]], shape, out, exponent=a["exponent"])
    return pw("pow", [a["input"], a["exponent"]], shape, out)


def _where(G, node, sig=("condition", "input", "other")):
    a = _args(G, node, sig)
    shape, out = _float_out(G, node)
    c = a["condition"]
    if not isinstance(c, Val) or c.dtype != "bool":
        raise NotLowered
    operands = [operand(c, shape, "bool")]
    operands += [operand(a[k], shape, out) for k in ("input", "other")]
    return Val(shape, out, Op("where", operands, out))


def _method_where(G, node):  # x.where(condition, y): self comes first
    return _where(G, node, ("input", "condition", "other"))


def _masked_fill(G, node):
    a = _args(G, node, ("input", "mask", "value"))
    shape, out = _float_out(G, node)
    m, v = a["mask"], a["value"]
    if not isinstance(m, Val) or m.dtype != "bool" or not _is_num(v):
        raise NotLowered
    return Val(
        shape,
        out,
        Op(
            "where",
            [operand(m, shape, "bool"), Const(v, out), operand(a["input"], shape, out)],
            out,
        ),
    )


def _clamp(G, node):
    a = _args(G, node, ("input", ("min", None), ("max", None)))
    shape, out = _float_out(G, node)
    x, lo, hi = a["input"], a["min"], a["max"]
    if lo is None and hi is None:
        raise NotLowered
    if (lo is None or _is_num(lo)) and (hi is None or _is_num(hi)):
        return pw("clamp", [x], shape, out, min=lo, max=hi)
    v = x
    if lo is not None:
        v = pw("maximum", [v, lo], shape, out)
    if hi is not None:
        v = pw("minimum", [v, hi], shape, out)
    return v


def _clamp_min(G, node):
    a = _args(G, node, ("input", "min"))
    shape, out = _float_out(G, node)
    if not _is_num(a["min"]):
        raise NotLowered
    return pw("clamp", [a["input"]], shape, out, min=a["min"], max=None)


def _div(G, node):
    a = _args(G, node, ("input", "other", ("rounding_mode", None)))
    if a["rounding_mode"] is not None:
        raise NotLowered
    shape, out = _float_out(G, node)
    return pw("div", [a["input"], a["other"]], shape, out)


def _ternary(name, sig):
    def lower(G, node):
        a = _args(G, node, sig)
        shape, out = _float_out(G, node)
        params = {k: a.pop(k) for k in ("value",) if k in a}
        if any(not _is_num(v) for v in params.values()):
            raise NotLowered
        return pw(name, list(a.values()), shape, out, **params)

    return lower


def _cast_to(dtype_name):
    def lower(G, node):
        a = _args(G, node, ("input",))
        shape, out = _meta(G, node)
        if out != dtype_name:
            raise NotLowered
        x = a["input"]
        return Val(shape, out, cast(x.expr, out)) if x.dtype != out else _same(x)

    return lower


def _to(G, node):
    from .graph import dtype_name

    shape, out = _meta(G, node)
    args = list(node.args[1:])
    if node.kwargs.keys() - {"dtype"} or len(args) > 1:
        raise NotLowered
    dt = args[0] if args else node.kwargs.get("dtype")
    if dt is None or type(dt).__name__ != "dtype" or dtype_name(dt) != out:
        raise NotLowered
    x = _resolve(G, node.args[0])
    if not isinstance(x, Val):
        raise NotLowered
    return Val(shape, out, cast(x.expr, out)) if x.dtype != out else _same(x)


def _same(x):
    """A value that eager returns as the input itself (x.float() of a float tensor)."""
    return Val(x.shape, x.dtype, x.expr, "view" if x.kind != "compute" else "compute")


# ---------------------------------------------------------------------------- views


def _view_of(x, shape, fn):
    expr = remap_loads(x.expr, fn)
    if expr is None:
        raise NotLowered
    return Val(shape, x.dtype, expr, "view" if x.kind != "compute" else "compute")


def _reshape(G, node):
    shape, _ = _meta(G, node)
    x = _resolve(G, node.args[0])
    if not isinstance(x, Val) or numel(shape) != numel(x.shape):
        raise NotLowered

    def fn(ld):
        st = view_strides(x.shape, ld.strides, shape)
        return None if st is None else (ld.offset, st)

    try:
        return _view_of(x, shape, fn)
    except NotLowered:
        # not expressible as a view of every load: compute it first (eager reshape copies too)
        buf = G.realize_val(Val(x.shape, x.dtype, x.expr, "compute"))
        return Val(shape, x.dtype, Load(buf, 0, contiguous_strides(shape)), "compute")


def _permute_dims(node, ndim):
    name = node.target if isinstance(node.target, str) else node.target.__name__
    rest = list(node.args[1:])
    if name in ("t",):
        return list(range(ndim))[::-1] if ndim == 2 else list(range(ndim))
    if name in ("transpose", "swapaxes", "swapdims"):
        d0 = rest[0] if rest else node.kwargs["dim0"]
        d1 = rest[1] if len(rest) > 1 else node.kwargs["dim1"]
        dims = list(range(ndim))
        d0, d1 = d0 % max(ndim, 1), d1 % max(ndim, 1)
        dims[d0], dims[d1] = dims[d1], dims[d0]
        return dims
    dims = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
    if not dims:
        dims = node.kwargs.get("dims")
    return [d % max(ndim, 1) for d in dims]


def _permute(G, node):
    shape, _ = _meta(G, node)
    x = _resolve(G, node.args[0])
    if not isinstance(x, Val):
        raise NotLowered
    if not all(isinstance(a, int) for a in node.args[1:] if not isinstance(a, (tuple, list))):
        raise NotLowered
    dims = _permute_dims(node, len(x.shape))
    if len(dims) != len(x.shape) or tuple(x.shape[d] for d in dims) != shape:
        raise NotLowered
    return _view_of(x, shape, lambda ld: (ld.offset, [ld.strides[d] for d in dims]))


def _expand(G, node):
    shape, _ = _meta(G, node)
    x = _resolve(G, node.args[0])
    if not isinstance(x, Val):
        raise NotLowered
    return Val(shape, x.dtype, expand(x, shape), "view" if x.kind != "compute" else "compute")


def _contiguous(G, node):
    x = _resolve(G, node.args[0])
    if not isinstance(x, Val) or node.kwargs or len(node.args) > 1:
        raise NotLowered
    if x.kind == "buffer" and tuple(x.expr.strides) == contiguous_strides(x.shape):
        return _same(x)
    return Val(x.shape, x.dtype, x.expr, "compute")


def _clone(G, node):
    x = _resolve(G, node.args[0])
    if not isinstance(x, Val) or node.kwargs or len(node.args) > 1:
        raise NotLowered
    return Val(x.shape, x.dtype, x.expr, "compute")


def _getitem(G, node):
    x = _resolve(G, node.args[0])
    idx = node.args[1]
    if not isinstance(x, Val):
        raise NotLowered
    shape, _ = _meta(G, node)
    idx = idx if isinstance(idx, tuple) else (idx,)
    if not all(
        i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)
        for i in idx
    ):
        raise NotLowered
    for i in idx:
        if isinstance(i, slice) and not all(
            v is None or isinstance(v, int) for v in (i.start, i.stop, i.step)
        ):
            raise NotLowered
    real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if real > len(x.shape) or sum(i is Ellipsis for i in idx) > 1:
        raise NotLowered
    items = []
    for i in idx:
        if i is Ellipsis:
            items += [slice(None)] * (len(x.shape) - real)
        else:
            items.append(i)
    items += [slice(None)] * (len(x.shape) - sum(i is not None for i in items))

    def fn(ld):
        off, st, d = ld.offset, [], 0
        for i in items:
            if i is None:
                st.append(0)
                continue
            size, s = x.shape[d], ld.strides[d]
            if isinstance(i, int):
                off += (i + size if i < 0 else i) * s
            else:
                start, _, step = i.indices(size)
                if step <= 0:
                    return None
                off += start * s
                st.append(s * step)
            d += 1
        return off, st

    return _view_of(x, shape, fn)


# ---------------------------------------------------------------------------- the table

_UNARY = [
    "neg", "abs", "exp", "log", "log1p", "tanh", "sigmoid", "erf", "expm1", "exp2", "log2",
    "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "erfc", "floor", "ceil", "trunc", "frac", "reciprocal", "square", "sign", "relu", "silu",
    "mish", "logsigmoid", "hardsigmoid", "hardswish", "softsign", "tanhshrink",
]  # fmt: skip

_UNARY_PARAMS = {
    "gelu": ("gelu", (("approximate", "none"),), None),
    "leaky_relu": ("leaky_relu", (("negative_slope", 0.01), ("inplace", False)), None),
    "elu": ("elu", (("alpha", 1.0), ("inplace", False)), None),
    "softplus": ("softplus", (("beta", 1.0), ("threshold", 20.0)), None),
    "hardtanh": ("hardtanh", (("min_val", -1.0), ("max_val", 1.0), ("inplace", False)), None),
    "relu6": ("hardtanh", (("inplace", False),), {"min_val": 0.0, "max_val": 6.0}),
    "threshold": ("threshold", ("threshold", "value", ("inplace", False)), None),
    "selu": (
        "elu",
        (("inplace", False),),
        {"alpha": 1.6732632423543772, "scale": 1.0507009873554805},
    ),
}


def _celu(G, node):
    a = _args(G, node, ("input", ("alpha", 1.0), ("inplace", False)))
    shape, out = _float_out(G, node)
    if a["inplace"] or not _is_num(a["alpha"]) or a["alpha"] == 0:
        raise NotLowered
    return pw("elu", [a["input"]], shape, out, alpha=a["alpha"], input_scale=1.0 / a["alpha"])


def _round(G, node):
    if len(node.args) != 1 or node.kwargs:
        raise NotLowered
    return _unary("round")(G, node)


def _lowerings():
    global _table
    if _table is not None:
        return _table
    import ember
    from ember.nn import functional as F

    from .lowering_rows import (
        _batch_norm,
        _conv,
        _cross_entropy,
        _full_max,
        _layer_norm,
        _linear,
        _logsumexp,
        _method_softmax,
        _mse_loss,
        _reduction,
        _softmax,
        _var,
    )

    T = ember.Tensor
    table = {}

    def reg(name, fn, where=(ember, F, T), method=True, pointwise=False):
        fn.pointwise = pointwise
        for ns in where:
            f = getattr(ns, name, None)
            if f is not None:
                try:
                    table[f] = fn
                except TypeError:
                    pass
        if method:
            table[("method", name)] = fn

    for name in _UNARY:  # nn.functional's forms take inplace= (True stays eager: a mutation)
        reg(name, _unary(name, (("inplace", False),)), pointwise=True)
    for name, (op, sig, fixed) in _UNARY_PARAMS.items():
        reg(name, _unary(op, sig, fixed), pointwise=True)
    reg("celu", _celu, pointwise=True)
    reg("round", _round, pointwise=True)
    reg("isnan", _isnan, pointwise=True)
    for name in ("add", "sub", "mul"):
        sig = ("input", "other", ("alpha", 1)) if name != "mul" else ("input", "other")
        reg(name, _binary(name, sig), pointwise=True)
    reg("rsub", _binary("sub", ("input", "other", ("alpha", 1)), swap=True), pointwise=True)
    for name, op in (("div", _div), ("true_divide", _div), ("pow", _pow), ("where", _where)):
        reg(name, op, method=False, pointwise=True)
    reg("div", _div, where=(), pointwise=True)
    reg("true_divide", _div, where=(), pointwise=True)
    reg("pow", _pow, where=(), pointwise=True)
    table[("method", "where")] = _method_where
    _method_where.pointwise = True
    for name in ("maximum", "minimum", "atan2", "hypot", "copysign", "fmod"):
        reg(name, _binary(name), pointwise=True)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        reg(name, _compare(name), pointwise=True)
    reg("logical_and", _logical("logical_and"), pointwise=True)
    reg("logical_or", _logical("logical_or"), pointwise=True)
    reg("logical_not", _logical("logical_not", 1), pointwise=True)
    reg("clamp", _clamp, pointwise=True)
    reg("clip", _clamp, pointwise=True)
    reg("clamp_min", _clamp_min, pointwise=True)
    reg("masked_fill", _masked_fill, pointwise=True)
    reg("lerp", _ternary("lerp", ("input", "end", "weight")), pointwise=True)
    reg(
        "addcmul",
        _ternary("addcmul", ("input", "tensor1", "tensor2", ("value", 1))),
        pointwise=True,
    )
    reg(
        "addcdiv",
        _ternary("addcdiv", ("input", "tensor1", "tensor2", ("value", 1))),
        pointwise=True,
    )
    reg("float", _cast_to("float32"), where=(T,), pointwise=True)
    reg("double", _cast_to("float64"), where=(T,), pointwise=True)
    reg("to", _to, where=(T,), pointwise=True)
    ops = {
        operator.add: _binary("add", ("input", "other")),
        operator.sub: _binary("sub", ("input", "other")),
        operator.mul: _binary("mul"),
        operator.truediv: _div,
        operator.pow: _pow,
        operator.neg: _unary("neg"),
        operator.eq: _compare("eq"),
        operator.ne: _compare("ne"),
        operator.lt: _compare("lt"),
        operator.le: _compare("le"),
        operator.gt: _compare("gt"),
        operator.ge: _compare("ge"),
        operator.and_: _logical("logical_and"),
        operator.or_: _logical("logical_or"),
        operator.invert: _logical("logical_not", 1),
    }
    for f, fn in ops.items():
        fn.pointwise = True
        table[f] = fn
    for name in ("__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__neg__"):
        op = getattr(operator, name.strip("_"), None) or operator.truediv
        if getattr(T, name, None) is not None:
            table[getattr(T, name)] = table[op]
            table[("method", name)] = table[op]
    # reductions and normalizations
    for name in ("sum", "mean", "amax", "amin"):
        reg(name, _reduction(name))
    reg("max", _full_max("amax"))
    reg("min", _full_max("amin"))
    reg("var", _var("var"))
    reg("std", _var("std"))
    reg("logsumexp", _logsumexp)
    for name in ("softmax", "log_softmax"):
        reg(name, _softmax(name), where=(ember, F), method=False)
        table[("method", name)] = _method_softmax(name)
    reg("layer_norm", _layer_norm, where=(F,), method=False)
    reg("mse_loss", _mse_loss, where=(F,), method=False)
    reg("cross_entropy", _cross_entropy, where=(F,), method=False)
    reg("linear", _linear, where=(F,), method=False)
    for name in ("conv1d", "conv2d", "conv3d"):
        reg(name, _conv(name), where=(F,), method=False)
    reg("batch_norm", _batch_norm, where=(F,), method=False, pointwise=True)
    # views
    for name in (
        "view",
        "reshape",
        "flatten",
        "unsqueeze",
        "squeeze",
        "view_as",
        "reshape_as",
        "unflatten",
    ):
        reg(name, _reshape)
    for name in ("permute", "transpose", "t", "swapaxes", "swapdims"):
        reg(name, _permute)
    for name in ("expand", "expand_as", "broadcast_to"):
        reg(name, _expand)
    reg("contiguous", _contiguous, where=(T,))
    reg("clone", _clone)
    table[operator.getitem] = _getitem
    table[("method", "__getitem__")] = _getitem
    if getattr(T, "__getitem__", None) is not None:
        table[T.__getitem__] = _getitem
    _table = table
    return table
