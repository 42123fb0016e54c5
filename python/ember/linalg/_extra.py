"""linalg functions composed of the others: householder_product, tensorinv, tensorsolve."""

import math

from .._ops.creation import eye


def householder_product(A, tau):
    """householder_product(A, tau) -> Tensor

    The first n columns of the product H_1 ... H_k of Householder reflections
    H_i = I - tau_i v_i v_i^H, v_i being column i of A (m x n) below the diagonal with a 1 on it
    (LAPACK's orgqr; geqrf's output gives the Q of a QR decomposition). Differentiable."""
    if A.dim() < 2:
        raise RuntimeError(
            "torch.linalg.householder_product: input must have at least 2 dimensions."
        )
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
            "input.shape[-1]"
        )
    k = tau.shape[-1]
    if k > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
            "tau.shape[-1]"
        )
    ident = eye(m, dtype=A.dtype)
    q = ident[:, :n].expand(*A.shape[:-2], m, n)
    below = ident.cumsum(0) - ident  # below[r, i] = 1 for r > i
    for i in reversed(range(k)):
        v = (A[..., :, i] * below[:, i] + ident[:, i]).unsqueeze(-1)
        t = tau[..., i : i + 1].unsqueeze(-1)
        q = q - t * (v @ (v.mH @ q))
    return q


def tensorinv(A, ind=2):
    """tensorinv(A, ind=2) -> Tensor

    The inverse of A as a multilinear map: the tensor X of shape A.shape[ind:] + A.shape[:ind]
    with tensordot(X, A, ind) the identity; A's first ind dimensions and the rest must hold as
    many elements."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = list(A.shape[:ind]), list(A.shape[ind:])
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:ind]), but got {cols} != {rows}"
        )
    from . import inv

    return inv(A.reshape(rows, cols)).reshape(in_shape + out_shape)


def tensorsolve(A, B, dims=None):
    """tensorsolve(A, B, dims=None) -> Tensor

    The X with tensordot(A, X, X.ndim) == B: A's dimensions in `dims` move to the end first, and
    A's leading B.ndim dimensions must hold as many elements as the rest."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        keep = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(keep + dims)
    x_shape = list(A.shape[B.dim() :])
    rows = B.numel()
    cols = math.prod(x_shape)
    if rows != cols:
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {cols} != {rows}"
        )
    from . import solve

    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(x_shape)
