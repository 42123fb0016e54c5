"""``make_fx``: a graph of the ember calls a function makes, recorded by running it on example
inputs (torch.fx.experimental.proxy_tensor's entry point).

ember records with ember.compile's capture mode (Note [Capture] in ember/_dynamo/capture.py):
the function runs for real and each public ember call becomes a node. torch's make_fx records
ATen overloads (``aten.sin.default``); ember rewrites each call as torch's graph shows it
(``_aten_rewrite.py``: ``mean.dim``, ``linear`` as ``t`` + ``addmm``, batched ``matmul`` as
``expand``/``view``/``bmm``), then renames the other calls whose operator ember's registry
holds with a schema the call's arguments fit (``ember.ops.aten.add.Tensor``, integer dims as
lists where the schema takes ``int[]``), and keeps the public function or Tensor method where
neither applies: both compute the same values.
Tensors the function reads that are not inputs (closures, globals) become
``_tensor_constant<i>`` attributes of the GraphModule.
Python control flow is run, not recorded: a data-dependent branch or ``.item()`` raises."""

import functools

from ... import _C

__all__ = ["make_fx"]


def _flatten(value, out):
    if isinstance(value, _C.Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten(v, out)
    return out


def _arg_names(f, args, count):
    """torch's placeholder names: ``<param>_1`` where each argument is one tensor."""
    import inspect

    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    simple = len(params) >= len(args) and all(isinstance(a, _C.Tensor) for a in args)
    if simple and all(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params[:count]
    ):
        return [f"{p.name}_1" for p in params[:count]]
    return [f"arg{i}_1" for i in range(count)]


def make_fx(
    f,
    decomposition_table=None,
    tracing_mode="real",
    _allow_non_fake_inputs=False,
    *,
    pre_dispatch=False,
    record_module_stack=False,
    _allow_fake_constant=False,
    _error_on_data_dependent_ops=True,
    record_stack_traces=False,
):
    """make_fx(f, decomposition_table=None, tracing_mode='real', ...) -> callable

    ``make_fx(f)(*args)`` runs ``f(*args)`` once and returns a GraphModule whose forward takes
    the tensors of ``args`` (flattened, in order) and computes what ``f`` returned (same
    structure of tensors). ``tracing_mode`` may be "real", "fake" or "symbolic" (ember records
    with real values in every case; the graph keeps the example shapes).
    """
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")

    @functools.wraps(f)
    def wrapped(*args):
        from ..._dynamo.capture import Capture, GraphBreak
        from ..._dynamo.eval_frame import _flatten_output, _rebuild
        from ..graph_module import GraphModule

        constants = {}

        def find_named(t):
            name = f"_tensor_constant{len(constants)}"
            constants[name] = t
            return name

        cap = Capture({}, find_named, False, True)
        inputs = _flatten(args, [])
        names = _arg_names(f, args, len(inputs))
        for name, t in zip(names, inputs):
            cap.add_input(name, t)
        with cap:
            result = f(*args)
        cap.finished = True
        out_nodes = []
        try:
            spec = _flatten_output(result, cap, out_nodes)
        except GraphBreak as e:
            raise RuntimeError(f"make_fx: {e}") from None
        out = _rebuild(spec, out_nodes) if spec is not None else tuple(out_nodes)
        cap.graph.output(_plain_tuples(out))
        cap.drop_unused_sym_nodes()
        from ._aten_rewrite import rewrite, strip_defaults

        graph, rest = rewrite(cap.graph)  # torch's decompositions first, then the registry
        for node in rest:
            _to_overload(node)
        for node in graph.nodes:
            strip_defaults(node)
        # torch names the module's class after the traced function (or the module's class)
        name = type(f).__name__ if isinstance(f, _nn_module()) else getattr(f, "__name__", None)
        return GraphModule(dict(cap.attrs), graph, name or "GraphModule")

    return wrapped


def _plain_tuples(value):
    """The output with named tuples (``x.max(1)``'s values/indices) as plain tuples: torch's
    make_fx graphs return ``(getitem, getitem_1)``."""
    if isinstance(value, tuple):
        return tuple(_plain_tuples(v) for v in value)
    if isinstance(value, list):
        return [_plain_tuples(v) for v in value]
    return value


def _nn_module():
    from ...nn import Module

    return Module


_OPERATORS = {"truediv": "div", "getitem": None, "setitem": None}


def _op_name(node):
    if node.op == "call_method":
        return node.target
    if node.op != "call_function":
        return None
    name = getattr(node.target, "__name__", None)
    if not isinstance(name, str):
        return None
    return _OPERATORS.get(name, name)


def _fit(schema, overload, args, kwargs):
    """``args`` (normalized) when the call fits the schema, else None."""
    from ... import _C

    params = schema.arguments
    positional = [p for p in params if not p.kwarg_only]
    if len(args) > len(positional) or any(k not in {p.name for p in params} for k in kwargs):
        return None
    out = []
    for i, p in enumerate(positional):
        given = i < len(args)
        if not given and p.name not in kwargs and p.default_value is None:
            if not str(p.type).endswith("?"):
                return None
        if not given:
            continue
        a, kind = args[i], str(p.type)
        is_tensor = _is_graph_tensor(a) or isinstance(a, _C.Tensor)
        if kind == "Tensor" and not is_tensor:
            # torch's arithmetic ops take Python numbers as wrapped tensors (``add.Tensor``)
            if overload not in ("Tensor", "out") or not isinstance(a, (int, float, bool)):
                return None
        elif kind.startswith("int[]") and isinstance(a, int):
            a = [a]
        elif kind.startswith("Tensor") is False and is_tensor:
            return None
        out.append(a)
    return tuple(out)


def _is_graph_tensor(a):
    from ..node import Node

    if not isinstance(a, Node):
        return False
    from ... import _C

    return isinstance(a.meta.get("val"), _C.Tensor)


def _to_overload(node):
    """Renames a call to the aten overload of ember's registry that fits it (see the module
    docstring); leaves it as it is otherwise."""
    name = _op_name(node)
    if not name or name.startswith("_") or name.endswith("_"):
        return
    func = node.target if node.op == "call_function" else None
    found = find_overload(name, node.args, node.kwargs, func)
    if found is not None:
        node.op, node.target, node.args = "call_function", found[0], found[1]


def find_overload(name, args, kwargs, func=None):
    """(overload, normalized args) of the first overload of ``ember.ops.aten.<name>`` whose
    schema the call fits, or None (make_fx's renaming, and TorchDispatchMode's view of a call:
    ember/_dispatch_bridge.py). ``func``, the public function called, is refused where its
    parameters come in another order than the schema's (``F.embedding(input, weight)`` against
    ``embedding(Tensor weight, Tensor indices)``)."""
    packet = _aten_packet(name) if name.isidentifier() else None
    if packet is None:
        return None
    params = _positional_names(func)
    try:
        overloads = packet.overloads()
    except Exception:  # noqa: BLE001 (a packet without a registry entry: keep the call)
        return None
    for overload in overloads:
        if overload == "ember" or (overload.endswith("out") and "out" not in kwargs):
            continue
        op = getattr(packet, overload)
        if params and _reordered(params[: len(args)], op._schema):
            continue
        fitted = _fit(op._schema, overload, args, kwargs)
        if fitted is not None:
            return op, fitted
    return None


def _positional_names(func):
    """The names of a Python function's positional parameters; () for a binding."""
    import inspect

    code = getattr(func, "__code__", None)
    if code is None:
        return ()
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _reordered(names, schema):
    """Whether a parameter of ``names`` sits at another position in the schema."""
    theirs = [a.name for a in schema.arguments if not a.kwarg_only]
    return any(n in theirs and theirs.index(n) != i for i, n in enumerate(names))


_MISSES = set()  # names ember.ops.aten lacks: a miss reads the whole registry again (~ms)
_MISSES_AT = [0]  # the registry's size when they were recorded


def _aten_packet(name):
    from ... import _op_overloads, ops

    packet = ops.aten._packets.get(name)
    if packet is not None:
        return packet
    if _MISSES_AT[0] != len(_op_overloads._seen):
        _MISSES.clear()
        _MISSES_AT[0] = len(_op_overloads._seen)
    if name in _MISSES:
        return None
    packet = getattr(ops.aten, name, None)
    if packet is None:
        _MISSES.add(name)
        _MISSES_AT[0] = len(_op_overloads._seen)
    return packet
