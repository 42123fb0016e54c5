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

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(namedtuple("Match", "anchor nodes_map")):
    """Match(anchor, nodes_map)

    One occurrence: ``anchor`` is the pattern's node the match was found from (its first output
    used only by the output, as torch's), ``nodes_map`` maps each pattern node to the graph node
    it matched.
    """

    __slots__ = ()


class ReplacedPatterns(namedtuple("ReplacedPatterns", "anchor nodes_map replacements")):
    """ReplacedPatterns(anchor, nodes_map, replacements)

    One replaced occurrence (``replace_pattern_with_filters``): as ``Match``, plus the nodes
    inserted in its place.
    """

    __slots__ = ()


class InternalMatch:
    """What a match filter receives: ``anchors`` (the pattern's output nodes used only by its
    output, from which torch's matcher searches), ``nodes_map`` (pattern node -> graph node),
    ``placeholder_nodes`` (the graph values bound to the pattern's inputs) and
    ``returning_nodes``."""

    def __init__(self, anchors, nodes_map, placeholder_nodes, returning_nodes):
        self.anchors = anchors
        self.nodes_map = nodes_map
        self.placeholder_nodes = placeholder_nodes
        self.returning_nodes = returning_nodes

    def __repr__(self):
        return f"InternalMatch(anchors={self.anchors}, nodes_map={self.nodes_map})"


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
        out = next(n for n in pattern.nodes if n.op == "output")
        self.anchors = [n for n in out.all_input_nodes if len(n.users) == 1]

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
        if isinstance(a, Node) and a.op == "placeholder" and not isinstance(b, Node):
            # a pattern input matches a literal argument too (torch's matcher does)
            if isinstance(b, (tuple, list, dict, slice)):
                return False
            if a in self.map:
                bound = self.map[a]
                return not isinstance(bound, Node) and type(bound) is type(b) and bound == b
            self.map[a] = b
            return True
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
        if getattr(self, "ignore_literals", False) and isinstance(a, (int, float, bool)):
            return isinstance(b, (int, float, bool))
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
    done = _rewrite(gm, pattern, replacement, ())
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map) for r in done]


def replace_pattern_with_filters(
    gm,
    pattern,
    replacement=None,
    match_filters=None,
    ignore_literals=False,
    replacement_callback=None,
    node_name_match="",
):
    """replace_pattern_with_filters(gm, pattern, replacement=None, match_filters=None,
        ignore_literals=False, replacement_callback=None, node_name_match='')
        -> list[ReplacedPatterns]

    ``replace_pattern`` that keeps only the occurrences every ``match_filters`` function accepts
    (``f(match, original_graph, pattern_graph) -> bool``, ``match`` an InternalMatch);
    ``replacement_callback(match, original_graph, pattern_graph)`` may give the replacement per
    occurrence instead of ``replacement``. With ``ignore_literals``, the pattern's constant
    arguments match any constant.
    """
    if replacement is None and replacement_callback is None:
        raise ValueError(
            "replace_pattern_with_filters: expected a replacement or a replacement_callback"
        )
    return _rewrite(
        gm,
        pattern,
        replacement,
        tuple(match_filters or ()),
        ignore_literals=ignore_literals,
        callback=replacement_callback,
        name_match=node_name_match,
    )


def _rewrite(
    gm, pattern, replacement, filters, ignore_literals=False, callback=None, name_match=""
):
    graph = gm.graph
    pattern_graph, _ = _as_graph(pattern)
    matcher = _Matcher(pattern_graph)
    matcher.ignore_literals = ignore_literals
    matches, taken = [], set()
    for node in list(graph.nodes):
        if node.op in ("placeholder", "output") or node in taken:
            continue
        if name_match and name_match not in node.name:
            continue
        found = matcher.match_at(node)
        if found is None:
            continue
        mapped = {g for p, g in found.items() if p.op != "placeholder"}
        if mapped & taken:
            continue
        internal = InternalMatch(
            list(matcher.anchors),
            found,
            [found[p] for p in matcher.placeholders],
            [found[r] for r in matcher.returns],
        )
        if not all(f(internal, graph, pattern_graph) for f in filters):
            continue
        taken |= mapped
        matches.append((node, found, internal))
    replaced = {}  # a node an earlier replacement removed -> the node that took its place
    done = []
    anchor = matcher.anchors[0] if matcher.anchors else matcher.returns[-1]
    for last, found, internal in matches:
        repl = callback(internal, graph, pattern_graph) if callback is not None else replacement
        repl_graph, repl_module = _as_graph(repl)
        repl_placeholders = [n for n in repl_graph.nodes if n.op == "placeholder"]
        if len(repl_placeholders) != len(matcher.placeholders):
            raise ValueError(
                "replace_pattern: expected the replacement to take as many inputs as the "
                f"pattern ({len(matcher.placeholders)}); got {len(repl_placeholders)}"
            )
        match = Match(anchor=anchor, nodes_map=found)
        new_nodes = _replace(
            gm, graph, match, last, matcher, repl_graph, repl_placeholders, repl_module, replaced
        )
        done.append(ReplacedPatterns(anchor, found, new_nodes))
    gm.recompile()
    return done


def _replace(gm, graph, match, last, matcher, repl_graph, repl_placeholders, repl_module, replaced):
    nm = match.nodes_map
    val_map = {
        r: replaced.get(nm[p], nm[p]) for r, p in zip(repl_placeholders, matcher.placeholders)
    }
    new_nodes = []
    returned = [nm[r] for r in matcher.returns]
    order = {n: i for i, n in enumerate(graph.nodes)}
    users = [u for r in returned for u in r.users if u not in nm.values()]
    point = min(users, key=order.__getitem__) if users else last
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
            new_nodes.append(new)
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
    return new_nodes
