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

import sys

from .. import fx
from ..nn import Module
from .graph_signature import InputKind

__all__ = ["Branch", "branch_program"]


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

    def forward(self, *operands):
        return self._fn(*operands)


class Branch:
    """One branch ready to encode: ``graph`` (runtime ops), ``user`` (its placeholders for the
    node's operands, in order), ``lifted`` ({placeholder name: outer input name}),
    ``constants`` ({placeholder name: tensor} read by the branch only) and ``shapes`` (static
    sizes per user placeholder, strings for free dims)."""

    def __init__(self, graph, user, lifted, constants, shapes, gm=None):
        self.graph, self.user, self.lifted = graph, user, lifted
        self.constants, self.shapes, self.gm = constants, shapes, gm


def branch_program(fn, operands, ep, outer_names, where):
    """A Branch for the branch callable ``fn`` on the cond node's ``operands`` (graph nodes).

    ``outer_names`` maps each lifted input's target (state name) to the outer placeholder."""
    ember = _ember()
    if isinstance(fn, fx.GraphModule):  # a loaded program's branch: already runtime ops
        user = [n.name for n in fn.graph.nodes if n.op == "placeholder"]
        shapes = getattr(fn, "_input_shapes", None) or [None] * len(user)
        return Branch(fn.graph, user, {}, {}, shapes, gm=fn)
    examples = []
    for k, a in enumerate(operands):
        val = a.meta.get("val") if isinstance(a, fx.Node) else a
        if not isinstance(val, ember.Tensor):
            raise RuntimeError(
                f"ember.export.save: {where}: cond operand {k} has no example tensor; expected "
                "tensor operands"
            )
        examples.append(val)
    state, by_wrapper = {}, {}
    for target, value in list(ep.state_dict.items()) + list(ep.constants.items()):
        if target in outer_names and isinstance(value, ember.Tensor):
            name = f"s{len(state)}"
            state[name] = value
            by_wrapper[name] = outer_names[target]
    wrapper = _Wrapper(fn, state)
    from . import export

    dynamic = {
        "operands": tuple({d: ember.export.Dim.AUTO for d in range(t.dim())} for t in examples)
    }
    try:
        sub = export(
            wrapper, tuple(examples), dynamic_shapes=dynamic if ep.range_constraints else None
        )
    except Exception:
        sub = export(wrapper, tuple(examples))
    sub = sub.run_decompositions()
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
    return Branch(sub.graph, user, lifted, constants, shapes)
