"""``ExportedProgram.module()``: the program as a GraphModule, as torch's unlifted module.

The program's graph takes its parameters, buffers and constants as inputs; the module's graph
reads them as attributes instead (``get_attr`` nodes named after their qualified names, ``p`` /
``b1_lin_weight``), takes the leaves of the user's (nested) arguments as placeholders, calls a
``_guards_fn`` submodule on them first (the input checks: ranks, static sizes, Dim ranges and
relations, the example's constants, raising torch's ``AssertionError("Guard failed: ...")``),
copies the new values of updated buffers back into them (``copy_``, a decomposed program's
BUFFER_MUTATION outputs) and returns the user outputs. Its forward is the code generated from
that graph, which flattens the arguments along ``self._in_spec`` and rebuilds the result along
``self._out_spec`` (``ember.fx._codegen.PyTreeInfo``), as torch's code reads."""

import re
import sys

from .. import fx
from ..nn import Module, Parameter
from ._capture import _keep_builtin_name
from .graph_signature import InputKind, OutputKind

__all__ = ["ExportedModule", "UnflattenedModule", "InterpreterModule", "GuardsFn", "parse_dim"]


def _ember():
    return sys.modules["ember"]


def parse_dim(name):
    """(root name, a, b) of a Dim name 'a*root + b' (a=1, b=0 for a plain Dim)."""
    m = re.fullmatch(r"(?:(\d+)\*)?([A-Za-z_]\w*)(?: ([+-]) (\d+))?", name)
    if m is None:
        return name, 1, 0
    a = int(m.group(1) or 1)
    b = int(m.group(4) or 0) * (-1 if m.group(3) == "-" else 1)
    return m.group(2), a, b


def _guard_failed(condition):
    # torch 2.13 raises a plain AssertionError naming the violated guard in its own terms
    # (programs print type(e).__name__ and the text)
    return AssertionError(f"Guard failed: {condition}")


def _relation(source, first, pa, pb, a, b):
    """The guard that ``source`` = a*root + b, where ``first`` (read before) = pa*root + pb,
    in torch's words (``-1 + x.size()[0] == y.size()[0]``)."""
    if pa != 1:
        expr = f"{a}*({first} - {pb})/{pa}" + (f" + {b}" if b else "")
        return f"{source} == {expr}"
    c = b - a * pb
    if (a, c) == (1, 0):
        return f"{source} == {first}"
    term = first if a == 1 else f"{a}*{first}"
    return f"{term if c == 0 else f'{c} + {term}'} == {source}"


