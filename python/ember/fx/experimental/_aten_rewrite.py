"""make_fx's calls as torch's ATen overloads (torch 2.13's make_fx output, op by op).

ember's capture records public calls (``x.mean(1)``, ``F.linear``, ``a @ b``); torch's make_fx
records what they dispatch to. Each rule here takes a recorded call's arguments and emits the
overloads torch's graph shows for it: ``mean.dim(x, [1])``, ``linear`` as ``t`` + ``mm`` (or
``addmm`` with a bias), ``matmul`` of batches as ``expand``/``view``/``bmm``/``_unsafe_view``,
``layer_norm`` as ``native_layer_norm`` and its three ``getitem``s, ``a[:, 1:3]`` as
``slice.Tensor``, ``softmax`` as ``_softmax(x, dim, False)``, a number operand of a comparison
as ``gt.Scalar``. Trailing arguments equal to the schema's defaults are left out, as torch
prints them. A call no rule covers keeps make_fx's registry lookup (``_to_overload``); a rule
that does not apply (an index with tensors, a 1-D matmul) keeps the call as recorded. The
overloads the registry lacks come from ``ember/_aten_extra.py``."""

import operator
import sys

__all__ = ["rewrite"]

_INT_MAX = 9223372036854775807


def _e():
    return sys.modules["ember"]


def _aten(name, overload):
    return getattr(getattr(_e().ops.aten, name), overload)


class _Skip(Exception):
    """The rule does not apply to this call: keep it as recorded."""


class _Builder:
    """Emits the replacement nodes at the end of the graph being built."""

    def __init__(self, graph):
        self.graph = graph
        self.made = []  # erased again when the rule gives up

    def val(self, a):
        from ..node import Node

        if isinstance(a, Node):
            return a.meta.get("val")
        return a

    def is_tensor(self, a):
        return isinstance(self.val(a), _e().Tensor)

    def emit(self, target, args, kwargs=None):
        from ..node import map_arg

        kwargs = kwargs or {}
        packet = getattr(target, "overloadpacket", None)
        name = getattr(packet, "__name__", None) or getattr(target, "__name__", None)
        new = self.graph.create_node("call_function", target, tuple(args), dict(kwargs), name)
        self.made.append(new)
        vals = map_arg((tuple(args), dict(kwargs)), lambda n: n.meta.get("val"))
        with _e().no_grad():
            new.meta["val"] = target(*vals[0], **vals[1])
        return new

    def op(self, name, overload, *args, **kwargs):
        return self.emit(_aten(name, overload), args, kwargs)


