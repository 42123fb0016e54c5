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
    "skip_guard_on_inbuilt_nn_modules_unsafe",
    "skip_guard_on_all_nn_modules_unsafe",
    "keep_tensor_guards_unsafe",
    "skip_guard_on_globals_unsafe",
    "skip_all_guards_unsafe",
    "wrap_numpy",
    "config",
    "save_cache_artifacts",
    "load_cache_artifacts",
]

from . import config  # noqa: E402 (torch.compiler.config)
from ._cache_artifacts import load_cache_artifacts, save_cache_artifacts  # noqa: E402


def compile(*args, **kwargs):  # noqa: A001 (torch's name)
    """compile(*args, **kwargs)

    Same as ``ember.compile``."""
    from .._process import compile as _compile

    return _compile(*args, **kwargs)


def is_exporting():
    """is_exporting() -> bool

    True while ``ember.export`` traces a program (its capture does not run through
    ember.compile's entry points: ``is_dynamo_compiling()`` stays False there)."""
    from ..export._tracing import active

    return active("export")


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

    True while ember.compile is capturing (the function runs under the recording mode) or
    ember.export traces a program."""
    return _eval_frame.is_compiling() or is_exporting()


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


# Guard filters: torch passes them as ``options={"guard_filter_fn": f}``, calling ``f`` with its
# guard entries and dropping the guards it maps to False. ember ignores the option and keeps
# every guard (always correct, at worst a re-capture torch would skip); the filters work on any
# entries with torch's attribute names, for code that calls them directly.


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    """skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries) -> list[bool]

    False for the guards on built-in nn modules (see the note above on ember's guards)."""
    return [not getattr(e, "is_inbuilt_nn_module", False) for e in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    """skip_guard_on_all_nn_modules_unsafe(guard_entries) -> list[bool]

    False for the guards on nn modules."""
    return [not getattr(e, "is_nn_module", False) for e in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    """keep_tensor_guards_unsafe(guard_entries, keep_parameters=False) -> list[bool]

    True only for the guards on tensors (and on parameters when ``keep_parameters``)."""
    out = []
    for e in guard_entries:
        tensor = getattr(e, "guard_type", "") == "TENSOR_MATCH"
        out.append(tensor and (keep_parameters or not getattr(e, "is_parameter", False)))
    return out


def skip_guard_on_globals_unsafe(guard_entries):
    """skip_guard_on_globals_unsafe(guard_entries) -> list[bool]

    False for the guards on global variables."""
    return [not getattr(e, "is_global", False) for e in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    """skip_all_guards_unsafe(guard_entries) -> list[bool]

    False for every guard."""
    return [False for _ in guard_entries]


def wrap_numpy(fn):
    """wrap_numpy(fn) -> callable

    ``fn``, written for NumPy arrays, made callable with tensors: tensor arguments (also inside
    tuples, lists and dicts) reach it as arrays (``Tensor.numpy()`` of a detached tensor), and
    the arrays it returns come back as tensors (NumPy scalars stay scalars). torch traces the
    NumPy calls into its graph; ember runs ``fn`` eagerly (under ``ember.compile``, a graph
    break), with the same values."""
    import functools

    import numpy as np

    from .. import _C, from_numpy
    from ..utils import _pytree

    def to_np(x):
        return x.detach().numpy() if isinstance(x, _C.Tensor) else x

    def to_tensor(x):
        return from_numpy(x) if isinstance(x, np.ndarray) else x  # NumPy scalars stay (torch's)

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args, kwargs = _pytree.tree_map(to_np, (args, kwargs))
        return _pytree.tree_map(to_tensor, fn(*args, **kwargs))

    return wrapped
