"""Profiler ranges for the factories written in Python (ones, zeros, randn, ...): torch's
profiler shows `aten::ones` with `aten::empty` inside it, so a profile of ember shows the same
op names. Nothing wraps a factory while no profile records (a Python wrapper would cost every
call a frame): ember.autograd.profiler swaps the recording versions in when a profile starts,
where calls look them up (the package, `torch.ones`, and the defining module, for ember's own
calls), and the originals back when it stops (Note [Profiler] in core/profiler.h)."""

import functools
import sys
import threading

from .. import _C
from ._op_inputs import tensor_entry

# A user range whose name starts with this mark is an op range: ember.autograd.profiler shows it
# under the rest of its name, as an op (category cpu_op), not as a user annotation.
OP_MARK = "\x01"

# The input shapes and recorder entries (_op_inputs) of the op ranges opened here, by (thread id,
# record index): the recorder takes them from the dispatcher's typed arguments only, so an op
# written in Python lists its own here, and ember.autograd.profiler puts them on its rows
# (torch's `[[2, 4, 8, 8], [], ...]`).
_shapes = {}


def _shape_of(a):
    return list(a.shape) if isinstance(a, _C.Tensor) else []


def _entry_of(a):
    return tensor_entry(a) if isinstance(a, _C.Tensor) else None


def enter(name, *inputs, autograd=False):
    """enter(name, *inputs, autograd=False) -> int

    Opens the op range `name` (torch's "aten::max_pool2d") for an op written in Python, listing
    `inputs` (its leading arguments: a tensor's shape, [] for anything else) as its input shapes;
    returns the handle for `_C._record_function_exit` (-1 while nothing records). `autograd`: torch
    dispatches the op at the Autograd key (not a factory), so with grad mode on its row records
    the sequence number of the next autograd node."""
    handle = _C._record_function_enter(OP_MARK + name, op=autograd)
    if handle >= 0 and inputs:
        _shapes[(threading.get_native_id(), handle & 0xFFFFFFFF)] = (
            [_shape_of(a) for a in inputs],
            [_entry_of(a) for a in inputs],
        )
    return handle


# What a row of a C++ op gets that its recorded arguments cannot give (conv2d's FLOPs need its
# stride, padding and dilation, which the recorder lists as []): (thread id, time in ns, op name,
# FLOPs), noted by the Python caller just before the call and given by ember.autograd.profiler to
# the op's next row on that thread.
_notes = []


def note_flops(name, flops):
    """note_flops(name, flops) -> None

    Notes the FLOPs of the op `name` this thread calls next (only while a profile records)."""
    _notes.append((threading.get_native_id(), _C._profiler_now_ns(), name, flops))


def take_recorded():
    """take_recorded() -> (dict, list)

    The input shapes and entries recorded by `enter` and the notes of `note_flops` since the
    profile started (at profile stop)."""
    shapes, notes = dict(_shapes), list(_notes)
    _shapes.clear()
    _notes.clear()
    return shapes, notes


# (module name, attribute, original function, recording version)
_FACTORIES = []
_swapped = []


def _recording(fn, name, inner):
    exit_ = _C._record_function_exit

    @functools.wraps(fn)
    def recorded(*args, **kwargs):
        if not _C._profiler_enabled():
            return fn(*args, **kwargs)
        # a _like factory's first argument is the tensor torch lists (also on its empty_like)
        handle = enter(name, *args[:1])
        try:
            handles = [
                enter(sub, *args[:1]) if sub.endswith("_like") else enter(sub) for sub in inner
            ]
            for h in reversed(handles):
                exit_(h)
            return fn(*args, **kwargs)
        finally:
            exit_(handle)

    return recorded


def register(module_name, attr, name, inner=()):
    """register(module_name, attr, name, inner=()) -> None

    Records the factory `module_name.attr` as the op `name` while a profile records, with the
    empty ops `inner` (the allocation torch's factory makes first, each nested in the one
    before) at its start."""
    fn = getattr(sys.modules[module_name], attr)
    _FACTORIES.append((module_name, attr, fn, _recording(fn, name, tuple(inner))))


def swap_in():
    """swap_in() -> None

    Installs the recording factories (at profile start)."""
    if _swapped:
        return
    _shapes.clear()
    _notes.clear()
    package = sys.modules.get("ember")
    for module_name, attr, fn, rec in _FACTORIES:
        module = sys.modules[module_name]
        targets = [module]
        if package is not None and _wraps(getattr(package, attr, None), fn):
            targets.append(package)
        for target in targets:
            _swapped.append((target, attr, getattr(target, attr)))
            setattr(target, attr, rec)


def swap_out():
    """swap_out() -> None

    Puts the factories back (at profile stop)."""
    while _swapped:
        target, attr, old = _swapped.pop()
        setattr(target, attr, old)


def _wraps(obj, fn):
    """Whether obj is fn or ember's argument guard around it."""
    return obj is fn or getattr(obj, "__wrapped__", None) is fn or _guarded(obj, fn)


def _guarded(obj, fn):
    # the guard keeps the function's name and module; that is what identifies it
    return (
        obj is not None
        and getattr(obj, "__name__", None) == fn.__name__
        and getattr(obj, "__module__", None) == fn.__module__
    )
