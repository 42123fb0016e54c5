"""split_module: cut a GraphModule into submodules by a per-node partition number, as
torch.fx.passes.split_module does.

Each partition becomes a GraphModule ``submod_<p>`` whose inputs are the values it reads from
the original placeholders, non-module attributes or other partitions and whose outputs are the
values other partitions (or the original output) read from it; the returned module's graph
reads the placeholders and attributes, then calls the submodules in torch's order (a
depth-first topological order, the last ready partition first, or the partitions' first-use
order with ``keep_original_order``). Inside a partition the nodes get fresh names from their
targets and submodule targets ``a.b`` become ``a_b``, as torch's do."""

import inspect
import operator

from ...nn.modules.module import Module
from ..graph import Graph
from ..graph_module import GraphModule
from ..node import map_arg

__all__ = ["Partition", "split_module"]


class Partition:
    """Partition(name)

    One partition of ``split_module``: the names of its nodes, its inputs and outputs (node
    names), the partitions it depends on and those depending on it, and the graph being built.
    """

    def __init__(self, name):
        self.name = name
        self.submod_name = f"submod_{name}"
        self.node_names = []
        self.inputs = {}
        self.outputs = {}
        self.dependencies = {}
        self.dependents = {}
        self.graph = Graph()
        self.environment = {}
        self.targets = {}

    def __repr__(self):
        return (
            f"name: {self.name},\n"
            f" nodes: {self.node_names},\n"
            f" inputs: {self.inputs},\n"
            f" outputs: {self.outputs},\n"
            f" partitions depended on: {self.dependencies},\n"
            f" partition dependents: {self.dependents}"
        )


def _qualname_attr(mod, qualname):
    value = mod
    for atom in qualname.split("."):
        if not hasattr(value, atom):
            raise AttributeError(f"Node target {qualname} not found!")
        value = getattr(value, atom)
    return value


