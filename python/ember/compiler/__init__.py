"""ember.compiler: torch.compiler's user-facing controls over ember.compile."""

from .._dynamo import eval_frame as _eval_frame
from .._dynamo.user_api import (
    allow_in_graph,
    assume_constant_result,
    get_default_backend,
    nested_compile_region,
    set_default_backend,
    set_stance,
    substitute_in_graph,
)

__all__ = [
    "compile",
    "reset",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "disable",
    "list_backends",
    "allow_in_graph",
    "assume_constant_result",
    "substitute_in_graph",
    "nested_compile_region",
    "set_stance",
    "cudagraph_mark_step_begin",
    "set_default_backend",
    "get_default_backend",
    "set_enable_guard_collectives",
]


def compile(*args, **kwargs):  # noqa: A001 (torch's name)
    """compile(*args, **kwargs)

    Same as ``ember.compile``."""
    from .._process import compile as _compile

    return _compile(*args, **kwargs)


def is_exporting():
    """is_exporting() -> bool

    True while ``ember.export`` traces a program (its capture does not run through
    ember.compile's entry points, so this is False inside compiled functions)."""
    return False


def cudagraph_mark_step_begin():
    """cudagraph_mark_step_begin()

    Marks the start of an iteration for CUDA graphs; ember has no CUDA graphs, so it does
    nothing."""


def reset():
    """reset()

    Forgets every captured graph and guard: compiled functions capture again on their next
    call."""
    _eval_frame.reset()


def is_compiling():
    """is_compiling() -> bool

    True while ember.compile is capturing (the function runs under the recording mode)."""
    return _eval_frame.is_compiling()


def is_dynamo_compiling():
    """is_dynamo_compiling() -> bool

    Same as ``is_compiling()``."""
    return _eval_frame.is_compiling()


def disable(fn=None, recursive=True, *, reason=None):
    """disable(fn=None, recursive=True, *, reason=None)

    Keeps ``fn`` out of ember.compile: it runs eagerly (see ``ember._dynamo.disable``)."""
    return _eval_frame.disable(fn, recursive, reason=reason)


def list_backends(exclude_tags=("debug", "experimental")):
    """list_backends(exclude_tags=('debug', 'experimental')) -> list[str]

    The backend names ``ember.compile`` accepts."""
    from .._dynamo import list_backends as _list

    return _list(exclude_tags)


_guard_collectives = [False]


def set_enable_guard_collectives(enabled):
    """set_enable_guard_collectives(enabled) -> bool

    torch's switch for agreeing on guard results across distributed ranks; ember's guards are
    per process, so this only records the setting. Returns the previous one."""
    prior = _guard_collectives[0]
    _guard_collectives[0] = bool(enabled)
    return prior
