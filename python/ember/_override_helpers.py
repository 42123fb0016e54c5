"""torch.overrides' helpers for code that implements the __torch_function__ protocol itself:
has_torch_function*, handle_torch_function, wrap_torch_function, is_tensor_like, and the
listings of what ember's function modes route (get_overridable_functions, get_ignored_functions,
get_testing_overrides, resolve_name).

ember's own functions reach __torch_function__ through function modes (ember.overrides); these
helpers give a Python function the same protocol for its arguments: an argument whose type
defines __torch_function__ (a Tensor subclass or any tensor-like) is offered the call, subclasses
before their bases and otherwise left to right (NEP 18's order, as torch's), and an active mode
comes first."""

import functools

from . import _C

__all__ = [
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "resolve_name",
    "wrap_torch_function",
]


def _overloads(arg):
    impl = getattr(type(arg), "__torch_function__", None)
    base = getattr(_C.Tensor, "__torch_function__", None)
    # classmethods bind anew on each lookup: compare the functions underneath
    return impl is not None and getattr(impl, "__func__", impl) is not getattr(
        base, "__func__", base
    )


def _mode_active():
    from .overrides import _get_current_function_mode_stack

    return any(not getattr(m, "_ember_internal", False) for m in _get_current_function_mode_stack())


def has_torch_function(relevant_args):
    """has_torch_function(relevant_args) -> bool

    Whether an argument of relevant_args defines __torch_function__ (beyond plain Tensor's) or a
    function mode is active: then handle_torch_function should take the call."""
    return _mode_active() or any(_overloads(a) for a in relevant_args)


def has_torch_function_unary(arg):
    """has_torch_function_unary(arg) -> bool

    has_torch_function((arg,))."""
    return _mode_active() or _overloads(arg)


def has_torch_function_variadic(*args):
    """has_torch_function_variadic(*args) -> bool

    has_torch_function(args)."""
    return has_torch_function(args)


def _get_overloaded_args(relevant_args):
    types, args = [], []
    for arg in relevant_args:
        t = type(arg)
        if t in types or not _overloads(arg):
            continue
        index = len(args)
        for i, old in enumerate(args):
            if issubclass(t, type(old)):
                index = i
                break
        types.append(t)
        args.insert(index, arg)
    return args


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """handle_torch_function(public_api, relevant_args, *args, **kwargs) -> object

    Calls public_api(*args, **kwargs) through the __torch_function__ protocol: the active
    function mode first (with itself switched off), then each overloading argument of
    relevant_args in precedence order, until one returns something other than NotImplemented;
    raises TypeError when all decline."""
    from .overrides import _route, _stack

    overloaded = _get_overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    if _stack():
        result = _route(public_api, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__name__", repr(public_api))
    raise TypeError(
        f"no implementation found for '{resolve_name(public_api) or name}' on types that "
        f"implement __torch_function__: {[type(a) for a in overloaded]}"
    )


def wrap_torch_function(dispatcher):
    """wrap_torch_function(dispatcher) -> Callable

    A decorator giving a function the __torch_function__ protocol: dispatcher(*args, **kwargs)
    returns the arguments that may overload it."""

    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


def is_tensor_like(inp):
    """is_tensor_like(inp) -> bool

    Whether inp is a Tensor or an object whose type defines __torch_function__."""
    return type(inp) is _C.Tensor or hasattr(type(inp), "__torch_function__")


def _namespaces():
    from .overrides import _routed_modules

    return _routed_modules()


def _tensor_attributes():
    out = []
    for name, value in vars(_C.Tensor).items():
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        if isinstance(value, property):
            out.append((name, value.__get__))
        elif callable(value) and not isinstance(value, (type, staticmethod, classmethod)):
            out.append((name, value))
    return out


def get_overridable_functions():
    """get_overridable_functions() -> Dict[Any, List[Callable]]

    The functions a function mode sees, by namespace: ember, ember.nn.functional, ember.linalg,
    ember.fft, ember.special (their public functions) and Tensor (its methods and property
    getters)."""
    from .overrides import _routed_module_names

    out = {}
    for module in _namespaces():
        out[module] = [fn for _, fn in _routed_module_names(module)]
    out[_C.Tensor] = [fn for _, fn in _tensor_attributes()]
    return out


def get_ignored_functions():
    """get_ignored_functions() -> Set[Callable]

    The public callables of the routed namespaces that function modes do not see (configuration,
    seeding, saving and loading, the grad-mode queries, classes excluded)."""
    from .overrides import _routed_module_names

    out = set()
    for module in _namespaces():
        routed = {name for name, _ in _routed_module_names(module)}
        for name, value in list(vars(module).items()):
            if name.startswith("_") or name in routed or isinstance(value, type):
                continue
            if callable(value) and not isinstance(value, type(module)):
                try:
                    hash(value)
                except TypeError:
                    continue
                out.add(value)
    return out


def get_testing_overrides():
    """get_testing_overrides() -> Dict[Callable, Callable]

    A dummy override (returning -1) for every overridable function, for testing code that
    implements __torch_function__ (as torch's: each key maps to a stand-in)."""
    out = {}
    for fns in get_overridable_functions().values():
        for fn in fns:
            try:
                out[fn] = lambda *args, **kwargs: -1
            except TypeError:  # an unhashable callable cannot be a key
                continue
    return out


def resolve_name(f):
    """resolve_name(f) -> str or None

    The qualified torch-style name of an overridable function ("torch.add",
    "torch.Tensor.add", "torch.nn.functional.relu", "torch.Tensor.shape.__get__"), else None."""
    from .overrides import _routed_module_names, original

    f = original(f)
    for module in _namespaces():
        for name, fn in _routed_module_names(module):
            if original(fn) is f:  # while a mode is on, the namespace holds its wrapper
                return "torch" + module.__name__[len("ember") :] + "." + name
    for name, value in vars(_C.Tensor).items():
        if original(value) is f:
            return f"torch.Tensor.{name}"
        if isinstance(value, property) and value.__get__ == f:
            return f"torch.Tensor.{name}.__get__"
    return None


def is_tensor_method_or_property(func):
    """is_tensor_method_or_property(func) -> bool

    Whether func is a Tensor method or the getter of a Tensor property (a function modes see
    with the tensor as first argument)."""
    return any(fn is func or fn == func for _, fn in _tensor_attributes())
