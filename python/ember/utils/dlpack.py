"""ember.utils.dlpack, as torch.utils.dlpack: DLPack capsules to and from tensors (zero-copy)."""

from .._dlpack import DLDeviceType, from_dlpack, to_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
