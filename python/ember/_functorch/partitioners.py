"""Splitting a joint forward+backward graph into a forward and a backward graph
(Note [Partitioning]).

Note [Partitioning]
The joint graph's inputs are ``primals_*`` then ``tangents_*``; its outputs are the forward's
outputs then one gradient (or None) per primal. Every node carries ``meta["phase"]``: "fw" for
the forward (a copy of the captured graph, mutations and random draws included, plus what a
rule emits there, such as dropout's mask) and "bw" for what the derivative formulas emitted.

The forward graph is every "fw" node, in order, returning ``(*outputs, *saved)``. The backward
graph takes ``(*saved, *tangents)`` and returns the gradients. What is *saved* is decided per
forward value the backward reads:
- ``default_partition`` saves each such value as is;
- ``min_cut_rematerialization_partition`` (the default here, a simpler rule than torch's
  min-cut) recomputes cheap values in the backward: a pointwise op or a view whose inputs are
  themselves recomputable or saved is copied into the backward graph, so a chain of pointwise
  ops costs one saved tensor (its first non-recomputable input), not one per op. Random draws,
  in-place ops, reductions, GEMMs and convolutions are never recomputed.
"""

from __future__ import annotations

from ..fx import Graph, GraphModule
from ..fx.node import Node, map_arg
from .derivatives import TABLE, op_name

__all__ = ["default_partition", "min_cut_rematerialization_partition"]


def _is_tensor(x):
    from .._C import Tensor

    return isinstance(x, Tensor)


def recomputable(node):
    """True for a cheap op (pointwise or view) that is safe to run a second time."""
    if node.op not in ("call_function", "call_method"):
        return False
    name = op_name(node)
    if name is None or name.endswith("_") and not name.startswith("__"):
        return False
    if node.kwargs.get("inplace"):
        return False
    rule = TABLE.get(name)
    if not ((rule is not None and rule.kind in ("pointwise", "view")) or name in _CHEAP):
        return False
    return all(_is_tensor(a.meta.get("val")) for a in node.all_input_nodes) and _is_tensor(
        node.meta.get("val")
    )


_CHEAP = frozenset("eq ne lt le gt ge logical_and logical_or logical_not".split())


def _module(graph):
    from ..nn import Module

    return GraphModule(Module(), graph)


def _split(joint_module, num_fwd_outputs, recompute):
    joint = joint_module.graph
    nodes = list(joint.nodes)
    out_node = nodes[-1]
    outs = list(out_node.args[0])
    fw_outs, grads = outs[:num_fwd_outputs], outs[num_fwd_outputs:]
    primals = [n for n in nodes if n.op == "placeholder" and n.name.startswith("primals")]
    tangents = [n for n in nodes if n.op == "placeholder" and n.name.startswith("tangents")]
    is_fw = {
        n: n.op == "placeholder" and n in primals or n.meta.get("phase") == "fw" for n in nodes
    }

    # what the backward needs
    bw_needed, stack = set(), [g for g in grads if isinstance(g, Node)]
    while stack:
        n = stack.pop()
        if n in bw_needed or is_fw.get(n):
            continue
        bw_needed.add(n)
        stack.extend(n.all_input_nodes)
    saved, recomputed = {}, set()

    def resolve(n):
        if n in saved or n in recomputed:
            return
        if recompute and n.op != "placeholder" and recomputable(n):
            recomputed.add(n)
            for a in n.all_input_nodes:
                resolve(a)
        else:
            saved[n] = None

    for n in nodes:
        if n in bw_needed:
            for a in n.all_input_nodes:
                if is_fw.get(a):
                    resolve(a)
    saved_list = [n for n in nodes if n in saved]

    fw = Graph()
    env = {}
    for n in nodes:
        if is_fw.get(n):
            env[n] = fw.node_copy(n, lambda a: env[a])
            env[n].meta = dict(n.meta)
    fw.output(tuple(map_arg(tuple(fw_outs) + tuple(saved_list), lambda a: env[a])))

    bw = Graph()
    benv = {}
    for n in saved_list:
        benv[n] = bw.placeholder(n.name)
        benv[n].meta = dict(n.meta)
    for n in tangents:
        benv[n] = bw.placeholder(n.name)
        benv[n].meta = dict(n.meta)
    for n in nodes:
        if n in recomputed or n in bw_needed and n.op != "placeholder":
            benv[n] = bw.node_copy(n, lambda a: benv[a])
            benv[n].meta = dict(n.meta)
    bw.output(tuple(map_arg(tuple(grads), lambda a: benv[a])))
    return _module(fw), _module(bw)


def default_partition(joint_module, _joint_inputs=None, *, num_fwd_outputs):
    """default_partition(joint_module, _joint_inputs=None, *, num_fwd_outputs) -> (GraphModule, GraphModule)

    Splits a joint graph into forward and backward graphs, saving every forward value the
    backward reads (no recomputation)."""  # noqa: E501
    return _split(joint_module, num_fwd_outputs, recompute=False)


def min_cut_rematerialization_partition(joint_module, _joint_inputs=None, *, num_fwd_outputs):
    """min_cut_rematerialization_partition(joint_module, _joint_inputs=None, *, num_fwd_outputs) -> (GraphModule, GraphModule)

    Splits a joint graph into forward and backward graphs, recomputing chains of pointwise ops
    and views in the backward from their first non-recomputable inputs, which are saved."""  # noqa: E501
    return _split(joint_module, num_fwd_outputs, recompute=True)
