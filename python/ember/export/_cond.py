"""cond's branches as graphs of their own, for ember.export.save (Note [Exported program format]
in csrc/ember/export/program.h: an argument ``{"graph": {...}}``).

A freshly exported program's cond node calls the Python branch functions, which may read the
model's parameters through closures. Saving exports each branch on the node's example operands
with a wrapper module that holds the program's own state tensors: a parameter or buffer the
branch reads is then lifted under the wrapper's name and maps back to the outer program's
input, so it becomes an extra operand of the node (torch's cond lifts such tensors the same
way), and a tensor constant the branch reads becomes a constant input of the outer program.
A loaded program's cond node already holds graph modules (``true_graph_0``); they are encoded as
they are."""

import operator
import sys

from .. import fx
from ..nn import Module
from ._ops_flow import is_cond
from .exported_program import tree_flatten
from .graph_signature import InputKind, InputSpec, TensorArgument

__all__ = ["Branch", "branch_graphs", "branch_program", "cond_args"]


def _ember():
    return sys.modules["ember"]


class _Wrapper(Module):
    def __init__(self, fn, state):
        super().__init__()
        self._fn = fn
        for name, value in state.items():
            if isinstance(value, _ember().nn.Parameter):
                self.register_parameter(name, value)
            else:
                self.register_buffer(name, value)
        # The modules the branch reaches (its closure's ``self``, a bound method's owner) become
        # submodules, so the trace reads their parameters as the state above (``weight[0]`` is a
        # select of the parameter, not a constant); registered after it, they add no state.
        for k, mod in enumerate(_branch_modules(fn)):
            self.add_module(f"m{k}", mod)

    def forward(self, *operands):
        return self._fn(*operands)


def _branch_modules(fn):
    found = [getattr(fn, "__self__", None)]
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    return [m for m in found if isinstance(m, Module)]


class Branch:
    """One branch ready to encode: ``graph`` (runtime ops), ``user`` (its placeholders for the
    node's operands, in order), ``lifted`` ({placeholder name: outer input name}),
    ``constants`` ({placeholder name: tensor} read by the branch only) and ``shapes`` (static
    sizes per user placeholder, strings for free dims)."""

    def __init__(self, graph, user, lifted, constants, shapes, gm=None):
        self.graph, self.user, self.lifted = graph, user, lifted
        self.constants, self.shapes, self.gm = constants, shapes, gm


def _export_branch(fn, examples, state, dynamic):
    """``fn`` exported on ``examples`` (with ``Dim.AUTO`` dims when ``dynamic``, falling back to
    static sizes) by a wrapper module holding ``state`` ({wrapper name: tensor})."""
    ember = _ember()
    from . import export

    wrapper = _Wrapper(fn, state)
    if dynamic:
        auto = {
            "operands": tuple({d: ember.export.Dim.AUTO for d in range(t.dim())} for t in examples)
        }
        try:
            return export(wrapper, tuple(examples), dynamic_shapes=auto)
        except Exception:
            pass
    return export(wrapper, tuple(examples))


def _example_values(operands, where):
    examples = []
    for k, a in enumerate(operands):
        val = a.meta.get("val") if isinstance(a, fx.Node) else a
        if not isinstance(val, _ember().Tensor):
            raise RuntimeError(
                f"{where}: cond operand {k} has no example tensor; expected tensor operands"
            )
        examples.append(val)
    return examples


def cond_args(node):
    """(pred, [true_fn, false_fn], operands) of a cond call node, keywords included."""
    args = list(node.args[:4]) + [None] * (4 - len(node.args[:4]))
    for k, name in enumerate(("pred", "true_fn", "false_fn", "operands")):
        if name in node.kwargs:
            args[k] = node.kwargs[name]
    operands = args[3]
    if isinstance(operands, fx.Node):  # a lone tensor, as torch takes it
        operands = (operands,)
    return args[0], args[1:3], list(operands or ())


