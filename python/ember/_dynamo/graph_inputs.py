"""The module state a backend's graph reads, as torch 2.13's Dynamo hands it over.

With ``inline_inbuilt_nn_modules`` (torch 2.13's default) a compiled module's parameters and
buffers are graph inputs, not attributes: placeholders whose target names their source
(``L_self_modules_fc_parameters_weight_``, node name in lower case), their tensors in
``example_inputs``, and the graph module holds none of them. Dynamo creates a placeholder when
it first realizes a value: a parameter when the attribute is loaded, a frame input when it is
first used, so among one call's arguments the module's tensors come first. The same holds for
every tensor the function reaches: a global module's state (``G_net_modules_0_parameters_
weight_``), a tensor held by a global (``G_W_``) or a closure cell (``L_c_``: torch reads cells
as locals), a plain tensor attribute (``L_self_c``). ember's capture reads them as get_attr
nodes (its own backends compile those as constants of the graph); ``lift`` rewrites a graph
for any other backend and gives the call order between the two.

On a dynamic capture torch also hands the backend each symbolic size as an input of its own: a
SymInt placeholder (``s0``; torch's names hash the source, ``s77``) right before the tensor whose
size it is, its example a SymInt, and the graph's reads of that size use it. ``size_inputs``
does the same over ember's graph, whose sizes are read in the graph (``x.size()[0]``)."""

import re

from .. import _C
from ..fx import Graph, GraphModule, map_arg
from ..nn import Module

__all__ = ["call_in_order", "lift", "size_inputs"]


# torch's source prefix of a module the function reaches, by ember's capture label: the
# compiled module itself, a global, a closure cell (torch reads cells as locals: L_inner)
def _prefix(label):
    if label == "":
        return "L_self"
    if label.startswith("G_"):
        return label
    if label.startswith("C_"):
        return "L_" + label[2:]
    return None  # a module passed as an argument: not lifted


def _source(modules, target):
    name = _source_path(modules, target)
    # torch spells the source with each run of non-identifier characters as one "_" and then
    # collapses repeated underscores ("G['_NET']" -> G_NET)
    return re.sub("_+", "_", name) if name is not None else None


def _source_path(modules, target):
    """torch's placeholder target of the tensor the capture reads at ``target``: a parameter,
    buffer or tensor attribute of a module it reaches (``fc.weight`` of the compiled module:
    ``L_self_modules_fc_parameters_weight_``; ``G_net.0.weight``:
    ``G_net_modules_0_parameters_weight_``; ``self.c``: ``L_self_c``), or a tensor held by a
    global (``G_W``: ``G_W_``) or a closure cell (``C_c``: ``L_c_``); None for anything else."""
    parts = target.split(".")
    root = modules.get("")
    if parts[0] in modules:
        label, path = parts[0], parts[1:]
    elif len(parts) == 1 and target[:2] in ("G_", "C_") and target not in vars(root or Module()):
        return _prefix(target) + "_"
    elif root is not None:
        label, path = "", parts
    else:
        return None
    name, mod = _prefix(label), modules[label]
    if name is None or not path:
        return None
    for p in path[:-1]:
        sub = mod._modules.get(p) if isinstance(mod, Module) else None
        if sub is None:
            return None
        # a compiled module's original is an attribute read in torch's source (._orig_mod)
        wrapped = p == "_orig_mod" and type(mod).__name__ == "OptimizedModule"
        name, mod = f"{name}_{p}" if wrapped else f"{name}_modules_{p}", sub
    last = path[-1]
    if not isinstance(mod, Module):
        return None
    if mod._parameters.get(last) is not None:
        return f"{name}_parameters_{last}_"
    if mod._buffers.get(last) is not None:
        return f"{name}_buffers_{last}_"
    if isinstance(mod.__dict__.get(last), _C.Tensor):
        return f"{name}_{last}"
    return None


