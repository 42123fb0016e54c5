"""Capture: one real run of the function under a recording function mode (Note [Capture]).

Note [Capture]
Every public ember call made while the mode is active computes its real value (so the capture
run *is* an eager run and its result is returned to the caller) and becomes a node of an
ember.fx Graph: call_function with the public callable or operator.*, call_method with the
Tensor method's name, get_attr for parameters, buffers and other tensors the function reads
from modules, globals or closures. The graph is valid only if every tensor that reaches a
recorded op (or the output) is known: an input, a recorded op's result, or one of those named
tensors. A tensor made by a call the mode could not see, a data-dependent Python value
(``.item()``, ``bool()``), or a grad-mode switch inside the function is a graph break: the
recording stops, the run finishes eagerly, and the function is not replayed.

Under dynamic capture the sizes the function reads (``x.shape``, ``x.size(d)``, ``x.numel()``)
are SymInts: their arithmetic becomes graph nodes, so a view whose size derives from the input
is recomputed per call; any use that would bake a size into Python control flow (a comparison,
``int()``, indexing a list, ``range``) "specializes" the capture, which then guards exact
shapes."""

import builtins
import inspect
import operator
import os
import traceback

from .. import _C
from ..fx import Graph
from ..fx._codegen import BINARY_OPS
from ..overrides import TorchFunctionMode
from . import unbacked
from .exc import Unsupported

_Tensor = _C.Tensor
_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---- how a call becomes a node --------------------------------------------------------------

_BINARY = {
    "__add__": operator.add,
    "__sub__": operator.sub,
    "__mul__": operator.mul,
    "__truediv__": operator.truediv,
    "__div__": operator.truediv,
    "__floordiv__": operator.floordiv,
    "__mod__": operator.mod,
    "__pow__": operator.pow,
    "__matmul__": operator.matmul,
    "__and__": operator.and_,
    "__or__": operator.or_,
    "__xor__": operator.xor,
    "__lshift__": operator.lshift,
    "__rshift__": operator.rshift,
    "__eq__": operator.eq,
    "__ne__": operator.ne,
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
    "__getitem__": operator.getitem,
}
_REFLECTED = {
    "__radd__": operator.add,
    "__rsub__": operator.sub,
    "__rmul__": operator.mul,
    "__rtruediv__": operator.truediv,
    "__rdiv__": operator.truediv,
    "__rfloordiv__": operator.floordiv,
    "__rmod__": operator.mod,
    "__rpow__": operator.pow,
    "__rmatmul__": operator.matmul,
    "__rand__": operator.and_,
    "__ror__": operator.or_,
    "__rxor__": operator.xor,
    "__rlshift__": operator.lshift,
    "__rrshift__": operator.rshift,
}
_INPLACE = {
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
    "__idiv__": "div_",
    "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
    "__ipow__": "pow_",
    "__iand__": "bitwise_and_",
    "__ior__": "bitwise_or_",
    "__ixor__": "bitwise_xor_",
    "__ilshift__": "bitwise_left_shift_",
    "__irshift__": "bitwise_right_shift_",
}
_UNARY = {
    "__neg__": operator.neg,
    "__pos__": operator.pos,
    "__abs__": operator.abs,
    "__invert__": operator.invert,
}
# Calls whose Python result depends on tensor data: the graph cannot carry them.
_DATA_DEPENDENT = frozenset(
    "item tolist numpy __bool__ __int__ __float__ __index__ __complex__ __contains__ __array__ "
    "equal allclose is_nonzero backward register_hook retain_grad "
    "register_post_accumulate_grad_hook".split()
)
# Calls whose Python result is metadata the guards pin down (shape, dtype, layout, ...).
# The data reads captured as graph values under capture_scalar_outputs / fullgraph.
# (``int(t)``/``float(t)`` must return a real number to Python: under fullgraph, on an input
# tensor, they read the value and guard on it (_VALUE_READS); elsewhere they stay breaks.)
_SCALAR_READS = frozenset({"item", "tolist"})
_VALUE_READS = frozenset({"__int__", "__float__", "__index__"})
_METADATA = frozenset(
    "dim ndimension is_contiguous storage_offset element_size is_floating_point is_complex "
    "is_signed get_device type data_ptr is_pinned is_shared is_inference has_names "
    "result_type promote_types can_cast is_same_size broadcast_shapes is_conj is_neg "
    "is_nonzero_size __len__ stride".split()
)
_SIZES = frozenset({"size", "numel", "nelement"})
# Properties whose value is a tensor: recorded as getattr nodes.
_TENSOR_PROPERTIES = frozenset("T mT H mH real imag data grad".split())


