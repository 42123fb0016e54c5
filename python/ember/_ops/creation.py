"""Tensor factories: from data, filled, ranges, strided, triangle indices and windows."""

import builtins
import math
import sys
import warnings

from .. import _C
from .._C import Tensor, bfloat16, cat, cos, float64, from_numpy, get_default_dtype, i0, int64, sqrt
from .._device import check_pin_memory, factory_device, is_meta, meta_empty, place
from .._device import device as _device_type
from .._process import contiguous_format, preserve_format, strided
from .._warn_once import warn_once
from . import _op_range

__all__ = [
    "tensor",
    "as_tensor",
    "asarray",
    "scalar_tensor",
    "empty",
    "zeros",
    "ones",
    "full",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "arange",
    "range",
    "linspace",
    "logspace",
    "eye",
    "empty_strided",
    "frombuffer",
    "tril_indices",
    "triu_indices",
    "vander",
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
]


_cpu = _device_type("cpu")  # a block that makes tensors on the cpu whatever the default


def _numpy():
    """numpy if the program imported it (its arrays can exist only then); ember doesn't import
    it itself, which would double `import ember`'s time."""
    return sys.modules.get("numpy")


def _check_keywords(fn, kwargs):
    """torch's parser refuses a keyword a factory lacks (a misspelt requires_grad; names=, of the
    named tensors torch 2.13 no longer has): of the keywords the factories' **kwargs gather, only
    layout (strided, the only dense one) is taken."""
    for key in kwargs:
        if key != "layout":
            raise TypeError(f"{fn}() got an unexpected keyword argument '{key}'")


def _sparse_layout(kwargs):
    layout = kwargs.get("layout") if kwargs else None
    return layout is not None and layout is not strided


def _sparse_zeros(fn, size, kwargs, dtype, requires_grad):
    """zeros/empty with a sparse layout: torch's all-zero sparse tensor of that layout."""
    from ..sparse import _shape_ops

    layout = kwargs.pop("layout")
    return _shape_ops.empty_sparse(fn, layout, _size(size, kwargs, fn), dtype, requires_grad)


def _size(size, kwargs=None, fn="ones"):
    """The shape from *size (ints, or one sequence) or from the size= keyword (torch accepts
    both spellings; without either it raises TypeError); other keywords as _check_keywords."""
    if kwargs and "size" in kwargs:
        if size:
            raise TypeError(f"{fn}() got multiple values for argument 'size'")
        size = (kwargs.pop("size"),)
    elif kwargs is not None and not size:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    if kwargs:
        _check_keywords(fn, kwargs)
    if len(size) == 1 and not isinstance(size[0], int):
        return list(size[0])
    return list(size)


def _nesting_depth(data):
    """Raises ValueError past 128 nested sequences, torch's limit for nested data (checking
    the first element at each level, before anything is built)."""
    depth = 0
    while isinstance(data, (list, tuple)):
        depth += 1
        if depth > 128:
            raise ValueError(f"too many dimensions '{type(data).__name__}'")
        if not data:
            break
        data = data[0]


def _require_tensor(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )


