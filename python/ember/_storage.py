"""Tensor.untyped_storage()/storage(), set_, resize_ and resize_as_: the storage-level API of
torch.Tensor, over ember's storages (a storage is the flat buffer that views share)."""

import math

from ._C import uint8
from ._ops.creation import empty
from .autograd.grad_mode import no_grad


def _whole(t):
    """A 1-d tensor over every element of t's storage (from its start)."""
    n = t._storage_nbytes() // t.element_size()
    return t.detach().as_strided((n,), (1,), 0)


class UntypedStorage:
    """The bytes behind a tensor and its views (torch.UntypedStorage)."""

    def __init__(self, tensor):
        self._tensor = tensor

    def data_ptr(self):
        return self._tensor._storage_ptr()

    def nbytes(self):
        return self._tensor._storage_nbytes()

    size = nbytes
    __len__ = nbytes

    @property
    def device(self):
        return self._tensor.device

    def element_size(self):
        return 1

    def tolist(self):
        return _whole(self._tensor).contiguous().view(uint8).tolist()

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and self.data_ptr() == other.data_ptr()

    def __hash__(self):
        return hash(self.data_ptr())

    def __repr__(self):
        return f"UntypedStorage(nbytes={self.nbytes()}, device={self.device})"


class TypedStorage(UntypedStorage):
    """The same buffer seen as elements of the tensor's dtype (torch.TypedStorage)."""

    @property
    def dtype(self):
        return self._tensor.dtype

    def element_size(self):
        return self._tensor.element_size()

    def size(self):
        return self.nbytes() // self.element_size()

    __len__ = size

    def untyped(self):
        return UntypedStorage(self._tensor)

    def tolist(self):
        return _whole(self._tensor).tolist()

    def __getitem__(self, i):
        return _whole(self._tensor)[i].item()

    def __repr__(self):
        return f"TypedStorage(size={self.size()}, dtype={self.dtype})"


def untyped_storage(self):
    """untyped_storage() -> torch.UntypedStorage

    The tensor's storage as raw bytes."""
    return UntypedStorage(self)


def storage(self):
    """storage() -> torch.TypedStorage

    The tensor's storage viewed as elements of its dtype."""
    return TypedStorage(self)


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
    strides = tuple(math.prod(sizes[i + 1 :]) for i in range(len(sizes)))
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