_TABLES = []


def _tables():
    """(id -> method name, id -> property name) over Tensor's attributes, as the mode receives
    them. Built on first use: ember's import wraps most methods (argument, sparse and complex
    guards) after this module is loaded, and a table of the earlier objects misses them."""
    if not _TABLES:
        from ..overrides import tensor_attributes

        methods, props = {}, {}
        for name, value in tensor_attributes().items():
            if isinstance(value, property):
                props[id(value)] = name
            else:
                # the guards' layers too (a layer may hand the mode the object it wraps)
                while callable(value):
                    methods[id(value)] = name
                    value = getattr(value, "__wrapped__", None)
        _TABLES.extend((methods, props))
    return _TABLES


def is_user_code(filename):
    """True for frames of the user's program (not ember's package, not Python's library)."""
    return not (
        filename.startswith(_EMBER_DIR) or filename.startswith(_STDLIB) or "<frozen" in filename
    )


_STDLIB = os.path.dirname(os.__file__)


def user_stack():
    """The user's frames of the current stack, innermost last (for break reasons), and the
    innermost ember frame below them where the break happened inside a library module."""
    stack = [f for f in traceback.extract_stack()[:-2] if not f.filename.endswith("capture.py")]
    stack = [f for f in stack if "/overrides.py" not in f.filename]
    # graph_break() itself is the user's statement, not a library frame to point at
    stack = [f for f in stack if not f.filename.endswith(os.path.join("_dynamo", "user_api.py"))]
    user = [f for f in stack if is_user_code(f.filename)][-4:]
    if stack and not is_user_code(stack[-1].filename):
        user.append(stack[-1])
    return user


# ---- symbolic sizes ------------------------------------------------------------------------


class SymInt:
    """A size read under dynamic capture: it carries its value and the graph node computing it.
    Arithmetic stays symbolic; anything that needs the concrete number specializes the capture."""

    __slots__ = ("value", "node", "cap", "sources", "expr")

    def __init__(self, value, node, cap, sources, expr=None):
        # sources: the (input index, dim) sizes (or ("arg", expr) arguments) the value derives
        # from, None: unknown; expr: the value as a Python expression over the call's
        # ``args``/``kwargs`` where it derives from number arguments only (for guards)
        self.value, self.node, self.cap, self.sources = value, node, cap, sources
        self.expr = expr

    def _concrete(self):
        if not self.cap.in_call and not self.cap.finished:
            self.cap.specialize(self.sources)
        return self.value

    _NUMBERS = (int,)

    def _arith(self, other, fn, reflected=False):
        sources = self.sources
        if isinstance(other, SymInt):
            ov, on, oexpr = other.value, other.node, other.expr
            sources = None if sources is None or other.sources is None else sources | other.sources
        elif type(other) in self._NUMBERS:
            ov, on, oexpr = other, other, _literal(other)
        elif isinstance(other, _Tensor):
            return NotImplemented  # the tensor's own (reflected) operator records the call
        else:
            return fn(other, self._concrete()) if reflected else fn(self._concrete(), other)
        if reflected:
            value, args = fn(ov, self.value), (on, self.node)
        else:
            value, args = fn(self.value, ov), (self.node, on)
        node = self.cap.graph.call_function(fn, args)
        node.meta["val"] = value
        if isinstance(self, UnbackedScalar) or isinstance(other, UnbackedScalar):
            return UnbackedScalar(value, node, self.cap, None)
        if isinstance(self, SymArg) or isinstance(other, SymArg):
            expr = None
            if self.expr is not None and oexpr is not None:
                a, b = (oexpr, self.expr) if reflected else (self.expr, oexpr)
                expr = f"({a} {BINARY_OPS[fn]} {b})"
            return SymArg(value, node, self.cap, sources, expr)
        self.cap.sym_nodes.add(node)
        return SymInt(value, node, self.cap, sources)

    def __add__(self, o):
        return self._arith(o, operator.add)

    def __radd__(self, o):
        return self._arith(o, operator.add, True)

    def __sub__(self, o):
        return self._arith(o, operator.sub)

    def __rsub__(self, o):
        return self._arith(o, operator.sub, True)

    def __mul__(self, o):
        return self._arith(o, operator.mul)

    def __rmul__(self, o):
        return self._arith(o, operator.mul, True)

    def __floordiv__(self, o):
        return self._arith(o, operator.floordiv)

    def __rfloordiv__(self, o):
        return self._arith(o, operator.floordiv, True)

    def __mod__(self, o):
        return self._arith(o, operator.mod)

    def __neg__(self):
        return self._arith(-1, operator.mul)

    def __index__(self):
        return self._concrete()

    __int__ = __index__

    def __float__(self):
        return float(self._concrete())

    def __bool__(self):
        return bool(self._concrete())

    def __hash__(self):
        return hash(self._concrete())

    def __repr__(self):
        return repr(self._concrete())

    __str__ = __repr__

    def __format__(self, spec):
        return format(self._concrete(), spec)

    def __truediv__(self, o):
        return self._concrete() / (o._concrete() if isinstance(o, SymInt) else o)

    def __rtruediv__(self, o):
        return o / self._concrete()

    def __pow__(self, o):
        return self._concrete() ** (o._concrete() if isinstance(o, SymInt) else o)


