"""Whether a capture (ember.export.export, ember.jit.trace or script) is running, for
ember.jit.is_tracing / is_scripting and ember.compiler.is_exporting."""

import contextlib
import threading

__all__ = ["active", "capturing"]

_state = threading.local()


def active(kind):
    """Whether a capture of ``kind`` ("trace", "script" or "export": export's trace is both
    "trace" and "export") is under way in this thread."""
    return getattr(_state, kind, 0) > 0


@contextlib.contextmanager
def capturing(kind):
    """Marks a capture of ``kind`` as under way for the duration of the block."""
    setattr(_state, kind, getattr(_state, kind, 0) + 1)
    try:
        yield
    finally:
        setattr(_state, kind, getattr(_state, kind) - 1)