def _finish(t, requires_grad):
    if requires_grad:
        _C._set_requires_grad(t, True)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor

    A new tensor holding a copy of data (a nested sequence, number or array)."""
    dev = factory_device(device, "tensor", pin_memory)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
            "rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    np = _numpy()
    if np is not None and isinstance(data, np.generic):  # numpy scalars keep their dtype, as torch
        data = np.asarray(data)
    elif np is not None and isinstance(data, (list, tuple)) and data:
        if isinstance(data[0], np.ndarray):
            warn_once(
                "tensor_from_ndarrays",
                "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                "consider converting the list to a single numpy.ndarray with numpy.array() "
                "before converting to a tensor.",
            )
            if len({np.shape(a) for a in data}) == 1:  # ragged: the element scan words it
                data = np.array(data)
    _nesting_depth(data)
    try:
        out = _C._tensor(data, dtype)
    except TypeError as e:
        _infer_error(data, dtype, e)
        raise
    # an empty sequence has no complex data (an empty complex array keeps its dtype, as torch's)
    empty_sequence = out.numel() == 0 and (np is None or not isinstance(data, np.ndarray))
    if dtype is None and empty_sequence and out.is_complex():
        out = _C._to_dtype(out, _C.get_default_dtype(), False)
    if dev is not None:
        return place(dev, out, requires_grad)
    return _finish(out, requires_grad)


def _infer_error(data, dtype, error):
    """torch's class for an element tensor() cannot hold: RuntimeError when no dtype is given
    (it cannot infer one), ValueError for a str inside a sequence (another dimension)."""
    msg = str(error)
    if data is None or (dtype is None and msg.startswith("new(): invalid data type '")):
        name = "NoneType" if data is None else msg.split("'")[1]
        if name == "str" and not isinstance(data, str):
            raise ValueError("too many dimensions 'str'") from None
        if name != "str":
            raise RuntimeError(f"Could not infer dtype of {name}") from None


def as_tensor(data, dtype=None, device=None):
    """as_tensor(data: Any, *, dtype: Optional[dtype] = None,
        device: Optional[DeviceLikeType]) -> Tensor

    data as a tensor, sharing memory with a tensor or NumPy array where dtype allows."""
    dev = factory_device(device, "as_tensor")
    if dev is not None:
        if isinstance(data, Tensor):
            if data.device == dev:
                return data if dtype is None or data.dtype == dtype else data.to(dtype)
            return data.to(dev, dtype)
        return place(dev, as_tensor(data, dtype, "cpu"))
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    np = _numpy()
    if np is not None and isinstance(data, np.ndarray):
        plain = data.dtype.kind in "biuf" and data.dtype.itemsize <= 8
        t = _C._from_numpy_any(data) if plain else None
        if t is not None and all(s >= 0 for s in data.strides):
            return t if dtype is None or t.dtype == dtype else t.to(dtype)
    _nesting_depth(data)
    return _C._tensor(data, dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """asarray(obj: Any, *, dtype: Optional[dtype], device: Optional[DeviceLikeType],
        copy: Optional[bool] = None, requires_grad: bool = False) -> Tensor

    obj (a tensor, NumPy array, buffer, number or sequence) as a tensor. copy=None shares memory
    where the dtype and device allow, copy=True always copies, copy=False raises ValueError when
    it cannot share. A tensor's autograd graph is kept unless requires_grad is given."""
    if isinstance(obj, Tensor):
        if requires_grad is None and obj.requires_grad:
            warn_once(
                "asarray_requires_grad",
                "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
                "instead of False. Pass requires_grad=False explicitly to get the old behavior "
                "and silence this warning.",
            )
        dev = factory_device(device, "asarray")
        converts = (dtype is not None and dtype != obj.dtype) or (
            dev is not None and dev != obj.device
        )
        if converts and copy is False:
            from .._type_info import scalar_type_name

            if dtype is not None and dtype != obj.dtype:
                raise ValueError(
                    f"can't alias tensor with dtype '{scalar_type_name(obj.dtype)}' into dtype "
                    f"'{scalar_type_name(dtype)}'."
                )
            raise ValueError(f"can't alias tensor from device '{obj.device}' to '{dev}'.")
        if not converts and not copy:
            if requires_grad is not None and obj.requires_grad != requires_grad:
                obj.requires_grad_(requires_grad)  # torch's alias takes the flag in place
            return obj
        out = obj.to(dev, dtype, copy=True) if converts else obj.clone()
        if requires_grad is None:
            return out
        return out.detach().requires_grad_(requires_grad)
    np = _numpy()
    shareable = np is not None and isinstance(obj, np.ndarray)
    if copy is False and not shareable and not isinstance(obj, (bytes, bytearray, memoryview)):
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    if isinstance(obj, (bytes, bytearray, memoryview)):
        out = frombuffer(obj, dtype=dtype or get_default_dtype())
        if copy:
            out = out.clone()
    elif shareable:
        out = as_tensor(obj)
        if dtype is not None and dtype != out.dtype:
            if copy is False:
                from .._type_info import scalar_type_name

                raise ValueError(
                    f"can't alias tensor with dtype '{scalar_type_name(out.dtype)}' into dtype "
                    f"'{scalar_type_name(dtype)}'."
                )
            out = out.to(dtype)
        elif copy:
            out = out.clone()
    else:
        out = as_tensor(obj, dtype)
    if device is not None:
        out = out.to(device)
    return _finish(out, requires_grad)


