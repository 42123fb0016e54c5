"""__torch_function__ on Tensor subclasses and tensor-likes for ember's own functions.

torch offers every call of its public API to the `__torch_function__` of the arguments' types
(a Tensor subclass that logs or tags its operations, a tensor-like such as the docs'
ScalarTensor). ember's functions are bindings that do not look at their arguments' types, so:

- a Tensor subclass whose class defines its own `__torch_function__` (found when the class is
  created, through `Tensor.__init_subclass__`) installs, once per process, an outermost function
  mode (ember.overrides) that offers each call to the overloading arguments, subclasses before
  their bases, as torch's dispatch does. Programs without such a subclass never pay for it;
- a tensor-like that is not a Tensor reaches a guarded function (`ember.mean(obj)`) only to be
  rejected by the binding; the argument parser's slow path (`_argparse`) then offers the call to
  it (`dispatch_rejected`);
- `Tensor.__torch_function__` is torch's default: the function run with subclass dispatch off,
  Tensor results turned into the calling class (`as_subclass`); `_disabled_torch_function_impl`
  (what `nn.Parameter` behaves as) leaves them plain.

Tensor gets these attributes through its one table (_ops/_tensor_methods.py).
"""

import threading
import warnings

from . import _C
from . import _override_helpers as _helpers

__all__ = [
    "DisableTorchFunctionSubclass",
    "dispatch_rejected",
    "get_default_nowrap_functions",
    "register_overloading_subclass",
]

_local = threading.local()
_installed = []


def _disabled():
    return getattr(_local, "disabled", 0) > 0


class DisableTorchFunctionSubclass:
    """DisableTorchFunctionSubclass()

    Inside the block, calls are not offered to Tensor subclasses' __torch_function__."""

    def __enter__(self):
        _local.disabled = getattr(_local, "disabled", 0) + 1
        return self

    def __exit__(self, *exc):
        _local.disabled -= 1
        return False


def _flat(args, kwargs):
    for arg in (*args, *kwargs.values()):
        if isinstance(arg, (list, tuple)):
            yield from arg
        else:
            yield arg


def _offer(func, overloaded, args, kwargs):
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        out = type(arg).__torch_function__(func, types, args, kwargs)
        if out is not NotImplemented:
            return out
    name = _helpers.resolve_name(func) or getattr(func, "__name__", repr(func))
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{[type(a) for a in overloaded]}"
    )


def dispatch_rejected(func, args, kwargs):
    """The call of the public function `func` that its binding rejected, offered to the
    arguments that are tensor-likes (not Tensors) defining __torch_function__; NotImplemented
    when there is none."""
    if _disabled():
        return NotImplemented
    overloaded = [
        a
        for a in _helpers._get_overloaded_args(list(_flat(args, kwargs)))
        if not isinstance(a, _C.Tensor)
    ]
    if not overloaded:
        return NotImplemented
    return _offer(func, _helpers._get_overloaded_args(list(_flat(args, kwargs))), args, kwargs)


def _nowrap():
    props = [_C.Tensor.__dict__.get(n) for n in ("grad", "_base", "_grad")]
    return [p for p in props if isinstance(p, property)]


def get_default_nowrap_functions():
    """get_default_nowrap_functions() -> set

    The functions whose Tensor results Tensor.__torch_function__ leaves as they are (the getters
    of .grad and ._base)."""
    return {p.__get__ for p in _nowrap()}


