"""Proxy: the stand-in value symbolic tracing passes through a program. Every operation on a
Proxy (operators, methods, attributes, ember functions) appends a Node to the tracer's graph and
returns a new Proxy; anything that needs a concrete value (``if proxy:``, iteration, ``.item()``)
raises TraceError, naming the line of user code."""

import builtins
import dis
import functools
import inspect
import linecache
import operator
import os
from bisect import bisect_left

from .. import overrides
from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase", "GraphAppendingTracer"]

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every recorded node walks the whole Python stack: one absolute path per source file.
_abspath = functools.lru_cache(maxsize=None)(os.path.abspath)


class TraceError(ValueError):
    """TraceError(message)

    Raised when symbolic tracing meets code that needs a concrete value of a traced one.
    """


def user_frame():
    """The innermost frame outside ember's own package: the user code being traced."""
    frame = inspect.currentframe()
    while frame is not None:
        path = _abspath(frame.f_code.co_filename)
        if not path.startswith(_EMBER_DIR + os.sep) and not path.startswith("<eval_with_key>"):
            return frame
        frame = frame.f_back
    return None


def where():
    """``File "model.py", line 12, in forward: if x.sum() > 0:`` for the traced user line."""
    frame = user_frame()
    if frame is None:
        return ""
    info = inspect.getframeinfo(frame, context=1)
    code = info.code_context[0].strip() if info.code_context else ""
    return f'File "{info.filename}", line {info.lineno}, in {info.function}: {code}'


_MODULES_DIR = os.path.join(_EMBER_DIR, "nn", "modules") + os.sep
_TRACE_FILE = os.path.join(_EMBER_DIR, "fx", "_symbolic_trace.py")


def stack_trace():
    """The frames of the call being traced in traceback form, outermost first (``File
    "model.py", line 12, in forward`` and its code line), from the traced forward down to the
    call: user code and the nn layers' ``forward``, as torch's node.meta["stack_trace"]."""
    lines = []
    frame = inspect.currentframe().f_back
    while frame is not None:
        code = frame.f_code
        path = _abspath(code.co_filename)
        if path == _TRACE_FILE and code.co_name == "trace":
            break  # the tracer's own caller is not the program
        ours = path.startswith(_EMBER_DIR + os.sep)
        layer = path.startswith(_MODULES_DIR) and code.co_name == "forward"
        if (not ours or layer) and not code.co_filename.startswith("<eval_with_key>"):
            # linecache, not inspect.getframeinfo: that resolves the frame's module each call,
            # milliseconds per node on deep stacks.
            text = linecache.getline(code.co_filename, frame.f_lineno).strip()
            entry = f'File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}'
            lines[:0] = [entry + (f"\n    {text}" if text else "")]
        frame = frame.f_back
    return "\n".join(lines)


def trace_error(message):
    loc = where()
    return TraceError(f"{message}\n(traced code: {loc})" if loc else message)


# Note [Routed callables]: while a function mode is active, ember's public functions are
# routing wrappers of the originals (ember/overrides.py). Graphs always hold the originals; code
# running under the mode (a Transformer's methods) sees the wrappers, so that `target is
# ember.relu` holds there as it does outside the mode.


class TracerBase:
    """The graph-building half of a tracer: turns Proxy operations into Nodes."""

    graph = None
    record_stack_traces = False
    module_stack = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        if kind == "call_function":
            target = overrides.original(target)
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self.module_stack:
            node.meta["nn_module_stack"] = dict(self.module_stack)
        if self.record_stack_traces:
            loc = stack_trace()
            if loc:
                node.meta["stack_trace"] = loc
        return node

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):  # fmt: skip
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(e) for e in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(e) for e in a) if type(a) in (tuple, list) else a
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        return a

    def to_bool(self, obj):
        raise trace_error("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        raise trace_error(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
            "loop or as a *args or **kwargs function argument. See the ember.fx docs for what "
            "control flow can be traced"
        )

    def keys(self, obj):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """GraphAppendingTracer(graph)

    A tracer that appends Proxy operations to an existing graph.
    """

    def __init__(self, graph):
        self.graph = graph
        self.module_stack = {}


def _has_proxy(args, kwargs=None):
    found = []

    def look(x):
        if isinstance(x, Proxy):
            found.append(x)
        return x

    map_aggregate(args, look)
    if kwargs:
        map_aggregate(kwargs, look)
    return found


_NO_VALUE_METHODS = frozenset({"item", "tolist", "numpy", "__array__"})


