"""Helpers the op families share."""

import ember as E
from .._C import Tensor


def _t(x, like=None):
    """A tensor for a Python number (a 0-d tensor, which promotes like a number in binary ops)."""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool)):
        return E.full([], x, dtype=E.result_type(like, x))
    return E.scalar_tensor(x) if isinstance(x, float) else E.tensor(x)


def _float(x):
    return x if x.dtype.is_floating_point else x.to(E.get_default_dtype())
