"""ExportedProgram: a captured graph with lifted parameters and buffers (torch.export's class),
the module that runs it, and run_decompositions() to the op set of the C++ runtime."""

import collections

from .. import fx
from . import _aten_names, _factories, _ops, _qdq, _rnn, _to_ops, _writes
from .graph_signature import InputKind

__all__ = ["ExportedProgram"]


def tree_flatten(value):
    """tree_flatten(value) -> (list, spec)

    The leaves of nested tuples, lists and dicts (by string keys), and the structure (None for
    a leaf, ("tuple" | "list", [child specs]), or ("dict", [[key, child spec], ...])) that
    tree_unflatten rebuilds it from."""
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        leaves, children = [], []
        for key, item in value.items():
            sub, spec = tree_flatten(item)
            leaves += sub
            children.append([key, spec])
        return leaves, ("dict", children)
    if isinstance(value, (tuple, list)):
        leaves, children = [], []
        for item in value:
            sub, spec = tree_flatten(item)
            leaves += sub
            children.append(spec)
        return leaves, ("tuple" if isinstance(value, tuple) else "list", children)
    return [value], None


def tree_unflatten(spec, leaves):
    """tree_unflatten(spec, leaves) -> value

    The nested value tree_flatten described by ``spec``, with ``leaves`` in order."""
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, children = s
        if kind == "dict":
            return {key: build(c) for key, c in children}
        items = [build(c) for c in children]
        return tuple(items) if kind == "tuple" else items

    return build(spec)


def _check_spec(spec, depth=0):
    """Whether a loaded output structure is well formed (None or (kind, [specs]))."""
    if spec is None:
        return 1
    if depth > 64 or not isinstance(spec, (tuple, list)) or len(spec) != 2:
        raise RuntimeError("ember.export.load: invalid output_structure")
    kind, children = spec
    if kind not in ("tuple", "list", "dict") or not isinstance(children, (tuple, list)):
        raise RuntimeError("ember.export.load: invalid output_structure")
    if kind == "dict":
        if not all(isinstance(c, (tuple, list)) and len(c) == 2 and isinstance(c[0], str)
                   for c in children):  # fmt: skip
            raise RuntimeError("ember.export.load: invalid output_structure")
        children = [c for _, c in children]
    return sum(_check_spec(c, depth + 1) for c in children)


