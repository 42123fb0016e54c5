"""Lowerings of the ops that become row kernels (reductions, softmax, layer_norm, losses) and of
GEMM/convolution with a bias feeding a pointwise op (the GEMM stays an eager call, the bias add
becomes the prologue of that op's kernel: Note [Inductor scheduling] in graph.py), and of
eval-mode batch_norm (pointwise). The table that maps callables to lowerings is lowering.py's.
"""

from __future__ import annotations

from .ir import Buffer, Load, Val, numel
from .lowering import (
    FLOATS,
    NotLowered,
    _args,
    _bind,
    _broadcast,
    _float_out,
    _resolve,
    _view_of,
    cast,
    lookup,
    pw,
)


def _dims(dim, ndim):
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if not all(isinstance(d, int) for d in dims):
        raise NotLowered
    return tuple(sorted({d % max(ndim, 1) for d in dims})) if ndim else ()


def row_value(G, node, kind, x, rdims, operands=(), **params):
    shape, out = _float_out(G, node)
    if not isinstance(x, Val) or x.dtype not in FLOATS:
        raise NotLowered
    if numel(x.shape) == 0 or numel([x.shape[d] for d in rdims]) == 0:
        raise NotLowered
    buf = G.kernel_row(kind, x, rdims, operands, params, shape, out)
    return Val(shape, out, Load(buf, 0, buf.strides), "buffer")


def _reduction(kind):
    def lower(G, node):
        a = _args(G, node, ("input", ("dim", None), ("keepdim", False), ("dtype", None)))
        x = a["input"]
        if not isinstance(x, Val):
            raise NotLowered
        if a["dtype"] is not None:
            from .graph import dtype_name

            x = Val(x.shape, dtype_name(a["dtype"]), cast(x.expr, dtype_name(a["dtype"])))
        dims = _dims(a["dim"], len(x.shape))
        if not x.shape:  # a 0-d input reduces over nothing
            dims = ()
        return row_value(G, node, kind, x, dims, keepdim=bool(a["keepdim"]), dims=dims)

    return lower


def _full_max(kind):
    def lower(G, node):
        if len(node.args) != 1 or node.kwargs:
            raise NotLowered  # max(x, dim) returns (values, indices): eager
        x = _resolve(G, node.args[0])
        if not isinstance(x, Val):
            raise NotLowered
        dims = tuple(range(len(x.shape)))
        return row_value(G, node, kind, x, dims, keepdim=False, dims=dims)

    return lower


def _var(kind):
    def lower(G, node):
        a = _args(
            G,
            node,
            ("input", ("dim", None), ("unbiased", None), ("keepdim", False), ("correction", None)),
        )
        if isinstance(a["dim"], bool):
            a["unbiased"], a["dim"] = a["dim"], None
        x = a["input"]
        if not isinstance(x, Val):
            raise NotLowered
        corr = (
            a["correction"] if a["correction"] is not None else (0 if a["unbiased"] is False else 1)
        )
        dims = _dims(a["dim"], len(x.shape)) if x.shape else ()
        if numel([x.shape[d] for d in dims]) - corr <= 0 or not isinstance(corr, int):
            raise NotLowered
        return row_value(
            G, node, kind, x, dims, keepdim=bool(a["keepdim"]), dims=dims, correction=corr
        )

    return lower


def _softmax(kind):
    def lower(G, node):
        a = _args(G, node, ("input", ("dim", None), ("_stacklevel", 3), ("dtype", None)))
        x, dim = a["input"], a["dim"]
        if not isinstance(x, Val) or not isinstance(dim, int):
            raise NotLowered
        if a["dtype"] is not None:
            from .graph import dtype_name

            x = Val(x.shape, dtype_name(a["dtype"]), cast(x.expr, dtype_name(a["dtype"])))
        dims = (dim % len(x.shape),) if x.shape else ()
        return row_value(G, node, kind, x, dims, dim=dim)

    return lower


