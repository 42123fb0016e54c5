"""torch's top-level linear algebra over ember.linalg's factorizations (det, inverse, svd, qr,
cholesky and LU forms)."""

from .. import linalg, return_types
from .._autocast_policy import fp32 as _autocast_fp32
from .._warn_once import warn_once
from . import _names
from . import creation as _creation
from .creation import full, zeros
from .foreign_guards import reads_values as _reads_values
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
    """det(input) -> Tensor

    The determinant of a square matrix or of each matrix of a batch."""
    return linalg.det(input)


def inverse(input):
    """inverse(input) -> Tensor

    The inverse of a square matrix or of each matrix of a batch."""
    return linalg.inv(input)


def slogdet(input):
    """slogdet(input) -> (Tensor, Tensor)

    The sign and the log of the absolute value of the determinant."""
    return return_types.slogdet(linalg.slogdet(input))


def logdet(input):
    """logdet(input) -> Tensor

    log(det): NaN for a negative determinant, -inf for a zero one."""
    sign, logabs = linalg.slogdet(input)
    nan = full([], float("nan"), dtype=logabs.dtype)
    return where(
        sign < 0, nan, where(sign == 0, full([], -float("inf"), dtype=logabs.dtype), logabs)
    )


def cholesky(input, upper=False):
    """cholesky(input, upper=False) -> Tensor

    The Cholesky factor L (lower, or upper when upper=True) of a symmetric positive-definite
    matrix."""
    warn_once(
        "cholesky",
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent "
        "results for all valid (symmetric positive definite) inputs.",
    )
    return linalg.cholesky(input, upper=upper)


@_autocast_fp32
def cholesky_solve(B, L, upper=False):
    """cholesky_solve(B, L, upper=False) -> Tensor

    X with (L L^T) X = B, from the Cholesky factor L (or U = L^T when upper)."""
    low = L.mT if upper else L
    y = linalg.solve_triangular(low, B, upper=False)
    return linalg.solve_triangular(low.mT, y, upper=True)


def cholesky_inverse(L, upper=False):
    """cholesky_inverse(L, upper=False) -> Tensor

    The inverse of A from its Cholesky factor."""
    eye = _creation.eye(L.shape[-1], dtype=L.dtype).expand_as(L)
    return cholesky_solve(eye, L, upper)


@_autocast_fp32
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """triangular_solve(b, A, upper=True, transpose=False, unitriangular=False) -> (Tensor, Tensor)

    Solves A X = b for triangular A; returns (X, a copy of A)."""
    a = A.mT if transpose else A
    x = linalg.solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return return_types.triangular_solve((x, A.clone()))


def matrix_power(input, n):
    """matrix_power(input, n) -> Tensor

    The n-th integer power of a square matrix (negative n uses its inverse)."""
    return linalg.matrix_power(input, n)


def matrix_exp(input):
    """matrix_exp(A) -> Tensor

    The matrix exponential of a square matrix."""
    return linalg.matrix_exp(input)


@_autocast_fp32
def pinverse(input, rcond=1e-15):
    """pinverse(input, rcond=1e-15) -> Tensor

    The Moore-Penrose pseudo-inverse, ignoring singular values below rcond times the largest."""
    return linalg.pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True):
    """svd(input, some=True, compute_uv=True) -> (Tensor, Tensor, Tensor)

    torch.svd: returns V (not Vh), reduced unless some=False; zeros for U, V without uv."""
    if not compute_uv:
        m, n, batch = input.shape[-2], input.shape[-1], list(input.shape[:-2])
        S = linalg.svdvals(input)
        return return_types.svd(
            (zeros(batch + [m, m], dtype=S.dtype), S, zeros(batch + [n, n], dtype=S.dtype))
        )
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    return return_types.svd((U, S, Vh.mT))


def qr(input, some=True):
    """qr(input: Tensor, some: bool = True, *, out: Union[Tensor, Tuple[Tensor, ...], List[Tensor],
        None]) -> (Tensor, Tensor)

    The QR decomposition: reduced unless some=False (deprecated, as torch's)."""
    warn_once(
        "qr",
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string parameter "
        "'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, "
        "'reduced' if some else 'complete')",
    )
    return return_types.qr(linalg.qr(input, "reduced" if some else "complete"))


def lu(A, pivot=True, get_infos=False):
    """lu(A, pivot=True, get_infos=False) -> (Tensor, IntTensor, [IntTensor])

    The LU factorization with partial pivoting as (LU, pivots), plus infos when get_infos."""
    warn_once(
        "lu",
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
        "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)",
    )
    LU, piv, info = linalg.lu_factor_ex(A, pivot=pivot)
    return return_types._lu_with_info((LU, piv, info)) if get_infos else (LU, piv)


@_reads_values
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True) -> (Tensor,
        Tensor, Tensor)

    Unpacks a factorization of lu into the permutation P and the factors L and U."""
    from ..linalg._lu import lu_unpack as _unpack

    return _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


@_autocast_fp32
def lu_solve(b, LU_data, LU_pivots):
    """lu_solve(b, LU_data, LU_pivots) -> Tensor

    Solves A X = b from A's LU factorization."""
    return linalg.lu_solve(LU_data, LU_pivots, b)


# ---- torch's grad_fn names (see _names.py) ----

cholesky = _names.named(cholesky, "CholeskyBackward0")
cholesky_solve = _names.named(cholesky_solve, "CholeskySolveBackward0")
cholesky_inverse = _names.named(cholesky_inverse, "CholeskyInverseBackward0")
triangular_solve = _names.named(triangular_solve, "TriangularSolveBackward0")
