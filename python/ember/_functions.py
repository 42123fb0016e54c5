"""Functions whose torch signatures are overloaded in ways easier to parse in Python."""

from . import _C, return_types
from ._C import Tensor

__all__ = ["where", "max", "min", "var", "std", "var_mean", "std_mean", "norm"]


def where(condition, input=None, other=None):
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return _C._where(condition, input, other)


def _extreme(name, all_fn, dim_fn, binary_fn, input, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return binary_fn(input, dim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        return all_fn(input)
    return getattr(return_types, name)(*dim_fn(input, dim, keepdim))


def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    if other is not None:
        return _C.maximum(input, other)
    return _extreme("max", _C._max_all, _C._max_dim, _C.maximum, input, dim, keepdim)


def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    if other is not None:
        return _C.minimum(input, other)
    return _extreme("min", _C._min_all, _C._min_dim, _C.minimum, input, dim, keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    if unbiased is None:
        return 1.0
    return 1.0 if unbiased else 0.0


def _var_args(dim, unbiased, keepdim):
    # var(x, True) is the legacy unbiased flag; var(x, 0) is a dim.
    if isinstance(dim, bool):
        return None, dim, keepdim
    return dim, unbiased, keepdim


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, unbiased, keepdim = _var_args(dim, unbiased, keepdim)
    return _C._var_mean(input, dim, _correction(unbiased, correction), keepdim)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var_mean(input, dim, unbiased, keepdim, correction=correction)[0]


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v, m = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return v.sqrt(), m


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" or p is None:
        p = 2.0
    elif p == "nuc":
        raise NotImplementedError("norm: nuclear norm is not supported by ember yet")
    elif isinstance(p, str):
        raise RuntimeError(f"norm: unknown p '{p}'")
    return _C._norm(input, float(p), dim, keepdim, dtype)