def scalar_tensor(
    s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
):
    """scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
        requires_grad=False) -> Tensor

    A 0-d tensor holding the number s (default dtype unless dtype is given)."""
    dev = factory_device(device, "scalar_tensor", pin_memory)
    out = _C._full([], s, dtype or _C.get_default_dtype(), False)
    return place(dev, out, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs):
    """empty(*size, *, out=None, dtype=None, layout=torch.strided, device=None, requires_grad=False,
        pin_memory=False, memory_format=torch.contiguous_format) -> Tensor

    A tensor of the given shape whose elements are not initialised."""
    memory_format = kwargs.pop("memory_format", None)
    dev = factory_device(device, "empty", pin_memory)
    if _sparse_layout(kwargs):
        return _sparse_zeros("empty", size, kwargs, dtype, requires_grad)
    if is_meta(dev):
        t = meta_empty(_size(size, kwargs, "empty"), dtype)
        if memory_format is not None and memory_format is not contiguous_format:
            t = _C._empty_like_format(t, dtype, memory_format)
        return _finish(t, requires_grad)
    if memory_format is not None and memory_format is not contiguous_format:
        return place(
            dev, _C._empty_format(_size(size, kwargs, "empty"), dtype, memory_format), requires_grad
        )
    if dev is not None:
        return place(dev, _C._empty(_size(size, kwargs, "empty"), dtype, False), requires_grad)
    return _C._empty(_size(size, kwargs, "empty"), dtype, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs):
    """zeros(*size, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    A tensor of the given shape filled with 0."""
    dev = factory_device(device, "zeros", pin_memory)
    if _sparse_layout(kwargs):
        return _sparse_zeros("zeros", size, kwargs, dtype, requires_grad)
    shape = _size(size, kwargs, "zeros")
    try:
        if is_meta(dev):
            return meta_empty(shape, dtype, requires_grad)
        if dev is not None:
            return place(dev, _C._zeros(shape, dtype, False), requires_grad)
        return _C._zeros(shape, dtype, requires_grad)
    except RuntimeError as e:
        if "negative dimension" not in str(e):
            raise
        # torch's zeros checks its sizes itself, with its own wording
        raise RuntimeError("zeros: Dimension size must be non-negative.") from None


def ones(*size, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs):
    """ones(*size, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    A tensor of the given shape filled with 1."""
    dev = factory_device(device, "ones", pin_memory)
    if is_meta(dev):
        return meta_empty(_size(size, kwargs, "ones"), dtype, requires_grad)
    if dev is not None:
        return place(dev, _C._ones(_size(size, kwargs, "ones"), dtype, False), requires_grad)
    return _C._ones(_size(size, kwargs, "ones"), dtype, requires_grad)


def full(
    size, fill_value, *, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs
):
    """full(size, fill_value, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    A tensor of shape size filled with fill_value."""
    _check_keywords("full", kwargs)
    dev = factory_device(device, "full", pin_memory)
    shape = list(size) if not isinstance(size, int) else [size]
    if is_meta(dev):  # the dtype as a cpu full would infer it from fill_value
        return meta_empty(shape, _full([0], fill_value, dtype, False).dtype, requires_grad)
    if dev is not None:
        return place(dev, _full(shape, fill_value, dtype, False), requires_grad)
    return _full(shape, fill_value, dtype, requires_grad)


