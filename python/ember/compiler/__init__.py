"""ember.compiler: torch.compiler's user-facing controls over ember.compile."""

from .._dynamo import eval_frame as _eval_frame

__all__ = ["reset", "is_compiling", "is_dynamo_compiling", "disable", "list_backends"]


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
