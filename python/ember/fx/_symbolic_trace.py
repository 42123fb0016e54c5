"""symbolic_trace and Tracer: run a module's forward (or a function) on Proxies and record what it
does into a Graph, as torch.fx does.

How calls are seen (Note [fx interception]): ember functions and Tensor methods called with a
Proxy reach the tracer through an ``ember.overrides.TorchFunctionMode``; operators and methods
on a Proxy itself are the Proxy's own. Module calls and parameter reads are seen by giving each
submodule of the root, for the duration of the trace, a subclass of its own class whose
``__call__`` asks the tracer (leaf modules become call_module nodes, others are traced through)
and whose ``__getattr__`` turns parameters into get_attr nodes; the original classes are put
back when tracing ends, also on error. Free functions named with ``wrap`` and ``math``
functions in the traced code's globals are swapped for recording versions the same way."""

import functools
import inspect
import math
import threading

from .. import _C
from .._handed_args import handed
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..overrides import TorchFunctionMode
from .graph import Graph
from .graph_module import GraphModule
from .proxy import TracerBase, _has_proxy, record_call

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH"]

_local = threading.local()
_wrapped_fns = []  # (globals dict, name) registered by wrap()


class _PH:
    def __repr__(self):
        return "PH"


PH = _PH()  # a placeholder value inside concrete_args


def _tracer_stack():
    s = getattr(_local, "tracers", None)
    if s is None:
        s = _local.tracers = []
    return s


def is_fx_tracing():
    """is_fx_tracing() -> bool

    True while ``symbolic_trace`` (a Tracer) runs the traced code."""
    return bool(_tracer_stack())


def wrap(fn_or_name):
    """wrap(fn_or_name) -> fn_or_name

    Called at module scope, makes symbolic tracing record calls of the module-level function
    ``fn_or_name`` (the function or its name) as call_function nodes instead of tracing into it.
    """
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    _wrapped_fns.append((frame.f_globals, name))
    return fn_or_name


class _TracingMode(TorchFunctionMode):
    def __init__(self, tracer):
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not _has_proxy(args, kwargs) and not self.tracer._records_constant_call(func, kwargs):
            return func(*args, **kwargs)
        if _constant_cond(func, args, kwargs):  # torch specializes: only the taken branch traces
            return func(*args, **kwargs)
        return record_call(self.tracer, func, *handed(func, args, kwargs))


def _constant_cond(func, args, kwargs):
    """Whether `func` is ember.cond called with a predicate that is not traced (a Python bool)."""
    from .._higher_order_ops.cond import is_cond

    return is_cond(func) and not kwargs and bool(args) and not _has_proxy(args[:1], {})


def _recording_wrapper(orig):
    @functools.wraps(orig)
    def wrapped(*args, **kwargs):
        proxies = _has_proxy(args, kwargs)
        if proxies:
            return proxies[0].tracer.create_proxy("call_function", orig, args, kwargs)
        return orig(*args, **kwargs)

    wrapped.__fx_original__ = orig
    return wrapped


_swap_classes = {}


def _traced_class(cls):
    """A subclass of module class ``cls`` whose calls and attribute reads go to the tracer."""
    sub = _swap_classes.get(cls)
    if sub is not None:
        return sub

    def __call__(self, *args, **kwargs):  # noqa: N807
        stack = _tracer_stack()
        if not stack:
            return cls.__call__(self, *args, **kwargs)
        return stack[-1]._module_call(self, cls, args, kwargs)

    def __getattr__(self, name):  # noqa: N807
        value = cls.__getattr__(self, name)
        stack = _tracer_stack()
        if stack and isinstance(value, _C.Tensor):
            return stack[-1].getattr(name, value, stack[-1]._param_proxy_cache)
        return value

    sub = type(cls.__name__, (cls,), {"__call__": __call__, "__getattr__": __getattr__})
    sub.__qualname__, sub.__module__, sub._fx_original_class = cls.__qualname__, cls.__module__, cls
    _swap_classes[cls] = sub
    return sub


def _holds_ph(value):
    """True for a dict/list/tuple with a PH leaf (PH itself is a plain placeholder)."""
    if isinstance(value, dict):
        return any(v is PH or _holds_ph(v) for v in value.values())
    if type(value) in (list, tuple):
        return any(v is PH or _holds_ph(v) for v in value)
    return False


