"""Mappings of shape and indexing operations: view/reshape, flatten, permute, transpose,
(un)squeeze, cat/stack, split/chunk, expand, indexing (``x[...]``) and sizes (``x.size(0)``)."""

import builtins
import operator

from .. import _C
from ._graph import INT64_MAX, Value, np, numpy_dtype
from ._helpers import dims_list, norm_dim, out_dtype, varargs
from ._registry import function, method, module, operators
from .errors import SymbolicValueError


def _copying_reshape(g, x, parts):
    """Reshape where a 0 in `parts` copies the input's size at that position (ONNX's meaning)."""
    return g.op("Reshape", x, g.shape_tensor(parts))


def _reshape(g, x, sizes):
    """Reshape with torch's meaning of the sizes (a 0 is an empty dimension)."""
    sizes = list(sizes)
    zero = any(isinstance(s, int) and s == 0 for s in sizes)
    return g.op("Reshape", x, g.shape_tensor(sizes), allowzero=1 if zero else None)


@method("view", "reshape")
def _view(g, input, *shape):
    shape = varargs(shape)
    if shape and isinstance(shape[0], _C.dtype):
        raise SymbolicValueError("view: the dtype form (a reinterpreting view) is not supported")
    return _reshape(g, input, shape)


@function("reshape", method=False)
def _reshape_fn(g, input, shape):
    return _reshape(g, input, shape)


@method("view_as", "reshape_as")
def _view_as(g, input, other):
    return g.op("Reshape", input, g.shape_of(other))


@function("flatten")
def _flatten(g, input, start_dim=0, end_dim=-1):
    rank = input.rank
    if rank == 0:
        return _reshape(g, input, [1])
    start, end = norm_dim(start_dim, rank), norm_dim(end_dim, rank)
    if start == end:
        return g.op("Identity", input)
    if start == 1 and end == rank - 1:
        return g.op("Flatten", input, axis=1)
    # Dims before start keep their place (0 copies them), the flattened one is -1.
    parts = [0] * start + [-1] + [g.size(input, d) for d in range(end + 1, rank)]
    return _copying_reshape(g, input, parts)


@function("unflatten")
def _unflatten(g, input, dim, sizes):
    rank = input.rank
    dim = norm_dim(dim, rank)
    parts = [0] * dim + list(sizes) + [g.size(input, d) for d in range(dim + 1, rank)]
    return _copying_reshape(g, input, parts)


module("Flatten")(lambda g, m, x: _flatten(g, x, m.start_dim, m.end_dim))
module("Unflatten")(lambda g, m, x: _unflatten(g, x, m.dim, m.unflattened_size))
module("Identity")(lambda g, m, x, *a, **k: g.op("Identity", x))


@function("permute")
def _permute(g, input, *dims):
    dims = [norm_dim(d, input.rank) for d in varargs(dims)]
    return g.op("Transpose", input, perm=dims)


