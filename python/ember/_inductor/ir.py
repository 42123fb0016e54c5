"""The lowering IR: buffers, element expressions over an iteration shape, and affine views.

Note [Inductor IR]
A lowered tensor value is an expression tree (`Load`, `Const`, `Op`) evaluated at every
coordinate of its shape. A `Load` reads a buffer at `offset + sum(coord[d] * strides[d])`, so
every view that is affine in the coordinates (permute, transpose, expand, unsqueeze, squeeze,
slicing, select, and reshapes that `view_strides` can express) only rewrites the loads: views
cost nothing and fuse with their producers and consumers. A value is *realized* into a buffer
when something other than a generated kernel needs it (an eager call, the graph's outputs) or
when recomputing it in each consumer would cost more than storing it.
"""

from __future__ import annotations

import itertools

_ids = itertools.count()


class Buffer:
    """A tensor that exists at run time: a graph input or parameter, an eager call's result or a
    kernel's output. `strides` are in elements; outputs of kernels and eager calls are contiguous
    (the runtime makes eager results contiguous when a kernel reads them)."""

    __slots__ = ("id", "shape", "strides", "dtype", "kind", "node")

    def __init__(self, shape, dtype, kind, node=None, strides=None):
        self.id = next(_ids)
        self.shape = tuple(shape)
        self.strides = tuple(strides) if strides is not None else contiguous_strides(self.shape)
        self.dtype = dtype
        self.kind = kind  # "input", "param", "kernel", "extern"
        self.node = node

    def __repr__(self):
        return f"buf{self.id}{list(self.shape)}:{self.dtype}"


class Val:
    """A tensor value during lowering: an expression over `shape`. kind is "buffer" (the whole of
    a realized buffer), "view" (a view of realized tensors, materialized by the eager view op) or
    "compute" (needs a kernel)."""

    __slots__ = ("shape", "dtype", "expr", "kind")

    def __init__(self, shape, dtype, expr, kind="compute"):
        self.shape, self.dtype, self.expr, self.kind = tuple(shape), dtype, expr, kind


class Expr:
    __slots__ = ("dtype",)


class Load(Expr):
    __slots__ = ("buf", "offset", "strides")

    def __init__(self, buf, offset, strides, dtype=None):
        self.buf, self.offset, self.strides = buf, offset, tuple(strides)
        self.dtype = dtype or buf.dtype


class Const(Expr):
    __slots__ = ("value",)

    def __init__(self, value, dtype):
        self.value, self.dtype = value, dtype


class Op(Expr):
    """`name` applied to `args`; `params` are the op's Python-number arguments."""

    __slots__ = ("name", "args", "params")

    def __init__(self, name, args, dtype, **params):
        self.name, self.args, self.dtype = name, tuple(args), dtype
        self.params = params


def contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def walk(expr):
    """Every distinct sub-expression once, operands before their users."""
    seen, order = set(), []

    def visit(e):
        if id(e) in seen:
            return
        seen.add(id(e))
        if isinstance(e, Op):
            for a in e.args:
                visit(a)
        order.append(e)

    visit(expr)
    return order


def cost(expr):
    return sum(isinstance(e, Op) for e in walk(expr))


def loads(expr):
    return [e for e in walk(expr) if isinstance(e, Load)]


def remap_loads(expr, fn):
    """A copy of `expr` whose loads are `fn(load) -> (offset, strides)`; None if fn fails."""
    memo = {}

    def go(e):
        if id(e) in memo:
            return memo[id(e)]
        if isinstance(e, Load):
            r = fn(e)
            if r is None:
                raise _NoView
            out = Load(e.buf, r[0], r[1], e.dtype)
        elif isinstance(e, Op):
            out = Op(e.name, [go(a) for a in e.args], e.dtype, **e.params)
        else:
            out = e
        memo[id(e)] = out
        return out

    try:
        return go(expr)
    except _NoView:
        return None


class _NoView(Exception):
    pass


def view_strides(old_shape, old_strides, new_shape):
    """Strides that show a tensor of (old_shape, old_strides) as new_shape without copying, or
    None. Old dims are grouped into runs that are contiguous with each other; each run must be
    covered exactly by consecutive new dims, which then split the run's stride."""
    if numel(old_shape) <= 1:
        return (0,) * len(new_shape) if numel(old_shape) == 1 else contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    vd = len(new_shape) - 1
    base = old_strides[-1]
    run = view = 1
    for td in range(len(old_shape) - 1, -1, -1):
        run *= old_shape[td]
        if td == 0 or (old_shape[td - 1] != 1 and old_strides[td - 1] != run * base):
            while vd >= 0 and (view < run or new_shape[vd] == 1):
                new_strides[vd] = view * base
                view *= new_shape[vd]
                vd -= 1
            if view != run:
                return None
            if td > 0:
                base, run, view = old_strides[td - 1], 1, 1
    return tuple(new_strides) if vd == -1 else None