class GuardsFn(Module):
    """The module's input checks, called on the leaves of the arguments before anything runs
    (torch's ``_guards_fn``): each tensor's rank and static sizes, each dynamic size's range and
    relation to the sizes of its Dim read before, the program's size guards (``x.shape[0] !=
    y.shape[0]`` where the export branched on it) and the constants given at export."""

    def __init__(self, program, leaf_names, constants):
        super().__init__()
        object.__setattr__(self, "_program", program)
        self._leaf_names = list(leaf_names)
        self._constants = dict(constants)  # leaf name -> the example's value

    def forward(self, *leaves):
        program, sizes = self._program, {}
        for name, value in zip(self._leaf_names, leaves):
            if name in self._constants:
                if value != self._constants[name]:
                    raise _guard_failed(f"{name} == {self._constants[name]!r}")
            elif name in program.input_shapes:
                self._check(name, value, program.input_shapes[name], sizes)
        values = dict(zip(self._leaf_names, leaves))
        for guard in getattr(program, "_size_guards", ()):
            guard.check(values)

    def _check(self, name, value, shape, sizes):
        ember = _ember()
        if not isinstance(value, ember.Tensor):
            raise TypeError(f"{name}: expected a Tensor; got {type(value).__name__}")
        if value.dim() != len(shape):
            raise _guard_failed(f"{name}.dim() == {len(shape)}")
        for d, size in enumerate(shape):
            got = value.size(d)
            source = f"{name}.size()[{d}]"
            if isinstance(size, int) and got != size:
                raise _guard_failed(f"{source} == {size}")
            if isinstance(size, str):
                lo, hi = self._program._range_constraints.get(size, (0, None))
                # As torch's: a lower bound of 2 or less guards nothing (0 and 1 are only kept
                # out of tracing, where they would specialize), so sizes 0 and 1 still run.
                if lo > 2 and got < lo:
                    raise _guard_failed(f"{source} >= {lo}")
                if hi is not None and got > hi:
                    raise _guard_failed(f"{source} <= {hi}")
                root, a, b = parse_dim(size)
                prev = sizes.get(root)
                if prev is None:
                    if (got - b) % a:
                        raise _guard_failed(f"{source} == {size}")
                    sizes[root] = ((got - b) // a, source, a, b)
                    continue
                value_of_root, first, pa, pb = prev
                if (got - b) % a or (got - b) // a != value_of_root:
                    raise _guard_failed(_relation(source, first, pa, pb, a, b))


def _set_by_name(module, qualname, value, kind, persistent=True):
    *path, leaf = qualname.split(".")
    mod = module
    for part in path:
        child = getattr(mod, part, None) if part in mod._modules else None
        if child is None:
            child = Module()
            mod.add_module(part, child)
        mod = child
    if kind == "parameter":
        if not isinstance(value, Parameter):
            value = Parameter(value, requires_grad=value.requires_grad)
        mod.register_parameter(leaf, value)
    elif kind == "buffer":
        mod.register_buffer(leaf, value, persistent=persistent)
    else:
        setattr(mod, leaf, value)


def _path_name(base, path):
    """torch's name of a leaf of a nested argument: ``d_b_0`` for ``d["b"][0]``."""
    return "_".join([base] + [str(k) for k in path])


def _leaves_with_paths(value, path, out):
    from ..utils import _pytree

    node = _pytree._node_of(value)
    if node is None:
        out.append((path, value))
        return
    children, context = node.flatten(value)
    keys = context if isinstance(context, list) else range(len(children))
    if _pytree._is_namedtuple(value):
        keys = type(value)._fields
    for k, c in zip(keys, children):
        _leaves_with_paths(c, path + (k,), out)


def _call_form(program):
    """(orig_args, in_spec, leaf names, {constant leaf: value}, positional) of the program's
    call: the example's (args, kwargs) structure, its tensor leaves named as the graph's user
    inputs; a program without example inputs (loaded), or whose forward's signature does not
    name them (``*args``), takes its user inputs positionally (``_bind_positional``)."""
    import inspect

    from ..utils import _pytree

    users = list(program.graph_signature.user_inputs)
    example = program.example_inputs
    model = getattr(program, "_model", None)
    positional = (users, _pytree.tree_structure((tuple(users), {})), users, {}, True)
    if example is None or model is None:
        return positional
    args, kwargs = example
    try:
        params = list(inspect.signature(getattr(model, "forward", model)).parameters.values())
    except (TypeError, ValueError):
        return positional
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(named):
        return positional
    orig = named[: len(args)] + list(kwargs)
    leaves = []
    for name, value in list(zip(named, args)) + list(kwargs.items()):
        found = []
        _leaves_with_paths(value, (), found)
        leaves += [(_path_name(name, p), v) for p, v in found]
    ember = _ember()
    tensors = [n for n, v in leaves if isinstance(v, ember.Tensor)]
    if len(tensors) != len(users):
        return positional
    rename = dict(zip(tensors, users))  # the graph's names of the tensor leaves
    names = [rename.get(n, n) for n, _ in leaves]
    constants = {n: v for (n, v) in leaves if not isinstance(v, ember.Tensor)}
    return orig, _pytree.tree_structure((tuple(args), dict(kwargs))), names, constants, False


def _unlifted_graph(program, leaf_names, guards_node=True):
    """The program's graph with state read by get_attr, the argument leaves as placeholders,
    the guards called first, updated buffers copied back and only the user outputs returned."""
    from .exported_program import tree_flatten

    ember = _ember()
    sig = program.graph_signature
    old = program.graph
    new = fx.Graph()
    env = {}
    specs = {s.arg.name: s for s in sig.input_specs}
    for node in old.nodes:
        spec = specs.get(node.name) if node.op == "placeholder" else None
        if spec is not None and spec.kind != InputKind.USER_INPUT:
            attr = new.create_node("get_attr", spec.target, name=spec.target.replace(".", "_"))
            attr.meta.update(node.meta)
            env[node] = attr
    placeholders = [n for n in old.nodes if n.op == "placeholder"]
    by_name = {  # the user inputs by the signature's names (``input`` where fx says input_1)
        spec.arg.name: node
        for node, spec in zip(placeholders, sig.input_specs)
        if spec.kind == InputKind.USER_INPUT
    }
    leaves = []
    for name in leaf_names:
        ph = new.placeholder(name)
        _keep_builtin_name(new, ph, name)
        if name in by_name:
            ph.meta.update(by_name[name].meta)
            env[by_name[name]] = ph
        leaves.append(ph)
    if guards_node:
        new.create_node("call_module", "_guards_fn", tuple(leaves), {}, name="_guards_fn")
    out_node = None
    for node in old.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            out_node = node
            continue
        env[node] = new.node_copy(node, lambda m: env[m])
    outputs = out_node.args[0] if out_node is not None else ()
    outputs = tree_flatten(outputs)[0]  # (fx's immutable containers are dicts and lists)
    user_outputs = []
    for spec, value in zip(sig.output_specs, outputs):
        if spec.kind in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION):
            op = "get_attr" if spec.kind == OutputKind.BUFFER_MUTATION else "placeholder"
            target = next(n for n in new.nodes if n.op == op and n.target == spec.target)
            # the new value without its autograd history: a buffer never requires grad (the
            # old module copied under no_grad; torch's running statistics carry no grad)
            fresh = new.call_function(ember.ops.aten.detach.default, (env[value],))
            new.call_function(ember.ops.aten.copy_.default, (target, fresh))
        else:
            user_outputs.append(fx.map_arg(value, lambda m: env[m]))
    new.output(tuple(user_outputs))
    return new