def _full(shape, fill_value, dtype, requires_grad):
    """_C._full, which takes real numbers only; a Python complex fills through a 0-d tensor."""
    if not isinstance(fill_value, complex):
        return _C._full(shape, fill_value, dtype, requires_grad)
    if dtype is None:
        dtype = _C.complex128 if get_default_dtype() == float64 else _C.complex64
    if dtype == _C.bool:
        return _C._full(shape, fill_value != 0, dtype, requires_grad)
    if not dtype.is_complex:
        name = _CPP_NAMES.get(str(dtype), dtype)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    value = _C._tensor(fill_value, dtype)
    return _finish(value.expand(shape).contiguous(), requires_grad)


# The C++ type names torch's conversion error prints.
_CPP_NAMES = {
    "torch.float32": "float",
    "torch.float64": "double",
    "torch.float16": "c10::Half",
    "torch.bfloat16": "c10::BFloat16",
    "torch.int64": "int64_t",
    "torch.int32": "int",
    "torch.int16": "int16_t",
    "torch.int8": "int8_t",
    "torch.uint8": "uint8_t",
}


def _like(input, dtype):
    return dtype if dtype is not None else input.dtype


def _laid_out_like(t, input, memory_format):
    """t, a fresh row-major tensor shaped like input, laid out as empty_like(input,
    memory_format=memory_format) would be (preserve_format by default: input's layout)."""
    if memory_format is contiguous_format or (
        memory_format in (None, preserve_format) and t.stride() == input.stride()
    ):
        return t
    return _C._empty_like_format(input, t.dtype, memory_format).copy_(t)


def _like_target(input, dtype, device, memory_format, op, pin_memory=False):
    """An uninitialised tensor for a *_like factory when a device is involved (input on meta,
    or device= given), laid out as empty_like lays it out; None for the plain cpu path. As
    torch's, the *_like factories follow input's device, not the default device."""
    src_meta = input.is_meta
    if pin_memory:
        check_pin_memory(True, input.device if device is None else factory_device(device, op))
    if device is None and not src_meta:
        return None
    dev = factory_device(device, op) if device is not None else None
    to_meta = is_meta(dev) or (device is None and src_meta)
    if not to_meta and not src_meta:
        return (
            None if dev is None else place(dev, _C._empty_like_format(input, dtype, memory_format))
        )
    layout = _C._empty_like_format(input if src_meta else _C._to_meta(input), dtype, memory_format)
    if to_meta:
        return layout
    out = empty_strided(list(layout.shape), list(layout.stride()), dtype=layout.dtype, device="cpu")
    return out if dev is None else place(dev, out)


def empty_like(
    input,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
    **kwargs,
):
    """empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
        memory_format=torch.preserve_format) -> Tensor

    An uninitialised tensor with input's shape (and dtype unless given)."""
    _check_keywords("empty_like", kwargs)
    _require_tensor("empty_like", input)
    t = _like_target(input, dtype, device, memory_format, "empty_like", pin_memory)
    if t is not None:
        return _finish(t, requires_grad)
    return _finish(_C._empty_like_format(input, dtype, memory_format), requires_grad)


def _filled_like(input, dtype, device, memory_format, op, value, pin_memory):
    """The *_like result on a device other than the plain cpu path's, or None."""
    t = _like_target(input, dtype, device, memory_format, op, pin_memory)
    if t is None or t.is_meta:
        return t
    return t.fill_(value)


def zeros_like(
    input,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
    **kwargs,
):
    """zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
        memory_format=torch.preserve_format) -> Tensor

    A tensor of zeros with input's shape (and dtype unless given)."""
    _check_keywords("zeros_like", kwargs)
    _require_tensor("zeros_like", input)
    t = _filled_like(input, dtype, device, memory_format, "zeros_like", 0, pin_memory)
    if t is not None:
        return _finish(t, requires_grad)
    t = _C._zeros(list(input.shape), _like(input, dtype), False)
    return _finish(_laid_out_like(t, input, memory_format), requires_grad)


