"""The dispatcher's per-op hook into TorchDispatchModes (Note [Dispatch modes] in
_dispatch_bridge.py; Note [Python dispatch hook] in csrc/ember/dispatch/python_dispatch.h).

While this thread has a mode on, every op that C++ calls through its dispatcher entry arrives at
``from_dispatcher`` with its boxed arguments and ``below``, which runs the op as if no hook were
there. The op goes down the modes as its overload under torch's name, with torch's split of the
arguments; past the last mode, a ``func(*args)`` with the arguments the hook gave runs ``below``.
"""

import threading

from . import _C

_local = threading.local()


def _pending():
    """The hooked calls in progress on this thread: (op, args, kwargs, below), innermost last."""
    calls = getattr(_local, "pending", None)
    if calls is None:
        calls = _local.pending = []
    return calls


def kernel(op, args, kwargs):
    """``op`` past the last mode: below the hook when these are a hooked call's arguments, else
    through its public function."""
    for p_op, p_args, p_kwargs, below in reversed(getattr(_local, "pending", None) or ()):
        if p_op is op and _same(args, p_args) and _same_kwargs(kwargs, p_kwargs):
            return below()
    return op._call(*args, **kwargs)


def _same(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _same_kwargs(a, b):
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def _lookup(ns, name, overload):
    from ._op_overloads import ops

    try:
        return getattr(getattr(getattr(ops, ns), name), overload)
    except AttributeError:
        return None


def _with_dtype(values):  # torch's softmax backward also takes the input's dtype
    return [*values, values[1].dtype]


def _half_to_float(values):
    return [*values, False]


def _zero_threshold(values):  # relu's backward: torch's threshold_backward at 0 of the result
    return [*values, 0]


# ember's entries whose op torch names otherwise: (torch's overload, its arguments from ember's).
# true_divide is torch's alias of div; the ``.ember`` softmax overloads lack an argument that
# ember's kernel infers.
_TORCH_NAMES = {
    "true_divide.Tensor": (("div", "Tensor"), list),
    "relu_backward": (("threshold_backward", "default"), _zero_threshold),
    "_softmax.ember": (("_softmax", "default"), _half_to_float),
    "_log_softmax.ember": (("_log_softmax", "default"), _half_to_float),
    "_softmax_backward_data.ember": (("_softmax_backward_data", "default"), _with_dtype),
    "_log_softmax_backward_data.ember": (("_log_softmax_backward_data", "default"), _with_dtype),
}

_OVERLOADS = {}


def _overload(entry_name):
    """(the OpOverload a mode sees for a dispatcher entry, its arguments from the entry's), or
    None for an entry no overload names."""
    found = _OVERLOADS.get(entry_name, ())
    if found != ():
        return found
    from ._op_overloads import _split_entry

    renamed = _TORCH_NAMES.get(entry_name)
    op = _lookup("aten", *renamed[0]) if renamed else None  # torch's, where the registry has it
    if op is not None:
        found = (op, renamed[1])
    else:
        op = _lookup(*_split_entry(entry_name))
        found = None if op is None else (op, None)
    _OVERLOADS[entry_name] = found
    return found


def _is_default(arg, value):
    if not arg.has_default or isinstance(value, _C.Tensor):
        return False
    default = arg.default_value
    if default is None or value is None:
        return default is value
    return type(value) in (bool, int, float, str, list) and value == default


def _split(schema, values):
    """(args, kwargs) as torch hands a boxed call to a mode: the positional arguments without
    trailing defaults, and the keyword-only ones that are not their default."""
    params = schema.arguments
    start = len(values)
    while start and params[start - 1].kwarg_only:
        start -= 1
    end = start
    while end and _is_default(params[end - 1], values[end - 1]):
        end -= 1
    kwargs = {
        params[i].name: values[i]
        for i in range(start, len(values))
        if not _is_default(params[i], values[i])
    }
    return tuple(values[:end]), kwargs


def from_dispatcher(entry_name, values, below):
    """The hook: an op C++ runs while a mode is on, as its overload, down the modes."""
    bridge = _bridge()
    found = _overload(entry_name)
    if found is None or not bridge.modes():
        return below()
    op, to_torch = found
    if to_torch is not None:
        values = to_torch(values)
    args, kwargs = _split(op._schema, values)
    pending = _pending()
    pending.append((op, args, kwargs, below))
    try:
        return bridge.dispatch(op, args, kwargs)
    finally:
        pending.pop()


_BRIDGE = []


def _bridge():
    """ember._dispatch_bridge (which imports this module), once it is loaded."""
    if not _BRIDGE:
        from . import _dispatch_bridge

        _BRIDGE.append(_dispatch_bridge)
    return _BRIDGE[0]


_C._set_dispatch_hook(from_dispatcher)
