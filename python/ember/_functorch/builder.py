"""Emitting graph nodes with real example values: the vocabulary the derivative formulas are
written in (Note [Joint graph values]).

Note [Joint graph values]
A formula is ordinary tensor code over ``V`` handles (``g * x.cos()``, ``g.sum(0)``). Each
operation on a V appends a node to the joint graph *and* computes its value with the example
tensors (grad mode off), so every node of the joint graph has ``meta["val"]`` and formulas can
read static shapes (``x.shape``), as torch's make_fx does with fake tensors. The capture
specializes on shapes, so static shapes are what the graph assumes anyway.
"""

from __future__ import annotations

import operator

from ..fx.node import Node, map_aggregate


def _ember():
    import ember

    return ember


class V:
    """A value of the graph being built: its node and its example value."""

    __slots__ = ("b", "node", "val")

    def __init__(self, b, node, val):
        self.b, self.node, self.val = b, node, val

    # static metadata read from the example value
    @property
    def shape(self):
        return tuple(self.val.shape)

    @property
    def dtype(self):
        return self.val.dtype

    @property
    def ndim(self):
        return self.val.dim()

    def numel(self):
        return self.val.numel()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.b.method(name, self, *args, **kwargs)

    def __repr__(self):
        return f"V({self.node.name})"

    def __add__(self, o):
        return self.b.call(operator.add, self, o)

    def __radd__(self, o):
        return self.b.call(operator.add, o, self)

    def __sub__(self, o):
        return self.b.call(operator.sub, self, o)

    def __rsub__(self, o):
        return self.b.call(operator.sub, o, self)

    def __mul__(self, o):
        return self.b.call(operator.mul, self, o)

    def __rmul__(self, o):
        return self.b.call(operator.mul, o, self)

    def __truediv__(self, o):
        return self.b.call(operator.truediv, self, o)

    def __rtruediv__(self, o):
        return self.b.call(operator.truediv, o, self)

    def __neg__(self):
        return self.b.call(operator.neg, self)

    def __pow__(self, o):
        return self.b.call(operator.pow, self, o)

    def __getitem__(self, idx):
        return self.b.call(operator.getitem, self, idx)


class Builder:
    """Appends nodes to ``graph``; ``phase`` ("fw" or "bw") is recorded in each node's meta."""

    def __init__(self, graph):
        self.graph = graph
        self.phase = "fw"

    def wrap(self, node, val):
        node.meta["val"] = val
        node.meta["phase"] = self.phase
        return V(self, node, val)

    def _emit(self, op, target, fn, args, kwargs):
        ember = _ember()
        vals = map_aggregate((args, kwargs), lambda a: a.val if isinstance(a, V) else a)
        with ember.no_grad():
            val = fn(*vals[0], **vals[1])
        nargs = map_aggregate((args, kwargs), lambda a: a.node if isinstance(a, V) else a)
        node = self.graph.create_node(op, target, tuple(nargs[0]), dict(nargs[1]))
        return self.wrap(node, val)

    def call(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` as a call_function node."""
        return self._emit("call_function", fn, fn, args, kwargs)

    def method(self, name, self_, *args, **kwargs):
        """``self_.name(*args, **kwargs)`` as a call_method node."""

        def fn(s, *a, **k):
            return getattr(s, name)(*a, **k)

        return self._emit("call_method", name, fn, (self_, *args), kwargs)

    def copy(self, node, env):
        """A copy of an existing node, its node arguments mapped through ``env`` (node -> V)."""
        args = map_aggregate(node.args, lambda a: env[a] if isinstance(a, Node) else a)
        kwargs = map_aggregate(node.kwargs, lambda a: env[a] if isinstance(a, Node) else a)
        if node.op == "call_method":
            return self.method(node.target, *args, **kwargs)
        return self.call(node.target, *args, **kwargs)
