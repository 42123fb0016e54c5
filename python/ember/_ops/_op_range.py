"""Profiler ranges for the factories written in Python (ones, zeros, randn, ...): torch's
profiler shows `aten::ones` with `aten::empty` inside it, so a profile of ember shows the same
op names. Costs one check when no profile records (Note [Profiler] in core/profiler.h)."""

import functools

from .. import _C

# A user range whose name starts with this mark is an op range: ember.autograd.profiler shows it
# under the rest of its name, as an op (category cpu_op), not as a user annotation.
OP_MARK = "\x01"


def op_range(fn, name, inner=None):
    """op_range(fn, name, inner=None) -> Callable

    `fn` recorded as the op `name` while a profile records, with an empty `inner` op (the
    allocation torch's factory makes first; a tuple of names nests each in the one before)
    at its start."""
    enabled = _C._profiler_enabled
    enter = _C._record_function_enter
    exit_ = _C._record_function_exit
    op = OP_MARK + name
    subs = [OP_MARK + n for n in ((inner,) if isinstance(inner, str) else inner or ())]

    @functools.wraps(fn)
    def recorded(*args, **kwargs):
        if not enabled():
            return fn(*args, **kwargs)
        handle = enter(op)
        try:
            if subs:
                handles = [enter(sub) for sub in subs]
                for h in reversed(handles):
                    exit_(h)
            return fn(*args, **kwargs)
        finally:
            exit_(handle)

    return recorded