def branch_graphs(graph, root, input_specs, state, constants, dynamic):
    """Each ``ember.cond`` call of the captured ``graph`` as torch's export records it:
    ``higher_order.cond(pred, true_graph_k, false_graph_k, operands)`` whose branches are
    graph modules of ATen ops added to ``root``, the operands the call's own followed by every
    lifted input (parameter, buffer, constant) a branch reads, each branch's placeholders named
    after them, and its results (always a tuple) read by ``getitem``. ``state`` and
    ``constants`` map the program's lifted inputs to their tensors; a tensor only a branch reads
    becomes a new constant input (``c_lifted_tensor_k``, as torch lifts it)."""
    ember = _ember()
    from .._higher_order_ops.cond import cond_op

    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    wrapper_state, outer = {}, {}  # wrapper name -> tensor / outer placeholder
    for spec in input_specs:
        value = state.get(spec.target, constants.get(spec.target))
        if spec.kind != InputKind.USER_INPUT and value is not None:
            name = f"s{len(wrapper_state)}"
            wrapper_state[name] = value
            outer[name] = placeholders[spec.arg.name]
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is cond_op or not is_cond(node.target):
            continue
        where = f"ember.export: node '{node.name}'"
        pred, fns, operands = cond_args(node)
        examples = _example_values(operands, where)
        subs = [_export_branch(fn, examples, wrapper_state, dynamic) for fn in fns]
        _check_same_outputs(subs)
        extra, maps = [], []  # outer placeholders the branches read, in order of first use
        values = {}  # outer placeholder -> the tensor a branch reads through it
        for sub in subs:
            if sub.graph_signature.buffers_to_mutate:
                raise RuntimeError(
                    f"{where}: a cond branch updates buffers; expected functional branches"
                )
            mapping = {}  # the branch's lifted placeholder -> the outer one
            sub_placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
            for spec, ph in zip(sub.graph_signature.input_specs, sub_placeholders):
                if spec.kind == InputKind.USER_INPUT or not ph.users:
                    continue
                if spec.target in outer:
                    mapping[ph] = outer[spec.target]
                    values[mapping[ph]] = wrapper_state[spec.target]
                else:
                    value = sub.constants.get(spec.target, sub.state_dict.get(spec.target))
                    mapping[ph] = _lift_constant(graph, input_specs, constants, value, outer)
                    values[mapping[ph]] = value
                if mapping[ph] not in extra:
                    extra.append(mapping[ph])
            maps.append(mapping)
        sources = _torch_order(fns, operands, subs, maps, values)
        mods = [_branch_module(sub, sources, mapping, operands) for sub, mapping in zip(subs, maps)]
        with graph.inserting_before(node):
            attrs = []
            for kind, mod in zip(("true", "false"), mods):
                name = f"{kind}_graph_{count}"
                root.add_module(name, mod)
                attrs.append(graph.get_attr(name))
            new = graph.call_function(cond_op, (pred, *attrs, tuple(sources)))
        for attr in attrs:  # printed in the cond's group, as torch's
            attr.meta.update((k, v) for k, v in node.meta.items() if k == "stack_trace")
        count += 1
        val = node.meta.get("val")
        leaves = tuple(val) if isinstance(val, (tuple, list)) else (val,)
        if not all(isinstance(v, ember.Tensor) for v in leaves):
            raise RuntimeError(f"{where}: expected the cond branches to return tensors")
        new.meta.update(node.meta)
        new.meta["val"] = leaves
        if isinstance(val, (tuple, list)):
            node.replace_all_uses_with(new)  # its readers are getitem nodes already
        else:
            with graph.inserting_after(new):
                item = graph.call_function(operator.getitem, (new, 0))
            item.meta.update(node.meta)
            item.meta["val"] = val
            node.replace_all_uses_with(item)
        graph.erase_node(node)


