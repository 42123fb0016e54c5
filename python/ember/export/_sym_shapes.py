"""The symbolic sizes an exported program prints (``mul: "f32[s77, 3]"``, ``slice_1: "f32[u0]"``).

ember's export graphs carry concrete example values; torch's carry symbolic ones, and its printed
program shows each node's sizes in terms of the input dims' symbols (``s77``) and the numbers read
from data (``u0``). ``annotate`` writes ``meta["sym_shape"]`` (one int or symbol text per dim) on
the nodes whose sizes it can derive, which ``fx``'s readable code prints instead of the example's:

- an input: the symbols of its dynamic dims;
- a result sized by data (``nonzero``, a boolean-mask index): ``u<k>`` for its length;
- ``slice.Tensor(y, d, None/0, n)`` with ``n`` read from data and known not to exceed ``y``'s dim
  (a ``_check``): ``u<k>`` for dim ``d``; the other dims as ``y``'s;
- a pointwise op: each dim as the broadcast input's dim of the same example size;
- ``linear``: the input's leading dims, then the out features;
- a dim-list reduction (``sum.dim_IntList``, ``mean.dim``, ``amax``...): the kept dims.

Anything else prints its example's sizes, as before (never a wrong symbol: a dim is symbolic only
where one of the rules above derives it)."""

import sys

from . import _unbacked

__all__ = ["annotate"]

_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "prod", "var", "std"})


def _aten(name, overload):
    return getattr(getattr(sys.modules["ember"].ops.aten, name), overload)


def _example_shape(node):
    val = node.meta.get("val")
    return list(val.shape) if hasattr(val, "shape") and hasattr(val, "dtype") else None


def _pointwise(node):
    tags = getattr(node.target, "tags", ())
    return any(getattr(t, "name", "") == "pointwise" for t in tags)


def _broadcast(node, shape, shapes):
    out = list(shape)
    for arg in node.all_input_nodes:
        dims, sizes = shapes.get(arg), _example_shape(arg)
        if dims is None:
            continue
        for i in range(1, min(len(dims), len(out)) + 1):
            if isinstance(dims[-i], str) and isinstance(out[-i], int) and out[-i] == sizes[-i]:
                out[-i] = dims[-i]
    return out


def _reduced(node, shape, shapes):
    src, dims = node.args[0], node.args[1] if len(node.args) > 1 else None
    src_dims = shapes.get(src)
    if src_dims is None or not isinstance(dims, (list, tuple)) or not dims:
        return None
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    gone = {d % len(src_dims) for d in dims}
    out = (
        [1 if i in gone else s for i, s in enumerate(src_dims)]
        if keepdim
        else [s for i, s in enumerate(src_dims) if i not in gone]
    )
    return out if len(out) == len(shape) else None


def _offset_slice(node, shape, shapes):
    """``x[k:]`` of a dim ``s17 + b`` (b >= k): ``s17 + (b - k)``, as torch's printed sizes."""
    import re

    y, d, start, end = (list(node.args) + [0, None, None])[:4]
    if len(node.args) > 4 or not isinstance(start, int) or end not in (None, (1 << 63) - 1):
        return None
    out = list(shapes.get(y, ()))
    d = d % len(shape) if out else 0
    m = re.fullmatch(r"([a-z]\d+) \+ (\d+)", out[d]) if out and isinstance(out[d], str) else None
    if m is None or int(m.group(2)) < start:
        return None
    left = int(m.group(2)) - start
    out[d] = m.group(1) if left == 0 else f"{m.group(1)} + {left}"
    return out


def _sliced(node, shape, shapes, bounds):
    offset = _offset_slice(node, shape, shapes)
    if offset is not None:
        return offset
    y, d, start, end = (list(node.args) + [0, None, None])[:4]
    if not (isinstance(end, type(node)) and "sym_expr" in end.meta and start in (None, 0)):
        return None
    symbol = end.meta["sym_expr"]
    lo, hi = bounds.get(symbol, (None, None))
    y_shape = _example_shape(y)
    d = d % len(shape)
    if isinstance(shapes.get(y, y_shape)[d], str):  # a dynamic input dim: torch prints a Min()
        return None
    if lo is None or lo < 0 or hi is None or hi > y_shape[d]:
        return None
    out = list(shapes.get(y, y_shape))
    out[d] = symbol
    return out


def _linear(node, shape, shapes):
    dims = shapes.get(node.args[0])
    return None if dims is None else [*dims[:-1], shape[-1]]


def annotate(graph, input_dims, bounds):
    """Writes ``meta["sym_shape"]`` on the nodes of ``graph`` whose sizes are symbolic.
    ``input_dims``: {placeholder name: [int or symbol text per dim]}; ``bounds``: {``u<k>``:
    (lo, hi)} of the numbers read from data."""
    slice_op = _aten("slice", "Tensor")
    sym_size = _aten("sym_size", "int")
    counted = {}  # the tensor a data-sized result counts -> its length's symbol
    shapes = {}
    for node in graph.nodes:
        node.meta.pop("sym_shape", None)
        shape = _example_shape(node)
        if shape is None:
            continue
        out = None
        if node.op == "placeholder":
            out = input_dims.get(node.name)
        elif _unbacked._sized_by_data(node):
            reads = [u for u in node.users if u.target is sym_size and "sym_expr" in u.meta]
            key = _unbacked._counted(node)
            symbol = reads[0].meta["sym_expr"] if reads else counted.get(key)
            if symbol is not None:
                counted.setdefault(key, symbol)
                out = [symbol, *shape[1:]]
        elif node.op == "call_function" and node.target is slice_op:
            out = _sliced(node, shape, shapes, bounds)
        elif node.op == "call_function" and node.target is _aten("linear", "default"):
            out = _linear(node, shape, shapes)
        elif node.op == "call_function" and _pointwise(node):
            out = _broadcast(node, shape, shapes)
        elif node.op == "call_function" and _unbacked._name(node) in _REDUCTIONS:
            out = _reduced(node, shape, shapes)
        if out is not None and len(out) == len(shape) and any(isinstance(s, str) for s in out):
            shapes[node] = out
            node.meta["sym_shape"] = out
