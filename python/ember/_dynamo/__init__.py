"""ember._dynamo: the capture front end of ember.compile (torch._dynamo's role and names).

A compiled function keeps a cache of entries; each is a graph captured from one real call
(``capture``: a recording function mode over ember's public API) behind a generated guard check
(``guards``), or a marker to run eagerly where the capture met a graph break or a Python side
effect (``side_effects``). ``reset()`` empties every cache; ``explain(fn)(*args)`` reports the
graphs and breaks of one call; ``config`` holds ``recompile_limit`` and friends."""

from . import config, exc, utils
from .backends import list_backends, lookup_backend, register_backend
from .decorators import mark_dynamic, mark_static, mark_static_address, maybe_mark_dynamic
from .eval_frame import OptimizedModule, disable, is_compiling, optimize, reset
from .explain import explain
from .user_api import (
    allow_in_graph,
    assume_constant_result,
    disallow_in_graph,
    error_on_graph_break,
    forbid_in_graph,
    get_stance,
    graph_break,
    nested_compile_region,
    nonstrict_trace,
    run,
    set_stance,
    substitute_in_graph,
)

__all__ = [
    "config",
    "exc",
    "reset",
    "explain",
    "optimize",
    "disable",
    "is_compiling",
    "list_backends",
    "lookup_backend",
    "register_backend",
    "OptimizedModule",
    "mark_dynamic",
    "maybe_mark_dynamic",
    "mark_static",
    "is_dynamo_supported",
    "utils",
    "graph_break",
    "allow_in_graph",
    "disallow_in_graph",
    "assume_constant_result",
    "substitute_in_graph",
    "nested_compile_region",
    "set_stance",
    "get_stance",
    "forbid_in_graph",
    "nonstrict_trace",
    "mark_static_address",
    "error_on_graph_break",
    "run",
]


def is_dynamo_supported():
    """is_dynamo_supported() -> bool

    ember.compile's capture runs on every Python ember supports."""
    return True
