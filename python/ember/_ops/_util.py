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
    """x, with integer and bool inputs in the default float dtype (complex ones stay complex)."""
    return x if x.dtype.is_floating_point or x.dtype.is_complex else x.to(get_default_dtype())


def _check_repeats_in_order(op, dim, ndim):
    """Some torch ops (nansum, linalg.vector_norm, var) check a dim list one entry at a time:
    a repeat before an out-of-range dim raises the repeat's RuntimeError; the other reductions
    wrap every dim first. Stops at the first out-of-range dim (the caller's op raises there).
    A 0-d tensor's dims are -1 and 0, one dim twice."""
    if dim is None or isinstance(dim, int) or not isinstance(dim, (tuple, list)):
        return
    ndim = max(ndim, 1)
    seen = set()
    for d in dim:
        if not isinstance(d, int) or not -ndim <= d < ndim:
            return
        w = d % ndim
        if w in seen:
            raise RuntimeError(f"{op}: dim {w} appears multiple times in the list of dims")
        seen.add(w)


def check_inplace_result(result_dtype, self):
    """torch's refusal of an in-place result self's dtype cannot hold (float into long)."""
    from .. import _C
    from .._type_info import scalar_type_name

    if not _C.can_cast(result_dtype, self.dtype):
        raise RuntimeError(
            f"result type {scalar_type_name(result_dtype)} can't be cast to the desired "
            f"output type {scalar_type_name(self.dtype)}"
        )


def wrap_dim(dim, ndim):
    """dim made non-negative, or torch's IndexError (a 0-d tensor takes -1 and 0)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n
