"""ember.functional: torch.functional's names (einsum, meshgrid, stft, ...), the same functions as
the package root's; programs import them from here (`from torch.functional import einsum`)."""

_NAMES = (
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "block_diag",
    "cdist",
    "chain_matmul",
    "einsum",
    "istft",
    "lu",
    "norm",
    "meshgrid",
    "pca_lowrank",
    "split",
    "stft",
    "svd_lowrank",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
)
__all__ = list(_NAMES)  # each read from the root at use (below)


def __getattr__(name):
    # Read from the package root at use, so the root's guarded forms (out=, overloads) are the
    # ones called, as they are for ember.einsum.
    import importlib

    root = importlib.import_module("ember")  # at use: the root has finished loading by then
    if name in __all__ and hasattr(root, name):
        return getattr(root, name)
    raise AttributeError(f"module 'ember.functional' has no attribute '{name}'")


def __dir__():
    return sorted(__all__)