class ExportedModule(fx.GraphModule):
    """The module ExportedProgram.module() returns: a GraphModule holding the program's state
    under its qualified names, whose graph reads it (see the module docstring)."""

    _class_name = "GraphModule"

    def __init__(self, program):
        from ..fx._codegen import PyTreeInfo

        orig, in_spec, leaf_names, constants, positional = _call_form(program)
        guards = GuardsFn(program, leaf_names, constants)
        as_node = self._class_name == "GraphModule"  # torch's unflattened modules check first
        holder = Module()
        for sub_name, sub in program.graph_module.named_children():  # cond's branches
            holder.add_module(sub_name, sub)
        for spec in program.graph_signature.input_specs:
            if spec.kind == InputKind.PARAMETER:
                _set_by_name(holder, spec.target, program.state_dict[spec.target], "parameter")
            elif spec.kind == InputKind.BUFFER:
                value = program.state_dict.get(spec.target, program.constants.get(spec.target))
                _set_by_name(holder, spec.target, value, "buffer", spec.persistent is not False)
            elif spec.kind == InputKind.CONSTANT_TENSOR:
                _set_by_name(holder, spec.target, program.constants[spec.target], "constant")
        if as_node:
            holder._guards_fn = guards
        graph = _unlifted_graph(program, leaf_names, as_node)
        graph._pytree_info = PyTreeInfo(orig, in_spec, program.call_spec.out_spec)
        object.__setattr__(self, "_program", program)
        self._in_spec, self._out_spec = in_spec, program.call_spec.out_spec
        super().__init__(holder, graph, class_name=self._class_name)
        self.register_forward_pre_hook(
            _bind_positional if positional else _check_structure, with_kwargs=True
        )
        if not as_node:
            object.__setattr__(self, "_guards", guards)
            self.register_forward_pre_hook(_run_guards, with_kwargs=True)

    def train(self, mode=True):
        # torch 2.13's ep.module() refuses mode switches: the graph was captured in one mode
        # (a train-mode BatchNorm's batch statistics are baked into it)
        raise NotImplementedError("Calling train() is not supported yet.")

    def eval(self):
        raise NotImplementedError("Calling eval() is not supported yet.")


def _check_structure(module, args, kwargs):
    """The call's arguments have the structure of the example's, as torch's pre-hook checks
    (its ValueError texts)."""
    from ..utils import _pytree

    spec = module._in_spec
    expected = list(spec.children_specs[1].context or [])
    if sorted(kwargs) != sorted(expected):
        raise ValueError(
            f"Ran into a kwarg keyword mismatch: Got the following keywords {list(kwargs)} but "
            f"expected {expected}"
        )
    got = _pytree.tree_structure((tuple(args), {k: kwargs[k] for k in expected}))
    if got != spec:
        raise ValueError(
            f"Trying to flatten user inputs with exported input tree spec: \n{spec}\nbut "
            f"actually got inputs with tree spec of: \n{got}.\nPlease check that the inputs "
            "have the same number and type of args and kwargs as the ones you used when tracing."
        )
    return None


def _run_guards(module, args, kwargs):
    from ..fx._pytree import tree_flatten_spec

    module._guards(*tree_flatten_spec((list(args), kwargs), module._in_spec))


def _bind_positional(module, args, kwargs):
    """The user inputs in order, for a program whose call form is not its example's (loaded,
    or a forward with ``*args``/``**kwargs``): nested arguments flattened as captured, keyword
    arguments by input name, the example's constant keywords guarded."""
    program = module._program
    if program._nested is not None:
        return tuple(program._nested.flatten_call(args, kwargs)), {}
    names = list(program.graph_signature.user_inputs)
    values, kwargs = list(args), dict(kwargs)
    if len(values) > len(names):
        raise TypeError(f"forward() takes {len(names)} inputs but {len(values)} were given")
    for name in names[len(values) :]:
        if name not in kwargs:
            raise TypeError(f"forward() missing the input '{name}'")
        values.append(kwargs.pop(name))
    example = program.example_inputs[1] if program.example_inputs else {}
    for name in sorted(kwargs):
        if name not in example or isinstance(example[name], _ember().Tensor):
            raise TypeError(f"forward() got unexpected inputs {sorted(kwargs)}")
        if kwargs[name] != example[name]:
            raise _guard_failed(f"{name} == {example[name]!r}")
    return tuple(values), {}


class UnflattenedModule(ExportedModule):
    """What unflatten returns: torch's unflattened modules switch modes as any module does and
    check their inputs before the graph runs (no ``_guards_fn`` submodule)."""

    _class_name = "UnflattenedModule"

    train = Module.train
    eval = Module.eval


class InterpreterModule(UnflattenedModule):
    """A submodule of an unflattened program, callable alone (torch's InterpreterModule)."""

    _class_name = "InterpreterModule"
