"""AOT autograd (torch's functorch.compile): joint forward+backward graphs for ember.compile.

derivatives.py is the table of backward formulas (derivatives_nn.py registers those of the
nn.functional ops into it; imported here so the table is complete), builder.py the node-emitting
values they are written with, aot_autograd.py builds the joint graph and runs the compiled halves
inside one autograd Function (Note [AOT autograd]), partitioners.py splits it
(Note [Partitioning]).
"""

from . import derivatives_nn  # noqa: F401  (registers the nn.functional rules into TABLE)
from .aot_autograd import aot_function, aot_module, aot_module_simplified, build_joint
from .derivatives import NoFormula
from .partitioners import default_partition, min_cut_rematerialization_partition

__all__ = [
    "aot_function",
    "aot_module",
    "aot_module_simplified",
    "build_joint",
    "default_partition",
    "min_cut_rematerialization_partition",
    "NoFormula",
]
