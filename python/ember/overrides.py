"""ember.overrides: torch's function modes, for tools that see every tensor operation of a program.

`TorchFunctionMode` is torch's class: subclass it, define `__torch_function__(self, func, types,
args=(), kwargs=None)`, and inside `with MyMode():` every call of a public ember function
(`ember.*`, `ember.nn.functional.*`, `ember.linalg.*`, `ember.fft.*`, `ember.special.*`) and every
Tensor method, property and operator reaches the mode first. `func` is the function the call would
have run, as torch names it (`ember.add`, `ember.Tensor.add` for `x + y`,
`ember.Tensor.shape.__get__`); inside the handler the mode is off, so `func(*args, **kwargs)`
computes as usual and the ember calls `func` makes internally are not seen. Modes nest: the
innermost handles the call first, and its own call of `func` reaches the next one out.

Why patching: ember's functions are bindings that take tensors directly, so a check for modes in
every call would cost every eager program. Instead, the first mode entered replaces the public
functions and Tensor's attributes with routing wrappers and the last one out puts the originals
back: eager code outside a mode runs the bindings untouched. Code that kept a reference to a
function before the mode was entered (`from ember import relu`) calls the original and is not seen.
"""

import functools
import threading
import types
import weakref

from . import _C, _handed_args

__all__ = ["TorchFunctionMode"]

# Module-level functions that configure ember or its random state rather than compute on tensors.
_NOT_ROUTED = frozenset(
    {
        "compile",
        "manual_seed",
        "seed",
        "initial_seed",
        "is_tensor",
        "is_storage",
        "save",
        "load",
        "typename",
    }
)
_CONFIG_PREFIXES = ("set_", "get_", "use_", "are_")

# Operators and conversions of Tensor that torch routes to modes (its private methods are not).
_ROUTED_DUNDERS = frozenset(
    f"__{name}__"
    for name in (
        "add radd iadd sub rsub isub mul rmul imul truediv rtruediv itruediv div rdiv idiv "
        "floordiv rfloordiv ifloordiv mod rmod imod pow rpow ipow matmul rmatmul imatmul "
        "and rand iand or ror ior xor rxor ixor lshift rlshift ilshift rshift rrshift irshift "
        "neg pos abs invert eq ne lt le gt ge getitem setitem bool float int index len iter "
        "contains"
    ).split()
)

# Modes are per thread, as torch's are; the patches are process-wide while any thread has a mode.
_local = threading.local()
_lock = threading.RLock()  # _stack() may run under it (a thread's first routed call)
_active = 0  # modes entered and not yet exited, over all threads
_patches = []  # (Tensor, name, original attribute) while _active > 0
_routed = {}  # id(original) -> its routing wrapper, while _active > 0


# Modes entered for good (_enter_outermost) sit at the bottom of every thread's stack, as a
# subclass's dispatch is seen in every thread in torch: a thread's stack starts with them, and
# the stacks made before one is entered (held weakly) get it then.
_outermost = []
_stacks = weakref.WeakValueDictionary()  # id(stack) -> stack


class _Stack(list):
    __slots__ = ("__weakref__",)


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        with _lock:
            stack = _local.stack = _Stack(_outermost)
            _stacks[id(stack)] = stack
    return stack