def split_module(
    m,
    root_m,
    split_callback,
    qualname_map=None,
    keep_original_order=False,
    keep_original_node_name=False,
    keep_original_input_name=True,
    *,
    partition_affix=None,
    tuple_return=False,
):
    """split_module(m, root_m, split_callback, qualname_map=None, keep_original_order=False,
        keep_original_node_name=False, keep_original_input_name=True, *, partition_affix=None,
        tuple_return=False) -> GraphModule

    Splits ``m`` (a GraphModule) into submodules ``submod_<p>``, ``p = split_callback(node)``
    called once for each node that is not a placeholder, get_attr or output. ``root_m`` is the
    module ``m`` was traced from. ``qualname_map``, if a dict, receives
    ``'submod_<p>.<a_b>' -> '<a.b>'`` for each submodule a partition calls. The result computes
    what ``m`` computes; its ``meta['partition_names']`` holds the submodules' names.
    """
    partitions = {}
    part_of = {}  # node -> partition name
    orig = {}
    for node in m.graph.nodes:
        orig[node.name] = node
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        name = str(split_callback(node))
        if partition_affix is not None:
            name = f"{partition_affix}_{name}"
        part = partitions.get(name)
        if part is None:
            part = partitions[name] = Partition(name)
        part.node_names.append(node.name)
        part_of[node] = name

    def record_use(def_node, use_node):
        defined = part_of.get(def_node)
        used = part_of.get(use_node)
        if defined == used:
            return
        if defined is not None:
            partitions[defined].outputs.setdefault(def_node.name)
            if used is not None:
                partitions[defined].dependents.setdefault(used)
        if used is not None:
            partitions[used].inputs.setdefault(def_node.name)
            if defined is not None:
                partitions[used].dependencies.setdefault(defined)

    for node in m.graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            continue
        if node.op == "output":
            map_arg(node.args[0], lambda n: record_use(n, None))
            continue
        map_arg(node.args, lambda n, node=node: record_use(n, node))
        map_arg(node.kwargs, lambda n, node=node: record_use(n, node))

    first_use_order = list(partitions)
    pending = {name: dict(p.dependencies) for name, p in partitions.items()}
    ready = [name for name, deps in pending.items() if not deps]
    topo = []
    while ready:
        name = ready.pop()
        topo.append(name)
        for dependent in partitions[name].dependents:
            pending[dependent].pop(name)
            if not pending[dependent]:
                ready.append(dependent)
    if len(topo) != len(partitions):
        raise RuntimeError("cycle exists between partitions!")

    for name in topo:
        _add_partition_inputs(partitions[name], orig, m, keep_original_input_name)

    for node in m.graph.nodes:
        name = part_of.get(node)
        if name is None:
            continue
        part = partitions[name]
        args = map_arg(node.args, lambda n, env=part.environment: env[n])
        kwargs = map_arg(node.kwargs, lambda n, env=part.environment: env[n])
        target = node.target
        if node.op in ("call_module", "get_attr"):
            target = node.target.replace(".", "_")
            part.targets[target] = _qualname_attr(m, node.target)
            if qualname_map is not None:
                qualname_map[f"{part.submod_name}.{target}"] = node.target
        new = part.graph.create_node(
            node.op,
            target,
            args,
            kwargs,
            name=node.name if keep_original_node_name else None,
            type_expr=node.type,
        )
        new.meta = node.meta.copy()
        part.environment[node] = new

    base = Graph()
    env = {}  # original node name -> node of the base graph
    attrs = {}
    placeholders = [n for n in m.graph.nodes if n.op == "placeholder"]
    built = set()

    def build(node):
        if node in built:
            return
        built.add(node)
        if node.op == "placeholder":
            default = node.args[0] if node.args else inspect.Signature.empty
            if keep_original_node_name:
                args = () if default is inspect.Signature.empty else (default,)
                new = base.create_node("placeholder", node.name, args, type_expr=node.type)
            else:
                new = base.placeholder(node.target, type_expr=node.type, default_value=default)
        elif node.op == "get_attr":
            new = base.get_attr(node.target)
            attrs[node.target] = _qualname_attr(m, node.target)
        else:
            return
        new.meta = node.meta.copy()
        env[node.name] = new

    if not keep_original_order:
        for node in m.graph.nodes:
            build(node)
    for name in first_use_order if keep_original_order else topo:
        part = partitions[name]
        outs = tuple(part.environment[orig[o]] for o in part.outputs)
        part.graph.output(outs[0] if len(outs) == 1 and not tuple_return else outs)
        if keep_original_order:
            for node in placeholders:
                build(node)
            for key in part.inputs:
                build(orig[key])
        attrs[part.submod_name] = GraphModule(part.targets, part.graph)
        call = base.call_module(part.submod_name, tuple(env[i] for i in part.inputs))
        if len(part.outputs) > 1 or (part.outputs and tuple_return):
            for i, out in enumerate(part.outputs):
                env[out] = base.call_function(operator.getitem, (call, i))
        elif part.outputs:
            env[next(iter(part.outputs))] = call
    if keep_original_order and not env:
        for node in m.graph.nodes:
            build(node)
    output = next(n for n in m.graph.nodes if n.op == "output")
    base.output(map_arg(output.args[0], lambda n: env[n.name]))
    result = GraphModule(attrs, base)
    result.meta["partition_names"] = {p.submod_name for p in partitions.values()}
    return result


def _add_partition_inputs(part, orig, m, keep_original_input_name):
    # Inputs that become placeholders come first, then submodules read through get_attr.
    def is_module_attr(key):
        node = orig[key]
        return node.op == "get_attr" and isinstance(_qualname_attr(m, node.target), Module)

    keys = [k for k in part.inputs if not is_module_attr(k)]
    keys += [k for k in part.inputs if is_module_attr(k)]
    new_inputs = {}
    counter = 0
    for key in keys:
        node = orig[key]
        if is_module_attr(key):
            new = part.graph.get_attr(node.target)
            part.targets[node.target] = _qualname_attr(m, node.target)
        else:
            name = key
            if not keep_original_input_name:
                name = f"arg_{counter}"
                counter += 1
            new = part.graph.placeholder(name, type_expr=node.type)
            new_inputs[key] = None
        new.meta = node.meta.copy()
        part.environment[node] = new
    part.inputs = new_inputs