def _check_same_outputs(subs):
    """torch's refusal of branches whose results differ in count, rank or dtype (sizes may
    differ: torch gives the result an unbacked size)."""
    outs = []
    for sub in subs:
        out = next(n for n in sub.graph.nodes if n.op == "output")
        outs.append([n.meta.get("val") for n in tree_flatten(out.args[0])[0]])
    if len(outs[0]) != len(outs[1]):
        raise RuntimeError(
            "Expected to return same number of outputs but got:"
            f"\n  true branch returns {len(outs[0])} item(s)"
            f"\n  false branch returns {len(outs[1])} item(s)"
        )
    for a, b in zip(*outs):
        if not isinstance(a, _ember().Tensor) or not isinstance(b, _ember().Tensor):
            continue
        for what, x, y in (("dim", a.dim(), b.dim()), ("dtype", a.dtype, b.dtype)):
            if x != y:
                raise RuntimeError(
                    "When merging two branches' output in torch.cond,  expected same "
                    f"{what} but got {x} and {y}."
                )


def _lift_constant(graph, input_specs, constants, value, outer):
    """The outer placeholder of a tensor only a branch reads: a new CONSTANT_TENSOR input
    ``c_lifted_tensor_k`` (one per tensor, shared by both branches), before the user inputs."""
    for name, node in outer.items():
        if name.startswith("lifted:") and node.meta.get("val") is value:
            return node
    k = 0
    while f"lifted_tensor_{k}" in constants:
        k += 1
    target = f"lifted_tensor_{k}"
    constants[target] = value
    first = next(
        (i for i, s in enumerate(input_specs) if s.kind == InputKind.USER_INPUT), len(input_specs)
    )
    anchor = next((n for n in graph.nodes if n.op != "placeholder"), None)
    if first < len(input_specs):
        anchor = next(n for n in graph.nodes if n.name == input_specs[first].arg.name)
    with graph.inserting_before(anchor):
        ph = graph.placeholder("c_" + target)
    ph.meta["val"] = value
    input_specs.insert(first, InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(ph.name), target))
    outer["lifted:" + target] = ph
    return ph


def _used(sub, operands, mapping):
    """The outer nodes (operands and lifted inputs) the exported branch ``sub`` reads."""
    used = set(mapping.values())
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    user = [
        ph
        for spec, ph in zip(sub.graph_signature.input_specs, placeholders)
        if spec.kind == InputKind.USER_INPUT
    ]
    used.update(op for op, ph in zip(operands, user) if ph.users)
    return used


def _closure_path(obj, value, depth=3):
    """Dynamo's source name of ``value`` below ``obj`` (``_modules_lin_parameters_weight_``),
    '' for ``obj`` itself, None when not found."""
    if obj is value:
        return ""
    if depth == 0 or not isinstance(obj, Module):
        return None
    for kind in ("_parameters", "_buffers"):
        for name, v in obj.__dict__[kind].items():
            if v is value:
                return f"{kind}_{name}_"
    for name, v in obj.__dict__.items():
        if not name.startswith("_") and v is value:
            return f"_{name}"
    for name, sub in obj._modules.items():
        path = _closure_path(sub, value, depth - 1)
        if path is not None:
            return f"_modules_{name}{path}"
    return None


def _source_name(fns, value):
    """The name Dynamo gives a tensor a branch reads through its closure (torch.cond traces
    ``wrapper(pred, true_fn, false_fn, operands)``: ``l_args_1_closure_0_cell_contents...``),
    from the first branch reaching it; None when neither branch's closure holds it."""
    for index, fn in ((1, fns[0]), (2, fns[1])):
        for k, cell in enumerate(getattr(fn, "__closure__", None) or ()):
            try:
                path = _closure_path(cell.cell_contents, value)
            except ValueError:  # an empty cell
                continue
            if path is not None:
                return f"l_args_{index}_closure_{k}_cell_contents{path}"
    return None


def _lifted_source_name(fns, i):
    """Dynamo's name of the cond operand ``i`` when a branch's closure cell held it (a traced
    value of the enclosing function, lifted by LiftedBranch), else None."""
    for index, fn in ((1, fns[0]), (2, fns[1])):
        for k, j in getattr(fn, "slots", ()):
            if j == i:
                return f"l_args_{index}_closure_{k}_cell_contents"
    return None


