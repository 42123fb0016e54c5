"""Autocast policies for ops written in Python (Note [Autocast] in csrc/ember/dispatch/autocast.h).

Dispatcher ops cast in C++ (their Autocast kernels); the functional ops composed in Python
(losses, conv3d, transposed convolutions, scaled_dot_product_attention, ...) take one of these
decorators, which cast the floating tensor arguments the same way, through the same weight-cast
cache, and run the body with autocast excluded, as an Autocast kernel does."""

import functools

from . import _C
from ._C import Tensor

_active = _C._autocast_is_active
_cast = _C._autocast_cast


def _convert(x, dtype):
    if isinstance(x, Tensor):
        return _cast(dtype, x)
    if isinstance(x, (list, tuple)) and any(isinstance(v, Tensor) for v in x):
        return type(x)(_convert(v, dtype) for v in x)
    return x


def _excluded(fn, args, kwargs):
    prev = _C._autocast_set_excluded(True)
    try:
        return fn(*args, **kwargs)
    finally:
        _C._autocast_set_excluded(prev)


def _run(fn, dtype, args, kwargs):
    args = tuple(_convert(a, dtype) for a in args)
    kwargs = {k: _convert(v, dtype) for k, v in kwargs.items()}
    return _excluded(fn, args, kwargs)


def lower_precision(fn):
    """Runs `fn` with its floating tensor arguments in the autocast dtype while autocast is on."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _active():
            return fn(*args, **kwargs)
        return _run(fn, _C._autocast_get_dtype("cpu"), args, kwargs)

    return wrapper


def fp32(fn):
    """Runs `fn` with its floating tensor arguments in float32 while autocast is on."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _active():
            return fn(*args, **kwargs)
        return _run(fn, _C.float32, args, kwargs)

    return wrapper


def inner_excluded(fn):
    """Runs `fn` with autocast excluded and its arguments unchanged while autocast is on: an op in
    none of torch's lists that is one kernel there, so the products it is composed of here must
    not cast (linalg.lu_solve, matrix_exp keep float32 in float32 out)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _active():
            return fn(*args, **kwargs)
        return _excluded(fn, args, kwargs)

    return wrapper


def _floating(x):
    return isinstance(x, Tensor) and x.is_floating_point() and x.dtype != _C.float64


def promote(fn):
    """Runs `fn` with its floating tensor arguments in the widest of their dtypes while autocast
    is on."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _active():
            return fn(*args, **kwargs)
        dtype = _C._autocast_get_dtype("cpu")
        flat = []
        for a in list(args) + list(kwargs.values()):
            flat.extend(a if isinstance(a, (list, tuple)) else [a])
        for t in flat:
            if _floating(t):
                dtype = _C.promote_types(dtype, t.dtype)
        return _run(fn, dtype, args, kwargs)

    return wrapper