class TorchFunctionMode:
    """TorchFunctionMode()

    Base class of function modes: `with mode:` routes ember's public API to
    `mode.__torch_function__(func, types, args, kwargs)` (see the module docstring)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        global _active
        with _lock:
            if not _active:
                _install()
            _active += 1
        _stack().append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        global _active
        stack = _stack()
        if not stack or stack[-1] is not self:
            raise RuntimeError(
                "TorchFunctionMode.__exit__: expected this mode to be the innermost active mode "
                "of this thread; modes must be exited in reverse order of entering"
            )
        stack.pop()
        with _lock:
            _active -= 1
            if not _active:
                _uninstall()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        """Enters a new mode of this class; returns it (exit it with `mode.__exit__(None, None,
        None)` or use the instance in a with block)."""
        mode = cls(*args, **kwargs)
        mode.__enter__()
        return mode


def _enter_outermost(mode):
    """Enters mode below every thread's active modes and never exits it (ember.distributed.tensor
    routes DTensor operators this way for the rest of the process once a DTensor exists)."""
    global _active
    _stack()
    with _lock:
        if not _active:
            _install()
        _active += 1
        _outermost.insert(0, mode)
        for stack in list(_stacks.values()):
            stack.insert(0, mode)


def _enter_below(mode):
    """Enters mode under this thread's active modes (above the outermost ones): TorchDispatchMode's
    bridge, so that function modes see a call before dispatch modes do, as in torch."""
    global _active
    stack = _stack()
    with _lock:
        if not _active:
            _install()
        _active += 1
    at = 0
    while at < len(stack) and at < len(_outermost) and stack[at] is _outermost[at]:
        at += 1
    stack.insert(at, mode)


def _exit_below(mode):
    """Exits a mode _enter_below entered; False when it is not in this thread's stack now (taken
    off while its handler runs)."""
    global _active
    stack = _stack()
    for i, m in enumerate(stack):
        if m is mode:
            del stack[i]
            break
    else:
        return False
    with _lock:
        _active -= 1
        if not _active:
            _uninstall()
    return True


_pinned = []


def _pin_routing():
    """Installs the routing wrappers for the rest of the process without entering a mode (once;
    a DeviceMesh does as it is built): a function looked up before the DTensor mode is on (the
    first DTensor being built as its argument) is then a wrapper, and routes once the mode is on.
    Outside modes a wrapper calls its original at once, so mesh programs pay a Python call per
    function until their first DTensor, not a mode."""
    global _active
    with _lock:
        if _pinned:
            return
        _pinned.append(True)
        if not _active:
            _install()
        _active += 1


def _get_current_function_mode_stack():
    """The active function modes, innermost last."""
    return list(_stack())


def original(fn):
    """original(fn) -> callable

    The function a routing wrapper stands for (graphs record these), else `fn` itself."""
    return getattr(fn, "__ember_routed__", fn)


def tensor_attributes():
    """tensor_attributes() -> dict

    Tensor's attributes by name as they are outside any mode: while one is active, the
    originals the routing wrappers stand for."""
    attrs = dict(vars(_C.Tensor))
    attrs.update((name, value) for owner, name, value in _patches if owner is _C.Tensor)
    return attrs


def routed(fn):
    """routed(fn) -> callable

    The routing wrapper now standing for the public function `fn` while a mode is active (what
    `ember.relu` is then), else `fn` itself."""
    return _routed.get(id(fn), fn)


def _tensor_types(args, kwargs):
    found = []
    for arg in (*args, *kwargs.values()):
        items = arg if isinstance(arg, (list, tuple)) else (arg,)
        for item in items:
            t = type(item)
            if (isinstance(item, _C.Tensor) or hasattr(t, "__torch_function__")) and t not in found:
                found.append(t)
    return tuple(found)


def _route(func, args, kwargs):
    """Hands the call to the innermost mode with that mode switched off meanwhile."""
    stack = _stack()
    if not stack:
        return func(*args, **kwargs)
    mode = stack.pop()
    try:
        if _is_user_mode(type(mode)):
            args, kwargs = _handed_args.handed(func, args, kwargs)
            func = _subclass_dispatch.as_seen(func)
        return mode.__torch_function__(func, _tensor_types(args, kwargs), args, kwargs)
    finally:
        stack.append(mode)


_user_modes = {}


def _is_user_mode(cls):
    """A program's mode (not one of ember's own: vmap, forward AD, DTensor, tracing) sees calls as
    torch hands them to modes: operators under torch's names (`x + y` as Tensor.add, `2 / x` as
    Tensor.__rdiv__), the function as the program now sees it (the wrapper, equal to the
    original), so that `func is F.linear` holds and its own `func(...)` reaches the modes
    outside it."""
    user = _user_modes.get(cls)
    if user is None:
        user = _user_modes[cls] = cls.__module__.split(".")[0] != "ember"
    return user


# Wrappers outlive one install (building ~10k of them was most of the cost of entering a mode):
# id(original) -> (original, wrapper); the original is held so that its id stays its own.
_wrappers = {}


def _cached(value, make):
    entry = _wrappers.get(id(value))
    if entry is None or entry[0] is not value:
        entry = _wrappers[id(value)] = (value, make(value))
    return entry[1]


class _Routed:
    """The routing wrapper standing for a public function or Tensor method while a mode is on.
    It compares and hashes as the function it stands for, so a handler's `func is F.linear`
    (both the wrapper while the mode is on) and `func in TABLE` for a table built before the
    mode (holding the originals) both hold, as they do in torch."""

    def __init__(self, func):
        functools.update_wrapper(self, func)
        self.__ember_routed__ = func

    def __call__(self, *args, **kwargs):
        stack = getattr(_local, "stack", None)
        if stack is None:  # this thread's first routed call: it starts with the outermost modes
            stack = _stack()
        if not stack:  # no mode (a handler's own call, with no mode left)
            return self.__ember_routed__(*args, **kwargs)
        return _route(self.__ember_routed__, args, kwargs)

    def __get__(self, obj, objtype=None):  # a Tensor method: bound as functions bind
        return self if obj is None else types.MethodType(self, obj)

    def __eq__(self, other):
        func = self.__ember_routed__
        if other is self or other is func:
            return True
        if isinstance(other, _Routed):
            return other.__ember_routed__ is func
        return NotImplemented

    def __hash__(self):
        return hash(self.__ember_routed__)

    def __repr__(self):
        return repr(self.__ember_routed__)

    def __reduce__(self):  # pickled as what it stands for
        return self.__ember_routed__.__reduce__()


def _function_wrapper(func):
    return _Routed(func)


def _property_wrapper(prop):
    getter = prop.__get__

    def get(self):
        return _route(getter, (self,), {})

    return property(get, prop.fset, prop.fdel, prop.__doc__)


# Plain functions, the extension's functions, and the guards in front of some of them: the
# complex and sparse paths' (ember._C._complex_guard, ember._C._sparse_guard) and the argument
# parser's (ember._C._arg_guard).
_ROUTED_CALLABLE_TYPES = (
    "_Routed",  # a wrapper itself, while a mode is on (resolve_name looks then)
    "function",
    "nb_func",
    "builtin_function_or_method",
    "_ComplexGuard",
    "_SparseGuard",  # ember.sparse's paths of ember.mm, ember.add, ... (sparse_guard.cpp)
    "_ArgGuard",
    "_ForeignGuard",  # vmap's path of the bare functions (ember/_ops/foreign_guards.py)
)


def _routed_module_names(module):
    for name, value in list(vars(module).items()):
        # torch routes its private foreach functions too (torch._foreach_norm reaches modes)
        if name.startswith("_") and not name.startswith("_foreach_"):
            continue
        if name in _NOT_ROUTED or name.startswith(_CONFIG_PREFIXES):
            continue
        if name.startswith("is_") and name.endswith("_enabled"):
            continue
        if isinstance(value, type) or not callable(value):
            continue
        if type(value).__name__ in _ROUTED_CALLABLE_TYPES:
            yield name, value


def _routed_tensor_attributes():
    for name, value in list(vars(_C.Tensor).items()):
        if name.startswith("_") and name not in _ROUTED_DUNDERS:
            continue
        if isinstance(value, property):
            yield name, _cached(value, _property_wrapper), value
        elif callable(value) and not isinstance(value, (type, staticmethod, classmethod)):
            yield name, _cached(value, _function_wrapper), value


def _routed_modules():
    import ember
    import ember.fft
    import ember.linalg
    import ember.nn.functional
    import ember.special

    return (ember, ember.nn.functional, ember.linalg, ember.fft, ember.special)


# What _install patches, kept between installs and reused while every namespace still holds the
# same values: entering the first mode (vmap enters one per call) then costs one dict update per
# module and one setattr per Tensor attribute, instead of a scan and new wrappers. Modules are
# patched through their dicts in one C call each; Tensor's attributes need setattr (the type's
# caches and slots must follow), which is most of what entering a mode still costs.
_module_plan = []  # (module's dict, {name: original}, {name: wrapper})
_tensor_plan = []  # (name, original, wrapper)
_tensor_originals = {}  # name -> original, as _tensor_plan
_module_routed = {}  # id(original) -> wrapper, for the module functions
_plan_counts = []  # the namespaces' sizes when the plan was made (a name added makes it stale)


def _namespace_sizes():
    return tuple(len(vars(m)) for m in (*_routed_modules(), _C.Tensor))


def _plan_current():
    # dict views compare as sets of (name, value) pairs in C: the plan holds while each
    # namespace still maps every planned name to the planned original
    return (
        bool(_module_plan)
        and _plan_counts == [_namespace_sizes()]
        and _tensor_originals.items() <= vars(_C.Tensor).items()
        and all(originals.items() <= namespace.items() for namespace, originals, _ in _module_plan)
    )


def _make_plan():
    _module_plan.clear()
    _module_routed.clear()
    for module in _routed_modules():
        originals, wrappers = {}, {}
        for name, value in _routed_module_names(module):
            originals[name] = value
            wrappers[name] = _module_routed.setdefault(id(value), _cached(value, _function_wrapper))
        _module_plan.append((vars(module), originals, wrappers))
    _tensor_plan[:] = [
        (name, value, wrapper) for name, wrapper, value in _routed_tensor_attributes()
    ]
    _tensor_originals.clear()
    _tensor_originals.update((name, value) for name, value, _ in _tensor_plan)
    _plan_counts[:] = [_namespace_sizes()]


def _install():
    if not _plan_current():
        _make_plan()
    _routed.update(_module_routed)
    for namespace, _, wrappers in _module_plan:
        namespace.update(wrappers)
    tensor = _C.Tensor
    _patches.extend((tensor, name, value) for name, value, _ in _tensor_plan)
    for name, _, wrapper in _tensor_plan:
        setattr(tensor, name, wrapper)


def _uninstall():
    _routed.clear()
    for namespace, originals, _ in _module_plan:
        namespace.update(originals)
    for owner, name, value in _patches:
        setattr(owner, name, value)
    _patches.clear()


# torch.overrides' helpers for Python code that implements the protocol (ember/_override_helpers)
from ._override_helpers import *  # noqa: E402,F401,F403
from ._override_helpers import __all__ as _helper_names  # noqa: E402

__all__ += _helper_names

# Tensor subclasses' and tensor-likes' own __torch_function__ (ember/_subclass_dispatch.py)
from . import _subclass_dispatch  # noqa: E402
from ._subclass_dispatch import get_default_nowrap_functions  # noqa: E402,F401

__all__ += ["get_default_nowrap_functions"]