class Proxy:
    """Proxy(node, tracer=None)

    A traced value: operations on it record Nodes in ``tracer``'s graph instead of computing.
    """

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        raise trace_error("a Proxy cannot be deep-copied while tracing")

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks a known number of values: give getitem proxies for them.
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        i = bisect_left([ins.offset for ins in insts], frame.f_lasti)
        if i < len(insts) and insts[i].opname == "UNPACK_SEQUENCE":
            return (self[j] for j in range(insts[i].argval))
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def __len__(self):
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be "
            "recorded, please call ember.fx.wrap('len') at module scope"
        )

    def __int__(self):
        raise trace_error("int() of a symbolically traced value: its value is not known")

    def __float__(self):
        raise trace_error("float() of a symbolically traced value: its value is not known")

    def __index__(self):
        raise trace_error("a symbolically traced value cannot be used as a Python index")

    def keys(self):
        return self.tracer.keys(self)

    def __hash__(self):
        return id(self)

    @classmethod
    def __torch_function__(cls, orig_method, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        proxies = _has_proxy(args, kwargs)
        tracer = proxies[0].tracer
        return record_call(tracer, orig_method, args, kwargs)


class Attribute(Proxy):
    """Attribute(root, attr)

    ``proxy.attr``: a method call when called, else a getattr node made on first use.
    """

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", builtins.getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args, **kwargs):
        if self.attr in _NO_VALUE_METHODS:
            raise trace_error(
                f"Proxy.{self.attr}() needs the concrete value of a symbolically traced tensor; "
                "data-dependent code cannot be traced"
            )
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


_BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "div": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "matmul": operator.matmul,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
}
_COMPARE = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
_UNARY = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert, "abs": operator.abs}
# Tensor's dunder methods as the operator functions they implement (and whether reflected).
TENSOR_DUNDERS = {f"__{k}__": (v, False) for k, v in {**_BINARY, **_COMPARE, **_UNARY}.items()}
TENSOR_DUNDERS.update({f"__r{k}__": (v, True) for k, v in _BINARY.items()})
TENSOR_DUNDERS["__getitem__"] = (operator.getitem, False)
TENSOR_DUNDERS["__setitem__"] = (operator.setitem, False)


def _binary(fn):
    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", fn, (self, rhs), {})

    return impl


def _reflected(fn):
    def impl(self, lhs):
        return self.tracer.create_proxy("call_function", fn, (lhs, self), {})

    return impl


def _unary(fn):
    def impl(self):
        return self.tracer.create_proxy("call_function", fn, (self,), {})

    return impl


def _install_magic_methods(cls):
    for name, fn in {**_BINARY, **_COMPARE}.items():
        impl = _binary(fn)
        impl.__name__ = f"__{name}__"
        setattr(cls, f"__{name}__", impl)
    for name, fn in _BINARY.items():
        impl = _reflected(fn)
        impl.__name__ = f"__r{name}__"
        setattr(cls, f"__r{name}__", impl)
    for name, fn in _UNARY.items():
        impl = _unary(fn)
        impl.__name__ = f"__{name}__"
        setattr(cls, f"__{name}__", impl)
    cls.__getitem__ = _binary(operator.getitem)

    def __setitem__(self, key, value):  # noqa: N807
        # Recorded as operator.setitem, a side effect that dead-code elimination keeps.
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})

    cls.__setitem__ = __setitem__


_install_magic_methods(Proxy)


def record_call(tracer, func, args, kwargs):
    """The node for ember callable ``func`` called with Proxy arguments (seen by the tracing
    mode): Tensor operators become operator functions, Tensor methods call_method nodes, and the
    public functions call_function nodes."""
    name = _tensor_method_name(func)
    if name is not None:
        if name in TENSOR_DUNDERS:
            fn, reflected = TENSOR_DUNDERS[name]
            if reflected:
                args = (args[1], args[0]) + tuple(args[2:])
            if fn is operator.setitem:
                tracer.create_proxy("call_function", fn, tuple(args), kwargs)
                return None
            return tracer.create_proxy("call_function", fn, tuple(args), kwargs)
        if name in _NO_VALUE_METHODS:
            raise trace_error(
                f"Tensor.{name}() of a symbolically traced value: its value is not known; "
                "data-dependent code cannot be traced"
            )
        if name in ("__bool__", "__int__", "__float__", "__index__"):
            return tracer.to_bool(None)
        if name == "__iter__":
            return tracer.iter(None)
        return tracer.create_proxy("call_method", name, tuple(args), kwargs)
    return tracer.create_proxy("call_function", func, tuple(args), kwargs)


def _tensor_method_name(func):
    """The Tensor attribute name of ``func`` if it is one of Tensor's methods, else None."""
    from .._C import Tensor

    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        return None
    value = vars(Tensor).get(name)
    # While a function mode is active Tensor holds routing wrappers of the originals.
    if value is not None and (value is func or getattr(value, "__wrapped__", None) is func):
        return name
    return None
