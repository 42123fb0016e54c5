"""torch.storage: the storage classes (the flat buffers that tensors and their views share)."""

from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
