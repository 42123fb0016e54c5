"""Helpers the op families share."""

from .._C import Tensor, get_default_dtype, result_type
from .creation import full, scalar_tensor, tensor


def _t(x, like=None):
    """A tensor for a Python number (a 0-d tensor, which promotes like a number in binary ops)."""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool)):
        dtype = result_type(like, x)
        try:
            return full([], x, dtype=dtype)
        except RuntimeError:  # outside dtype's range (full checks it): convert, wrapping
            return tensor(x).to(dtype)
    return scalar_tensor(x) if isinstance(x, float) else tensor(x)


def _float(x):
    return x if x.dtype.is_floating_point else x.to(get_default_dtype())
