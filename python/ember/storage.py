"""torch.storage: the storage classes (the flat buffers that tensors and their views share), and
the legacy per-dtype storage names (torch.FloatStorage ...): calling one makes a TypedStorage
of its dtype, and a TypedStorage of that dtype is an instance of it, as torch's."""

from . import _C
from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance):
        return (
            isinstance(instance, TypedStorage)
            and instance.dtype == cls.dtype
            and instance.device.type == "cpu"
        )


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    dtype = None

    def __new__(cls, *args, device=None):
        return TypedStorage(*args, dtype=cls.dtype, device=device)


def _legacy(name, dtype):
    return _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "torch"})


_LEGACY_NAMES = {
    "FloatStorage": _C.float32,
    "DoubleStorage": _C.float64,
    "HalfStorage": _C.float16,
    "BFloat16Storage": _C.bfloat16,
    "LongStorage": _C.int64,
    "IntStorage": _C.int32,
    "ShortStorage": _C.int16,
    "CharStorage": _C.int8,
    "ByteStorage": _C.uint8,
    "BoolStorage": _C.bool,
    "ComplexFloatStorage": _C.complex64,
    "ComplexDoubleStorage": _C.complex128,
}
_legacy_storages = {name: _legacy(name, dtype) for name, dtype in _LEGACY_NAMES.items()}
