"""The module state a backend's graph reads, as torch 2.13's Dynamo hands it over.

With ``inline_inbuilt_nn_modules`` (torch 2.13's default) a compiled module's parameters and
buffers are graph inputs, not attributes: placeholders whose target names their source
(``L_self_modules_fc_parameters_weight_``, node name in lower case), their tensors in
``example_inputs``, and the graph module holds none of them. Dynamo creates a placeholder when
it first realizes a value: a parameter when the attribute is loaded, a frame input when it is
first used, so among one call's arguments the module's tensors come first. ember's capture
reads them as get_attr nodes (its own backends compile those as constants of the graph);
``lift`` rewrites a graph for any other backend and gives the call order between the two."""

from ..fx import Graph, GraphModule, map_arg
from ..nn import Module

__all__ = ["lift", "call_in_order"]


def _source(root, target):
    """torch's placeholder target of the module tensor at ``target`` ('fc.weight') below the
    compiled module ``root``, or None where it is not a parameter or buffer of it."""
    parts, mod = target.split("."), root
    name = "L_self"
    for p in parts[:-1]:
        sub = mod._modules.get(p) if isinstance(mod, Module) else None
        if sub is None:
            return None
        name, mod = f"{name}_modules_{p}", sub
    last = parts[-1]
    if not isinstance(mod, Module):
        return None
    if mod._parameters.get(last) is not None:
        return f"{name}_parameters_{last}_"
    if mod._buffers.get(last) is not None:
        return f"{name}_buffers_{last}_"
    return None


def lift(gm, example, root):
    """(graph module, example inputs, order) for a backend: ``gm``'s get_attr nodes of
    ``root``'s parameters and buffers become placeholders, all placeholders in Dynamo's order;
    ``order[k]`` says where the k-th input comes from (an int: the index among the captured
    graph's inputs; a tensor: that module tensor). None where there is nothing to lift."""
    if root is None:
        return None
    lifted = {}
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            source = _source(root, node.target)
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
            # torch's target of a frame input: its source, L_x_ (the node: l_x_)
            ph.target = "L_" + n.name[2:] if n.name.startswith("l_") else n.target
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


def _attr(gm, target):
    obj = gm
    for p in target.split("."):
        obj = getattr(obj, p)
    return obj


def call_in_order(compiled, order):
    """The captured graph's calling convention over ``compiled``, which takes ``order``'s."""

    def run(*args):
        return compiled(*[args[o] if isinstance(o, int) else o for o in order])

    return run