def _literal(v):
    """``v`` as Python source, or None (a value a guard cannot spell, such as nan)."""
    if type(v) is int or (type(v) is float and v == v and abs(v) != float("inf")):
        return repr(v)
    return None


class _SymNumber(SymInt):
    """Arithmetic of symbolic numbers that may be floats (the ``/`` and ``**`` stay symbolic)."""

    __slots__ = ()
    _NUMBERS = (int, float)

    def __truediv__(self, o):
        return self._arith(o, operator.truediv)

    def __rtruediv__(self, o):
        return self._arith(o, operator.truediv, True)

    def __pow__(self, o):
        return self._arith(o, operator.pow)

    def __rpow__(self, o):
        return self._arith(o, operator.pow, True)

    def __neg__(self):
        return self._arith(0, operator.sub, True)


class SymArg(_SymNumber):
    """A Python int/float argument captured as a graph input (``dynamic=True``, or automatic
    dynamic after a second value): arithmetic stays in the graph; a comparison whose sides are
    expressions of number arguments becomes a guard (``n > 3``: later calls must give the same
    outcome); any other concrete use specializes the argument (guarded by value)."""

    __slots__ = ()


def _guarded_compare(fn, symbol):
    def method(self, other):
        oexpr = other.expr if isinstance(other, SymInt) else None
        if type(other) in (int, float):
            oexpr = _literal(other)
        cap = self.cap
        if (
            self.expr is None
            or oexpr is None
            or cap.in_call
            or cap.finished
            or isinstance(other, UnbackedScalar)
        ):
            ov = other._concrete() if isinstance(other, SymInt) else other
            return fn(self._concrete(), ov)
        result = fn(self.value, other.value if isinstance(other, SymInt) else other)
        cap.value_guards.append((f"({self.expr} {symbol} {oexpr})", bool(result)))
        return result

    return method


for _name, _fn, _sym in (
    ("__eq__", operator.eq, "=="),
    ("__ne__", operator.ne, "!="),
    ("__lt__", operator.lt, "<"),
    ("__le__", operator.le, "<="),
    ("__gt__", operator.gt, ">"),
    ("__ge__", operator.ge, ">="),
):
    setattr(SymArg, _name, _guarded_compare(_fn, _sym))
SymArg.__hash__ = SymInt.__hash__
del _name, _fn, _sym


class UnbackedScalar(_SymNumber):
    """A Python number read from tensor data (``.item()``, ``int(t)``, ``.tolist()``) under
    ``capture_scalar_outputs`` or ``fullgraph=True``: a graph value like torch's unbacked
    SymInt/SymFloat. Arithmetic stays in the graph; a use that needs the number itself (a branch,
    ``range``, indexing, formatting) cannot be guarded: a graph break, or under ``fullgraph``
    torch's UserError."""

    __slots__ = ()
    _NUMBERS = (int, float, bool)

    def _concrete(self):
        if not self.cap.in_call and not self.cap.finished:
            self.cap.data_dependent_use(self)
        return self.value


class SymBool(unbacked.SymBoolMethods, UnbackedScalar):
    """A comparison of a number read from data (torch's unbacked SymBool, _dynamo/unbacked.py):
    ``ember._check`` on it is a runtime assertion; ops take it as its graph node."""

    __slots__ = ()