def _leaf_proxies(tracer, proxy, spec):
    """``spec`` with each PH replaced by a Proxy of ``proxy[key]`` (nested by path); the other
    leaves stay the concrete values given."""
    import operator

    if spec is PH:
        return proxy
    items = spec.items() if isinstance(spec, dict) else enumerate(spec)
    out = {}
    for k, v in items:
        if v is PH or _holds_ph(v):
            sub = tracer.create_proxy("call_function", operator.getitem, (proxy, k), {})
            out[k] = _leaf_proxies(tracer, sub, v)
        else:
            out[k] = v
    return out if isinstance(spec, dict) else type(spec)(out[i] for i in range(len(spec)))


class Tracer(TracerBase):
    """Tracer(autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False)

    Records a module's forward (or a function) into a Graph: ``trace(root)``. Override
    ``is_leaf_module`` to choose which submodules stay single call_module nodes.
    """

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):  # fmt: skip
        super().__init__()
        self._autowrap_ids = {
            id(v) for m in autowrap_modules for v in vars(m).values() if callable(v)
        }
        self._autowrap_ids |= {id(f) for f in autowrap_functions}
        self.param_shapes_constant = param_shapes_constant
        self.module_stack = {}
        self.root = None
        self.graph = None

    # ---- the rules a subclass may override ----------------------------------------------------

    def is_leaf_module(self, m, module_qualified_name):
        """is_leaf_module(m, module_qualified_name) -> bool

        True for ember.nn's own layers (not Sequential): they are recorded as call_module nodes;
        other modules are traced through.
        """
        return type(m).__module__.startswith("ember.nn") and not isinstance(m, Sequential)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):  # fmt: skip
        # ember.cond: the traced values its branches read through their closures become
        # operands (the recorded branches must not hold this trace's proxies)
        if kind == "call_function" and len(args) == 4 and not kwargs:
            from .._higher_order_ops.cond import is_cond, lift_closures

            if is_cond(target):
                args = lift_closures(args)
        return super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)

    def _records_constant_call(self, func, kwargs):
        # a call with no Proxy argument runs (its value is a constant of the graph), as
        # torch.fx's; export's tracer records factories (export/_factories.py)
        return False

    def path_of_module(self, mod):
        """path_of_module(mod) -> str

        The qualified name of submodule ``mod`` in the root.
        """
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """call_module(m, forward, args, kwargs) -> Any

        A leaf module becomes a call_module node; any other is traced through ``forward``.
        """
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """getattr(attr, attr_val, parameter_proxy_cache) -> Any

        A parameter of the root read as a module attribute becomes a get_attr node (one per
        parameter and trace); other values are returned as they are.
        """
        if isinstance(attr_val, Parameter):
            for n, p in self.root.named_parameters():
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
        return attr_val

    def create_arg(self, a):
        """create_arg(a) -> Argument

        Turns a value used by a traced operation into a graph argument: parameters, buffers and
        tensor attributes of the root into get_attr nodes, other tensors into constants.
        """
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:  # through create_proxy, as torch's module-attribute reads go
                    return self.create_proxy("get_attr", n, (), {}).node
            raise NameError("parameter is not a member of this module")
        if isinstance(a, _C.Tensor):
            qualname = self._tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                self.root.__dict__[qualname] = a
                self._tensor_attrs[id(a)] = qualname
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, Module):
            for n, p in self.root.named_modules():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
        return super().create_arg(a)

    # ---- tracing ------------------------------------------------------------------------------

    def _module_call(self, mod, cls, args, kwargs):
        name = self.path_of_module(mod)
        self.module_stack[name] = (name, cls)
        try:
            self._autowrap_globals(getattr(cls.forward, "__globals__", None))

            def forward(*a, **k):
                return cls.__call__(mod, *a, **k)

            return self.call_module(mod, forward, args, kwargs)
        finally:
            self.module_stack.pop(name, None)

    def _autowrap_globals(self, globals_):
        if globals_ is None or id(globals_) in self._patched_globals:
            return
        self._patched_globals.add(id(globals_))
        for name, value in list(globals_.items()):
            if callable(value) and id(value) in self._autowrap_ids:
                self._patch(globals_, name)

    def _patch(self, globals_, name):
        orig = globals_[name]
        if getattr(orig, "__fx_original__", None) is not None:
            return
        self._restore.append((globals_, name, orig))
        globals_[name] = _recording_wrapper(orig)

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """create_args_for_root(root_fn, is_module, concrete_args=None) -> (fn, args)

        A placeholder Proxy for each parameter of ``root_fn`` (the concrete value for those in
        ``concrete_args``).
        """
        sig = inspect.signature(root_fn)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]  # self
        concrete_args = concrete_args or {}
        if not isinstance(concrete_args, dict):
            names = [p.name for p in params]
            concrete_args = dict(zip(names, concrete_args))
        args, kwonly = [], {}
        for p in params:
            if p.name in concrete_args and _holds_ph(concrete_args[p.name]):
                # a structure with PH leaves: the argument is one placeholder and each PH
                # leaf is read from it by indexing (torch flattens it with pytree instead)
                ph = self.create_proxy("placeholder", p.name, (), {}, name=p.name)
                val = _leaf_proxies(self, ph, concrete_args[p.name])
            elif p.name in concrete_args and concrete_args[p.name] is not PH:
                value = concrete_args[p.name]
                self.create_proxy("placeholder", p.name, (value,), {})
                val = value
            else:
                default = () if p.default is inspect.Parameter.empty else (p.default,)
                target = p.name
                if p.kind == inspect.Parameter.VAR_POSITIONAL:
                    target = "*" + p.name
                elif p.kind == inspect.Parameter.VAR_KEYWORD:
                    target = "**" + p.name
                val = self.create_proxy("placeholder", target, default, {}, name=p.name)
            if p.kind == inspect.Parameter.VAR_POSITIONAL:
                raise NotImplementedError("ember.fx: tracing a function with *args")
            if p.kind == inspect.Parameter.VAR_KEYWORD:
                raise NotImplementedError("ember.fx: tracing a function with **kwargs")
            if p.kind == inspect.Parameter.KEYWORD_ONLY:
                kwonly[p.name] = val
            else:
                args.append(val)
        return root_fn, args, kwonly

    def trace(self, root, concrete_args=None):
        """trace(root, concrete_args=None) -> Graph

        Runs ``root`` (a Module's forward or a function) on Proxies and returns the Graph of what
        it did. ``concrete_args`` fixes some arguments to Python values (specializing the graph).
        """
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            is_module = True
        else:
            self.root = Module()
            fn = root
            is_module = False
        self.graph = Graph(tracer_cls=type(self))
        self._param_proxy_cache = {}
        self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        self._tensor_attrs = {}
        for mod_name, mod in self.root.named_modules():
            prefix = mod_name + "." if mod_name else ""
            for k, v in list(mod.__dict__.items()) + list(mod._buffers.items()):
                if isinstance(v, _C.Tensor) and not isinstance(v, Parameter):
                    self._tensor_attrs.setdefault(id(v), prefix + k)
        self._restore, self._patched_globals, swapped = [], set(), []
        fn_globals = getattr(inspect.unwrap(fn), "__globals__", None)
        try:
            for g, name in _wrapped_fns:
                if name in g:
                    self._patch(g, name)
            self._autowrap_globals(fn_globals)
            for _, mod in self.root.named_modules():
                cls = type(mod)
                object.__setattr__(mod, "__class__", _traced_class(cls))
                swapped.append((mod, cls))
            fn, args, kwargs = self.create_args_for_root(fn, is_module, concrete_args)
            if is_module:
                args = [root] + args
            _tracer_stack().append(self)
            try:
                with _TracingMode(self):
                    result = fn(*args, **kwargs)
            finally:
                _tracer_stack().pop()
        finally:
            for mod, cls in swapped:
                object.__setattr__(mod, "__class__", cls)
            for g, name, orig in reversed(self._restore):
                g[name] = orig
        self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph


def symbolic_trace(root, concrete_args=None):
    """symbolic_trace(root, concrete_args=None) -> GraphModule

    Traces ``root`` (an nn.Module or a function) with Proxies and returns a GraphModule whose
    graph records its operations: ember.nn layers as call_module nodes, ember functions as
    call_function nodes, Tensor methods as call_method nodes, parameters as get_attr nodes.
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
