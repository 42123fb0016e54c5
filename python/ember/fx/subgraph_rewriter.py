"""replace_pattern: find every occurrence of a pattern graph in a GraphModule and replace it with
a replacement graph, as torch.fx.subgraph_rewriter does.

A pattern's placeholders match any value; its other nodes match nodes of the same op and target
whose arguments match in order (constants by equality). A match is used only when the values
computed inside it are not used outside it (only what the pattern returns may be), and matches
do not overlap."""

import copy
from collections import namedtuple

from ._symbolic_trace import symbolic_trace
from .graph import Graph, _has_attr_path
from .graph_module import GraphModule, _copy_attr
from .node import Node, map_arg

__all__ = ["Match", "replace_pattern"]


class Match(namedtuple("Match", "anchor nodes_map")):
    """Match(anchor, nodes_map)

    One occurrence: ``anchor`` is the node of the graph matching the pattern's (last) output,
    ``nodes_map`` maps each pattern node to the graph node it matched.
    """

    __slots__ = ()


def _as_graph(obj):
    if isinstance(obj, GraphModule):
        return obj.graph, obj
    if isinstance(obj, Graph):
        return obj, obj.owning_module
    gm = symbolic_trace(obj)
    return gm.graph, gm


def _outputs(graph):
    out = next(n for n in graph.nodes if n.op == "output")
    ret = out.args[0]
    return list(ret) if isinstance(ret, (tuple, list)) else [ret]


class _Matcher:
    def __init__(self, pattern):
        self.pattern = pattern
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        self.returns = _outputs(pattern)

    def match_at(self, anchor):
        self.map = {}
        self.used = {}
        if not self._node(self.returns[-1], anchor):
            return None
        # The other returned values are matched through the nodes they share with the anchor's
        # subgraph; a returned value not reached that way is not supported.
        if any(r not in self.map for r in self.returns):
            return None
        returned = set(self.returns)
        body = [p for p in self.map if p.op != "placeholder"]
        inside = {self.map[p] for p in body}
        for p in body:
            if p in returned:
                continue
            if any(u not in inside for u in self.map[p].users):
                return None
        return dict(self.map)

    def _node(self, p, g):
        if p in self.map:
            return self.map[p] is g
        if g in self.used:
            return False
        if p.op == "placeholder":
            self.map[p], self.used[g] = g, p
            return True
        if p.op != g.op or p.target != g.target or len(p.args) != len(g.args):
            return False
        if set(p.kwargs) != set(g.kwargs):
            return False
        self.map[p], self.used[g] = g, p
        ok = all(self._arg(a, b) for a, b in zip(p.args, g.args)) and all(
            self._arg(p.kwargs[k], g.kwargs[k]) for k in p.kwargs
        )
        if not ok:
            del self.map[p], self.used[g]
        return ok

    def _arg(self, a, b):
        if isinstance(a, Node):
            return isinstance(b, Node) and self._node(a, b)
        if isinstance(a, (tuple, list)):
            return (
                isinstance(b, (tuple, list))
                and len(a) == len(b)
                and all(self._arg(x, y) for x, y in zip(a, b))
            )
        if isinstance(b, Node):
            return False
        try:
            return bool(a == b) and type(a) is type(b)
        except Exception:
            return False


def replace_pattern(gm, pattern, replacement):
    """replace_pattern(gm, pattern, replacement) -> list[Match]

    Replaces each non-overlapping occurrence of ``pattern`` (a function, Module, Graph or
    GraphModule, traced if needed) in ``gm``'s graph with ``replacement`` (same forms, same
    number of inputs and outputs); recompiles ``gm`` and returns the matches.
    """
    graph = gm.graph
    pattern_graph, _ = _as_graph(pattern)
    repl_graph, repl_module = _as_graph(replacement)
    matcher = _Matcher(pattern_graph)
    repl_placeholders = [n for n in repl_graph.nodes if n.op == "placeholder"]
    if len(repl_placeholders) != len(matcher.placeholders):
        raise ValueError(
            "replace_pattern: expected the replacement to take as many inputs as the pattern "
            f"({len(matcher.placeholders)}); got {len(repl_placeholders)}"
        )
    matches, taken = [], set()
    for node in list(graph.nodes):
        if node.op in ("placeholder", "output") or node in taken:
            continue
        found = matcher.match_at(node)
        if found is None:
            continue
        mapped = {g for p, g in found.items() if p.op != "placeholder"}
        if mapped & taken:
            continue
        taken |= mapped
        matches.append(Match(anchor=node, nodes_map=found))
    replaced = {}  # a node an earlier replacement removed -> the node that took its place
    for match in matches:
        _replace(gm, graph, match, matcher, repl_graph, repl_placeholders, repl_module, replaced)
    gm.recompile()
    return matches


def _replace(gm, graph, match, matcher, repl_graph, repl_placeholders, repl_module, replaced):
    nm = match.nodes_map
    val_map = {
        r: replaced.get(nm[p], nm[p]) for r, p in zip(repl_placeholders, matcher.placeholders)
    }
    returned = [nm[r] for r in matcher.returns]
    order = {n: i for i, n in enumerate(graph.nodes)}
    users = [u for r in returned for u in r.users if u not in nm.values()]
    point = min(users, key=order.__getitem__) if users else match.anchor
    with graph.inserting_before(point):
        for rn in repl_graph.nodes:
            if rn.op == "placeholder":
                continue
            if rn.op == "output":
                new_out = map_arg(rn.args[0], lambda n: val_map[n])
                continue
            if rn.op in ("get_attr", "call_module") and repl_module is not None:
                if not _has_attr_path(gm, rn.target):
                    _copy_attr(repl_module, gm, rn.target)
            new = graph.node_copy(rn, lambda n: val_map[n])
            new.meta = copy.copy(rn.meta)
            val_map[rn] = new
    new_outs = list(new_out) if isinstance(new_out, (tuple, list)) else [new_out]
    if len(new_outs) != len(returned):
        raise ValueError(
            f"replace_pattern: expected the replacement to return {len(returned)} values; "
            f"got {len(new_outs)}"
        )
    for old, new in zip(returned, new_outs):
        old.replace_all_uses_with(new)
        replaced[old] = new
    for p in reversed(list(matcher.pattern.nodes)):
        g = nm.get(p)
        if p.op in ("placeholder", "output") or g is None:
            continue
        if not g.users:
            graph.erase_node(g)