def _torch_order(fns, operands, subs, maps, values):
    """The cond node's operands in torch's order: the inputs both branches read, then those only
    the true branch reads, then the false branch's, each group sorted by Dynamo's names of them
    (``l_args_3_<i>_`` for the call's operands); an operand neither branch reads is left out."""
    used = [_used(sub, operands, mapping) for sub, mapping in zip(subs, maps)]
    order = list(dict.fromkeys(list(operands) + [n for m in maps for n in m.values()]))
    keys = {}
    for node in order:
        if node in operands:
            i = operands.index(node)
            keys[node] = _lifted_source_name(fns, i) or f"l_args_3_{i}_"
        else:  # a tensor no closure holds (a global): after the named ones, in reading order
            keys[node] = _source_name(fns, values.get(node)) or f"~{order.index(node):06d}"
    both = [n for n in order if n in used[0] and n in used[1]]
    only = [[n for n in order if n in u and n not in both] for u in used]
    return [n for group in (both, *only) for n in sorted(group, key=keys.__getitem__)]


def _branch_module(sub, sources, mapping, operands):
    """The exported branch ``sub`` as a graph module taking one input per node of ``sources``
    (the cond node's operands as torch orders them), named after it: its user inputs are the
    call's ``operands`` in order, its lifted ones map to their outer placeholder through
    ``mapping``."""
    graph = fx.Graph()
    new = {}
    for node in sources:
        new[node] = graph.placeholder(node.name)
        new[node].meta["val"] = node.meta.get("val")
    env, user = {}, 0
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for spec, node in zip(sub.graph_signature.input_specs, placeholders):
        if spec.kind == InputKind.USER_INPUT:
            if operands[user] in new:  # else unread by this branch
                env[node] = new[operands[user]]
            user += 1
        elif node in mapping:
            env[node] = new[mapping[node]]
    for node in sub.graph.nodes:
        if node.op == "output":
            items, _ = tree_flatten(fx.map_arg(node.args[0], lambda n: env[n]))
            graph.output(tuple(items))
        elif node.op != "placeholder":
            env[node] = graph.node_copy(node, lambda n: env[n])
    return fx.GraphModule(sub.graph_module, graph)


def branch_program(fn, operands, ep, outer_names, where):
    """A Branch for the branch ``fn`` (a callable or a captured branch graph) on the cond node's
    ``operands`` (graph nodes), in runtime ops.

    ``outer_names`` maps each lifted input's target (state name) to the outer placeholder."""
    if getattr(fn, "_runtime_ops", False):  # a loaded program's branch: already runtime ops
        user = [n.name for n in fn.graph.nodes if n.op == "placeholder"]
        shapes = getattr(fn, "_input_shapes", None) or [None] * len(user)
        return Branch(fn.graph, user, {}, {}, shapes, gm=fn)
    ember = _ember()
    examples = _example_values(operands, f"ember.export.save: {where}")
    state, by_wrapper = {}, {}
    for target, value in list(ep.state_dict.items()) + list(ep.constants.items()):
        if target in outer_names and isinstance(value, ember.Tensor):
            name = f"s{len(state)}"
            state[name] = value
            by_wrapper[name] = outer_names[target]
    sub = _export_branch(fn, examples, state, bool(ep.range_constraints)).run_decompositions()
    if sub.graph_signature.buffers_to_mutate:
        raise RuntimeError(
            f"ember.export.save: {where}: a cond branch updates buffers; expected functional "
            "branches"
        )
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    user, lifted, constants, shapes = [], {}, {}, []
    for spec, node in zip(sub.graph_signature.input_specs, placeholders):
        if spec.kind == InputKind.USER_INPUT:
            user.append(node.name)
            shape = sub.input_shapes.get(node.name)
            shapes.append(list(shape) if shape is not None else list(node.meta["val"].shape))
        elif not node.users:
            continue
        elif spec.target in by_wrapper:
            lifted[node.name] = by_wrapper[spec.target]
        else:
            value = sub.state_dict.get(spec.target)
            if value is None:
                value = sub.constants[spec.target]
            constants[node.name] = value.detach()
    return Branch(sub.graph, user, lifted, constants, shapes, gm=sub.graph_module)
