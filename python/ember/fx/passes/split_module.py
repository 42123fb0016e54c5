"""split_module: cut a GraphModule into submodules by a per-node partition number, as
torch.fx.passes.split_module does.

Each partition becomes a GraphModule ``submod_<n>`` whose inputs are the values it reads from
the original placeholders or other partitions and whose outputs are the values other
partitions (or the original output) read from it; the returned module's graph calls the
submodules in dependency order. get_attr nodes are copied into every partition that reads them."""

import inspect
import operator

from ..graph import Graph, _get_attr
from ..graph_module import GraphModule
from ..node import map_arg

__all__ = ["split_module"]


class _Partition:
    def __init__(self, name):
        self.name = name
        self.nodes = []
        self.inputs = {}  # original node -> None (ordered)
        self.outputs = {}  # original node -> None (ordered)
        self.deps = set()
        self.first = None


def split_module(
    m,
    root_m,
    split_callback,
    qualname_map=None,
    keep_original_order=False,
    keep_original_node_name=False,
    partition_affix=None,
):
    """split_module(m, root_m, split_callback, qualname_map=None, keep_original_order=False,
        keep_original_node_name=False, partition_affix=None) -> GraphModule

    Splits ``m`` (a GraphModule) into submodules ``submod_<p>``, ``p = split_callback(node)``
    for each call node. ``root_m`` is the module ``m`` was traced from (its submodules and
    attributes are what the partitions call and read); ``qualname_map``, if a dict, receives
    ``'submod_<p>.<name>' -> '<name>'`` for the submodules copied. The result computes what
    ``m`` computes.
    """
    graph = m.graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    parts = {}
    part_of = {}
    prefix = f"submod_{partition_affix}_" if partition_affix is not None else "submod_"
    for node in graph.nodes:
        if node.op in ("placeholder", "output", "get_attr"):
            continue
        key = split_callback(node)
        part = parts.get(key)
        if part is None:
            part = parts[key] = _Partition(f"{prefix}{key}")
            part.first = order[node]
        part.nodes.append(node)
        part_of[node] = part

    def source_part(n):
        return None if n.op == "get_attr" else part_of.get(n)

    for part in parts.values():
        for node in part.nodes:
            for inp in node.all_input_nodes:
                src = source_part(inp)
                if inp.op == "get_attr" or src is part:
                    continue
                part.inputs.setdefault(inp)
                if src is not None:
                    src.outputs.setdefault(inp)
                    part.deps.add(src)
    output_node = next(n for n in graph.nodes if n.op == "output")
    for inp in output_node.all_input_nodes:
        src = source_part(inp)
        if src is not None:
            src.outputs.setdefault(inp)

    # dependency order; ties by the partition's first node (or its key when asked)
    ready = sorted(parts.values(), key=lambda p: p.first)
    done, ordered = set(), []
    while len(ordered) < len(ready):
        for p in ready:
            if p.name not in done and all(d.name in done for d in p.deps):
                ordered.append(p)
                done.add(p.name)
                break
        else:
            raise RuntimeError("split_module: expected the partitions to form a DAG; got a cycle")

    top = Graph()
    env = {}  # original node -> node of the top graph
    for node in graph.nodes:
        if node.op == "placeholder":
            new = top.placeholder(node.target, default_value=_default(node))
            new.meta = dict(node.meta)
            env[node] = new
    submodules = {}
    for part in ordered:
        sub = Graph()
        sub_env = {}
        for inp in part.inputs:
            sub_env[inp] = sub.placeholder(inp.name)
        for node in part.nodes:
            for inp in node.all_input_nodes:
                if inp.op == "get_attr" and inp not in sub_env:
                    sub_env[inp] = sub.get_attr(inp.target)
            new = sub.node_copy(node, lambda n: sub_env[n])
            if keep_original_node_name:
                new.name = node.name
            sub_env[node] = new
        outs = [sub_env[o] for o in part.outputs]
        sub.output(outs[0] if len(outs) == 1 else tuple(outs))
        gm = GraphModule(root_m, sub, class_name=part.name)
        submodules[part.name] = gm
        if isinstance(qualname_map, dict):
            for name, _ in gm.named_children():
                qualname_map[f"{part.name}.{name}"] = name
        call = top.call_module(part.name, tuple(env[i] for i in part.inputs))
        if len(outs) == 1:
            env[next(iter(part.outputs))] = call
        else:
            for i, o in enumerate(part.outputs):
                env[o] = top.call_function(operator.getitem, (call, i))
    for node in graph.nodes:
        if node.op == "get_attr" and any(u is output_node for u in node.users):
            env[node] = top.get_attr(node.target)
    top.output(map_arg(output_node.args[0], lambda n: env[n]))
    root = dict(submodules)
    for node in top.nodes:
        if node.op == "get_attr":
            root[node.target] = _get_attr(root_m, node.target)
    return GraphModule(root, top)


def _default(node):
    return node.args[0] if node.args else inspect.Signature.empty
