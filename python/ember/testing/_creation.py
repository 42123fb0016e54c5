"""make_tensor: random test tensors with torch.testing.make_tensor's ranges and checks."""

import collections.abc
import math
import warnings

from .._C import bool as _bool
from .._ops.creation import empty
from .._ops.random import randint
from .._type_info import finfo, iinfo

_INTEGRAL = {"torch.uint8", "torch.int8", "torch.int16", "torch.int32", "torch.int64"}
_FLOATING = {"torch.float16", "torch.bfloat16", "torch.float32", "torch.float64"}


def _kind(dtype):
    name = str(dtype)
    if dtype is _bool or name == "torch.bool":
        return "bool"
    if name in _INTEGRAL:
        return "int"
    if name in _FLOATING:
        return "float"
    return None


def _bounds(dtype, kind, low, high, lowest, highest, default_low, default_high):
    """The range [low, high) to draw from: defaults filled in, checked, and clamped to what
    `dtype` represents (integral bounds rounded up)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and kind == "float":
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
            "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} "
            f"only supports [{lowest}, {highest})"
        )
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if kind != "float":
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad=False,
    noncontiguous=False,
    exclude_zero=False,
    memory_format=None,
):
    """make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False, exclude_zero=False, memory_format=None) -> Tensor

    A tensor of `shape` with values drawn uniformly from [low, high). Defaults by dtype: bool
    [0, 2), unsigned integers [0, 10), signed integers [-9, 10), floating types [-9, 9); bounds
    outside the dtype's finite range are clamped to it. `noncontiguous` returns every other
    element of a wider tensor (tensors of fewer than two elements stay contiguous);
    `exclude_zero` replaces zeros by 1 (bool, integers) or the dtype's smallest normal number.
    """  # noqa: E501
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
            f"noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    kind = _kind(dtype)
    if requires_grad and kind in ("bool", "int"):
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    numel = 1
    for s in shape:
        numel *= s
    noncontiguous = noncontiguous and numel > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if kind == "bool":
        low, high = _bounds(dtype, kind, low, high, 0, 2, 0, 2)
        result = randint(low, high, shape, dtype=dtype, device=device)
    elif kind == "int":
        info = iinfo(dtype)
        highest = info.max + (1 if str(dtype) != "torch.int64" else 0)
        low, high = _bounds(dtype, kind, low, high, info.min, highest, -9, 10)
        result = randint(low, high, shape, dtype=dtype, device=device)
    elif kind == "float":
        info = finfo(dtype)
        low, high = _bounds(dtype, kind, low, high, info.min, info.max, -9, 9)
        result = empty(shape, dtype=dtype, device=device)
        if high - low >= info.max:  # the width itself would overflow: draw half, double
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). To "
            "request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if kind != "float" else finfo(dtype).tiny
    if kind == "float":
        result.requires_grad_(requires_grad)
    return result
