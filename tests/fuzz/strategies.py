"""Hypothesis strategies for fuzz cases: tensors in every dtype and layout, bad arguments,
op_db samples with mutations, and core tensor methods (views, indexing, scatter/gather ...).

The nn.functional cases are in nn_cases.py; ``any_case`` draws from both.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from harness import Case
from hypothesis import strategies as st
from op_db import ALL, OP_DB, Dt, T, is_float, make, quantize

# float32/int64 most often (what programs use), every other dtype still regularly
DTYPES = ("float32",) * 4 + ("int64",) * 2 + ALL
LAYOUTS = ("contiguous",) * 3 + ("transposed", "permuted", "sliced", "expanded")
SIDES = (0, 1, 1, 2, 2, 3, 3, 4, 5)
# sizes and dims that are out of range, negative, or huge enough to overflow a byte count
EDGE_INTS = (-1, -2, -5, 0, 7, 2**33, 2**40, -(2**40), 2**62, 2**63 - 1)
# what a careless caller passes where a tensor (or a number) belongs
BAD_VALUES = ("abc", None, [1.0, 2.0], (2,), 1.5, True, [[1], [2, 3]])


def dtypes():
    return st.sampled_from(DTYPES)


def shapes(min_dims=0, max_dims=4):
    return st.lists(st.sampled_from(SIDES), min_size=min_dims, max_size=max_dims).map(tuple)


def chance(draw, percent):
    return draw(st.integers(0, 99)) < percent


@st.composite
def tensors(draw, shape=None, dtype=None, min_dims=0, max_dims=4, low=-3.0, high=3.0, layout=None):
    """A T of random values in a random memory layout."""
    shape = tuple(draw(shapes(min_dims, max_dims)) if shape is None else shape)
    dtype = dtype or draw(dtypes())
    layout = layout or draw(st.sampled_from(LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if not is_float(dtype):  # a fractional range holds no integer: widen it to one that does
        low, high = math.floor(low), math.ceil(high)
    return laid_out(make(shape, dtype, rng, low, high).values, dtype, layout)


def laid_out(values, dtype, layout):
    """A T in `layout`; for 'expanded' the values repeat along dim 0 (it has stride 0 there)."""
    if layout == "expanded" and values.ndim and values.shape[0]:
        values = np.ascontiguousarray(np.broadcast_to(values[:1], values.shape))
    return T(values, dtype, layout)


def index_tensor(shape, high, rng, dtype="int64", low=0):
    return T(quantize(np.asarray(rng.integers(low, max(high, low + 1), size=shape)), dtype), dtype)


def edge_int(draw, good):
    """`good` most of the time, else an out-of-range, negative or huge int."""
    return draw(st.sampled_from(EDGE_INTS)) if chance(draw, 20) else good


def maybe_bad(draw, good, percent=8):
    """`good`, or (percent % of the time) a value of the wrong type."""
    return draw(st.sampled_from(BAD_VALUES)) if chance(draw, percent) else good


def dim_of(draw, ndim):
    return edge_int(draw, draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1)))


def retype(t: T, dtype: str) -> T:
    """The same values (rounded onto dtype's grid) in another dtype."""
    v = t.values
    if dtype == "bool":
        v = v != 0
    elif not is_float(dtype):
        v = np.clip(np.nan_to_num(v.astype(np.float64)), 0 if dtype == "uint8" else -100, 100)
    return T(quantize(v, dtype), dtype, t.layout)


# ----------------------------------------------------------------------------- op_db samples


@cache
def _samples(name, dtype):
    op = next(o for o in OP_DB if o.name == name)
    return op.samples(dtype)


def _map_t(obj, fn):
    if isinstance(obj, T):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_t(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _map_t(v, fn) for k, v in obj.items()}
    return obj


@st.composite
def op_db_cases(draw):
    """An op_db sample in any dtype and layouts, often mutated: a tensor swapped for another
    shape or dtype, an argument of the wrong type, an int argument out of range, an argument
    missing or extra."""
    op = draw(st.sampled_from(OP_DB))
    dtype = draw(st.sampled_from(ALL))
    supported = dtype in op.dtypes
    samples = _samples(op.name, dtype if supported else op.dtypes[0])
    sample = samples[draw(st.integers(0, len(samples) - 1))]
    args, kwargs = sample.args, dict(sample.kwargs)
    if not supported:
        args, kwargs = _map_t((args, kwargs), lambda t: retype(t, dtype))
    layouts = draw(st.lists(st.sampled_from(LAYOUTS), min_size=8, max_size=8))
    it = iter(layouts * 4)
    args, kwargs = _map_t((args, kwargs), lambda t: laid_out(t.values, t.dtype, next(it)))
    mutated = False
    if chance(draw, 40):
        args, kwargs = _mutate(draw, list(args), kwargs)
        mutated = True
    return Case("op:" + op.name, tuple(args), kwargs, numpy_ok=supported and not mutated)


def _mutate(draw, args, kwargs):
    how = draw(st.sampled_from(("bad_type", "edge_int", "retype", "reshape", "drop", "extra")))
    slots = [("a", i) for i in range(len(args))] + [("k", k) for k in kwargs]
    if not slots or how == "extra":
        args.append(draw(st.sampled_from(BAD_VALUES + EDGE_INTS)))
        return args, kwargs
    if how == "drop":
        if args:
            args.pop()
        return args, kwargs
    where, key = draw(st.sampled_from(slots))
    old = args[key] if where == "a" else kwargs[key]
    if how == "bad_type":
        new = draw(st.sampled_from(BAD_VALUES))
    elif how == "edge_int":
        new = (
            draw(st.sampled_from(EDGE_INTS))
            if isinstance(old, int) or not isinstance(old, T)
            else old
        )
    elif how == "retype":
        new = _map_t(old, lambda t: retype(t, draw(st.sampled_from(ALL))))
    else:
        new = _map_t(old, lambda t: draw(tensors(dtype=t.dtype)))
    if where == "a":
        args[key] = new
    else:
        kwargs[key] = new
    return args, kwargs


# ----------------------------------------------------------------------------- tensor methods


@st.composite
def view_cases(draw):
    x = draw(tensors(min_dims=1))
    n = x.values.size
    how = draw(
        st.sampled_from(
            (
                "view",
                "reshape",
                "expand",
                "permute",
                "transpose",
                "squeeze",
                "unsqueeze",
                "flatten",
                "narrow",
                "select",
                "unfold",
                "movedim",
                "t",
            )
        )
    )
    nd = x.ndim
    if how in ("view", "reshape"):
        shape = _factor_shape(draw, n)
        if chance(draw, 30):
            shape[draw(st.integers(0, len(shape) - 1))] = draw(st.sampled_from(EDGE_INTS))
        # views of permuted memory raise in torch ("view size is not compatible ...")
        return Case("Tensor." + how, (x, *shape), compare="values")
    if how == "expand":
        sizes = [edge_int(draw, draw(st.sampled_from((-1, s, 3)))) for s in x.shape]
        if chance(draw, 30):
            sizes.insert(0, draw(st.sampled_from((0, 2))))
        return Case("Tensor.expand", (x, *sizes))
    if how == "permute":
        perm = list(draw(st.permutations(range(nd))))
        if chance(draw, 25):
            perm[0] = dim_of(draw, nd + 2)
        return Case("Tensor.permute", (x, *perm))
    if how == "transpose":
        return Case("Tensor.transpose", (x, dim_of(draw, nd), dim_of(draw, nd)))
    if how in ("squeeze", "unsqueeze"):
        return Case("Tensor." + how, (x, dim_of(draw, nd + (how == "unsqueeze"))))
    if how == "flatten":
        return Case("Tensor.flatten", (x, dim_of(draw, nd), dim_of(draw, nd)))
    if how == "narrow":
        d = dim_of(draw, nd)
        return Case(
            "Tensor.narrow",
            (
                x,
                d,
                edge_int(draw, draw(st.integers(-2, 3))),
                edge_int(draw, draw(st.integers(0, 3))),
            ),
        )
    if how == "select":
        return Case(
            "Tensor.select", (x, dim_of(draw, nd), edge_int(draw, draw(st.integers(-3, 3))))
        )
    if how == "unfold":
        return Case(
            "Tensor.unfold",
            (
                x,
                dim_of(draw, nd),
                edge_int(draw, draw(st.integers(0, 3))),
                edge_int(draw, draw(st.integers(1, 2))),
            ),
        )
    if how == "movedim":
        return Case("Tensor.movedim", (x, dim_of(draw, nd), dim_of(draw, nd)))
    return Case("Tensor.t", (x,))


def _factor_shape(draw, n):
    shape, rest = [], n
    for f in (2, 3, 5):
        while rest % f == 0 and rest > 1 and chance(draw, 60):
            shape.append(f)
            rest //= f
    shape.append(rest)
    shape = list(draw(st.permutations(shape)))
    if chance(draw, 30):
        shape[draw(st.integers(0, len(shape) - 1))] = -1
    return shape


@st.composite
def index_items(draw, shape):
    """One indexing expression for a tensor of `shape`: ints, slices, None, ..., masks, int
    tensors."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    items, d = [], 0
    for _ in range(draw(st.integers(1, max(1, len(shape)) + 1))):
        size = shape[d] if d < len(shape) else 1
        kind = draw(
            st.sampled_from(("int", "slice", "slice", "none", "ellipsis", "long", "mask", "list"))
        )
        if kind == "int":
            items.append(edge_int(draw, draw(st.integers(-size - 1, size))))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-size - 2, size + 2))
            stop = draw(st.none() | st.integers(-size - 2, size + 2))
            step = draw(st.none() | st.sampled_from((1, 2, 3, -1, 0)))
            items.append(slice(start, stop, step))
        elif kind == "none":
            items.append(None)
            continue
        elif kind == "ellipsis":
            items.append(Ellipsis)
        elif kind == "long":
            items.append(
                index_tensor(draw(shapes(0, 2)), size + (chance(draw, 10)), rng, low=-size)
            )
        elif kind == "mask":
            mask_shape = shape[d : d + 1] if chance(draw, 85) else (size + 1,)
            items.append(T(rng.random(mask_shape) < 0.5, "bool"))
        else:
            items.append([int(i) for i in rng.integers(-size, max(size, 1), size=2)])
        d += 1
    return tuple(items) if len(items) > 1 or chance(draw, 50) else items[0]


@st.composite
def index_cases(draw):
    x = draw(tensors(max_dims=3, layout="contiguous"))
    index = draw(index_items(x.shape))
    if chance(draw, 50):
        return Case("Tensor.__getitem__", (x, index))
    value = draw(
        st.sampled_from((1.5, 2, True))
        | tensors(shape=draw(shapes(0, 2)), dtype=x.dtype)
        | st.sampled_from(BAD_VALUES)
    )
    return Case("setitem", (x, index, value))


@st.composite
def gather_scatter_cases(draw):
    x = draw(tensors(min_dims=1, max_dims=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nd, d = x.ndim, dim_of(draw, x.ndim)
    size = x.shape[d] if -nd <= d < nd else 2
    oob = chance(draw, 10)  # an index past the end: must raise, never read out of bounds
    idx_shape = tuple(
        min(s, draw(st.integers(0, 3))) if chance(draw, 90) else s + 1 for s in x.shape
    )
    idx = index_tensor(idx_shape, size + oob, rng, low=-oob)
    if chance(draw, 10):
        idx = retype(idx, draw(st.sampled_from(("int32", "float32", "bool"))))
    how = draw(
        st.sampled_from(
            (
                "gather",
                "scatter",
                "scatter_add",
                "index_select",
                "index_add",
                "masked_fill",
                "take",
                "index_fill",
                "take_along_dim",
            )
        )
    )
    if how == "gather":
        return Case("gather", (x, d, idx))
    if how == "take_along_dim":
        return Case("take_along_dim", (x, idx), {"dim": d})
    if how in ("scatter", "scatter_add"):
        src = draw(tensors(shape=idx.shape if chance(draw, 85) else (5,), dtype=x.dtype))
        # scatter with repeated indices writes in an unspecified order: compare shapes only
        return Case(how, (x, d, idx, src), compare="values" if how == "scatter_add" else "shape")
    if how in ("index_select", "index_add", "index_fill"):
        flat = index_tensor((draw(st.integers(0, 4)),), size + oob, rng, low=-oob)
        if how == "index_select":
            return Case("index_select", (x, d, flat))
        if how == "index_fill":
            return Case("Tensor.index_fill", (x, d, flat, 2))
        src_shape = tuple(
            flat.values.size if i == d % max(nd, 1) else s for i, s in enumerate(x.shape)
        )
        src = draw(tensors(shape=src_shape, dtype=x.dtype))
        return Case("index_add", (x, d, flat, src))
    if how == "take":
        return Case(
            "take", (x, index_tensor(draw(shapes(0, 2)), x.values.size + oob, rng, low=-oob))
        )
    mask = T(rng.random(x.shape if chance(draw, 90) else (7,)) < 0.5, "bool")
    return Case("Tensor.masked_fill", (x, mask, maybe_bad(draw, 1.5)))


@st.composite
def creation_cases(draw):
    how = draw(
        st.sampled_from(
            (
                "zeros",
                "ones",
                "full",
                "empty",
                "arange",
                "linspace",
                "eye",
                "tensor",
                "to",
                "randn",
                "rand",
                "randint",
            )
        )
    )
    size = [edge_int(draw, draw(st.integers(0, 4))) for _ in range(draw(st.integers(0, 3)))]
    dtype = {"dtype": Dt(draw(st.sampled_from(ALL)))} if chance(draw, 40) else {}
    if how in ("zeros", "ones"):
        return Case(how, tuple(size), dtype)
    if how == "full":
        return Case(
            "full", (size, maybe_bad(draw, draw(st.sampled_from((1.5, 2, True, -1))))), dtype
        )
    if how in ("empty", "randn", "rand"):
        if how != "empty" and "dtype" in dtype and not is_float(dtype["dtype"].name):
            dtype = {}  # ints from randn raise in both; not interesting
        return Case(how, tuple(size), dtype, compare="shape")
    if how == "randint":
        return Case("randint", (edge_int(draw, 0), edge_int(draw, 5), tuple(size)), compare="shape")
    if how == "arange":
        start, end = (
            edge_int(draw, draw(st.integers(-3, 3))),
            edge_int(draw, draw(st.integers(-3, 8))),
        )
        step = draw(st.sampled_from((1, 2, -1, 0, 0.5)))
        return Case("arange", (start, end, step), dtype)
    if how == "linspace":
        return Case(
            "linspace",
            (
                draw(st.integers(-3, 3)),
                draw(st.integers(-3, 3)),
                edge_int(draw, draw(st.integers(0, 6))),
            ),
            dtype,
        )
    if how == "eye":
        return Case("eye", (edge_int(draw, draw(st.integers(0, 4))),), dtype)
    if how == "tensor":
        data = draw(
            st.sampled_from(
                ([1, 2.5], [[1, 2], [3]], [True, 2], [], [[]], 3, "abc", [None], [[1], 2])
            )
        )
        return Case("tensor", (data,), dtype)
    x = draw(tensors())
    return Case("Tensor.to", (x, Dt(draw(st.sampled_from(ALL)))))