def _method_softmax(kind):
    def lower(G, node):
        a = _args(G, node, ("input", "dim", ("dtype", None)))
        x, dim = a["input"], a["dim"]
        if not isinstance(x, Val) or not isinstance(dim, int) or a["dtype"] is not None:
            raise NotLowered
        dims = (dim % len(x.shape),) if x.shape else ()
        return row_value(G, node, kind, x, dims, dim=dim)

    return lower


def _logsumexp(G, node):
    a = _args(G, node, ("input", "dim", ("keepdim", False)))
    x = a["input"]
    if not isinstance(x, Val) or not x.shape:
        raise NotLowered
    dims = _dims(a["dim"], len(x.shape))
    return row_value(G, node, "logsumexp", x, dims, keepdim=bool(a["keepdim"]), dims=dims)


def _layer_norm(G, node):
    a = _args(
        G, node, ("input", "normalized_shape", ("weight", None), ("bias", None), ("eps", 1e-5))
    )
    x, ns = a["input"], a["normalized_shape"]
    ns = (ns,) if isinstance(ns, int) else tuple(ns)
    if not isinstance(x, Val) or tuple(x.shape[len(x.shape) - len(ns) :]) != ns or not ns:
        raise NotLowered
    w, b = a["weight"], a["bias"]
    for t in (w, b):
        if t is not None and (not isinstance(t, Val) or t.dtype != x.dtype or t.shape != ns):
            raise NotLowered
    dims = tuple(range(len(x.shape) - len(ns), len(x.shape)))
    return row_value(
        G,
        node,
        "layer_norm",
        x,
        dims,
        [w, b],
        eps=float(a["eps"]),
        normalized_shape=ns,
        has_weight=w is not None,
        has_bias=b is not None,
    )


def _mse_loss(G, node):
    a = _args(
        G,
        node,
        ("input", "target", ("size_average", None), ("reduce", None), ("reduction", "mean")),
    )
    x, t = a["input"], a["target"]
    if (
        not (isinstance(x, Val) and isinstance(t, Val))
        or a["size_average"] is not None
        or a["reduce"] is not None
    ):
        raise NotLowered
    if x.dtype not in FLOATS or t.dtype != x.dtype:
        raise NotLowered
    shape = _broadcast(x.shape, t.shape)
    d = pw("sub", [x, t], shape, x.dtype, alpha=1)
    sq = pw("mul", [d, d], shape, x.dtype)
    if a["reduction"] == "none":
        return sq
    if a["reduction"] not in ("mean", "sum"):
        raise NotLowered
    dims = tuple(range(len(shape)))
    return row_value(G, node, a["reduction"], sq, dims, keepdim=False, dims=dims)


def _cross_entropy(G, node):

    a = _bind(
        node,
        (
            "input",
            "target",
            ("weight", None),
            ("size_average", None),
            ("ignore_index", -100),
            ("reduce", None),
            ("reduction", "mean"),
            ("label_smoothing", 0.0),
        ),
    )
    if a["label_smoothing"] != 0.0 or a["size_average"] is not None or a["reduce"] is not None:
        raise NotLowered
    x = _resolve(G, a["input"])
    if not isinstance(x, Val) or x.dtype not in FLOATS or not x.shape:
        raise NotLowered
    t = _resolve(G, a["target"])
    if not isinstance(t, Val) or t.dtype in FLOATS:  # class probabilities: not nll_loss
        raise NotLowered
    from ..nn import functional as F

    dim = 1 if len(x.shape) >= 2 else 0
    if numel(x.shape) == 0:
        raise NotLowered
    lsm = G.kernel_row("log_softmax", x, (dim,), [], {"dim": dim}, x.shape, x.dtype)
    shape, out = _float_out(G, node)
    res = Buffer(shape, out, "extern", node)
    kwargs = {"weight": a["weight"], "ignore_index": a["ignore_index"], "reduction": a["reduction"]}
    G.emit_extern(
        node,
        res,
        F.nll_loss,
        (Val(x.shape, x.dtype, Load(lsm, 0, lsm.strides), "buffer"), a["target"]),
        kwargs,
    )
    G.realized[node] = res
    return Val(shape, out, Load(res, 0, res.strides), "buffer")


