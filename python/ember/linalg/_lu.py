"""LU helpers over lu_factor: unpacking (P, L, U) and solving with a factorization, as
torch.linalg.lu / lu_solve and torch.lu_unpack. Differentiable through lu_factor (square
matrices) and the triangular solves."""

import math

from .. import return_types
from .._autocast_policy import inner_excluded as _autocast_inner_excluded
from .._ops import creation as _creation
from .._ops.creation import eye, tensor
from .._ops.foreign_guards import reads_values as _reads_values


def _permutation(pivots, m, dtype):
    """P with A = P L U, from LAPACK's 1-based row swaps (one matrix per leading index)."""
    batch = list(pivots.shape[:-1])
    flat = pivots.reshape(math.prod(batch), pivots.shape[-1]).tolist()
    mats = []
    for piv in flat:
        perm = list(range(m))
        for i, p in enumerate(piv):
            perm[i], perm[p - 1] = perm[p - 1], perm[i]
        P = [[0.0] * m for _ in range(m)]
        for i, r in enumerate(perm):
            P[r][i] = 1.0
        mats.append(P)
    return tensor(mats, dtype=dtype).reshape(batch + [m, m])


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = _creation.empty(0, dtype=LU_data.dtype)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype)
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty
    P = _permutation(LU_pivots, m, LU_data.dtype) if unpack_pivots else empty
    return return_types.lu_unpack((P, L, U))


@_reads_values
def lu(A, *, pivot=True):
    """lu(A, *, pivot=True) -> (Tensor, Tensor, Tensor)

    The LU decomposition with partial pivoting as (P, L, U)."""
    from . import lu_factor  # the package's own function (the package imports this module)

    LU, piv = lu_factor(A, pivot=pivot)
    return return_types.linalg_lu(lu_unpack(LU, piv))


@_autocast_inner_excluded
@_reads_values
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """lu_solve(LU, pivots, B, *, left=True, adjoint=False) -> Tensor

    Solves A X = B (or X A = B, or with A adjoint) from the factorization lu_factor returned."""
    P, L, U = lu_unpack(LU, pivots)
    from . import solve_triangular as st  # the package's own function (see lu)

    if not left:
        # X A = B  <=>  A^T X^T = B^T.
        return lu_solve(LU, pivots, B.mT, left=True, adjoint=not adjoint).mT
    if adjoint:
        # A^T = U^T L^T P^T: solve U^T, then L^T, then undo the permutation.
        y = st(U.mT, B, upper=False)
        return P @ st(L.mT, y, upper=True, unitriangular=True)
    y = st(L, P.mT @ B, upper=False, unitriangular=True)
    return st(U, y, upper=True)
