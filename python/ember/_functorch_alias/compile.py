"""``functorch.compile`` under ember.run: ember's AOT autograd (``ember._functorch``)."""

from .._functorch import (
    aot_function,
    aot_module,
    aot_module_simplified,
    default_partition,
    min_cut_rematerialization_partition,
)
from .._functorch.aot_autograd import make_boxed_compiler, make_boxed_func

__all__ = [
    "aot_function",
    "aot_module",
    "aot_module_simplified",
    "default_partition",
    "make_boxed_compiler",
    "make_boxed_func",
    "min_cut_rematerialization_partition",
]