def _shape(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return list(args)


def _ints(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def _unary(name):
    def rule(b, x, *rest, **kwargs):
        return b.op(name, "default", x)

    return rule


def _reduce(name, all_overload, dim_overload):
    def rule(b, x, dim=None, keepdim=False, *, dtype=None):
        if dtype is not None:
            raise _Skip
        if dim is None:
            return b.op(name, all_overload, x)
        dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
        return b.op(name, dim_overload, x, dims, *([True] if keepdim else []))

    return rule


def _amax(b, x, dim=(), keepdim=False):
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    return b.op("amax", "default", x, dims, *([True] if keepdim else []))


def _var(b, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    kwargs = {"correction": correction}
    if keepdim:
        kwargs["keepdim"] = True
    dims = None if dim is None else (list(dim) if isinstance(dim, (list, tuple)) else [dim])
    return b.op("var", "correction", x, dims, **kwargs)


def _softmax(name):
    def rule(b, x, dim=None, _stacklevel=3, dtype=None):
        if dim is None or dtype is not None:
            raise _Skip
        return b.op(name, "default", x, dim, False)

    return rule


def _div(b, a, other, *, rounding_mode=None):
    if rounding_mode is None:
        return b.op("div", "Tensor", a, other)
    return b.op("div", "Tensor_mode", a, other, rounding_mode=rounding_mode)


def _pow(b, a, exponent):
    if b.is_tensor(a) and b.is_tensor(exponent):
        return b.op("pow", "Tensor_Tensor", a, exponent)
    if b.is_tensor(a):
        return b.op("pow", "Tensor_Scalar", a, exponent)
    return b.op("pow", "Scalar", a, exponent)


def _compare(name):
    def rule(b, a, other):
        if not b.is_tensor(a):
            raise _Skip
        return b.op(name, "Tensor" if b.is_tensor(other) else "Scalar", a, other)

    return rule


def _view(b, x, *shape):
    shape = _shape(shape)
    if any(isinstance(s, _e().dtype) for s in shape):
        raise _Skip
    return b.op("view", "default", x, shape)


def _reshape_to(b, x, shape):
    if b.val(x).is_contiguous():
        return b.op("view", "default", x, shape)
    return b.op("_unsafe_view", "default", b.op("clone", "default", x), shape)


def _reshape(b, x, *shape):
    return _reshape_to(b, x, _shape(shape))


def _flatten(b, x, start_dim=0, end_dim=-1):
    sizes = list(b.val(x).shape)
    if not sizes:
        return _reshape_to(b, x, [1])
    s, e = start_dim % len(sizes), end_dim % len(sizes)
    n = 1
    for d in sizes[s : e + 1]:
        n *= d
    if s == e:
        return x
    return _reshape_to(b, x, sizes[:s] + [n] + sizes[e + 1 :])


def _squeeze(b, x, dim=None):
    if dim is None:
        return b.op("squeeze", "default", x)
    if isinstance(dim, (list, tuple)):
        return b.op("squeeze", "dims", x, list(dim))
    return b.op("squeeze", "dim", x, dim)


def _stack(b, tensors, dim=0):
    return b.op("stack", "default", list(tensors), *([dim] if dim else []))


def _matmul(b, a, other):
    va, vb = b.val(a), b.val(other)
    if va.dim() == 2 and vb.dim() == 2:
        return b.op("mm", "default", a, other)
    if va.dim() < 2 or vb.dim() < 2:
        raise _Skip  # torch's 1-D forms (mv, dot, unsqueeze + mm) are not written here
    n, k, m = va.shape[-2], va.shape[-1], vb.shape[-1]
    # rows of batches times one matrix: one mm, when the rows fold without a copy or (torch's
    # choice for a cheaper backward) the matrix requires grad
    if vb.dim() == 2 and (va.is_contiguous() or vb.requires_grad):
        rows = 1
        for s in va.shape[:-1]:
            rows *= s
        folded = _reshape_to(b, a, [rows, k])
        out = b.op("mm", "default", folded, other)
        return b.op("_unsafe_view", "default", out, list(va.shape[:-1]) + [m])
    batch = list(_e().broadcast_shapes(tuple(va.shape[:-2]), tuple(vb.shape[:-2])))
    count = 1
    for s in batch:
        count *= s
    ea = b.op("expand", "default", a, batch + [n, k])
    ea = b.op("view", "default", ea, [count, n, k])
    eb = b.op("expand", "default", other, batch + [k, m])
    eb = b.op("view", "default", eb, [count, k, m])
    out = b.op("bmm", "default", ea, eb)
    return b.op("_unsafe_view", "default", out, batch + [n, m])


def _linear(b, x, weight, bias=None):
    vx = b.val(x)
    if vx.dim() < 2:
        raise _Skip
    if vx.dim() == 2:
        wt = b.op("t", "default", weight)
        if bias is None:
            return b.op("mm", "default", x, wt)
        return b.op("addmm", "default", bias, x, wt)
    if bias is not None and vx.is_contiguous():  # torch folds the batches into one addmm
        rows = 1
        for s in vx.shape[:-1]:
            rows *= s
        folded = b.op("view", "default", x, [rows, vx.shape[-1]])
        wt = b.op("t", "default", weight)
        out = b.op("addmm", "default", bias, folded, wt)
        return b.op("view", "default", out, list(vx.shape[:-1]) + [b.val(out).shape[-1]])
    wt = b.op("t", "default", weight)
    out = _matmul(b, x, wt)  # otherwise: matmul, then the bias added
    return out if bias is None else b.op("add", "Tensor", out, bias)


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _einsum(b, equation, *operands):
    """Two operands as torch contracts them: one ``bmm`` of (batch, left, summed) by (batch,
    summed, right), the labels of each group folded into one dimension (torch's view and
    permute steps around it differ; its bmm, which FlopCounterMode counts, is the same), or a
    broadcast ``mul`` when no label is summed."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    if len(operands) != 2 or "." in eq:
        raise _Skip
    lhs, arrow, out = eq.partition("->")
    names = lhs.split(",")
    if len(names) != 2:
        raise _Skip
    (la, lb), (x, y) = names, operands
    if not arrow:  # implicit output: the labels seen once, in alphabetical order
        out = "".join(sorted(c for c in set(la + lb) if (la + lb).count(c) == 1))
    va, vb = b.val(x), b.val(y)
    sizes = dict(zip(la, va.shape))
    if (len(set(la)), len(set(lb)), len(set(out))) != (len(la), len(lb), len(out)) or any(
        sizes.setdefault(c, n) != n for c, n in zip(lb, vb.shape)
    ):
        raise _Skip  # a repeated label (a diagonal) or a broadcast label
    if len(la) != va.dim() or len(lb) != vb.dim() or any(c not in la + lb for c in out):
        raise _Skip
    if any(c not in out and c not in (lb if c in la else la) for c in la + lb):
        raise _Skip  # a label summed within one operand
    if not any(c in lb and c not in out for c in la):  # nothing summed: torch multiplies

        def spread(t, labels):
            moved = b.op("permute", "default", t, [labels.index(c) for c in out if c in labels])
            for i, c in enumerate(out):
                if c not in labels:
                    moved = b.op("unsqueeze", "default", moved, i)
            return moved

        return b.op("mul", "Tensor", spread(x, la), spread(y, lb))
    batch = [c for c in out if c in la and c in lb]
    left = [c for c in out if c in la and c not in lb]
    right = [c for c in out if c in lb and c not in la]
    summed = [c for c in la if c in lb and c not in out]

    def fold(t, labels, groups):
        order = [labels.index(c) for g in groups for c in g]
        moved = b.op("permute", "default", t, order)
        return _reshape_to(b, moved, [_prod(sizes[c] for c in g) for g in groups])

    prod = b.op(
        "bmm", "default", fold(x, la, (batch, left, summed)), fold(y, lb, (batch, summed, right))
    )
    done = batch + left + right
    unfolded = b.op("view", "default", prod, [sizes[c] for c in done])
    return b.op("permute", "default", unfolded, [done.index(c) for c in out])


_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def _nll(b, logp, target, weight, ignore_index, reduction):
    if b.val(logp).dim() > 2 or reduction not in _REDUCTION:
        raise _Skip  # torch's nll_loss2d for images
    out = b.op("nll_loss_forward", "default", logp, target, weight, _REDUCTION[reduction],
               ignore_index)  # fmt: skip
    loss = b.emit(operator.getitem, (out, 0))
    b.emit(operator.getitem, (out, 1))  # torch's graph reads the total weight too
    return loss


def _nll_loss(b, input, target, weight=None, size_average=None, ignore_index=-100,
              reduce=None, reduction="mean"):  # fmt: skip
    if size_average is not None or reduce is not None:
        raise _Skip
    return _nll(b, input, target, weight, ignore_index, reduction)


def _cross_entropy(b, input, target, weight=None, size_average=None, ignore_index=-100,
                   reduce=None, reduction="mean", label_smoothing=0.0):  # fmt: skip
    if size_average is not None or reduce is not None or label_smoothing:
        raise _Skip
    if b.val(target).is_floating_point() or b.val(input).dim() > 2:
        raise _Skip  # class probabilities, or images
    if reduction not in _REDUCTION:
        raise _Skip
    logp = b.op("_log_softmax", "default", input, 1 if b.val(input).dim() == 2 else 0, False)
    return _nll(b, logp, target, weight, ignore_index, reduction)


def _mse_loss(b, input, target, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None or reduction not in _REDUCTION:
        raise _Skip
    if b.val(input).shape != b.val(target).shape:
        raise _Skip  # torch warns and broadcasts first
    tail = [] if reduction == "mean" else [_REDUCTION[reduction]]
    return b.op("mse_loss", "default", input, target, *tail)


def _embedding(b, input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
               scale_grad_by_freq=False, sparse=False):  # fmt: skip
    if max_norm is not None or sparse:
        raise _Skip
    tail = []
    if padding_idx is not None:  # F.embedding counts a negative index from the end
        tail = [padding_idx % b.val(weight).shape[0] if padding_idx < 0 else padding_idx]
    elif scale_grad_by_freq:
        tail = [-1]
    if scale_grad_by_freq:
        tail.append(True)
    return b.op("embedding", "default", weight, input, *tail)


def _clamp(b, x, min=None, max=None):
    if b.is_tensor(min) or b.is_tensor(max):
        raise _Skip
    return b.op("clamp", "default", x, min, max)


def _where(b, condition, input=None, other=None):
    if input is None or other is None:
        raise _Skip
    ref = input if b.is_tensor(input) else other
    if not b.is_tensor(ref):
        raise _Skip

    def as_tensor(v):
        if b.is_tensor(v):
            return v
        e = _e()
        dtype = b.val(ref).dtype
        return b.op(
            "scalar_tensor", "default", v, dtype=dtype, layout=e.strided, device=e.device("cpu")
        )

    return b.op("where", "self", condition, as_tensor(input), as_tensor(other))


def _layer_norm(b, x, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = _ints(normalized_shape, 1)
    out = b.op("native_layer_norm", "default", x, shape, weight, bias, eps)
    items = [b.emit(operator.getitem, (out, k)) for k in range(3)]
    return items[0]


def _conv(n):
    def rule(b, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if isinstance(padding, str):
            raise _Skip
        args = [_ints(stride, n), _ints(padding, n), _ints(dilation, n), False, [0] * n, groups]
        return b.op("convolution", "default", x, weight, bias, *args)

    return rule


def _conv_transpose(n):
    def rule(b, x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
             dilation=1):  # fmt: skip
        args = [_ints(stride, n), _ints(padding, n), _ints(dilation, n), True,
                _ints(output_padding, n), groups]  # fmt: skip
        return b.op("convolution", "default", x, weight, bias, *args)

    return rule


def _max_pool2d(b, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):  # fmt: skip
    if return_indices:  # before anything is emitted: TorchDispatchMode runs what is emitted
        raise _Skip
    args = [_ints(kernel_size, 2)]
    tail = [
        [] if stride is None else _ints(stride, 2),
        _ints(padding, 2),
        _ints(dilation, 2),
        ceil_mode,
    ]
    defaults = [[], [0, 0], [1, 1], False]
    while tail and tail[-1] == defaults[len(tail) - 1]:
        tail.pop()
    out = b.op("max_pool2d_with_indices", "default", x, *args, *tail)
    values = b.emit(operator.getitem, (out, 0))
    b.emit(operator.getitem, (out, 1))  # torch's graph reads the indices too
    return values


def _max_min(name):
    def rule(b, x, dim=None, keepdim=False):
        if dim is None or not isinstance(dim, int) or not b.is_tensor(x):
            raise _Skip
        out = b.op(name, "dim", x, dim, *([True] if keepdim else []))
        # torch's graph reads both results (values, indices), used or not
        return tuple(b.emit(operator.getitem, (out, k)) for k in range(2))

    return rule


def _dropout(b, x, p=0.5, training=True, inplace=False):
    if training and p > 0:
        raise _Skip
    return x


def _getitem(b, x, index):
    if isinstance(x, tuple) and isinstance(index, int):
        return x[index]  # an element of a rule's tuple result (max.dim's values/indices)
    if not b.is_tensor(x):
        raise _Skip
    items = index if isinstance(index, tuple) else (index,)
    if any(not isinstance(i, (int, slice)) or isinstance(i, bool) for i in items):
        raise _Skip
    if len(items) > b.val(x).dim():
        raise _Skip
    out, dim = x, 0
    for i in items:
        if isinstance(i, int):
            out = b.op("select", "int", out, dim, i)
            continue
        if i == slice(None):
            dim += 1
            continue
        if not all(v is None or isinstance(v, int) for v in (i.start, i.stop, i.step)):
            raise _Skip
        start = 0 if i.start is None else i.start
        stop = _INT_MAX if i.stop is None else i.stop
        args = [out, dim, start, stop] + ([i.step] if i.step not in (None, 1) else [])
        out = b.op("slice", "Tensor", *args)
        dim += 1
    return out


def _to_dtype(b, x, dtype):
    if b.val(x).dtype == dtype:
        return x
    return b.op("_to_copy", "default", x, dtype=dtype)


def _to(b, x, *args, **kwargs):
    dtypes = [a for a in list(args) + list(kwargs.values()) if isinstance(a, _e().dtype)]
    others = [a for a in list(args) + list(kwargs.values()) if not isinstance(a, _e().dtype)]
    if len(dtypes) != 1 or any(not isinstance(a, bool) or a for a in others):
        raise _Skip
    return _to_dtype(b, x, dtypes[0])


def _cast(dtype_name):
    def rule(b, x, memory_format=None):
        return _to_dtype(b, x, getattr(_e(), dtype_name))

    return rule


def _zeros_like(b, x, *, dtype=None, **kwargs):
    if dtype is not None or kwargs:
        raise _Skip
    return b.op("zeros_like", "default", x, pin_memory=False)


def _gelu(b, x, approximate="none"):
    if approximate == "none":
        return b.op("gelu", "default", x)
    return b.op("gelu", "default", x, approximate=approximate)


def _transpose(b, x, dim0, dim1):
    return b.op("transpose", "int", x, dim0, dim1)


_RULES = {
    "mean": _reduce("mean", "default", "dim"),
    "sum": _reduce("sum", "default", "dim_IntList"),
    "amax": _amax,
    "var": _var,
    "softmax": _softmax("_softmax"),
    "log_softmax": _softmax("_log_softmax"),
    "div": _div,
    "truediv": _div,
    "pow": _pow,
    "t": _unary("t"),
    "clone": _unary("clone"),
    "silu": _unary("silu"),
    "gelu": _gelu,
    "transpose": _transpose,
    "permute": lambda b, x, *dims: b.op("permute", "default", x, _shape(dims)),
    "view": _view,
    "reshape": _reshape,
    "flatten": _flatten,
    "unsqueeze": lambda b, x, dim: b.op("unsqueeze", "default", x, dim),
    "squeeze": _squeeze,
    "expand": lambda b, x, *sizes: b.op("expand", "default", x, _shape(sizes)),
    "stack": _stack,
    "matmul": _matmul,
    "einsum": _einsum,
    "linear": _linear,
    "clamp": _clamp,
    "where": _where,
    "layer_norm": _layer_norm,
    "cross_entropy": _cross_entropy,
    "nll_loss": _nll_loss,
    "mse_loss": _mse_loss,
    "embedding": _embedding,
    "conv1d": _conv(1),
    "conv2d": _conv(2),
    "conv3d": _conv(3),
    "conv_transpose1d": _conv_transpose(1),
    "conv_transpose2d": _conv_transpose(2),
    "conv_transpose3d": _conv_transpose(3),
    "max_pool2d": _max_pool2d,
    "dropout": _dropout,
    "max": _max_min("max"),
    "min": _max_min("min"),
    "getitem": _getitem,
    "to": _to,
    "float": _cast("float32"),
    "double": _cast("float64"),
    "half": _cast("float16"),
    "long": _cast("int64"),
    "int": _cast("int32"),
    "zeros_like": _zeros_like,
}
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    _RULES[_n] = _compare(_n)
    _RULES[f"__{_n}__"] = _compare(_n)
# Tensor's operator methods, as the capture records `a / b`, `-a`, `a ** 2`, `a @ b`
_RULES.update(
    {
        "__truediv__": _div,
        "__neg__": _unary("neg"),
        "neg": _unary("neg"),
        "__pow__": _pow,
        "__rpow__": lambda b, a, base: _pow(b, base, a),
        "__matmul__": _matmul,
        "__getitem__": _getitem,
    }
)


def _bitwise(name):
    def rule(b, a, other):
        if not (b.is_tensor(a) and b.is_tensor(other)):
            raise _Skip
        return b.op(name, "Tensor", a, other)

    return rule


for _n in ("and", "or", "xor"):
    _RULES[f"__{_n}__"] = _bitwise(f"bitwise_{_n}")
    _RULES[f"{_n}_"] = _bitwise(f"bitwise_{_n}")
    _RULES[f"bitwise_{_n}"] = _bitwise(f"bitwise_{_n}")
_RULES["__invert__"] = _unary("bitwise_not")
_RULES["invert"] = _unary("bitwise_not")


def _name(node):
    if node.op == "call_method":
        return node.target
    if node.op != "call_function":
        return None
    if isinstance(getattr(node.target, "overloadpacket", None), object) and hasattr(
        node.target, "_schema"
    ):
        return None  # already an overload
    name = getattr(node.target, "__name__", None)
    return name if isinstance(name, str) else None


def strip_defaults(node):
    """Drops trailing positional arguments equal to the overload's defaults, as torch prints
    them (``cat.default([a, b])`` for ``cat(..., 0)``)."""
    schema = getattr(node.target, "_schema", None)
    if node.op != "call_function" or schema is None:
        return
    params = [a for a in schema.arguments if not a.kwarg_only]
    args = list(node.args)
    while args and len(args) <= len(params):
        p = params[len(args) - 1]
        a = args[-1]
        same = p.has_default and (
            a == p.default_value
            or (isinstance(a, (list, tuple)) and list(a) == _ints(p.default_value, len(a)))
        )
        if not same or type(a) is bool and not isinstance(p.default_value, bool):
            break
        args.pop()
    node.args = tuple(args)


def rewrite(graph):
    """A copy of ``graph`` with its calls as torch's make_fx names them (see the module
    docstring), and the copied calls no rule covered (for the registry lookup)."""
    from ..graph import Graph
    from ..node import map_arg

    new = Graph()
    env, rest = {}, []
    for node in graph.nodes:
        name = _name(node)
        rule = _RULES.get(name) if name else None
        if rule is not None:
            args = map_arg(node.args, lambda n: env[n])
            kwargs = map_arg(dict(node.kwargs), lambda n: env[n])
            builder = _Builder(new)
            try:
                out = rule(builder, *args, **kwargs)
            except (_Skip, TypeError, AttributeError, ValueError, RuntimeError, IndexError):
                for made in reversed(builder.made):
                    new.erase_node(made)
            else:
                env[node] = out
                continue
        copy = new.node_copy(node, lambda n: env[n])
        env[node] = copy
        if node.op in ("call_function", "call_method"):
            rest.append(copy)
    return new, rest
