"""The derivative table: for each op a captured graph contains, its backward formula written as
tensor code over builder.V handles (each operation becomes a node of the joint graph).

A rule is ``Rule(sig, backward, kind, forward)``:
- ``sig``: a function whose signature binds the node's arguments by name (``a["input"]``);
- ``backward(b, a, out, g, ctx)``: ``[(input V, gradient V), ...]``; a gradient may have the
  input's broadcast shape, the joint builder sums it to the input's shape and dtype;
- ``kind``: "pointwise" / "view" (cheap: the partitioner may recompute them in backward) or
  "other";
- ``forward(b, a, node, env)`` (optional): emits the forward differently from a copy of the
  node (dropout with an explicit mask, max_pool2d with its indices); returns ``(out, ctx)``.

Ops the table does not know make the whole graph fall back (``NoFormula``), so a gradient is
never wrong. Helper functions below (``index_backward``, ``gather_backward``, ...) become
call_function targets of backward graphs and run eagerly.

This module holds the table and the rules of pointwise ops, views, indexing, reductions and
matrix products; derivatives_nn.py registers those of nn.functional ops (convolution, softmax,
normalization, dropout, losses, pooling, embedding) into TABLE, and is imported with the
package (__init__.py), so the table is complete once any of its modules is.
"""

from __future__ import annotations

import math
import operator

from .builder import V


class NoFormula(Exception):
    """A node of the graph has no backward formula here (the graph falls back)."""


class Rule:
    __slots__ = ("sig", "backward", "kind", "forward")

    def __init__(self, sig, backward, kind="other", forward=None):
        self.sig, self.backward, self.kind, self.forward = sig, backward, kind, forward


def _ember():
    import ember

    return ember


# ------------------------------------------------------------------------------ op naming

_OPERATORS = {
    operator.add: "add",
    operator.sub: "sub",
    operator.mul: "mul",
    operator.truediv: "div",
    operator.neg: "neg",
    operator.pow: "pow",
    operator.matmul: "matmul",
    operator.getitem: "getitem",
    operator.pos: "positive",
}
_DUNDER = {
    "__add__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__truediv__": "div",
    "__neg__": "neg",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__getitem__": "getitem",
    "__radd__": "radd",
    "__rsub__": "rsub",
    "__rmul__": "rmul",
    "__rtruediv__": "rdiv",
}


def op_name(node):
    """The canonical name of a call node's operation ('add', 'conv2d', 'sum', ...)."""
    if node.op == "call_method":
        name = node.target
    else:
        try:
            name = _OPERATORS.get(node.target)
        except TypeError:
            name = None
        if name is None:
            name = getattr(node.target, "__name__", None)
    if name is None:
        return None
    return _DUNDER.get(name, name)


# Ops whose outputs carry no gradient (comparisons, integer-valued results, fresh tensors).
NONDIFF = frozenset(
    "eq ne lt le gt ge logical_and logical_or logical_not logical_xor argmax argmin detach sign "
    "isnan isinf isfinite floor ceil round trunc one_hot zeros_like ones_like empty_like "
    "full_like rand_like randn_like randint_like bernoulli size dim numel".split()
)


# ------------------------------------------------------------------------------ helpers