def transpose(g, x, dim0, dim1):
    rank = x.rank
    perm = list(range(rank))
    a, b = norm_dim(dim0, rank), norm_dim(dim1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return g.op("Transpose", x, perm=perm)


@function("transpose", "swapaxes", "swapdims")
def _transpose(g, input, dim0, dim1):
    return transpose(g, input, dim0, dim1)


@function("t")
def _t(g, input):
    return g.op("Identity", input) if input.rank < 2 else transpose(g, input, 0, 1)


@function("unsqueeze")
def _unsqueeze(g, input, dim):
    return g.unsqueeze(input, [norm_dim(dim, input.rank + 1)])


@function("squeeze")
def _squeeze(g, input, dim=None):
    rank = input.rank
    if dim is None:
        dims = [i for i, d in enumerate(input.shape) if d == 1]
        if any(d is None for d in input.shape):
            raise SymbolicValueError(
                "squeeze: expected static sizes without a dim; got a dynamic one"
            )
    else:
        # As torch: a dim whose size is not 1 is left alone.
        dims = [d for d in dims_list(dim, rank) if input.shape[d] in (1, None)]
    return g.squeeze(input, dims) if dims else g.op("Identity", input)


@function("cat", "concat", "concatenate", method=False)
def _cat(g, tensors, dim=0, *, out=None):
    dtype = out_dtype(g)
    tensors = [g.cast(t, dtype) for t in tensors if not (t.shape == (0,))]
    return g.op("Concat", *tensors, axis=norm_dim(dim, tensors[0].rank))


@function("stack", method=False)
def _stack(g, tensors, dim=0, *, out=None):
    dtype = out_dtype(g)
    d = norm_dim(dim, tensors[0].rank + 1)
    return g.op("Concat", *[g.unsqueeze(g.cast(t, dtype), [d]) for t in tensors], axis=d)


@function("split")
def _split(g, tensor, split_size_or_sections, dim=0):
    d = norm_dim(dim, tensor.rank)
    total = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        if total is None:
            raise SymbolicValueError("split: expected a static size of the split dimension")
        n = split_size_or_sections
        sizes = [n] * (total // n) + ([total % n] if total % n else [])
    else:
        sizes = list(split_size_or_sections)
    if len(sizes) == 1:
        return (g.op("Identity", tensor),)
    return tuple(g.split(tensor, sizes, d))


@function("chunk")
def _chunk(g, input, chunks, dim=0):
    d = norm_dim(dim, input.rank)
    total = input.shape[d]
    if total is None:
        raise SymbolicValueError("chunk: expected a static size of the split dimension")
    size = -(-total // chunks)
    return _split(g, input, size, d)


@function("unbind")
def _unbind(g, input, dim=0):
    d = norm_dim(dim, input.rank)
    pieces = _split(g, input, 1, d)
    return tuple(g.squeeze(p, [d]) for p in pieces)


@function("narrow")
def _narrow(g, input, dim, start, length):
    d = norm_dim(dim, input.rank)
    end = start + length if isinstance(start, int) and isinstance(length, int) else None
    if end is None:
        start_v = g.shape_tensor([start])
        end = g.op("Add", start_v, g.shape_tensor([length]))
        return g.op("Slice", input, start_v, end, g.ints([d]))
    return g.op("Slice", input, g.ints([start]), g.ints([end]), g.ints([d]))


@method("expand")
def _expand(g, input, *sizes):
    sizes = varargs(sizes)
    lead = len(sizes) - input.rank
    parts = [
        g.size(input, i - lead) if (isinstance(s, int) and s == -1) else s
        for i, s in enumerate(sizes)
    ]
    return g.op("Expand", input, g.shape_tensor(parts))


@method("expand_as")
def _expand_as(g, input, other):
    return g.op("Expand", input, g.shape_of(other))


@method("repeat")
def _repeat(g, input, *sizes):
    sizes = varargs(sizes)
    x = input
    if len(sizes) > input.rank:
        x = g.unsqueeze(x, list(range(len(sizes) - input.rank)))
    return g.op("Tile", x, g.shape_tensor(sizes))


@method("contiguous", "clone", "detach", "requires_grad_", "cpu", "cuda")
def _identity(g, input, *args, **kwargs):
    return g.op("Identity", input)


function("clone", "detach", method=False)(_identity)


@method("to", "type", "float", "double", "half", "long", "int", "short", "bool", "byte", "char")
def _to(g, input, *args, **kwargs):
    dtype = out_dtype(g)
    return g.op("Identity", input) if dtype == input.dtype else g.cast(input, dtype)


@function("index_select")
def _index_select(g, input, dim, index):
    return g.op("Gather", input, g.cast(index, _C.int64), axis=norm_dim(dim, input.rank))


@function("gather")
def _gather(g, input, dim, index, *, sparse_grad=False):
    return g.op("GatherElements", input, g.cast(index, _C.int64), axis=norm_dim(dim, input.rank))


@function("full_like", method=False)
def _full_like(g, input, fill_value, **kwargs):
    value = np().array([fill_value], dtype=numpy_dtype(out_dtype(g)))
    return g.op("ConstantOfShape", g.shape_of(input), value=g.onnx.numpy_helper.from_array(value))


function("zeros_like", method=False)(lambda g, input, **kw: _full_like(g, input, 0))
function("ones_like", method=False)(lambda g, input, **kw: _full_like(g, input, 1))


# -- sizes ---------------------------------------------------------------------------------------


@method("size")
def _size(g, input, dim=None):
    if dim is None:
        return tuple(g.size(input, d) for d in range(input.rank))
    return g.size(input, dim)


@operators(builtins.getattr)
def _getattr(g, obj, name):
    if name == "shape":
        return _size(g, obj)
    if name == "T" or name == "mT":
        rank = obj.rank
        perm = (
            list(reversed(range(rank)))
            if name == "T"
            else list(range(rank - 2)) + [rank - 1, rank - 2]
        )
        return g.op("Transpose", obj, perm=perm)
    raise SymbolicValueError(f"ember.onnx.export: the tensor attribute '{name}' is not supported")


# -- indexing --------------------------------------------------------------------------------------


@operators(operator.getitem)
def _getitem(g, obj, index):
    if isinstance(obj, (tuple, list)):
        return obj[index]
    if not isinstance(index, tuple):
        index = (index,)
    masks = [k for k, i in enumerate(index) if isinstance(i, Value) and i.dtype == _C.bool]
    if masks:
        from ._symbolic_mask import mask_select

        k = masks[0]
        rest = [i for j, i in enumerate(index) if j != k]
        if len(masks) > 1 or any(i is not Ellipsis and i != slice(None) for i in rest):
            raise SymbolicValueError(
                "getitem: a boolean mask is supported alone (x[mask]); got the index "
                f"{tuple(index)!r}"
            )
        if any(i is Ellipsis for i in index[:k]):
            raise SymbolicValueError("getitem: expected the boolean mask before any '...'")
        return mask_select(g, obj, index[k], before=k)
    # Expand `...` to the dims it stands for.
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (obj.rank - used) + index[k + 1 :]
    starts, ends, axes, steps = [], [], [], []
    squeeze, unsqueeze, gathers = [], [], []
    dim = 0  # the input dim each index applies to
    out_dim = 0  # where that dim sits in the result (for None)
    for i in index:
        if i is None:
            unsqueeze.append(out_dim)
            out_dim += 1
            continue
        if isinstance(i, slice):
            if not (i.start in (None, 0) and i.stop is None and i.step in (None, 1)):
                starts.append(0 if i.start is None else i.start)
                ends.append(INT64_MAX if i.stop is None else i.stop)
                axes.append(dim)
                steps.append(1 if i.step is None else i.step)
            out_dim += 1
        elif isinstance(i, int):
            starts.append(i)
            ends.append(INT64_MAX if i == -1 else i + 1)
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
        elif isinstance(i, Value):
            gathers.append((dim, i))
            out_dim += 1
        else:
            raise SymbolicValueError(f"getitem: the index {i!r} is not supported")
        dim += 1
    x = obj
    if axes:
        x = g.op(
            "Slice", x, g.shape_tensor(starts), g.shape_tensor(ends), g.ints(axes), g.ints(steps)
        )
        x.dtype, x.shape = obj.dtype, tuple(None for _ in range(obj.rank))
    if len(gathers) > 1:
        raise SymbolicValueError("getitem: more than one tensor index is not supported")
    if squeeze:
        x = g.squeeze(x, squeeze)
    if gathers:
        d, idx = gathers[0]
        d -= sum(1 for s in squeeze if s < d)
        x = g.op("Gather", x, g.cast(idx, _C.int64), axis=d)
    if unsqueeze:
        x = g.unsqueeze(x, unsqueeze)
    return x
