"""Tensor.untyped_storage()/storage(), set_, resize_ and resize_as_: the storage-level API of
torch.Tensor, over ember's storages (a storage is the flat buffer that views share)."""

import math

from ._C import get_default_dtype, uint8
from ._ops.creation import empty
from .autograd.grad_mode import no_grad


def _whole(t):
    """A 1-d tensor over every element of t's storage (from its start)."""
    n = t._storage_nbytes() // t.element_size()
    return t.detach().as_strided((n,), (1,), 0)


class UntypedStorage:
    """UntypedStorage(size=0, *, device=None) or UntypedStorage(sequence_of_bytes)

    The bytes behind a tensor and its views (torch.UntypedStorage); Tensor.untyped_storage()
    gives the one a tensor views, the constructor a new buffer."""

    def __init__(self, *args, device=None):
        if len(args) > 1:
            raise TypeError(f"{type(self).__name__}(): takes at most one positional argument")
        self._tensor = _new_buffer(args[0] if args else 0, uint8, device, "UntypedStorage")

    @classmethod
    def _wrap(cls, tensor):
        """The storage that `tensor` views (no copy)."""
        storage = cls.__new__(cls)
        storage._tensor = tensor
        return storage

    def data_ptr(self):
        return self._tensor._storage_ptr()

    def nbytes(self):
        return self._tensor._storage_nbytes()

    size = nbytes
    __len__ = nbytes

    @property
    def device(self):
        return self._tensor.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def element_size(self):
        return 1

    def is_shared(self):
        return False

    def _bytes(self):
        """Every byte of the storage as a 1-d uint8 tensor sharing it."""
        return _whole(self._tensor).view(uint8)

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, i):
        return self._bytes()[i].item()

    def fill_(self, value):
        with no_grad():
            self._bytes().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        if source.nbytes() != self.nbytes():
            raise RuntimeError(
                f"size mismatch, expected {self.nbytes()} bytes but got {source.nbytes()}"
            )
        with no_grad():
            self._bytes().copy_(source._bytes())
        return self

    def clone(self):
        return UntypedStorage._wrap(self._bytes().clone())

    def cpu(self):
        return self

    def untyped(self):
        return self

    def resize_(self, size):
        """Gives the storage `size` bytes, keeping the first ones. Tensors already viewing it
        keep the old buffer (torch's see the new one): resize a storage before making views."""
        bigger = empty(int(size), dtype=uint8, device=self.device)
        keep = min(int(size), self.nbytes())
        with no_grad():
            bigger[:keep] = self._bytes()[:keep]
        self._tensor = bigger
        return self

    def type(self):
        return f"torch.storage.{type(self).__name__}"

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and self.data_ptr() == other.data_ptr()

    def __hash__(self):
        return hash(self.data_ptr())

    def _header(self):
        return f"device={self.device}"

    def __repr__(self):
        # torch's: one element a line, then the storage's type, device and size.
        rows = "".join(f" {v}\n" for v in self.tolist()) or " \n"
        return f"{rows}[{self.type()}({self._header()}) of size {len(self)}]"


class TypedStorage(UntypedStorage):
    """TypedStorage(size=0, *, dtype=None, device=None) or TypedStorage(sequence, dtype=...)

    The same buffer seen as elements of a dtype (torch.TypedStorage, deprecated by torch in
    favour of UntypedStorage: its use warns once, as torch's does)."""

    def __init__(self, *args, dtype=None, device=None):
        _warn_typed()
        if len(args) > 1:
            raise TypeError("TypedStorage(): takes at most one positional argument")
        dtype = dtype if dtype is not None else get_default_dtype()
        self._tensor = _new_buffer(args[0] if args else 0, dtype, device, "TypedStorage")

    @property
    def dtype(self):
        return self._tensor.dtype

    def element_size(self):
        return self._tensor.element_size()

    def size(self):
        return self.nbytes() // self.element_size()

    __len__ = size

    def untyped(self):
        return UntypedStorage._wrap(self._tensor)

    @property
    def _untyped_storage(self):
        return self.untyped()

    def tolist(self):
        return _whole(self._tensor).tolist()

    def __getitem__(self, i):
        return _whole(self._tensor)[i].item()

    def fill_(self, value):
        with no_grad():
            _whole(self._tensor).fill_(value)
        return self

    def clone(self):
        return TypedStorage._wrap(_whole(self._tensor).clone())

    def resize_(self, size):
        UntypedStorage.resize_(self, int(size) * self.element_size())
        self._tensor = self._tensor.view(self.dtype)
        return self

    def _header(self):
        return f"dtype={self.dtype}, device={self.device}"


