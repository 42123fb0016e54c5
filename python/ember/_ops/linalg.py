"""torch's top-level linear algebra over ember.linalg's factorizations (det, inverse, svd, qr, cholesky and LU forms)."""

from . import creation as _creation
from .. import linalg, return_types
from .creation import full, zeros
from .index import where

__all__ = [
    "det",
    "inverse",
    "slogdet",
    "logdet",
    "cholesky",
    "cholesky_solve",
    "cholesky_inverse",
    "triangular_solve",
    "matrix_power",
    "matrix_exp",
    "pinverse",
    "svd",
    "qr",
    "lu",
    "lu_unpack",
    "lu_solve",
]


def det(input):
    return linalg.det(input)


def inverse(input):
    return linalg.inv(input)


def slogdet(input):
    return return_types.slogdet(*linalg.slogdet(input))


def logdet(input):
    """log(det): NaN for a negative determinant, -inf for a zero one."""
    sign, logabs = linalg.slogdet(input)
    nan = full([], float("nan"), dtype=logabs.dtype)
    return where(
        sign < 0, nan, where(sign == 0, full([], -float("inf"), dtype=logabs.dtype), logabs)
    )


def cholesky(input, upper=False):
    return linalg.cholesky(input, upper=upper)


def cholesky_solve(B, L, upper=False):
    """X with (L L^T) X = B, from the Cholesky factor L (or U = L^T when upper)."""
    low = L.mT if upper else L
    y = linalg.solve_triangular(low, B, upper=False)
    return linalg.solve_triangular(low.mT, y, upper=True)


def cholesky_inverse(L, upper=False):
    eye = _creation.eye(L.shape[-1], dtype=L.dtype).expand_as(L)
    return cholesky_solve(eye, L, upper)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    a = A.mT if transpose else A
    x = linalg.solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return return_types.triangular_solve(x, A.clone())


def matrix_power(input, n):
    return linalg.matrix_power(input, n)


def matrix_exp(input):
    return linalg.matrix_exp(input)


def pinverse(input, rcond=1e-15):
    return linalg.pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True):
    """torch.svd: returns V (not Vh), reduced unless some=False; zeros for U, V without uv."""
    if not compute_uv:
        m, n, batch = input.shape[-2], input.shape[-1], list(input.shape[:-2])
        S = linalg.svdvals(input)
        return return_types.svd(
            zeros(batch + [m, m], dtype=S.dtype), S, zeros(batch + [n, n], dtype=S.dtype)
        )
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    return return_types.svd(U, S, Vh.mT)


def qr(input, some=True):
    return return_types.qr(*linalg.qr(input, "reduced" if some else "complete"))


def lu(A, pivot=True, get_infos=False):
    LU, piv, info = linalg.lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    from ..linalg._lu import lu_unpack as _unpack

    return _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


def lu_solve(b, LU_data, LU_pivots):
    return linalg.lu_solve(LU_data, LU_pivots, b)