def _unbacked_compare(fn):
    def method(self, other):
        if isinstance(other, SymInt) or type(other) in (int, float, bool):
            value, node = unbacked.compare(fn, self, other, self.cap)
            return SymBool(value, node, self.cap, None)
        return fn(self._concrete(), other)

    return method


for _fn in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
    setattr(UnbackedScalar, f"__{_fn.__name__}__", _unbacked_compare(_fn))
UnbackedScalar.__hash__ = SymInt.__hash__


def _compare(fn):
    def method(self, other):
        ov = other._concrete() if isinstance(other, SymInt) else other
        return fn(self._concrete(), ov)

    return method


for _name, _fn in (
    ("__eq__", operator.eq),
    ("__ne__", operator.ne),
    ("__lt__", operator.lt),
    ("__le__", operator.le),
    ("__gt__", operator.gt),
    ("__ge__", operator.ge),
):
    setattr(SymInt, _name, _compare(_fn))
del _name, _fn


def _real(a):
    """``a`` with every SymInt replaced by its value (what the real call receives)."""
    if isinstance(a, SymInt):
        return a.value
    t = type(a)
    if t is tuple or t is list:
        if any(isinstance(x, (SymInt, tuple, list)) for x in a):
            return t(_real(x) for x in a)
        return a
    if t is dict:
        return {k: _real(v) for k, v in a.items()}
    if isinstance(a, tuple) and any(isinstance(x, SymInt) for x in a):
        return tuple(_real(x) for x in a)  # ember.Size of SymInts
    return a


def _frame_arguments(frame):
    """(args, kwargs) a function's frame received: positional parameters (and *args) as args,
    keyword-only ones (and **kwargs) as kwargs."""
    code, loc = frame.f_code, frame.f_locals
    names = code.co_varnames
    n, k = code.co_argcount, code.co_kwonlyargcount
    args = [loc[p] for p in names[:n]]
    kwargs = {p: loc[p] for p in names[n : n + k]}
    i = n + k
    if code.co_flags & inspect.CO_VARARGS:
        args += list(loc[names[i]])
        i += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        kwargs.update(loc[names[i]])
    return tuple(args), kwargs


def _tensor_leaves(value, path=()):
    if isinstance(value, _Tensor):
        yield path, value
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _tensor_leaves(v, (*path, i))