def sum_to(g, shape):
    """g summed over its broadcast dimensions down to ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and g.shape[i + lead] != 1
    )
    if dims:
        g = g.sum(dims, keepdim=True)
    if g.shape != shape:
        g = g.reshape(shape)
    return g


def _dims(dim, ndim):
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(d % ndim if ndim else 0 for d in dim))


def _unreduce(g, shape, dim, keepdim):
    """The gradient of a reduction over ``dim`` with keepdim semantics restored (not expanded)."""
    if keepdim or not shape:
        return g
    for d in _dims(dim, len(shape)):
        g = g.unsqueeze(d)
    return g


def _count(shape, dim):
    return math.prod(shape[d] for d in _dims(dim, len(shape))) if shape else 1


def is_v(x):
    return isinstance(x, V)


def _pairs(*pairs):
    return [(x, g) for x, g in pairs if is_v(x) and g is not None]


# Helpers that become call_function targets of backward graphs.


def index_backward(grad, shape, index):
    """index_backward(grad, shape, index) -> Tensor

    A zero tensor of ``shape`` with ``grad`` written at the basic index ``index``."""
    ember = _ember()
    out = ember.zeros(shape, dtype=grad.dtype)
    out[index] = grad
    return out


def select_backward(grad, dim, indices, shape, keepdim):
    """select_backward(grad, dim, indices, shape, keepdim) -> Tensor

    The input gradient of ops that select values along ``dim`` and return their indices
    (max/min with dim, sort, topk, kthvalue, median, mode, cummax): zeros of ``shape`` with
    ``grad`` added at ``indices``."""
    ember = _ember()
    if not shape:
        return grad.reshape(())
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return ember.zeros(shape, dtype=grad.dtype).scatter_add(dim, indices, grad)


def advanced_index_backward(grad, shape, index):
    """advanced_index_backward(grad, shape, index) -> Tensor

    The input gradient of ``x[index]`` for any index (tensor, boolean, mixed): eager's own
    indexing backward run on a zero tensor of ``shape``, so repeated indices accumulate."""
    ember = _ember()
    x = ember.zeros(shape, dtype=grad.dtype, requires_grad=True)
    with ember.enable_grad():
        (gx,) = ember.autograd.grad(x[index], x, grad)
    return gx


def index_put_zero(grad, indices):
    """index_put_zero(grad, indices) -> Tensor

    ``grad`` with zeros at ``indices`` (the input gradient of a non-accumulating index_put)."""
    ember = _ember()
    return grad.index_put(tuple(indices), ember.zeros((), dtype=grad.dtype))


def index_add_backward(grad, shape, dim, index):
    """index_add_backward(grad, shape, dim, index) -> Tensor

    The input gradient of index_select: ``grad`` added into zeros of ``shape`` at ``index``."""
    ember = _ember()
    return ember.zeros(shape, dtype=grad.dtype).index_add(dim, index, grad)


def gather_backward(grad, shape, dim, index):
    """gather_backward(grad, shape, dim, index) -> Tensor

    The input gradient of gather: ``grad`` scatter-added into zeros of ``shape``."""
    ember = _ember()
    return ember.zeros(shape, dtype=grad.dtype).scatter_add(dim, index, grad)


# ------------------------------------------------------------------------------ the table

TABLE: dict[str, Rule] = {}


def rule(names, sig, kind="other", forward=None):
    def deco(fn):
        for name in names.split():
            TABLE[name] = Rule(sig, fn, kind, forward)
        return fn

    return deco


def _s1(input, *args, **kwargs):
    pass


def unary(names, formula):
    """A pointwise op of one tensor whose gradient is ``formula(x, y, g)``."""
    for name in names.split():
        TABLE[name] = Rule(
            _s1,
            lambda b, a, out, g, ctx, f=formula: _pairs((a["input"], f(a["input"], out, g))),
            "pointwise",
        )


def _w(cond, x, y):
    return cond.b.call(_ember().where, cond, x, y)


unary("neg negative", lambda x, y, g: -g)
unary("positive clone contiguous float double half to type", lambda x, y, g: g)
unary("exp", lambda x, y, g: g * y)
unary("log", lambda x, y, g: g / x)
unary("log1p", lambda x, y, g: g / (x + 1))
unary("expm1", lambda x, y, g: g * (y + 1))
unary("sin", lambda x, y, g: g * x.cos())
unary("cos", lambda x, y, g: -(g * x.sin()))
unary("tan", lambda x, y, g: g * (y * y + 1))
unary("tanh", lambda x, y, g: g * (1 - y * y))
unary("sigmoid", lambda x, y, g: g * (y * (1 - y)))
unary("sqrt", lambda x, y, g: g / (y * 2))
unary("rsqrt", lambda x, y, g: g * (y * y * y) * -0.5)
unary("abs", lambda x, y, g: g * x.sign())
unary("square", lambda x, y, g: g * (x * 2))
unary("reciprocal", lambda x, y, g: -(g * y * y))
unary("erf", lambda x, y, g: g * ((-(x * x)).exp() * (2 / math.sqrt(math.pi))))
# (from the input, not the output: the partitioner then needs no relu in the backward)
unary("relu", lambda x, y, g: _w(x.gt(0), g, 0.0))
unary(
    "silu",
    lambda x, y, g: g * (lambda s: s * (1 + x * (1 - s)))(x.sigmoid()),
)
unary("logsigmoid", lambda x, y, g: g * (1 - y.exp()))


def _gelu_grad(x, approximate, g):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        x2 = x * x
        t = ((x + x2 * x * 0.044715) * k).tanh()
        d = (t + 1) * 0.5 + x * (1 - t * t) * ((x2 * (3 * 0.044715) + 1) * (0.5 * k))
        return g * d
    cdf = ((x * (1 / math.sqrt(2))).erf() + 1) * 0.5
    pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return g * (cdf + x * pdf)


@rule("gelu", lambda input, approximate="none": None, "pointwise")
def _gelu(b, a, out, g, ctx):
    return _pairs((a["input"], _gelu_grad(a["input"], a["approximate"], g)))


@rule("leaky_relu", lambda input, negative_slope=0.01, inplace=False: None, "pointwise")
def _leaky(b, a, out, g, ctx):
    x = a["input"]
    return _pairs((x, _w(x.gt(0), g, g * a["negative_slope"])))


@rule("elu", lambda input, alpha=1.0, inplace=False: None, "pointwise")
def _elu(b, a, out, g, ctx):
    x = a["input"]
    return _pairs((x, _w(x.gt(0), g, g * (out + a["alpha"]))))


@rule("softplus", lambda input, beta=1.0, threshold=20.0: None, "pointwise")
def _softplus(b, a, out, g, ctx):
    x, beta = a["input"], a["beta"]
    z = x * beta
    return _pairs((x, _w(z.gt(a["threshold"]), g, g * z.sigmoid())))


def _clamp_mask(x, lo, hi):
    m = None
    for cond in ((x.ge(lo) if lo is not None else None), (x.le(hi) if hi is not None else None)):
        if cond is not None:
            m = cond if m is None else x.b.call(_ember().logical_and, m, cond)
    return m


@rule("clamp clip", lambda input, min=None, max=None: None, "pointwise")
def _clamp(b, a, out, g, ctx):
    if is_v(a["min"]) or is_v(a["max"]):
        raise NoFormula("clamp with tensor bounds")
    m = _clamp_mask(a["input"], a["min"], a["max"])
    return _pairs((a["input"], g if m is None else _w(m, g, 0.0)))


@rule(
    "hardtanh",
    lambda input, min_val=-1.0, max_val=1.0, inplace=False: None,
    "pointwise",
)
def _hardtanh(b, a, out, g, ctx):
    x = a["input"]
    m = b.call(_ember().logical_and, x.gt(a["min_val"]), x.lt(a["max_val"]))
    return _pairs((x, _w(m, g, 0.0)))


# ---- binary


def _bin(input, other, alpha=1):
    pass


@rule("add radd", _bin, "pointwise")
def _add(b, a, out, g, ctx):
    alpha = a["alpha"]
    return _pairs((a["input"], g), (a["other"], g if alpha == 1 else g * alpha))


@rule("sub", _bin, "pointwise")
def _sub(b, a, out, g, ctx):
    alpha = a["alpha"]
    return _pairs((a["input"], g), (a["other"], -g if alpha == 1 else g * -alpha))


@rule("rsub", _bin, "pointwise")
def _rsub(b, a, out, g, ctx):  # other - alpha * input
    alpha = a["alpha"]
    return _pairs((a["input"], -g if alpha == 1 else g * -alpha), (a["other"], g))


@rule("mul rmul multiply", lambda input, other: None, "pointwise")
def _mul(b, a, out, g, ctx):
    x, y = a["input"], a["other"]
    return _pairs((x, g * y), (y, g * x))


@rule("div true_divide divide", lambda input, other, rounding_mode=None: None, "pointwise")
def _div(b, a, out, g, ctx):
    if a["rounding_mode"] is not None:
        raise NoFormula("div with rounding_mode")
    x, y = a["input"], a["other"]
    return _pairs((x, g / y), (y, -(g * out) / y if is_v(y) else None))


@rule("rdiv", lambda input, other: None, "pointwise")
def _rdiv(b, a, out, g, ctx):  # other / input
    x = a["input"]
    return _pairs((x, -(g * out) / x), (a["other"], g / x))


@rule("pow", lambda input, exponent: None, "pointwise")
def _pow(b, a, out, g, ctx):
    x, e = a["input"], a["exponent"]
    gx = ge = None
    if is_v(x):
        gx = g * e * (x ** (e - 1)) if is_v(e) else (g * (x ** (e - 1)) * e if e != 0 else None)
    if is_v(e):
        ge = g * out * (x.log() if is_v(x) else math.log(x))
    return _pairs((x, gx), (e, ge))


@rule("where", lambda condition, input=None, other=None: None, "pointwise")
def _where(b, a, out, g, ctx):
    c = a["condition"]
    return _pairs((a["input"], _w(c, g, 0.0)), (a["other"], _w(c, 0.0, g)))


@rule("masked_fill", lambda input, mask, value: None, "pointwise")
def _masked_fill(b, a, out, g, ctx):
    if is_v(a["value"]):
        raise NoFormula("masked_fill with a tensor value")
    return _pairs((a["input"], _w(a["mask"], 0.0, g)))


# ---- views


def _varargs(input, *args, **kwargs):
    pass


@rule(
    "view reshape flatten unflatten squeeze unsqueeze view_as reshape_as ravel",
    _varargs,
    "view",
)
def _reshape(b, a, out, g, ctx):
    x = a["input"]
    return _pairs((x, g.reshape(x.shape)))


@rule("expand expand_as broadcast_to", _varargs, "view")
def _expand(b, a, out, g, ctx):
    return _pairs((a["input"], g))  # summed to the input's shape by the builder


def _dims_arg(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


@rule("permute", _varargs, "view")
def _permute(b, a, out, g, ctx):
    x = a["input"]
    dims = a["kwargs"].get("dims") or _dims_arg(a["args"])
    dims = [d % x.ndim for d in dims]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return _pairs((x, g.permute(inv)))


@rule("transpose swapaxes swapdims", lambda input, dim0, dim1: None, "view")
def _transpose(b, a, out, g, ctx):
    return _pairs((a["input"], g.transpose(a["dim0"], a["dim1"])))


@rule("t", _s1, "view")
def _t(b, a, out, g, ctx):
    return _pairs((a["input"], g.t() if a["input"].ndim == 2 else g))


def _basic_index(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return all(
        i is None
        or i is Ellipsis
        or isinstance(i, (int, slice))
        and not any(is_v(s) for s in ((i.start, i.stop, i.step) if isinstance(i, slice) else ()))
        for i in items
    )


@rule("getitem", lambda input, index: None, "view")
def _getitem(b, a, out, g, ctx):
    x, idx = a["input"], a["index"]
    if isinstance(x.val, (tuple, list)):
        raise NoFormula("getitem of a tuple")  # handled by the builder
    if _basic_index(idx):
        return _pairs((x, b.call(index_backward, g, x.shape, idx)))
    items = idx if isinstance(idx, tuple) else (idx,)
    if any(isinstance(i, slice) and any(is_v(e) for e in (i.start, i.stop, i.step)) for i in items):
        raise NoFormula("indexing with tensor slice bounds")
    if any(_needs_v(i) for i in items):
        raise NoFormula("indexing with a differentiable index")
    return _pairs((x, b.call(advanced_index_backward, g, x.shape, idx)))


def _needs_v(x):
    return is_v(x) and bool(x.node.meta.get("needs_grad"))


@rule("index_put", lambda input, indices, values, accumulate=False: None)
def _index_put(b, a, out, g, ctx):
    x, idx, v = a["input"], tuple(a["indices"]), a["values"]
    if any(i is not None and not is_v(i) for i in idx):
        raise NoFormula("index_put with non-tensor indices")
    gx = g if a["accumulate"] else b.call(index_put_zero, g, idx)
    gv = g[idx] if _needs_v(v) else None
    return _pairs((x, gx), (v, gv))


@rule("index_select", lambda input, dim, index: None)
def _index_select(b, a, out, g, ctx):
    x = a["input"]
    return _pairs((x, b.call(index_add_backward, g, x.shape, a["dim"], a["index"])))


@rule("gather", lambda input, dim, index, *, sparse_grad=False: None)
def _gather(b, a, out, g, ctx):
    x = a["input"]
    return _pairs((x, b.call(gather_backward, g, x.shape, a["dim"], a["index"])))


@rule("take_along_dim", lambda input, indices, dim=None: None)
def _take_along_dim(b, a, out, g, ctx):
    x, idx, dim = a["input"], a["indices"], a["dim"]
    if dim is None or tuple(idx.shape) != tuple(out.shape) or idx.ndim != x.ndim:
        raise NoFormula("take_along_dim with broadcast indices or without dim")
    return _pairs((x, b.call(gather_backward, g, x.shape, dim, idx)))


# ---- multi-output views: split, chunk, unbind (``out`` and ``g`` are lists, one per output)


def _fill_none(b, out, g):
    return [
        gi if gi is not None else b.call(_ember().zeros, o.shape, dtype=o.dtype)
        for o, gi in zip(out, g)
    ]


@rule("split chunk tensor_split split_with_sizes", _varargs)
def _split(b, a, out, g, ctx):
    x = a["input"]
    args, kw = a["args"], a["kwargs"]
    dim = kw.get("dim", args[1] if len(args) > 1 else 0)
    if not isinstance(dim, int) or not isinstance(out, list):
        raise NoFormula(f"{ctx} with a non-constant dim")
    return _pairs((x, b.call(_ember().cat, _fill_none(b, out, g), dim % max(x.ndim, 1))))


@rule("unbind", lambda input, dim=0: None)
def _unbind(b, a, out, g, ctx):
    x = a["input"]
    if not isinstance(out, list):
        raise NoFormula("unbind")
    return _pairs((x, b.call(_ember().stack, _fill_none(b, out, g), a["dim"] % x.ndim)))


@rule("cat concat concatenate", lambda tensors, dim=0: None)
def _cat(b, a, out, g, ctx):
    dim, off, pairs = a["dim"] % out.ndim, 0, []
    for t in a["tensors"]:
        if not is_v(t):
            raise NoFormula("cat of non-tensors")
        n = t.shape[dim] if t.ndim else 0
        pairs.append((t, g.narrow(dim, off, n)))
        off += n
    return pairs


@rule("stack", lambda tensors, dim=0: None)
def _stack(b, a, out, g, ctx):
    dim, pairs = a["dim"] % out.ndim, []
    for i, t in enumerate(a["tensors"]):
        if not is_v(t):
            raise NoFormula("stack of non-tensors")
        pairs.append((t, g.select(dim, i)))
    return pairs


# ---- reductions


def _red(input, dim=None, keepdim=False, dtype=None):
    pass


@rule("sum", _red)
def _sum(b, a, out, g, ctx):
    x = a["input"]
    return _pairs((x, _unreduce(g, x.shape, a["dim"], a["keepdim"]).expand(x.shape)))


@rule("mean", _red)
def _mean(b, a, out, g, ctx):
    x = a["input"]
    gx = _unreduce(g, x.shape, a["dim"], a["keepdim"]) / _count(x.shape, a["dim"])
    return _pairs((x, gx.expand(x.shape)))


@rule("amax amin", lambda input, dim=(), keepdim=False: None)
def _amax(b, a, out, g, ctx):
    x = a["input"]
    dims = _dims(a["dim"], x.ndim)
    yk = _unreduce(out, x.shape, dims, a["keepdim"])
    gk = _unreduce(g, x.shape, dims, a["keepdim"])
    mask = x.eq(yk).to(x.dtype)
    return _pairs((x, mask * (gk / mask.sum(dims, keepdim=True))))


@rule("max min", lambda input, dim=None, keepdim=False, other=None: None)
def _max(b, a, out, g, ctx):
    other = a["other"] if a["other"] is not None else a["dim"] if is_v(a["dim"]) else None
    if other is not None:  # max(input, other): maximum
        return _maximum(b, {"input": a["input"], "other": other}, out, g, ctx + "imum")
    if a["dim"] is None:
        return _amax(b, dict(a, dim=None, keepdim=False), out, g, ctx)
    if not isinstance(out, list) or g[0] is None:
        raise NoFormula("max/min with dim")
    x = a["input"]
    d = a["dim"] % x.ndim if x.ndim else 0
    return _pairs((x, b.call(select_backward, g[0], d, out[1], x.shape, a["keepdim"])))


def _select_sig(input, *args, **kwargs):
    pass


# where the dim argument sits (after input) and its default, per op returning (values, indices)
_SELECT_DIM = {
    "sort": (0, -1),
    "topk": (1, -1),
    "kthvalue": (1, -1),
    "median": (0, None),
    "nanmedian": (0, None),
    "mode": (0, -1),
    "cummax": (0, None),
    "cummin": (0, None),
}


@rule(" ".join(_SELECT_DIM), _select_sig)
def _select_values(b, a, out, g, ctx):
    pos, default = _SELECT_DIM[ctx]
    args, kw = a["args"], a["kwargs"]
    dim = kw.get("dim", args[pos] if len(args) > pos else default)
    if not isinstance(out, list) or not isinstance(dim, int) or g[0] is None:
        raise NoFormula(f"{ctx} without dim")
    x = a["input"]
    d = dim % x.ndim if x.ndim else 0
    keepdim = kw.get("keepdim", False)
    if ctx in ("kthvalue",) and len(args) > 2:
        keepdim = args[2]
    elif ctx in ("median", "nanmedian", "mode") and len(args) > 1:
        keepdim = args[1]
    if ctx in ("sort", "topk", "cummax", "cummin"):
        keepdim = True  # values and indices keep the input's rank
    return _pairs((x, b.call(select_backward, g[0], d, out[1], x.shape, bool(keepdim))))


@rule("maximum minimum", lambda input, other: None, "pointwise")
def _maximum(b, a, out, g, ctx):
    # eager's rule: the larger (smaller) input gets the gradient, a tie splits it in halves
    x, y = a["input"], a["other"]
    if not is_v(y):
        raise NoFormula(f"{ctx} with a non-tensor")
    win = x.gt(y) if ctx == "maximum" else x.lt(y)
    lose = x.lt(y) if ctx == "maximum" else x.gt(y)
    half = g * 0.5
    gx = _w(win, g, _w(lose, 0.0, half))
    gy = _w(lose, g, _w(win, 0.0, half))
    return _pairs((x, gx), (y, gy))


def _correction(a):
    c, u = a.get("correction"), a.get("unbiased")
    if c is not None:
        return c
    return 0 if u is False else 1


def _var_args(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    pass


def _var_bind(a):
    if isinstance(a["dim"], bool):  # var(x, False): the old unbiased positional
        a["unbiased"], a["dim"] = a["dim"], None
    return a


@rule("var std", _var_args)
def _var(b, a, out, g, ctx):
    a = _var_bind(a)
    x, dims = a["input"], _dims(a["dim"], a["input"].ndim)
    n = _count(x.shape, dims) - _correction(a)
    gk = _unreduce(g, x.shape, dims, a["keepdim"])
    centered = x - x.mean(dims, keepdim=True)
    if ctx == "std":
        gx = gk * centered / (_unreduce(out, x.shape, dims, a["keepdim"]) * n)
    else:
        gx = gk * centered * (2 / n)
    return _pairs((x, gx))


@rule("logsumexp", lambda input, dim, keepdim=False: None)
def _logsumexp(b, a, out, g, ctx):
    x = a["input"]
    dims = _dims(a["dim"], x.ndim)
    yk = _unreduce(out, x.shape, dims, a["keepdim"])
    return _pairs((x, _unreduce(g, x.shape, dims, a["keepdim"]) * (x - yk).exp()))


# ---- matrix products


@rule("mm", lambda input, mat2: None)
def _mm(b, a, out, g, ctx):
    x, y = a["input"], a["mat2"]
    return _pairs(
        (x, g.mm(y.t()) if is_v(x) else None),
        (y, x.t().mm(g) if is_v(y) else None),
    )


@rule("bmm", lambda input, mat2: None)
def _bmm(b, a, out, g, ctx):
    x, y = a["input"], a["mat2"]
    return _pairs((x, g.bmm(y.transpose(1, 2))), (y, x.transpose(1, 2).bmm(g)))


@rule("matmul", lambda input, other: None)
def _matmul(b, a, out, g, ctx):
    x, y = a["input"], a["other"]
    if x.ndim == 1 and y.ndim == 1:
        return _pairs((x, g * y), (y, g * x))
    x1 = x.unsqueeze(0) if x.ndim == 1 else x
    y1 = y.unsqueeze(-1) if y.ndim == 1 else y
    g1 = g
    if x.ndim == 1:
        g1 = g1.unsqueeze(-2)
    if y.ndim == 1:
        g1 = g1.unsqueeze(-1)
    gx = g1.matmul(y1.transpose(-1, -2))
    gy = x1.transpose(-1, -2).matmul(g1)
    if x.ndim == 1:
        gx = gx.squeeze(-2)
    if y.ndim == 1:
        gy = gy.squeeze(-1)
    return _pairs((x, gx), (y, gy))


@rule("linear", lambda input, weight, bias=None: None)
def _linear(b, a, out, g, ctx):
    x, w, bias = a["input"], a["weight"], a["bias"]
    gw = None
    if w.node.meta.get("needs_grad"):
        g2 = g.reshape(-1, w.shape[0])
        gw = g2.t().mm(x.reshape(-1, w.shape[1]))
    return _pairs((x, g.matmul(w)), (w, gw), (bias, g))


@rule("addmm", lambda input, mat1, mat2, *, beta=1, alpha=1: None)
def _addmm(b, a, out, g, ctx):
    m1, m2, beta, alpha = a["mat1"], a["mat2"], a["beta"], a["alpha"]
    g1 = g if alpha == 1 else g * alpha
    return _pairs(
        (a["input"], g if beta == 1 else g * beta),
        (m1, g1.mm(m2.t())),
        (m2, m1.t().mm(g1)),
    )


@rule("baddbmm addbmm", lambda input, batch1, batch2, *, beta=1, alpha=1: None)
def _baddbmm(b, a, out, g, ctx):
    b1, b2, beta, alpha = a["batch1"], a["batch2"], a["beta"], a["alpha"]
    g1 = g if alpha == 1 else g * alpha
    if ctx == "addbmm":  # the batch is summed: every matrix product sees the same gradient
        g1 = g1.unsqueeze(0).expand(b1.shape[0], *g1.shape)
    return _pairs(
        (a["input"], g if beta == 1 else g * beta),
        (b1, g1.bmm(b2.transpose(1, 2)) if _needs_v(b1) else None),
        (b2, b1.transpose(1, 2).bmm(g1) if _needs_v(b2) else None),
    )


@rule("addmv", lambda input, mat, vec, *, beta=1, alpha=1: None)
def _addmv(b, a, out, g, ctx):
    m, v, beta, alpha = a["mat"], a["vec"], a["beta"], a["alpha"]
    g1 = g if alpha == 1 else g * alpha
    return _pairs(
        (a["input"], g if beta == 1 else g * beta),
        (m, g1.unsqueeze(1) * v.unsqueeze(0) if _needs_v(m) else None),
        (v, m.t().mv(g1) if _needs_v(v) else None),
    )
