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
        if dim is None:
            if input.dim() != 2:
                raise RuntimeError(
                    "linalg.matrix_norm: dim must be a 2-tuple. Got "
                    + " ".join(str(d) for d in range(input.dim()))
                )
            dim = (0, 1)
        from .linalg import matrix_norm

        return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    elif isinstance(p, str):
        raise RuntimeError(f"norm: unknown p '{p}'")
    return _C._norm(input, float(p), dim, keepdim, dtype)


def sort(input, dim=-1, descending=False, stable=False):
    return return_types.sort(*_C._sort(input, dim, descending, bool(stable)))


def topk(input, k, dim=-1, largest=True, sorted=True):
    return return_types.topk(*_C._topk(input, k, dim, largest, sorted))


def kthvalue(input, k, dim=-1, keepdim=False):
    return return_types.kthvalue(*_C._kthvalue(input, k, dim, keepdim))


def median(input, dim=None, keepdim=False):
    if dim is None:
        return _C._median_all(input)
    return return_types.median(*_C._median_dim(input, dim, keepdim))


def mode(input, dim=-1, keepdim=False):
    return return_types.mode(*_C._mode(input, dim, keepdim))


def cummax(input, dim):
    return return_types.cummax(*_C._cummax(input, dim))


def cummin(input, dim):
    return return_types.cummin(*_C._cummin(input, dim))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    values, inverse, counts = _C._unique(input, sorted, return_inverse, return_counts, dim)
    out = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


__all__ += ["sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin", "unique"]


def equal(input, other):
    """True if both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    diff = (input - other).abs()
    close = diff <= atol + rtol * other.abs()
    close = close | (input == other)
    if equal_nan:
        close = close | (input.isnan() & other.isnan())
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


__all__ += ["equal", "isclose", "allclose"]
