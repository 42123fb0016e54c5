"""Pickling of Graphs as plain data: each node's op, name, target and arguments, with node
references as indices. Loading rebuilds the Graph node by node (a GraphModule then generates its
code from it): no source text is stored or executed. ember's compiled functions cannot be pickled
by reference, so callables of ember's public namespaces are stored by their qualified names."""

import pickle

from .._function_ref import load_function
from ._codegen import ember_qualified_name
from ._namespace import is_identifier
from .node import map_aggregate

_FORMAT = 1


class _NodeRef:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __reduce__(self):
        return (_NodeRef, (self.index,))


class _EmberRef:
    """A callable of ember's namespaces, by its qualified name (``ember.relu``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (_EmberRef, (self.name,))

    def resolve(self):
        return load_function(self.name)


def _encode_value(v, index):
    from .node import Node

    if isinstance(v, Node):
        return _NodeRef(index[v])
    if callable(v) and not isinstance(v, type):
        q = ember_qualified_name(v)
        if q is not None:
            return _EmberRef(q)
    return v


def _picklable(v):
    try:
        pickle.dumps(v)
    except Exception:
        return False
    return True


def graph_state(graph):
    """A picklable description of ``graph``."""
    index = {}
    nodes = []
    for i, n in enumerate(graph.nodes):
        index[n] = i
        enc = lambda v: _encode_value(v, index)  # noqa: E731
        target = n.target if isinstance(n.target, str) else _encode_value(n.target, index)
        meta = {k: v for k, v in n.meta.items() if _picklable(v)}
        nodes.append(
            (n.op, n.name, target, map_aggregate(n.args, enc), map_aggregate(n.kwargs, enc), meta)
        )
    return {"format": _FORMAT, "nodes": nodes}


def graph_from_state(state):
    """The Graph that ``graph_state`` described."""
    from .graph import Graph

    if not isinstance(state, dict) or state.get("format") != _FORMAT:
        raise pickle.UnpicklingError("ember.fx: unknown Graph pickle format")
    g = Graph()
    made = []

    def dec(v):
        if isinstance(v, _NodeRef):
            return made[v.index]
        if isinstance(v, _EmberRef):
            return v.resolve()
        return v

    for op, name, target, args, kwargs, meta in state["nodes"]:
        if not is_identifier(name):
            raise pickle.UnpicklingError(f"ember.fx: invalid node name {name!r}")
        if isinstance(target, str) and op != "output":
            if not all(is_identifier(p) or p.isdigit() for p in target.lstrip("*").split(".")):
                raise pickle.UnpicklingError(f"ember.fx: invalid node target {target!r}")
        target = dec(target)
        n = g.create_node(op, target, map_aggregate(args, dec), map_aggregate(kwargs, dec), name)
        if n.name != name:
            raise pickle.UnpicklingError(f"ember.fx: duplicate node name {name!r}")
        n.meta = dict(meta)
        made.append(n)
    return g
