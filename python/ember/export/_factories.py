"""Factory calls inside an exported forward (``torch.zeros(n, 4)``, ``torch.arange(4)``).

torch's export records each as a graph node naming its ATen overload with the device and
``pin_memory=False`` spelled out (``aten.zeros.default([3, 4], device=cpu, pin_memory=False)``),
where a symbolic trace would bake its value in. ember's export tracer records the same calls
(``records(func)``), the capture renames them (``overload_call``), and ``ember.ops.aten`` gets
the overloads (``install``). The runtime op set has no factories: ``run_decompositions`` (and so
``save``) turns each factory node whose arguments are all Python values into a constant input
of the program (``fold``), torch's lifted-constant form. Random factories (``randn``,
``rand_like``) are recorded as torch does but never folded: each run draws anew, so their
programs run in Python (``module()``), not in the C++ runtime."""

import sys

__all__ = ["records", "overload_call", "overloads", "fold", "is_random"]

_OPTIONS = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
_OPTIONS += "pin_memory=None"
_LONG_OPTIONS = _OPTIONS.replace("ScalarType? dtype=None", "ScalarType? dtype=long")
_FORMAT = "MemoryFormat? memory_format=None"
_SCHEMAS = {
    "zeros.default": f"zeros(SymInt[] size, {_OPTIONS}) -> Tensor",
    "ones.default": f"ones(SymInt[] size, {_OPTIONS}) -> Tensor",
    "full.default": f"full(SymInt[] size, Scalar fill_value, {_OPTIONS}) -> Tensor",
    "empty.memory_format": f"empty.memory_format(SymInt[] size, {_OPTIONS}, MemoryFormat? "
    "memory_format=None) -> Tensor",
    "arange.default": f"arange(Scalar end, {_OPTIONS}) -> Tensor",
    "arange.start": f"arange.start(Scalar start, Scalar end, {_OPTIONS}) -> Tensor",
    "arange.start_step": f"arange.start_step(Scalar start, Scalar end, Scalar step=1, {_OPTIONS}) "
    "-> Tensor",
    "eye.default": f"eye(SymInt n, {_OPTIONS}) -> Tensor",
    "eye.m": f"eye.m(SymInt n, SymInt m, {_OPTIONS}) -> Tensor",
    "linspace.default": f"linspace(Scalar start, Scalar end, int steps, {_OPTIONS}) -> Tensor",
    "randn.default": f"randn(SymInt[] size, {_OPTIONS}) -> Tensor",
    "rand.default": f"rand(SymInt[] size, {_OPTIONS}) -> Tensor",
    "randint.default": f"randint(SymInt high, SymInt[] size, {_LONG_OPTIONS}) -> Tensor",
    "randint.low": f"randint.low(SymInt low, SymInt high, SymInt[] size, {_LONG_OPTIONS}) -> "
    "Tensor",
    "randn_like.default": f"randn_like(Tensor self, {_OPTIONS}, {_FORMAT}) -> Tensor",
    "rand_like.default": f"rand_like(Tensor self, {_OPTIONS}, {_FORMAT}) -> Tensor",
}
#: factories drawing random numbers: kept as nodes when decomposed (a constant would repeat
#: one draw), so programs using them run in Python only
_RANDOM = ("randn", "rand", "randint", "randn_like", "rand_like")
_OPTION_NAMES = ("dtype", "layout", "device", "pin_memory")


def _ember():
    return sys.modules["ember"]


