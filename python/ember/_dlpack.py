"""DLPack exchange, both ways and zero-copy: Tensor.__dlpack__/__dlpack_device__ (the array-API
protocol) and from_dlpack. The capsules themselves are made and consumed in C++
(python/src/dlpack.cpp); this module is the protocol around them."""

import enum

from . import _C


class DLDeviceType(enum.IntEnum):
    """DLPack's device type codes (the ones torch lists)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def __dlpack_device__(self):
    """__dlpack_device__() -> tuple

    The (device type, device index) pair of the DLPack protocol: (kDLCPU, 0) for ember's tensors."""
    if self._device_str != "cpu":
        raise BufferError(
            f"__dlpack_device__: expected a CPU tensor; got one on {self._device_str}"
        )
    return (DLDeviceType.kDLCPU, 0)


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) -> PyCapsule

    The tensor as a DLPack capsule sharing its memory (the array-API protocol): a versioned
    'dltensor_versioned' capsule (DLPack 1.0) when the consumer passes max_version >= (1, 0), the
    legacy 'dltensor' one otherwise. `stream` must be None (CPU); `dl_device` may only name the
    CPU; copy=True exports a copy, copy=False or None shares the memory."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    if dl_device is not None and tuple(int(d) for d in dl_device) != (DLDeviceType.kDLCPU, 0):
        raise BufferError(f"__dlpack__: expected dl_device on the CPU (1, 0); got {dl_device}")
    tensor = self.detach()
    if copy:
        tensor = tensor.clone()
    versioned = max_version is not None and int(max_version[0]) >= 1
    return _C._to_dlpack(tensor, versioned, bool(copy))


def to_dlpack(tensor):
    """to_dlpack(tensor) -> PyCapsule

    The tensor as a legacy DLPack capsule ('dltensor') sharing its memory; the capsule can be
    consumed once (by ember.from_dlpack, torch.from_dlpack, ...)."""
    return _C._to_dlpack(tensor.detach(), False, False)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """from_dlpack(ext_tensor, *, device=None, copy=None) -> Tensor

    A tensor sharing the memory of `ext_tensor`: an object with `__dlpack__` and
    `__dlpack_device__` (a numpy array, a torch tensor, another ember tensor) or a DLPack capsule
    (consumed: a capsule gives one tensor only). Writes through either side are seen by the
    other; the producer's memory lives as long as the returned tensor's storage. `device` may
    only be the CPU; copy=True returns a copy instead."""
    if device is not None and str(device) not in ("cpu", "cpu:0", "0"):
        raise BufferError(f"from_dlpack: expected device=None or the CPU; got {device}")
    if hasattr(ext_tensor, "__dlpack__"):
        source = ext_tensor.__dlpack_device__()
        if int(source[0]) not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
            raise BufferError(
                f"from_dlpack: expected a CPU array (DLPack device type 1); got device {source}"
            )
        try:
            capsule = ext_tensor.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer older than the 2023 protocol: no keyword arguments
            capsule = ext_tensor.__dlpack__()
    else:
        capsule = ext_tensor
    tensor = _C._from_dlpack_capsule(capsule)
    return tensor.clone() if copy else tensor