def ones_like(
    input,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
    **kwargs,
):
    """ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
        memory_format=torch.preserve_format) -> Tensor

    A tensor of ones with input's shape (and dtype unless given)."""
    _check_keywords("ones_like", kwargs)
    _require_tensor("ones_like", input)
    t = _filled_like(input, dtype, device, memory_format, "ones_like", 1, pin_memory)
    if t is not None:
        return _finish(t, requires_grad)
    t = _C._ones(list(input.shape), _like(input, dtype), False)
    return _finish(_laid_out_like(t, input, memory_format), requires_grad)


def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
    **kwargs,
):
    """full_like(input, fill_value, *, dtype=None, layout=torch.strided, device=None,
        requires_grad=False, memory_format=torch.preserve_format) -> Tensor

    A tensor with input's shape (and dtype unless given) filled with fill_value."""
    _check_keywords("full_like", kwargs)
    _require_tensor("full_like", input)
    t = _filled_like(input, dtype, device, memory_format, "full_like", fill_value, pin_memory)
    if t is not None:
        return _finish(t, requires_grad)
    t = _full(list(input.shape), fill_value, _like(input, dtype), False)
    return _finish(_laid_out_like(t, input, memory_format), requires_grad)


_SMALL_INTS = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def arange(
    start=None,
    end=None,
    step=1,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """arange(start=0, end, step=1, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    The 1-D sequence start, start + step, ... stopping before end."""
    _check_keywords("arange", kwargs)
    dev = factory_device(device, "arange", pin_memory)
    if dev is not None:  # computed on the cpu (its length is known only then), then placed
        out = arange(start, end, step, dtype=dtype, device="cpu")
        return place(dev, out, requires_grad)
    if start is None and end is None:
        raise TypeError('arange() missing 1 required positional arguments: "end"')
    if end is None:
        start, end = 0, start
    elif start is None:  # arange(end=5): torch's arange(Number end) overload
        start = 0
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if dtype == _C.bool:  # torch has no bool kernel: it says so before checking the bounds
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    consistent = (step > 0 and end >= start) or (step < 0 and end <= start)
    fractional = builtins.any(isinstance(x, float) for x in (start, end, step))
    if dtype == int64:
        # int64 computes in integers: torch truncates the bounds and the step first
        # (arange(0.5, dtype=int64) is empty), after checking the signs on the given values
        if consistent and fractional:
            start, end, step = (builtins.int(x) for x in (start, end, step))
            if step == 0:
                raise ValueError("step must be nonzero")
    elif dtype is not None and repr(dtype).split(".")[-1] in _SMALL_INTS and consistent:
        if fractional and step != 0 and builtins.all(math.isfinite(x) for x in (start, end)):
            # the narrower integer dtypes count the elements from the given values but step
            # from the truncated start by the truncated step, wrapping as the dtype does:
            # arange(0, 5, 0.5, dtype=int8) is ten zeros in torch
            n = builtins.max(0, math.ceil((end - start) / step))
            idx = _C._arange(0, n, 1, int64, False)
            return _finish(
                (idx * builtins.int(step) + builtins.int(start)).to(dtype), requires_grad
            )
    return _C._arange(start, end, step, dtype, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    """range(start=0, end, step=1, *, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    Deprecated: the 1-D sequence from start to end inclusive in steps of step."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior "
        "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
        "values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    n = int((end - start) // step) + 1
    dev = factory_device(device, "range")
    if is_meta(dev):
        return meta_empty([n], dtype, requires_grad)
    out = _C._linspace(start, start + (n - 1) * step, n, dtype, dev is None and requires_grad)
    return place(dev, out, requires_grad and dev is not None)


def linspace(
    start, end, steps, *, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs
):
    """linspace(start, end, steps, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    steps evenly spaced values from start to end, both included."""
    _check_keywords("linspace", kwargs)
    dev = factory_device(device, "linspace", pin_memory)
    if is_meta(dev):
        return meta_empty([steps], _C._linspace(0, 1, 0, dtype, False).dtype, requires_grad)
    out = _C._linspace(start, end, steps, dtype, dev is None and requires_grad)
    return place(dev, out, requires_grad and dev is not None)


def logspace(
    start,
    end,
    steps,
    base=10.0,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=torch.strided,
        device=None, requires_grad=False) -> Tensor

    steps values base ** x for x evenly spaced from start to end."""
    _check_keywords("logspace", kwargs)
    dev = factory_device(device, "logspace", pin_memory)
    if is_meta(dev):
        return meta_empty([steps], _C._logspace(0, 1, 0, base, dtype, False).dtype, requires_grad)
    out = _C._logspace(start, end, steps, base, dtype, dev is None and requires_grad)
    return place(dev, out, requires_grad and dev is not None)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs):
    """eye(n, m=None, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    An n x m matrix with ones on the diagonal and zeros elsewhere."""
    _check_keywords("eye", kwargs)
    dev = factory_device(device, "eye", pin_memory)
    if is_meta(dev):
        return meta_empty([n, n if m is None else m], dtype, requires_grad)
    return place(
        dev, _C._eye(n, m, dtype, dev is None and requires_grad), requires_grad and dev is not None
    )


def empty_strided(
    size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
):
    """empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False) -> Tensor

    An uninitialised tensor with the given sizes and strides over a fresh buffer."""
    dev = factory_device(device, "empty_strided", pin_memory)
    if is_meta(dev):
        return meta_empty(size, dtype, requires_grad, stride=stride)
    extent = (
        1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if builtins.all(size) else 0
    )
    base = empty(extent, dtype=dtype, device=dev or "cpu")
    out = base.as_strided(list(size), list(stride))
    return _finish(out, requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor

    A 1-D tensor over the bytes of a Python buffer, sharing its memory as torch's does (a
    read-only buffer is copied, where torch would share it and warn)."""
    import numpy as np

    np_dtype = np.dtype(repr(dtype).split(".")[1].replace("bfloat16", "uint16"))
    arr = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
    if not arr.flags.writeable:  # a read-only buffer (bytes) is copied; a writable one is shared
        arr = arr.copy()
    out = from_numpy(arr) if dtype != bfloat16 else from_numpy(arr).view(bfloat16)
    return _finish(out, requires_grad)


def _tri_indices(row, col, offset, dtype, upper):
    keep = (lambda r, c: c - r >= offset) if upper else (lambda r, c: c - r <= offset)
    pairs = [(r, c) for r in builtins.range(row) for c in builtins.range(col) if keep(r, c)]
    rows = [p[0] for p in pairs]
    cols = [p[1] for p in pairs]
    return tensor([rows, cols], dtype=dtype).reshape(2, len(pairs))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """tril_indices(row, col, offset=0, *, dtype=torch.long, device='cpu',
        layout=torch.strided, pin_memory=False) -> Tensor

    The 2 x N (row, column) coordinates of the lower triangle of a row x col matrix."""
    dev = factory_device(device, "tril_indices", pin_memory)
    return place(dev, _tri_indices(row, col, offset, dtype or int64, False))


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """triu_indices(row, col, offset=0, *, dtype=torch.long, device='cpu',
        layout=torch.strided, pin_memory=False) -> Tensor

    The 2 x N (row, column) coordinates of the upper triangle of a row x col matrix."""
    dev = factory_device(device, "triu_indices", pin_memory)
    return place(dev, _tri_indices(row, col, offset, dtype or int64, True))


def vander(x, N=None, increasing=False):
    """vander(x, N=None, increasing=False) -> Tensor

    The Vandermonde matrix of x: its columns are powers of x, decreasing unless increasing."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    base = x if x.dtype.is_floating_point or x.dtype.is_complex else x.long()
    if n == 0:
        return empty(x.shape[0], 0, dtype=base.dtype)
    cols = cat(
        [ones(x.shape[0], 1, dtype=base.dtype), base.unsqueeze(1).expand(x.shape[0], n - 1)], 1
    ).cumprod(1)
    return cols if increasing else cols.flip([1])


def _window(name, n, periodic, dtype, fn, device=None, requires_grad=False, pin_memory=False):
    dev = factory_device(device, name, pin_memory)
    if dev is not None:
        with _cpu:
            return place(dev, _window(name, n, periodic, dtype, fn), requires_grad)
    if requires_grad:
        return _window(name, n, periodic, dtype, fn).requires_grad_(True)
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dtype = dtype or get_default_dtype()
    if n <= 1:
        return ones(n, dtype=dtype)
    denom = n if periodic else n - 1
    k = arange(n, dtype=float64)
    return fn(k, denom).to(dtype)


def hann_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """hann_window(window_length, periodic=True, *, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    The Hann (raised cosine) window of window_length points."""
    _check_keywords("hann_window", kwargs)
    return _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        lambda k, d: 0.5 - 0.5 * cos(2 * math.pi * k / d),
        device,
        requires_grad,
        pin_memory,
    )


def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """hamming_window(window_length, *, dtype=None, layout=None, device=None, pin_memory=False,
        requires_grad=False) -> Tensor

    The Hamming window alpha - beta cos(2 pi k / N) of window_length points."""
    _check_keywords("hamming_window", kwargs)
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        lambda k, d: alpha - beta * cos(2 * math.pi * k / d),
        device,
        requires_grad,
        pin_memory,
    )


