"""torch's legacy tensor types (torch.FloatTensor, torch.LongTensor ...): constructors that older
programs still call, and isinstance checks by dtype; Tensor.type accepts them and their names."""

import warnings

from . import _C
from ._C import Tensor, set_default_dtype
from ._ops.creation import empty, tensor
from ._ops.tensor import type as _tensor_type
from ._size import Size

_TYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64",
    "IntTensor": "int32",
    "ShortTensor": "int16",
    "CharTensor": "int8",
    "ByteTensor": "uint8",
    "BoolTensor": "bool",
}
__all__ = list(_TYPES)


class _LegacyType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and repr(obj.dtype) == "torch." + cls._dtype_name

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"

    @property
    def dtype(cls):
        return getattr(_C, cls._dtype_name)


def _new(cls, *args, device=None):
    dtype = cls.dtype
    if not args:
        return empty(0, dtype=dtype)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype != dtype:
                raise TypeError(f"expected {dtype} (got {data.dtype})")
            return data
        if isinstance(data, Size):
            return empty(*data, dtype=dtype)
        return tensor(data, dtype=dtype)
    return empty(*args, dtype=dtype)


for _name, _dt in _TYPES.items():
    _doc = (
        f"{_name}(data) or {_name}(*size) -> Tensor\n\nThe legacy constructor of {_dt} "
        "tensors: from data, or uninitialized of the given size (empty with no arguments)."
    )
    globals()[_name] = _LegacyType(
        _name, (), {"_dtype_name": _dt, "__new__": _new, "__doc__": _doc}
    )


class _CudaLegacyType(_LegacyType):
    """torch.cuda.FloatTensor and its kind: names programs pick between (``FloatTensor =
    torch.cuda.FloatTensor if cuda else torch.FloatTensor``); without CUDA no tensor is one and
    constructing one raises torch's CPU-only build's TypeError."""

    def __instancecheck__(cls, obj):
        return False

    def __repr__(cls):
        return f"<class 'torch.cuda.{cls.__name__}'>"

    is_cuda = True


def _cuda_new(cls, *args, **kwargs):
    raise TypeError(
        f"type torch.cuda.{cls.__name__} not available. Torch not compiled with CUDA enabled."
    )


CUDA_TYPES = {
    _name: _CudaLegacyType(_name, (), {"_dtype_name": _dt, "__new__": _cuda_new})
    for _name, _dt in _TYPES.items()
}


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """type(dtype=None, non_blocking=False, **kwargs) -> str or Tensor

    The type name as a string when dtype is None, else a copy cast to the given dtype or legacy
    type."""
    if isinstance(dtype, _CudaLegacyType) or (
        isinstance(dtype, str) and dtype.startswith("torch.cuda.")
    ):
        return self.cuda()
    if isinstance(dtype, str):
        name = dtype.split(".")[-1]
        if name not in _TYPES:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_C, _TYPES[name])
    elif isinstance(dtype, _LegacyType):
        dtype = dtype.dtype
    return _tensor_type(self, dtype, non_blocking)


_default_type_warned = []


def set_default_tensor_type(t):
    """set_default_tensor_type(t, /)

    The legacy way to set the default float dtype: a legacy type or its name (deprecated, with
    torch's warning once a process)."""
    if not _default_type_warned:
        _default_type_warned.append(True)
        warnings.warn(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
            "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
            UserWarning,
            stacklevel=2,
        )
    name = t.split(".")[-1] if isinstance(t, str) else getattr(t, "__name__", "")
    if name not in _TYPES or not getattr(_C, _TYPES[name]).is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(getattr(_C, _TYPES[name]))


def typename(obj):
    """typename(obj, /)

    'torch.FloatTensor' for a float32 tensor, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "")
    qual = type(obj).__qualname__
    return qual if module in ("builtins", "") else f"{module}.{qual}"


def _tensor_new(self, *args, **kwargs):
    """new(*args, **kwargs) -> Tensor

    Tensor.new (legacy): like the legacy constructor of self's dtype."""
    if kwargs.get("dtype") is not None:
        raise TypeError("new() got an unexpected keyword argument 'dtype'")
    cls = next(v for k, v in globals().items() if k in _TYPES and _TYPES[k] == repr(self.dtype)[6:])
    return cls(*args)


__all__ += ["set_default_tensor_type", "typename"]