def _size(args):
    """``zeros(3, 4)``, ``zeros((3, 4))`` and ``zeros([3, 4])`` alike."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return list(args)


def _split(name, args):
    """(overload, positional args in torch's schema) of a factory called with ``args``."""
    if name in ("zeros", "ones", "empty", "randn", "rand"):
        return ("empty.memory_format" if name == "empty" else f"{name}.default"), [_size(args)]
    if name == "full":
        return "full.default", [_size(args[:1]), args[1]]
    if name == "arange":
        return ("arange.default", "arange.start", "arange.start_step")[len(args) - 1], list(args)
    if name == "randint":
        low = [] if len(args) == 2 else [args[0]]
        return ("randint.low" if low else "randint.default"), low + [args[-2], _size(args[-1:])]
    if name in ("randn_like", "rand_like"):
        return f"{name}.default", [args[0]]
    if name == "eye":
        return ("eye.default" if len(args) == 1 else "eye.m"), list(args)
    return "linspace.default", list(args)


_NAMES = ("zeros", "ones", "full", "empty", "arange", "eye", "linspace") + _RANDOM


def _functions():
    from .. import overrides

    cache = _functions.__dict__
    if "table" not in cache:
        e = _ember()
        cache["table"] = {overrides.original(getattr(e, n)): n for n in _NAMES}
    return cache["table"]


def records(func, kwargs):
    """Whether the export tracer records a call of ``func`` whose arguments hold no graph value:
    the deterministic factories, except calls asking for gradients or writing ``out=``."""
    from .. import overrides

    try:
        name = _functions().get(overrides.original(func))
    except TypeError:  # unhashable
        return False
    return (
        name is not None
        and not kwargs.get("requires_grad")
        and kwargs.get("out") is None
        and kwargs.get("generator") is None
    )


def overload_call(target, args, kwargs):
    """(overload, args, kwargs) of a recorded factory call as torch's graphs show it; None for
    another target or options torch's export would record otherwise."""
    from .. import overrides
    from ._aten_names import overload_of

    try:
        name = _functions().get(overrides.original(target))
    except TypeError:
        return None
    if name is None or set(kwargs) - set(_OPTION_NAMES) - {"requires_grad", "memory_format"}:
        return None
    try:
        ov, positional = _split(name, args)
    except IndexError:
        return None
    device = kwargs.get("device")
    out_kwargs = {}
    if kwargs.get("dtype") is not None:
        out_kwargs["dtype"] = kwargs["dtype"]
    if not ov.startswith(("randn_like", "rand_like")):  # a *_like call keeps its input's
        out_kwargs["device"] = _ember().device(device if device is not None else "cpu")
    out_kwargs["pin_memory"] = bool(kwargs.get("pin_memory") or False)
    return overload_of(ov), positional, out_kwargs


def _call(ov):
    name = ov.partition(".")[0]

    def call(*args, **kwargs):
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        kwargs.pop("pin_memory", None)  # CPU memory only
        if name == "full":
            return _ember().full(args[0], args[1], **kwargs)
        if name == "randint":
            return _ember().randint(*args[:-1], tuple(args[-1]), **kwargs)
        return getattr(_ember(), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = "aten_" + ov.replace(".", "_")
    return call


def overloads():
    """The factory overloads, as (``name.overload``, schema, function) for ``ember.ops.aten``."""
    return ((ov, schema, _call(ov)) for ov, schema in _SCHEMAS.items())


def _is_factory(node):
    packet = getattr(node.target, "overloadpacket", None)
    ov = f"{getattr(packet, '_name', '')}.{getattr(node.target, '_overloadname', '')}"
    return node.op == "call_function" and ov in _SCHEMAS


def is_random(node):
    """Whether ``node`` calls a random factory (``aten.randn.default``)."""
    return _is_factory(node) and node.target.overloadpacket._name in _RANDOM


def fold(graph, signature, constants):
    """Replaces each factory node of ``graph`` whose arguments hold no graph value by a new
    CONSTANT_TENSOR input (``c_lifted_tensor_<k>``, before the user inputs) holding its value.
    Returns (graph, signature, constants), the same objects when there is none."""
    from .. import fx
    from .graph_signature import ExportGraphSignature, InputKind, InputSpec, TensorArgument

    found = []
    for node in graph.nodes:
        if _is_factory(node) and not is_random(node):
            has_node = []
            fx.map_arg((node.args, node.kwargs), has_node.append)
            if not has_node:
                found.append(node)
    if not found:
        return graph, signature, constants
    constants = dict(constants)
    specs = list(signature.input_specs)
    first_user = next(
        (i for i, s in enumerate(specs) if s.kind == InputKind.USER_INPUT), len(specs)
    )
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if first_user < len(placeholders):
        anchor = placeholders[first_user]
    else:  # no user input: after the last placeholder
        anchor = next(n for n in graph.nodes if n.op != "placeholder")
    k = 0
    for node in found:
        while f"lifted_tensor_{k}" in constants:
            k += 1
        target = f"lifted_tensor_{k}"
        with _ember().no_grad():
            value = node.target(*node.args, **node.kwargs)
        constants[target] = value
        with graph.inserting_before(anchor):
            ph = graph.placeholder("c_" + target)
        ph.meta["val"] = value
        spec = InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(ph.name), target)
        specs.insert(first_user, spec)
        first_user += 1
        node.replace_all_uses_with(ph)
        graph.erase_node(node)
    signature = ExportGraphSignature(specs, list(signature.output_specs))
    return graph, signature, constants