# ---------------------------------------------------------------------------- GEMM/conv epilogues


def _epilogue_user(node):
    """Whether the node's only user is a pointwise op that can take a bias add as its prologue."""
    if len(node.users) != 1:
        return False
    (u,) = node.users
    fn = lookup(u)
    return fn is not None and getattr(fn, "pointwise", False)


def _linear(G, node):

    a = _bind(node, ("input", "weight", ("bias", None)))
    if a["bias"] is None or not _epilogue_user(node):
        raise NotLowered
    b = _resolve(G, a["bias"])
    shape, out = _float_out(G, node)
    if not isinstance(b, Val) or b.dtype != out:
        raise NotLowered
    from ..nn import functional as F

    mm = Buffer(shape, out, "extern", None)
    G.emit_extern(node, mm, F.linear, (a["input"], a["weight"]), {})
    return pw("add", [Val(shape, out, Load(mm, 0, mm.strides), "buffer"), b], shape, out, alpha=1)


def _conv(fname):
    def lower(G, node):

        a = _bind(
            node,
            (
                "input",
                "weight",
                ("bias", None),
                ("stride", 1),
                ("padding", 0),
                ("dilation", 1),
                ("groups", 1),
            ),
        )
        if a["bias"] is None or not _epilogue_user(node):
            raise NotLowered
        b = _resolve(G, a["bias"])
        shape, out = _float_out(G, node)
        if not isinstance(b, Val) or b.dtype != out or len(b.shape) != 1:
            raise NotLowered
        from ..nn import functional as F

        fn = getattr(F, fname)
        mm = Buffer(shape, out, "extern", None)
        G.emit_extern(
            node,
            mm,
            fn,
            (a["input"], a["weight"], None, a["stride"], a["padding"], a["dilation"], a["groups"]),
            {},
        )
        nd = len(shape) - 2
        bshape = (b.shape[0],) + (1,) * nd
        bv = _view_of(b, bshape, lambda ld: (ld.offset, list(ld.strides) + [0] * nd))
        return pw(
            "add", [Val(shape, out, Load(mm, 0, mm.strides), "buffer"), bv], shape, out, alpha=1
        )

    return lower


def _batch_norm(G, node):
    a = _args(
        G,
        node,
        (
            "input",
            "running_mean",
            "running_var",
            ("weight", None),
            ("bias", None),
            ("training", False),
            ("momentum", 0.1),
            ("eps", 1e-5),
        ),
    )
    if a["training"] is not False:
        raise NotLowered
    x, rm, rv, w, b = a["input"], a["running_mean"], a["running_var"], a["weight"], a["bias"]
    shape, out = _float_out(G, node)
    if not isinstance(x, Val) or len(shape) < 2:
        raise NotLowered
    nd = len(shape) - 2
    cshape = (shape[1],) + (1,) * nd

    def chan(v):
        if v is None:
            return None
        if not isinstance(v, Val) or v.shape != (shape[1],):
            raise NotLowered
        return _view_of(v, cshape, lambda ld: (ld.offset, list(ld.strides) + [0] * nd))

    rm, rv, w, b = chan(rm), chan(rv), chan(w), chan(b)
    if rm is None or rv is None:
        raise NotLowered
    y = pw("sub", [x, rm], shape, out, alpha=1)
    inv = pw("rsqrt", [pw("add", [rv, float(a["eps"])], cshape, out, alpha=1)], cshape, out)
    y = pw("mul", [y, inv], shape, out)
    if w is not None:
        y = pw("mul", [y, w], shape, out)
    if b is not None:
        y = pw("add", [y, b], shape, out, alpha=1)
    return y
