"""``functorch.experimental`` under ember.run (see the package docstring)."""

from ...func import functionalize, hessian, jacfwd, jvp, replace_all_batch_norm_modules_
from . import control_flow

__all__ = [
    "control_flow",
    "functionalize",
    "hessian",
    "jacfwd",
    "jvp",
    "replace_all_batch_norm_modules_",
]