def _meta(value):
    if isinstance(value, _Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return tuple(_meta(v) for v in value)
    return value


def _writes_arguments(target):
    """An operator overload whose schema marks an argument written (a custom op's mutates_args):
    a call of it returning None is kept in the graph, as an in-place method is."""
    schema = getattr(target, "_schema", None)
    return any(a.is_write for a in getattr(schema, "arguments", ()))


def _break_reason(name):
    """A data-dependent read's break reason, in torch's words where torch has them."""
    what = f"data-dependent Python value: Tensor.{name.strip('_')}() / {name}"
    if name in ("item", "__int__", "__float__", "__index__"):
        return f"{what} (Unsupported Tensor.item() call with capture_scalar_outputs=False)"
    if name == "__bool__":
        from ._bool_errors import bool_reason

        return bool_reason(what)
    if name == "tolist":
        return f"{what} (Data dependent operator)"
    return what


_NO_VALUE = object()
_unbind = _Tensor.unbind


class GraphBreak(Exception):
    """Internal: the capture cannot go on; ``value`` is the call's result where it already ran."""

    def __init__(self, reason, value=_NO_VALUE):
        super().__init__(reason)
        self.value = value


class Capture(TorchFunctionMode):
    """The recording mode and the graph it builds (Note [Capture]).

    ``named`` maps id(tensor) -> qualified name for the tensors the graph may read as get_attr
    (parameters, buffers and tensor attributes of guarded modules, tensors of globals/closures);
    ``find_named`` is asked for tensors found later (globals of helpers seen during the run)."""

    def __init__(self, named, find_named, dynamic, fullgraph):
        self.graph = Graph()
        self.named = named
        self.find_named = find_named
        self.dynamic = dynamic
        self.fullgraph = fullgraph
        self.nodes = {}  # id(tensor) -> Node for tensors the graph computes or reads
        self.pending = {}  # id(tensor) -> (Node, path): an element of a recorded tuple output
        self.keep = []  # every tensor keyed above, kept alive so its id stays unique
        self.attrs = {}  # get_attr target -> object, the GraphModule's root
        self.breaks = []  # (reason, user stack)
        self.stopped = False
        self.finished = False  # the capture run is over (a SymInt the caller kept is a number)
        self.in_call = False
        self.specialized = False  # a size of unknown origin was used concretely
        self.static_dims = set()  # (input index, dim) used concretely
        self.input_index = {}  # id(placeholder tensor) -> its index
        self.input_exprs = {}  # id(input tensor) -> its expression over args/kwargs (guards)
        self.sym_nodes = set()
        self.value_guards = []  # (Python expression over args/kwargs, its outcome) to guard
        self.size_nodes = {}
        self.placeholders = []
        self.grad_enabled = _C.is_grad_enabled()
        self.log = None  # segments.SegmentLog where partial graphs are possible
        self.value_checks = []  # (item node, int/float, value) of int(t)/float(t) reads
        self.modules = {}  # label ("" the compiled module, G_name, C_name) -> module it reaches
        self.unbacked_names = {}  # node of a number read from data -> torch's symbol (u0, ...)
        from . import config

        self.capture_scalars = bool(config.capture_scalar_outputs or fullgraph)
        self.dynamic_output_shapes = config.capture_dynamic_output_shape_ops
        self.opaque = None  # (function, frame, args, kwargs) of the allow_in_graph call running

    # ---- breaks -----------------------------------------------------------------------------

    def graph_break(self, reason):
        if self.stopped:
            return
        from .user_api import _error_on_graph_break

        if _error_on_graph_break[0]:
            self.stopped = True
            self.breaks.append((reason, user_stack()))
            raise Unsupported(f"{reason} (inside error_on_graph_break(True))")
        log = self.log
        if log is not None and not self.fullgraph:
            # partial graphs: the current call runs eagerly and recording goes on after it
            last = self.breaks[-1][0] if self.breaks else None
            if not log.cur_eager and not (log.last_kind == "eager" and last == reason):
                self.breaks.append((reason, user_stack()))
            log.cur_eager = True
            return
        self.stopped = True
        self.breaks.append((reason, user_stack()))
        if self.fullgraph:
            from ._bool_errors import fullgraph_error

            raise fullgraph_error(reason, self.breaks[-1][1]) or Unsupported(reason)

    # ---- inputs and known tensors -----------------------------------------------------------

    def add_number_input(self, name, value, expr):
        """A Python int/float argument as a graph input: the SymArg the function receives."""
        node = self.graph.placeholder(name)
        node.meta["val"] = value
        self.placeholders.append(node)
        return SymArg(value, node, self, frozenset({("arg", expr)}), expr)

    def add_input(self, name, tensor, dynamic_dims=()):
        node = self.graph.placeholder(name)
        node.meta["val"] = tensor.detach()
        node.meta["dynamic_dims"] = tuple(dynamic_dims)
        self.input_index.setdefault(id(tensor), len(self.placeholders))
        self.placeholders.append(node)
        if id(tensor) not in self.nodes:
            self._bind(tensor, node)
        if self.log is not None:
            self.log.add_input(tensor, self.nodes[id(tensor)])
        return node

    def _bind(self, tensor, node):
        self.nodes[id(tensor)] = node
        self.pending.pop(id(tensor), None)
        self.keep.append(tensor)

    def node_of(self, t):
        """The node computing tensor ``t``, or None where the graph cannot know it."""
        node = self.nodes.get(id(t))
        if node is not None:
            return node
        hit = self.pending.pop(id(t), None)
        if hit is not None:
            node, path = hit
            for i in path:
                node = self.graph.call_function(operator.getitem, (node, i))
            node.meta["val"] = t.detach()
            self._bind(t, node)
            return node
        name = self.named.get(id(t))
        if name is None and self.find_named is not None:
            name = self.find_named(t)
        if name is None:
            node = self.log.external_node(t) if self.log is not None else None
            if node is not None:
                self._bind(t, node)
            return node
        node = self.graph.get_attr(name)
        node.meta["val"] = t.detach()
        self.attrs[name] = t
        self._bind(t, node)
        return node

    def to_arg(self, a):
        """A call argument as a graph argument: tensors -> nodes, SymInts -> their nodes."""
        if isinstance(a, _Tensor):
            node = self.node_of(a)
            if node is None:
                raise GraphBreak(
                    "a tensor produced outside the captured graph (by a call the capture could "
                    "not see, e.g. an ember-internal function) reaches a recorded op"
                )
            return node
        if isinstance(a, SymInt):
            return a.node if a.cap is self else a.value
        t = type(a)
        if (t is int or t is float) and self.log is not None and self.log.number_slot:
            node = self.log.number_node(a)
            if node is not None:
                return node
        if t is tuple or t is list or isinstance(a, tuple):
            items = [self.to_arg(x) for x in a]
            return list(items) if t is list else tuple(items)
        if t is dict:
            return {k: self.to_arg(v) for k, v in a.items()}
        if t is slice:
            return slice(self.to_arg(a.start), self.to_arg(a.stop), self.to_arg(a.step))
        return a

    # ---- sizes ------------------------------------------------------------------------------

    def _size_node(self, t):
        key = id(t)
        node = self.size_nodes.get(key)
        if node is None:
            node = self.graph.call_method("size", (self.nodes[key],))
            node.meta["val"] = tuple(t.shape)
            self.sym_nodes.add(node)
            self.size_nodes[key] = node
        return node

    def sym_size(self, t, dim):
        """The size of ``t`` along ``dim``: a SymInt, or the int where sizes stay static."""
        value = t.shape[dim]
        if not self.dynamic or value < 2 or id(t) not in self.nodes:
            return value
        node = self.graph.call_function(operator.getitem, (self._size_node(t), dim % t.dim()))
        node.meta["val"] = value
        self.sym_nodes.add(node)
        i = self.input_index.get(id(t))
        sources = frozenset({(i, dim % t.dim())}) if i is not None else None
        return SymInt(value, node, self, sources)

    def specialize(self, sources):
        if sources is None:
            self.specialized = True
        else:
            self.static_dims |= sources

    def sym_shape(self, t):
        from .._size import Size

        return Size(self.sym_size(t, d) for d in range(t.dim()))

    def _sizes_call(self, name, t, args, kwargs):
        if name == "size":
            dim = args[1] if len(args) > 1 else kwargs.get("dim")
            if dim is None:
                return self.sym_shape(t)
            return self.sym_size(t, dim)
        value = t.numel()
        if not self.dynamic:
            return value
        n = 1
        for d in range(t.dim()):
            n = n * self.sym_size(t, d)
        return n

    # ---- allow_in_graph functions: one node each -------------------------------------------

    def begin_opaque(self, fn, frame):
        """A call of an allow_in_graph function starts (the side-effect watcher's profile hook
        sees it): its ops run unrecorded until it returns."""
        if self.opaque is None and not self.stopped and not self.finished:
            args, kwargs = _frame_arguments(frame)
            self.opaque = (fn, frame, args, kwargs)

    def end_opaque(self, frame, value):
        """The call returned ``value``: one call_function node of the function (torch's form).
        Runs inside a profile hook, so nothing may raise out of it."""
        if self.opaque is None or self.opaque[1] is not frame:
            return
        fn, _, args, kwargs = self.opaque
        try:  # self.opaque stays set: ops run while recording (detach) pass the mode
            self._record_opaque(fn, args, kwargs, value)
        finally:
            self.opaque = None

    def _record_opaque(self, fn, args, kwargs, value):
        if self.log is not None:  # a replay re-runs fn's own ops, which the log has not seen
            self.log.failed = self.log.failed or "a call of an allow_in_graph function"
        name = getattr(fn, "__name__", "fn")
        try:
            self._record(
                "call_function", fn, args, kwargs, lambda *a, **k: value, f"{name} (allow_in_graph)"
            )
        except GraphBreak as e:
            try:
                self.graph_break(str(e))
            except Unsupported:  # fullgraph: stopped, the break is reported after the run
                pass

    # ---- the mode ---------------------------------------------------------------------------

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.opaque is not None:  # inside an allow_in_graph function: its node is recorded
            return func(*_real(args), **_real(kwargs))
        log = self.log
        if log is None or log.failed or self.stopped:
            return self._handle(func, types, args, kwargs)
        kwargs = kwargs or {}
        sig = log.norm((args, kwargs))
        log.begin()
        if log.cur_eager:  # inside a function marked disable
            value = func(*_real(args), **_real(kwargs))
        else:
            value = self._handle(func, types, args, kwargs)
        log.end(func, sig, value, (args, kwargs))
        return value

    def _handle(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.stopped:
            return func(*_real(args), **_real(kwargs))
        if _C.is_grad_enabled() is not self.grad_enabled:
            self.graph_break("grad mode changed inside the function (no_grad / enable_grad)")
            return func(*_real(args), **_real(kwargs))
        methods, properties = _tables()
        name = methods.get(id(func))
        prop = None
        if name is None and getattr(func, "__name__", None) == "__get__":
            prop = properties.get(id(getattr(func, "__self__", None)))
        try:
            if prop is not None:
                return self._property(func, prop, args[0])
            if name is not None:
                return self._method(func, name, args, kwargs)
            return self._record(
                "call_function", func, args, kwargs, func, getattr(func, "__name__", "")
            )
        except GraphBreak as e:
            self.graph_break(str(e))
            if e.value is not _NO_VALUE:
                return e.value
            return func(*_real(args), **_real(kwargs))

    def _property(self, func, name, t):
        value = func(t)
        if name in _TENSOR_PROPERTIES and isinstance(value, _Tensor):
            return self._node_for_output(
                "call_function", builtins.getattr, (self.to_arg(t), name), {}, value
            )
        if name == "shape" and self.dynamic:
            return self.sym_shape(t)
        if isinstance(value, _Tensor):
            raise GraphBreak(f"Tensor.{name} gives a tensor the capture does not model")
        return value

    def _method(self, func, name, args, kwargs):
        if name in _BINARY:
            return self._record("call_function", _BINARY[name], args, kwargs, func, name)
        if name in _REFLECTED:
            swapped = (args[1], args[0], *args[2:])
            return self._record(
                "call_function", _REFLECTED[name], swapped, kwargs, func, name, args
            )
        if name in _INPLACE:
            return self._record("call_method", _INPLACE[name], args, kwargs, func, name)
        if name in _UNARY:
            return self._record("call_function", _UNARY[name], args, kwargs, func, name)
        if name == "__setitem__":
            return self._record("call_function", operator.setitem, args, kwargs, func, name)
        if name == "__iter__":
            items = self._record("call_method", "unbind", args[:1], {}, _unbind, "unbind")
            return iter(items)
        if name in _SIZES and args and isinstance(args[0], _Tensor):
            return self._sizes_call(name, args[0], args, kwargs)
        if name == "__len__" and self.dynamic:
            return len(args[0])  # len() needs a real int: the size is used concretely
        return self._record("call_method", name, args, kwargs, func, name)

    def _record(self, op, target, args, kwargs, func, name, call_args=None):
        if name in _SCALAR_READS and self.capture_scalars and args and not kwargs:
            scalar = self._scalar_read(name, args[0], func)
            if scalar is not None:
                return scalar
        if name in _VALUE_READS and self.fullgraph and args and not kwargs:
            value = self._guarded_value_read(args[0], func)
            if value is not None:
                return value
        if name in _VALUE_READS and self.capture_scalars and args and not kwargs:
            value = self._checked_value_read(args[0], func)
            if value is not None:
                return value
        if name in _DATA_DEPENDENT:
            raise GraphBreak(_break_reason(name))
        if not self.dynamic_output_shapes:
            reason = unbacked.dynamic_shape_reason(name, args, kwargs)
            if reason is not None:
                raise GraphBreak(reason)
        try:
            gargs = self.to_arg(tuple(args))
            gkwargs = self.to_arg(kwargs)
        except GraphBreak as e:
            raise GraphBreak(f"{e} ({name})") from None
        real_args = _real(tuple(call_args if call_args is not None else args))
        self.in_call = True
        try:
            value = func(*real_args, **_real(kwargs))
        finally:
            self.in_call = False
        if op == "call_function" and target is operator.setitem:
            self.graph.call_function(operator.setitem, gargs, gkwargs)
            return value
        has_tensor = isinstance(value, _Tensor) or any(True for _ in _tensor_leaves(value))
        if not has_tensor:
            if name in _METADATA or name in _SIZES:
                return value
            if value is None and (name.endswith("_") or _writes_arguments(target)):
                self.graph.create_node(op, target, gargs, gkwargs)
                return value
            raise GraphBreak(f"data-dependent Python value from {name}()", value)
        node = self.graph.create_node(op, target, gargs, gkwargs)
        return self._bind_output(node, value)

    def _scalar_read(self, name, t, func):
        """``t.item()``/``t.tolist()`` as graph values (None: a break)."""
        if not isinstance(t, _Tensor) or self.node_of(t) is None:
            return None
        if name == "tolist" and (t.is_floating_point() or t.is_complex()):
            if self.fullgraph:
                raise Unsupported(
                    "Tensor.tolist() with non-integer tensor: the capture reads only integer "
                    "tensors' lists as graph values"
                )
            return None
        if t.numel() != 1 and name != "tolist":
            return None  # eager's own error, raised by the call in the break path
        node = self.node_of(t)
        value = func(t)
        if name == "tolist":
            n = self.graph.call_method("tolist", (node,))
            n.meta["val"] = value
            return self._unbacked_list(value, n)
        n = self.graph.call_method("item", (node,))
        n.meta["val"] = value
        self.unbacked_names[n] = f"u{len(self.unbacked_names)}"
        return UnbackedScalar(value, n, self, None)

    def _guarded_value_read(self, t, func):
        """``int(t)``/``float(t)`` of a one-element input tensor under fullgraph: Python needs
        a real number, so the capture specializes on the value and guards it (a later call with
        another value captures again), as torch specializes such reads. None: not an input."""
        expr = self.input_exprs.get(id(t)) if isinstance(t, _Tensor) else None
        if expr is None or t.numel() != 1 or t.is_complex():
            return None
        value = func(t)
        literal = _literal(value)
        if literal is None:
            return None
        self.value_guards.append((f"({expr}.item() == {literal})", True))
        return value

    def _checked_value_read(self, t, func):
        """``int(t)``/``float(t)`` of a one-element tensor the graph computes, under
        capture_scalar_outputs / fullgraph (torch captures them there as it does ``.item()``).
        Python needs a real number, so the capture goes on with the value as a constant; the
        graph also returns the tensor's value, and a later call whose value differs runs the
        function eagerly instead (eval_frame's value checks). None: not such a read."""
        if not isinstance(t, _Tensor) or self.node_of(t) is None:
            return None
        if t.numel() != 1 or t.is_complex():
            return None
        if self.log is not None:  # a replay of segments could not check the value: no split
            self.log.failed = "int()/float() of a captured tensor"
        value = func(t)
        n = self.graph.call_method("item", (self.node_of(t),))
        n.meta["val"] = t.item()
        self.value_checks.append((n, type(value), value))
        return value

    def _unbacked_list(self, value, node):
        if not isinstance(value, list):
            self.unbacked_names[node] = f"u{len(self.unbacked_names)}"
            return UnbackedScalar(value, node, self, None)
        out = []
        for i, v in enumerate(value):
            n = self.graph.call_function(operator.getitem, (node, i))
            n.meta["val"] = v
            out.append(self._unbacked_list(v, n))
        return out

    def data_dependent_use(self, scalar):
        """A captured scalar's value is needed by Python (a branch, ``range``, formatting)."""
        expr = unbacked.expression(scalar.node, self)
        reason = f"Could not guard on data-dependent expression {expr} (unhinted: {expr})"
        if self.fullgraph:
            from .exc import UserError

            raise UserError(
                f"Consider annotating your code using torch._check*(). {reason}.  (Size-like "
                f"symbols: none)\n\nA Python branch or conversion needs the value "
                f"({scalar.value!r} here) of a number read from tensor data; consider "
                "ember.where / tensor ops instead."
            )
        self.graph_break(reason)

    def _node_for_output(self, op, target, gargs, gkwargs, value):
        node = self.graph.create_node(op, target, gargs, gkwargs)
        return self._bind_output(node, value)

    def _bind_output(self, node, value):
        node.meta["val"] = _meta(value)
        if isinstance(value, _Tensor):
            self._bind(value, node)
        else:
            for path, leaf in _tensor_leaves(value):
                if id(leaf) not in self.nodes:
                    self.pending[id(leaf)] = (node, path)
                    self.keep.append(leaf)
                elif path and self.nodes[id(leaf)] is not None:
                    # an output that is an existing tensor (an in-place op's result): rebind
                    self.pending[id(leaf)] = (node, path)
                    self.nodes.pop(id(leaf))
        return value

    def drop_unused_sym_nodes(self):
        """Removes size nodes no op ended up using (they are created eagerly per read)."""
        changed = True
        while changed:
            changed = False
            for node in reversed(list(self.graph.nodes)):
                if node in self.sym_nodes and not node.users:
                    self.graph.erase_node(node)
                    self.sym_nodes.discard(node)
                    changed = True