def lift(gm, example, modules):
    """(graph module, example inputs, order) for a backend: ``gm``'s get_attr nodes of the
    tensors ``_source`` names (``modules``: the capture's {label: module}) become placeholders,
    all placeholders in Dynamo's order;
    ``order[k]`` says where the k-th input comes from (an int: the index among the captured
    graph's inputs; a tensor: that module tensor). None where there is nothing to lift."""
    lifted = {}
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            source = _source(modules, node.target)
            if source is not None:
                lifted[node] = source
    if not lifted:
        return None
    inputs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    placed, order_nodes = set(), []

    def place(n):
        if n not in placed:
            placed.add(n)
            order_nodes.append(n)

    for node in gm.graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            continue
        args = []
        map_arg((node.args, node.kwargs), args.append)
        for n in args:  # attribute loads happen before the call realizes its inputs
            if n in lifted:
                place(n)
        for n in args:
            if n.op == "placeholder":
                place(n)
    for n in inputs:  # unread inputs keep their slots, last
        place(n)
    graph = Graph()
    env, order = {}, []
    for n in order_nodes:
        if n in lifted:
            ph = graph.placeholder(lifted[n].lower())
            ph.target = lifted[n]
            order.append(_attr(gm, n.target))
        else:
            ph = graph.placeholder(n.name)
            ph.target = _frame_target(n)
            order.append(inputs.index(n))
        ph.meta.update(n.meta)
        env[n] = ph
    for node in gm.graph.nodes:
        if node.op == "placeholder" or node in lifted:
            continue
        env[node] = graph.node_copy(node, lambda m: env[m])
    attrs = {
        n.target: _attr(gm, n.target)
        for n in gm.graph.nodes
        if n.op == "get_attr" and n not in lifted
    }
    new_example = [example[o] if isinstance(o, int) else o for o in order]
    return GraphModule(attrs, graph), new_example, order


def _frame_target(node):
    # torch's target of a frame input: its source, L_x_ (the node: l_x_)
    return "L_" + node.name[2:] if node.name.startswith("l_") else node.target


def _attr(gm, target):
    obj = gm
    for p in target.split("."):
        obj = getattr(obj, p)
    return obj


def size_inputs(gm, example, order, dyn_dims, cap):
    """(graph module, example inputs, order) with a SymInt placeholder for each dynamic dim
    ``dyn_dims`` ({input index: dims}) of the captured graph's inputs, before the input's own;
    ``order`` entries for them are ``("size", input index, dim)``. None where there is none."""
    from .capture import SymInt

    if not any(dyn_dims.values()):
        return None
    graph, env, new_order, new_example, count = Graph(), {}, [], [], 0
    sizes = {}  # (placeholder, dim) -> its SymInt placeholder
    for node, o, ex in zip([n for n in gm.graph.nodes if n.op == "placeholder"], order, example):
        for d in dyn_dims.get(o, ()) if isinstance(o, int) else ():
            ph = graph.placeholder(f"s{count}")
            count += 1
            value = ex.size(d)
            ph.meta["example_value"] = ph.meta["val"] = value
            sizes[(node, d)] = ph
            new_order.append(("size", o, d))
            new_example.append(SymInt(value, None, cap, {(o, d)}))
        env[node] = graph.placeholder(node.name)
        env[node].target = _frame_target(node)
        env[node].meta.update(node.meta)
        new_order.append(o)
        new_example.append(ex)
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        sym = _size_read(node, sizes)
        env[node] = sym if sym is not None else graph.node_copy(node, lambda m: env[m])
    gm = GraphModule(_attrs(gm), graph)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return gm, new_example, new_order


def _size_read(node, sizes):
    """The SymInt placeholder ``node`` reads (``x.size(d)``, ``x.size()[d]``), else None."""
    if node.op == "call_method" and node.target == "size" and len(node.args) == 2:
        return sizes.get((node.args[0], node.args[1]))
    if node.op == "call_function" and getattr(node.target, "__name__", "") == "getitem":
        src, d = node.args
        if (
            getattr(src, "op", None) == "call_method"
            and src.target == "size"
            and len(src.args) == 1
        ):
            return sizes.get((src.args[0], d))
    return None


def _attrs(gm):
    return {n.target: _attr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"}


def call_in_order(compiled, order):
    """The captured graph's calling convention over ``compiled``, which takes ``order``'s."""

    def value(args, o):
        if isinstance(o, int):
            return args[o]
        if isinstance(o, tuple):  # a dynamic size
            return args[o[1]].size(o[2])
        return o

    def run(*args):
        return compiled(*[value(args, o) for o in order])

    return run
