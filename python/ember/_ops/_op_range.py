"""Profiler ranges for the factories written in Python (ones, zeros, randn, ...): torch's
profiler shows `aten::ones` with `aten::empty` inside it, so a profile of ember shows the same
op names. Nothing wraps a factory while no profile records (a Python wrapper would cost every
call a frame): ember.autograd.profiler swaps the recording versions in when a profile starts,
where calls look them up (the package, `torch.ones`, and the defining module, for ember's own
calls), and the originals back when it stops (Note [Profiler] in core/profiler.h)."""

import functools
import sys

from .. import _C

# A user range whose name starts with this mark is an op range: ember.autograd.profiler shows it
# under the rest of its name, as an op (category cpu_op), not as a user annotation.
OP_MARK = "\x01"

# (module name, attribute, original function, recording version)
_FACTORIES = []
_swapped = []


def _recording(fn, name, inner):
    enter = _C._record_function_enter
    exit_ = _C._record_function_exit
    op = OP_MARK + name
    subs = [OP_MARK + n for n in inner]

    @functools.wraps(fn)
    def recorded(*args, **kwargs):
        if not _C._profiler_enabled():
            return fn(*args, **kwargs)
        handle = enter(op)
        try:
            handles = [enter(sub) for sub in subs]
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