def blackman_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """blackman_window(window_length, periodic=True, *, dtype=None, layout=torch.strided,
        device=None, requires_grad=False) -> Tensor

    The Blackman window (three cosine terms) of window_length points."""
    _check_keywords("blackman_window", kwargs)
    return _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        lambda k, d: 0.42 - 0.5 * cos(2 * math.pi * k / d) + 0.08 * cos(4 * math.pi * k / d),
        device,
        requires_grad,
        pin_memory,
    )


def bartlett_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """bartlett_window(window_length, periodic=True, *, dtype=None, layout=torch.strided,
        device=None, requires_grad=False) -> Tensor

    The Bartlett (triangular) window of window_length points."""
    _check_keywords("bartlett_window", kwargs)
    return _window(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        lambda k, d: 1 - (2 * k / d - 1).abs(),
        device,
        requires_grad,
        pin_memory,
    )


def kaiser_window(
    window_length,
    periodic=True,
    beta=12.0,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=torch.strided,
        device=None, requires_grad=False) -> Tensor

    The Kaiser window with shape parameter beta, from the Bessel function I0."""
    _check_keywords("kaiser_window", kwargs)

    def kaiser(k, d):
        r = 2 * k / d - 1
        return i0(beta * sqrt((1 - r * r).clamp(min=0))) / i0(tensor(float(beta), dtype=float64))

    return _window(
        "kaiser_window", window_length, periodic, dtype, kaiser, device, requires_grad, pin_memory
    )


# torch's profiler names for the factories (an allocation first, then the fill), recorded
# while a profile records.
for _name, _inner in (
    ("empty", ()),
    ("zeros", ("aten::empty",)),
    ("ones", ("aten::empty",)),
    ("full", ("aten::empty",)),
    ("arange", ("aten::empty",)),
    ("linspace", ("aten::empty",)),
    ("eye", ("aten::empty",)),
    ("empty_like", ("aten::empty_strided",)),
    ("zeros_like", ("aten::empty_like", "aten::empty_strided")),
    ("ones_like", ("aten::empty_like", "aten::empty_strided")),
    ("full_like", ("aten::empty_like", "aten::empty_strided")),
):
    _op_range.register(__name__, _name, "aten::" + _name, _inner)
del _name, _inner
