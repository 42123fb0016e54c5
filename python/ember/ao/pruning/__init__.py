"""ember.ao.pruning (torch.ao.pruning): sparsifiers that learn weight masks through
parametrizations (BaseSparsifier, WeightNormSparsifier)."""

from .sparsifier import (
    BaseSparsifier,
    FakeSparsity,
    WeightNormSparsifier,
    fqn_to_module,
    get_arg_info_from_tensor_fqn,
    module_to_fqn,
)

__all__ = [
    "BaseSparsifier",
    "WeightNormSparsifier",
    "FakeSparsity",
    "module_to_fqn",
    "fqn_to_module",
    "get_arg_info_from_tensor_fqn",
]