def _new_buffer(data, dtype, device, name):
    """A new storage's buffer: `data` bytes/elements (uninitialised, as torch's) or a sequence
    of values."""
    from ._ops.creation import tensor

    if isinstance(data, (list, tuple)):
        for v in data:
            if not isinstance(v, (int, float, bool)):
                raise RuntimeError(
                    f"torch.{name}(): tried to construct a storage from a sequence "
                    f"({type(data).__name__}), but one of the items was of type "
                    f"{type(v).__name__} instead of int"
                )
        if dtype == uint8:
            data = [int(v) & 0xFF for v in data]
        return tensor(data, dtype=dtype, device=device)
    if isinstance(data, bool) or not isinstance(data, int):
        raise TypeError(
            f"{name}(): argument 'size' must be int or a sequence, not {type(data).__name__}"
        )
    if data < 0:
        raise RuntimeError(f"{name}(): Trying to create a storage of negative size {data}")
    return empty(data, dtype=dtype, device=device)


def _warn_typed():
    from ._warn_once import warn_once

    warn_once(
        "TypedStorage",
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()",
    )


def untyped_storage(self):
    """untyped_storage() -> torch.UntypedStorage

    The tensor's storage as raw bytes."""
    return UntypedStorage._wrap(self)


def storage(self):
    """storage() -> torch.TypedStorage

    The tensor's storage viewed as elements of its dtype."""
    _warn_typed()
    return TypedStorage._wrap(self)


def _sizes(args):
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def resize_(self, *sizes, memory_format=None):
    """resize_(*sizes, memory_format=torch.contiguous_format) -> Tensor

    Gives the tensor `sizes` with contiguous strides at its offset, reusing its storage when
    large enough; otherwise a bigger storage keeps the old elements in their flat order."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    sizes = tuple(int(s) for s in _sizes(sizes))
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    # torch's contiguous strides: a size-0 dim counts as 1 ((3, 0) has strides (1, 1))
    strides = tuple(math.prod(max(s, 1) for s in sizes[i + 1 :]) for i in range(len(sizes)))
    n = math.prod(sizes)
    offset = self.storage_offset()
    room = self._storage_nbytes() // self.element_size() - offset
    if n <= room:
        self.data = self.as_strided(sizes, strides, offset)
        return self
    bigger = empty(n, dtype=self.dtype)
    keep = max(room, 0)
    with no_grad():
        bigger[:keep] = _whole(self)[offset : offset + keep]
    self.data = bigger.view(sizes)
    return self


def resize_as_(self, other, memory_format=None):
    """resize_as_(tensor, memory_format=torch.contiguous_format) -> Tensor

    In-place resize_ to the size of tensor."""
    return resize_(self, tuple(other.shape))


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """set_(source=None, storage_offset=0, size=None, stride=None) -> Tensor

    Makes the tensor a view of `source`'s storage (all of it when only source is given);
    with no argument, an empty tensor."""
    if source is None:
        self.data = empty(0, dtype=self.dtype)
        return self
    if isinstance(source, UntypedStorage):
        if isinstance(source, TypedStorage) and source.dtype != self.dtype:
            raise RuntimeError(
                f"Expected a Storage of type {_cpp_name(self.dtype)} or an UntypedStorage, but "
                f"got type {_c10_name(source.dtype)} for argument 1 'storage'"
            )
        # A storage is bytes: the tensor reads them as its own dtype, offset in its elements.
        source = _whole(source._tensor).view(uint8).view(self.dtype)
        if size is None:
            size = (source.numel(),)
    if size is None:
        self.data = source
    else:
        size = tuple(size)
        if stride is None:
            stride = tuple(math.prod(size[i + 1 :]) for i in range(len(size)))
        self.data = source.as_strided(size, tuple(stride), storage_offset)
    return self


# The C++ and c10 names of dtypes that torch's storage argument errors print.
_NAMES = {
    "float32": ("float", "Float"),
    "float64": ("double", "Double"),
    "float16": ("c10::Half", "Half"),
    "bfloat16": ("c10::BFloat16", "BFloat16"),
    "int64": ("long int", "Long"),
    "int32": ("int", "Int"),
    "int16": ("short int", "Short"),
    "int8": ("signed char", "Char"),
    "uint8": ("unsigned char", "Byte"),
    "bool": ("bool", "Bool"),
    "complex64": ("c10::complex<float>", "ComplexFloat"),
    "complex128": ("c10::complex<double>", "ComplexDouble"),
}


def _cpp_name(dtype):
    return _NAMES.get(str(dtype).split(".")[-1], (str(dtype),) * 2)[0]


def _c10_name(dtype):
    return _NAMES.get(str(dtype).split(".")[-1], (str(dtype),) * 2)[1]