def _convert(ret, cls):
    if isinstance(ret, _C.Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        try:
            return type(ret)(items)
        except TypeError:  # a namedtuple takes its fields one by one
            return type(ret)(*items)
    return ret


def _is_nowrap(func):
    owner = getattr(func, "__self__", None)
    return any(owner is p for p in _nowrap())


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    kwargs = kwargs or {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
    if cls is _C.Tensor or _is_nowrap(func):
        return ret
    return _convert(ret, cls)


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The __torch_function__ of a subclass whose results stay plain Tensors (nn.Parameter's)."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _overloading_subclass(cls):
    impl = getattr(cls, "__torch_function__", None)
    impl = getattr(impl, "__func__", impl)
    return impl is not None and impl not in (
        _default_torch_function,
        _disabled_torch_function_impl,
    )


# Operators that torch's __torch_function__ sees as the named method (`x * 2` as Tensor.mul).
_OPERATOR_METHODS = {
    "__add__": "add",
    "__radd__": "add",
    "__iadd__": "add_",
    "__sub__": "sub",
    "__isub__": "sub_",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__imul__": "mul_",
    "__truediv__": "div",
    "__itruediv__": "div_",
    "__rtruediv__": "__rdiv__",
    "__mod__": "remainder",
    "__neg__": "neg",
    "__abs__": "abs",
    "__matmul__": "matmul",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
}
_operator_funcs = {}


def _public_func(func):
    """The function torch would hand __torch_function__ for ember's `func`."""
    if not _operator_funcs:
        from .overrides import original

        for dunder, name in _OPERATOR_METHODS.items():
            src, dst = _C.Tensor.__dict__.get(dunder), _C.Tensor.__dict__.get(name)
            if src is not None and dst is not None:
                _operator_funcs[id(original(src))] = (original(src), original(dst))
    entry = _operator_funcs.get(id(func))
    return entry[1] if entry is not None and entry[0] is func else func


def _visible(func):
    """What the program sees under func's name while subclass dispatch is on: the routing
    wrapper standing for it in ember's namespaces and on Tensor (so that a handler's
    `func is torch.Tensor.__repr__`, or a table filled by `@implements(torch.mean)` after the
    subclass was defined, finds it, as in torch)."""
    from .overrides import _wrappers

    entry = _wrappers.get(id(func))
    if entry is None or entry[0] is not func:
        return func
    wrapper = entry[1]
    name = _TORCH_NAMES.get(getattr(wrapper, "__name__", None))
    if name is not None:
        wrapper.__name__ = name
    return wrapper


def as_seen(func):
    """The function a program's handler (mode or subclass) receives for ember's `func`: the
    operator under torch's method name, as the program now sees it."""
    entry = _seen.get(id(func))
    if entry is not None and entry[0] is func:
        return entry[1]
    seen = _visible(_public_func(func))
    if seen is not func:  # a wrapper exists (they outlive installs): the answer is fixed
        _seen[id(func)] = (func, seen)
    return seen


_seen = {}  # id(func) -> (func, what handlers receive for it)


# torch's Tensor.__pow__ and __ipow__ are functions named after the ops they wrap.
_TORCH_NAMES = {"__pow__": "pow", "__ipow__": "pow_"}


# The Tensor subclasses defining their own __torch_function__ (registered as they are created):
# the mode's test of a call is a set lookup per argument.
_overloading_types = set()


def _has_overloading(args, kwargs):
    for group in (args, kwargs.values()):
        for a in group:
            t = type(a)
            if t in _overloading_types:
                return True
            if (t is list or t is tuple) and any(type(i) in _overloading_types for i in a):
                return True
    return False


def _install_mode():
    from . import overrides

    class _SubclassDispatch(overrides.TorchFunctionMode):
        """Offers each call to the Tensor subclasses among its arguments."""

        _ember_internal = True  # not a user's mode: has_torch_function does not count it

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if _has_overloading(args, kwargs) and not _disabled():
                overloaded = _helpers._get_overloaded_args(list(_flat(args, kwargs)))
                overloaded = [a for a in overloaded if _overloading_subclass(type(a))]
                if overloaded:
                    # Unlike a user's mode, subclass dispatch stays on while the subclass's own
                    # __torch_function__ runs: the calls it makes reach subclasses again (torch's
                    # behaviour), unless made under DisableTorchFunctionSubclass (as
                    # super().__torch_function__ makes them).
                    stack = overrides._stack()
                    stack.append(self)
                    try:
                        return _offer(as_seen(func), overloaded, args, kwargs)
                    finally:
                        if stack and stack[-1] is self:
                            stack.pop()
            return func(*args, **kwargs)

    overrides._enter_outermost(_SubclassDispatch())
    _installed.append(True)


def _init_subclass(cls, **kwargs):
    super(_C.Tensor, cls).__init_subclass__(**kwargs)
    if cls.__module__.startswith("ember.") or cls.__module__ == "ember":
        return
    # A subclass built in __new__ (Tensor._make_subclass, as_subclass) is not initialized again
    # with __new__'s arguments: Tensor has no __init__ of its own in torch. One that __new__
    # left uninitialized (`super().__new__(cls, data)`) is initialized from the data, as before.
    if "__new__" in cls.__dict__ and not any(
        "__init__" in k.__dict__ for k in cls.__mro__[: cls.__mro__.index(_C.Tensor)]
    ):
        cls.__init__ = _init_unless_ready
    if _overloading_subclass(cls):
        _overloading_types.add(cls)
        if not _installed:
            _install_mode()


def register_overloading_subclass(cls):
    """Offers calls to ember's own Tensor subclass ``cls`` (its __torch_function__), installing
    the dispatch mode on first use: ember.nested's tensors, so that programs that never make one
    never pay for it."""
    if cls not in _overloading_types:
        _overloading_types.add(cls)
        if not _installed:
            _install_mode()


_bound_dim = _C.Tensor.__dict__["dim"]  # the binding's own (never a routing wrapper)
_bound_init = _C.Tensor.__init__


def _ready(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nanobind warns about an uninitialized instance
        try:
            _bound_dim(t)
            return True
        except TypeError:
            return False


def _init_unless_ready(self, *args, **kwargs):
    if _ready(self) or not args:
        return
    try:
        _bound_init(self, *args)
    except TypeError:  # __new__'s own extra arguments
        _bound_init(self, args[0])


def _make_subclass(cls, data, require_grad=False, *args, **kwargs):
    """Tensor._make_subclass(cls, data, require_grad=False) -> Tensor

    A `cls` instance sharing data's storage, a leaf with requires_grad=require_grad."""
    with DisableTorchFunctionSubclass():
        out = data.detach().as_subclass(cls)
        out.requires_grad_(require_grad)
    return out


def tensor_attributes():
    """What the Tensor table (_ops/_tensor_methods.py) sets for this protocol: torch's default
    __torch_function__, _make_subclass and the hook that sees subclasses being defined."""
    return {
        "__torch_function__": classmethod(_default_torch_function),
        "__init_subclass__": classmethod(_init_subclass),
        "_make_subclass": _make_subclass,
    }