class ExportedProgram:
    """ExportedProgram(graph_module, graph_signature, state_dict, range_constraints, constants=None)

    A program captured by ember.export.export: ``graph_module`` takes the lifted parameters,
    buffers and constants first and then the user inputs (``graph_signature`` says which is
    which); ``module()`` gives back a callable module; ``ember.export.save`` writes it to a file
    the C++ runtime (``ember::export_::load``) runs."""

    def __init__(
        self,
        graph_module,
        graph_signature,
        state_dict,
        range_constraints,
        constants=None,
        *,
        input_shapes=None,
        output_structure=None,
        example_inputs=None,
        decomposed=False,
    ):
        self._graph_module = graph_module
        self._graph_signature = graph_signature
        self._state_dict = dict(state_dict)
        self._constants = dict(constants or {})
        self._range_constraints = dict(range_constraints)
        self._input_shapes = dict(input_shapes or {})
        self._output_structure = output_structure
        self._example_inputs = example_inputs
        self._decomposed = decomposed
        self._nested = None  # how nested inputs map to the flat ones (ember.export._nested)
        self._size_guards = []  # _constraints.SizeGuard: relations the module checks
        self._annotate_shapes()

    @property
    def graph_module(self):
        """graph_module -> ember.fx.GraphModule

        The graph as a module whose inputs are the lifted state, then the user inputs."""
        return self._graph_module

    @property
    def graph(self):
        """graph -> ember.fx.Graph

        The captured graph."""
        return self._graph_module.graph

    @property
    def graph_signature(self):
        """graph_signature -> ExportGraphSignature

        Which graph inputs are parameters, buffers, constants and user inputs."""
        return self._graph_signature

    @property
    def state_dict(self):
        """state_dict -> dict[str, Tensor]

        The parameters and persistent buffers by qualified name."""
        return self._state_dict

    @property
    def constants(self):
        """constants -> dict[str, Tensor]

        Lifted tensor constants and non-persistent buffers."""
        return self._constants

    @property
    def range_constraints(self):
        """range_constraints -> dict[Symbol, ValueRanges]

        The range ``(lower, upper)`` of each dynamic dim, keyed by torch's symbol for it
        (``s77``; ``s77 + 1`` for a derived dim; see ``_symbols.py``)."""
        from ._symbols import Symbol, ValueRanges

        names = self._dim_symbols()
        # in the order the inputs' dims first read them, as torch's (x: s17 + 1 before y: s17)
        seen = [d for shape in self._input_shapes.values() for d in shape if isinstance(d, str)]
        keys = sorted(
            self._range_constraints, key=lambda k: seen.index(k) if k in seen else len(seen)
        )
        return {Symbol(names.get(k, k)): ValueRanges(*self._range_constraints[k]) for k in keys}

    def _dim_symbols(self):
        """{Dim name: torch's symbol expression} of the program's dynamic dims."""
        from ._symbols import symbol_names
        from ._unlift import parse_dim

        return symbol_names(self._input_shapes, self._graph_signature.user_inputs, parse_dim)

    @property
    def example_inputs(self):
        """example_inputs -> tuple[tuple, dict]

        The (args, kwargs) the program was exported with (None after loading)."""
        return self._example_inputs

    def named_parameters(self):
        """named_parameters() -> Iterator[tuple[str, Parameter]]

        The program's parameters by qualified name, in the signature's order."""
        for spec in self._graph_signature.input_specs:
            if spec.kind == InputKind.PARAMETER:
                yield spec.target, self._state_dict[spec.target]

    def parameters(self):
        """parameters() -> Iterator[Parameter]

        The program's parameters."""
        for _, p in self.named_parameters():
            yield p

    def named_buffers(self):
        """named_buffers() -> Iterator[tuple[str, Tensor]]

        The program's buffers (non-persistent ones too) by qualified name."""
        for spec in self._graph_signature.input_specs:
            if spec.kind == InputKind.BUFFER:
                yield (
                    spec.target,
                    self._state_dict.get(spec.target, self._constants.get(spec.target)),
                )

    def buffers(self):
        """buffers() -> Iterator[Tensor]

        The program's buffers."""
        for _, b in self.named_buffers():
            yield b

    @property
    def tensor_constants(self):
        """tensor_constants -> dict[str, Tensor]

        torch's older name of ``constants``."""
        return self._constants

    @property
    def call_spec(self):
        """call_spec -> CallSpec

        ``(in_spec, out_spec)``: the pytree specs of the call's ``(args, kwargs)`` (from the
        example inputs; after loading, the user inputs as positional leaves) and of its
        outputs, as ``ember.utils._pytree.tree_structure`` gives them."""
        from ..utils import _pytree

        example = self._example_inputs
        if example is None:
            n = len(self._graph_signature.user_inputs)
            example = (tuple(range(n)), {})
        n_out = _check_spec(self._output_structure)
        outputs = tree_unflatten(self._output_structure, list(range(n_out)))
        return CallSpec(_pytree.tree_structure(example), _pytree.tree_structure(outputs))

    @property
    def input_shapes(self):
        """input_shapes -> dict[str, list]

        Each user input's sizes, with the Dim's name where a dim is dynamic."""
        return self._input_shapes

    def _lifted_values(self):
        values = []
        for spec in self._graph_signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                continue
            if spec.target in self._state_dict:
                values.append(self._state_dict[spec.target])
            else:
                values.append(self._constants[spec.target])
        return values

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Unable to call ExportedProgram directly. You should use `exported_program.module()` "
            "instead."
        )

    def module(self):
        """module() -> ember.fx.GraphModule

        The program as a module (torch's unlifted module): its parameters and buffers under
        their qualified names, read by the graph's get_attr nodes; its forward takes the
        model's arguments, checks them (``_guards_fn``) and runs the graph (``_unlift.py``)."""
        from ._unlift import ExportedModule

        return ExportedModule(self)

    def run_decompositions(self, decomp_table=None):
        """run_decompositions(decomp_table=None) -> ExportedProgram

        The same program with each call mapped onto the runtime op set (``ember.export.ops``):
        what ember.export.save writes and the C++ runtime runs. A call whose runtime op is one
        ATen overload is named by it (``aten.linear.default``, torch's arguments), as torch
        prints; it runs the runtime op. Calls without a runtime op stay as they are (save
        refuses them, naming the op)."""
        if decomp_table is not None:
            from ._decomp import apply

            graph = apply(self.graph, decomp_table)
            if graph is not self.graph:
                return self._with_graph(graph, self._decomposed).run_decompositions()
        if self._decomposed:
            return self
        from ._functionalize import functionalize

        old, signature = self.graph, self._graph_signature
        old = _writes.lower(old)  # y[idx] = v, y.fill_(v): the runtime has no writes
        old = _rnn.lower(old)  # aten.lstm.input: rnn_layer per layer and direction
        old = _qdq.lower(old)  # quantized_decomposed q/dq: their arithmetic in runtime ops
        functional = functionalize(old, signature)
        if functional is not None:
            old, signature = functional
        new = fx.Graph()
        env = {}
        for node in old.nodes:
            if node.op == "placeholder":
                n = new.placeholder(node.name)
                n.meta.update(node.meta)
                env[node] = n
                continue
            if node.op == "output":
                new.output(fx.map_arg(node.args[0], lambda n: env[n]))
                continue
            mapped, reason = None, None
            callable_node = node.op in ("call_function", "call_method")
            if callable_node and not getattr(node.target, "_export_op", None):
                try:
                    mapped = _ops.normalize(node.target, node.args, dict(node.kwargs))
                except _ops.Unsupported as e:
                    reason = str(e)
                if mapped is None and _factories.is_random(node):
                    reason = "random numbers, drawn anew on each run: the runtime has no generator"
            if mapped is not None:
                op, args = mapped
                n = new.call_function(
                    getattr(_ops.ops, op), tuple(fx.map_arg(list(args), lambda m: env[m]))
                )
            elif callable_node and _to_ops.is_assert(node.target):
                args, kwargs = _to_ops.decomposed_assert(node)
                n = new.create_node(
                    "call_function",
                    node.target,
                    fx.map_arg(args, lambda m: env[m]),
                    kwargs,
                    "_assert_tensor_metadata",
                )
            else:
                n = new.node_copy(node, lambda m: env[m])
            n.meta.update(node.meta)
            if reason is not None:
                n.meta["export_unsupported"] = reason
            env[node] = n
        # the runtime has no factories: torch.zeros(3, 4) in forward becomes a constant input
        new, signature, constants = _factories.fold(
            new, signature or self._graph_signature, self._constants
        )
        _aten_names.from_runtime(new)  # printed as torch's ATen overloads, run as runtime ops
        new.lint()
        signature = _outputs_named(new, signature)
        return self._with_graph(new, decomposed=True, signature=signature, constants=constants)

    def _with_graph(self, graph, decomposed, signature=None, constants=None):
        out = ExportedProgram(
            fx.GraphModule(self._graph_module, graph),  # get_attr: cond's branch modules
            signature or self._graph_signature,
            self._state_dict,
            self._range_constraints,
            self._constants if constants is None else constants,
            input_shapes=self._input_shapes,
            output_structure=self._output_structure,
            example_inputs=self._example_inputs,
            decomposed=decomposed,
        )
        out._nested = self._nested
        out._size_guards = self._size_guards
        return out

    @property
    def dialect(self):
        """dialect -> str

        "TRAINING" as captured (torch's export IR), "ATEN" after run_decompositions."""
        return "ATEN" if self._decomposed else "TRAINING"

    @property
    def module_call_graph(self):
        """module_call_graph -> list

        One entry per module of the exported model (``fqn``: its qualified name, "" for the
        root); ember inlines every module, so no call signatures are kept."""
        fqns = [""]
        for spec in self._graph_signature.input_specs:
            if spec.target:
                prefix = spec.target.rpartition(".")[0]
                parts = prefix.split(".") if prefix else []
                for i in range(1, len(parts) + 1):
                    name = ".".join(parts[:i])
                    if name not in fqns:
                        fqns.append(name)
        return [_ModuleCallEntry(f) for f in fqns]

    def validate(self):
        """validate() -> None

        Checks the program's invariants: the graph lints, its placeholders are the signature's
        inputs in order, and every lifted input has its tensor in state_dict or constants."""
        self.graph.lint()
        placeholders = [n.name for n in self.graph.nodes if n.op == "placeholder"]
        specs = [s.arg.name for s in self._graph_signature.input_specs]
        if placeholders != specs:
            raise RuntimeError(
                f"ExportedProgram.validate: the graph's inputs {placeholders} are not the "
                f"signature's {specs}"
            )
        for spec in self._graph_signature.input_specs:
            if spec.kind != InputKind.USER_INPUT and spec.target not in self._state_dict:
                if spec.target not in self._constants:
                    raise RuntimeError(
                        f"ExportedProgram.validate: no tensor for the lifted input '{spec.target}'"
                    )

    def _annotate_shapes(self):
        """Each node's symbolic sizes, for the printed graph (``_sym_shapes.py``)."""
        from ._sym_shapes import annotate

        symbols = self._dim_symbols()
        dims = {
            name: [symbols.get(d, d) for d in shape] for name, shape in self._input_shapes.items()
        }
        annotate(self._graph_module.graph, dims, self._range_constraints)

    def _readable(self):
        gm = self._graph_module
        self._annotate_shapes()  # again: a pass may have changed the graph since __init__
        try:
            return gm.print_readable(print_output=False)
        except Exception:  # a graph whose nodes carry no example values
            return str(gm.graph)

    def __str__(self):
        readable = self._readable()
        # torch's layout: each part's lines indented, a part's last newline too
        body = (readable.rstrip() + "\n").replace("\n", "\n    ")
        sig = str(self._graph_signature).replace("\n", "\n    ")
        ranges = ", ".join(f"{k}: {v!r}" for k, v in self.range_constraints.items())
        return (
            f"ExportedProgram:\n    {body}\nGraph signature: {sig}\n"
            f"Range constraints: {{{ranges}}}\n"
        )

    __repr__ = __str__


CallSpec = collections.namedtuple("CallSpec", ["in_spec", "out_spec"])


def _outputs_named(graph, signature):
    """``signature`` with each output spec naming the node ``graph`` returns in its place (the
    graph's nodes were made anew, some under other names)."""
    from .graph_signature import ExportGraphSignature, OutputSpec, TensorArgument

    out = next(n for n in graph.nodes if n.op == "output")
    items = tree_flatten(out.args[0])[0]
    if len(items) != len(signature.output_specs):
        return signature
    specs = [
        OutputSpec(s.kind, TensorArgument(n.name), s.target) if isinstance(n, fx.Node) else s
        for s, n in zip(signature.output_specs, items)
    ]
    return ExportGraphSignature(list(signature.input_specs), specs)


def _get_by_name(module, qualname):
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class _ModuleCallEntry:
    def __init__(self, fqn):
        self.fqn = fqn
        self.signature = None

    def __repr__(self):
        return f"ModuleCallEntry(fqn={self.fqn!r})"
