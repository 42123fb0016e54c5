"""The differentiable LAPACK primitives of ember.linalg: forward through _C._linalg, backward in
public ops (including these primitives), so higher derivatives come free.

Derivatives follow the standard real-matrix results (Giles, "An extended collection of matrix
derivative results", 2008; Seeger et al. for Cholesky; Walter and Lehmann for QR)."""

from .. import _C
from .._C import _linalg, float32, float64, int32
from .._ops import creation as _creation
from .._ops.creation import arange, ones, zeros, zeros_like
from .._ops.index import where
from .._ops.shape import diag_embed
from .._type_info import scalar_type_name
from ..autograd.function import Function


class LinAlgError(RuntimeError):
    """LinAlgError(*args)

    A matrix was singular, not positive-definite, or an algorithm did not converge."""


def _check(op, A, square=False):
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. "
            f"Got {scalar_type_name(A.dtype)}"
        )
    if A.dtype not in (float32, float64):
        raise NotImplementedError(f"\"{op}\" not implemented for '{scalar_type_name(A.dtype)}'")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{op}: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )


def _batch_prefix(info):
    if info.dim() == 0:
        return ""
    idx = (info != 0).reshape(-1).nonzero().reshape(-1)[0].item()
    return f"(Batch element {idx}): "


def _first_failure(info):
    bad = info.reshape(-1)
    return int(bad[(bad != 0).nonzero().reshape(-1)[0]].item())


def _sym(X):
    return (X + X.mT) * 0.5


class _SolveFn(Function):
    @staticmethod
    def forward(ctx, A, B):
        X, info = _linalg.solve_ex(A, B)
        ctx.save_for_backward(A, X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, gX, ginfo):
        A, X = ctx.saved_tensors
        gB = _SolveFn.apply(A.mT, gX)[0]
        return -(gB @ X.mT), gB


def _solve(A, B, op, check_errors):
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{op}: Expected A and B to have the same dtype, but found A of type "
            f"{scalar_type_name(A.dtype)} and B of type {scalar_type_name(B.dtype)} instead"
        )
    X, info = _SolveFn.apply(A, B)
    if check_errors and not info.is_meta and bool((info > 0).any()):  # meta: no values
        k = _first_failure(info)
        raise LinAlgError(
            f"{op}: {_batch_prefix(info)}The diagonal element {k} is zero, the "
            "inversion could not be completed because the input matrix is singular."
        )
    return X, info


class _SolveTriangularFn(Function):
    @staticmethod
    def forward(ctx, A, B, upper, unit):
        X = _linalg.solve_triangular_left(A.contiguous(), B.contiguous(), upper, unit)
        ctx.save_for_backward(A, X)
        ctx.upper, ctx.unit = upper, unit
        return X

    @staticmethod
    def backward(ctx, gX):
        A, X = ctx.saved_tensors
        gB = _SolveTriangularFn.apply(A.mT, gX, not ctx.upper, ctx.unit)
        gA = -(gB @ X.mT)
        gA = gA.triu(1 if ctx.unit else 0) if ctx.upper else gA.tril(-1 if ctx.unit else 0)
        return gA, gB, None, None


def _solve_triangular(A, B, upper, unit):
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"linalg.solve_triangular: Expected A and B to have the same dtype, but "
            f"found A of type {scalar_type_name(A.dtype)} and B of type "
            f"{scalar_type_name(B.dtype)} instead"
        )
    return _SolveTriangularFn.apply(A, B, upper, unit)


def _lu_det(A):
    LU, piv, info = _linalg.lu_factor_ex(A)
    n = A.shape[-1]
    diag = LU.diagonal(0, -2, -1)
    swaps = (piv != arange(1, n + 1, dtype=int32)).sum(-1)
    sign = 1 - 2 * (swaps % 2).to(A.dtype)
    return diag, sign


class _DetFn(Function):
    @staticmethod
    def forward(ctx, A):
        diag, sign = _lu_det(A)
        d = diag.prod(-1) * sign
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx, g):
        A, d = ctx.saved_tensors
        # d det / dA = det * A^-T; inv is differentiable, so this is too.
        from . import inv

        return (g * d).unsqueeze(-1).unsqueeze(-1) * inv(A).mT


def _det(A):
    return _DetFn.apply(A)


class _SlogdetFn(Function):
    @staticmethod
    def forward(ctx, A):
        diag, sign = _lu_det(A)
        s = sign * diag.sign().prod(-1)
        logabs = diag.abs().log().sum(-1)
        # the sign is an output of the node too, as torch's (its gradient is zero for real A:
        # a backward from the sign alone leaves A's gradient undefined)
        ctx.save_for_backward(A)
        ctx.set_materialize_grads(False)
        return s, logabs

    @staticmethod
    def backward(ctx, gsign, glog):
        if glog is None:
            return None
        (A,) = ctx.saved_tensors
        from . import inv

        return glog.unsqueeze(-1).unsqueeze(-1) * inv(A).mT


def _slogdet(A):
    return _SlogdetFn.apply(A)


class _CholeskyFn(Function):
    @staticmethod
    def forward(ctx, A, upper):
        if A.numel() == 0:  # the kernel's iterator refuses an empty batch: nothing to factor
            L, info = zeros_like(A), zeros(tuple(A.shape[:-2]), dtype=int32)
        else:
            L, info = _linalg.cholesky_ex(A, False)
        ctx.save_for_backward(L)
        ctx.upper = upper
        ctx.mark_non_differentiable(info)
        return (L.mT if upper else L), info

    @staticmethod
    def backward(ctx, gL, ginfo):
        (L,) = ctx.saved_tensors
        if ctx.upper:
            gL = gL.mT
        # gA = L^-T Phi(L^T gL) L^-1, symmetrized; Phi keeps the lower triangle with the diagonal
        # halved.
        P = L.mT @ gL
        phi = P.tril() - 0.5 * diag_embed(P.diagonal(0, -2, -1))
        X = _SolveTriangularFn.apply(L.mT, phi, True, False)
        gA = _SolveTriangularFn.apply(L.mT, X.mT, True, False).mT
        return _sym(gA), None


def _cholesky(A, upper, check_errors):
    out = _CholeskyFn.apply(A, upper)
    L, info = out
    if check_errors and not info.is_meta and bool((info > 0).any()):  # meta: no values
        k = _first_failure(info)
        raise LinAlgError(
            f"linalg.cholesky: {_batch_prefix(info)}The factorization could not be "
            f"completed because the input is not positive-definite (the leading minor "
            f"of order {k} is not positive-definite)."
        )
    return L, info


class _QRFn(Function):
    @staticmethod
    def forward(ctx, A, mode):
        Q, R = _empty_qr(A, mode) if A.numel() == 0 else _linalg.qr(A, mode)
        ctx.save_for_backward(Q, R)
        ctx.mode = mode
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "r" or m < n or (ctx.mode == "complete" and m > n):
            raise NotImplementedError(
                "The derivative of linalg.qr is implemented for mode='reduced' "
                "(or 'complete' with square inputs) and m >= n only"
            )
        # gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q (Walter and Lehmann).
        M = R @ gR.mT - gQ.mT @ Q
        low = M.tril(-1)
        copyltu = low + low.mT + diag_embed(M.diagonal(0, -2, -1))
        b = gQ + Q @ copyltu
        gA = _SolveTriangularFn.apply(R, b.mT, True, False).mT
        return gA, None


def _empty_qr(A, mode):
    """torch's QR of an input with no elements (the kernel refuses it): R is zeros, a complete Q
    is the identity of each (empty-columned) matrix, 'r' mode's Q an empty vector."""
    *batch, m, n = A.shape
    k = m if mode == "complete" else min(m, n)
    R = zeros(*batch, k, n, dtype=A.dtype)
    if mode == "r":
        return _creation.empty(0, dtype=A.dtype), R
    if mode == "complete":
        return _creation.eye(m, dtype=A.dtype).expand(*batch, m, m).contiguous(), R
    return zeros(*batch, m, k, dtype=A.dtype), R


def _qr(A, mode):
    Q, R = _QRFn.apply(A, mode)
    return Q, R


class _SvdFn(Function):
    @staticmethod
    def forward(ctx, A, full_matrices, compute_uv):
        # The singular values alone still need U and V for their derivative.
        U, S, Vh, info = _linalg.svd_ex(A, full_matrices and compute_uv, True)
        ctx.save_for_backward(U, S, Vh)
        ctx.full, ctx.uv = full_matrices, compute_uv
        if not compute_uv:
            empty = _creation.empty(0, dtype=A.dtype)
            return empty, S, empty
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        if ctx.uv and ctx.full and (m != k or n != k):
            raise NotImplementedError(
                "The derivative of linalg.svd with full_matrices=True is not "
                "defined for non-square inputs; use full_matrices=False"
            )
        if not ctx.uv:
            gU = gVh = None
        return _svd_backward(U, S, Vh, gU, gS, gVh), None, None


def _svd_backward(U, S, Vh, gU, gS, gVh):
    # Real SVD A = U diag(S) Vh with k = min(m, n) (Giles 2008; torch's svd_backward).
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)) @ Vh
    V = Vh.mT
    gU = zeros_like(U) if gU is None else gU
    gV = zeros_like(V) if gVh is None else gVh.mT
    S2 = S * S
    F = S2.unsqueeze(-2) - S2.unsqueeze(-1)  # F_ij = s_j^2 - s_i^2
    eye = _creation.eye(S.shape[-1], dtype=_C.bool)
    F = where(eye, ones([], dtype=S.dtype), F)
    UtgU, VtgV = U.mT @ gU, V.mT @ gV
    J = (UtgU - UtgU.mT) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VtgV - VtgV.mT)
    inner = where(eye, zeros([], dtype=S.dtype), J / F) + diag_embed(gS)
    gA = U @ inner @ Vh
    m, n, k = U.shape[-2], V.shape[-2], S.shape[-1]
    if m > k:
        gA = gA + ((gU - U @ UtgU) / S.unsqueeze(-2)) @ Vh
    if n > k:
        gA = gA + U @ ((gV - V @ VtgV) / S.unsqueeze(-2)).mT
    return gA


def _svd(A, full_matrices, compute_uv):
    return _SvdFn.apply(A, full_matrices, compute_uv)


class _EighFn(Function):
    @staticmethod
    def forward(ctx, A, upper, compute_v):
        w, V, info = _linalg.eigh_ex(A, upper, True)
        ctx.save_for_backward(w, V)
        ctx.compute_v = compute_v
        return w, (V if compute_v else _creation.empty(0, dtype=A.dtype))

    @staticmethod
    def backward(ctx, gw, gV):
        w, V = ctx.saved_tensors
        inner = diag_embed(gw)
        if ctx.compute_v:
            F = w.unsqueeze(-2) - w.unsqueeze(-1)  # F_ij = w_j - w_i
            eye = _creation.eye(w.shape[-1], dtype=_C.bool)
            VtgV = V.mT @ gV
            inner = inner + where(
                eye, zeros([], dtype=w.dtype), VtgV / where(eye, ones([], dtype=w.dtype), F)
            )
        return V @ inner @ V.mT, None, None


def _eigh(A, upper, compute_v):
    return _EighFn.apply(A, upper, compute_v)


class _LuFactorFn(Function):
    """LU with partial pivoting of square matrices, A = P L U packed as LU (L unit lower)."""

    @staticmethod
    def forward(ctx, A):
        LU, piv, info = _linalg.lu_factor_ex(A)
        ctx.save_for_backward(LU, piv)
        ctx.save_for_forward(LU, piv)
        ctx.mark_non_differentiable(piv, info)
        return LU, piv, info

    @staticmethod
    def jvp(ctx, dA):
        from ._lu import lu_unpack

        LU, piv = ctx.saved_tensors
        P, L, U = lu_unpack(LU, piv)
        # X = L^-1 P^T dA U^-1; dL = L tril(X, -1), dU = triu(X) U, packed as one matrix
        X = _solve_triangular(L, P.mT @ dA, False, True)
        X = _solve_triangular(U.mT, X.mT, False, False).mT
        return L @ X.tril(-1) + X.triu() @ U, None, None

    @staticmethod
    def backward(ctx, gLU, gpiv, ginfo):
        from ._lu import lu_unpack

        LU, piv = ctx.saved_tensors
        P, L, U = lu_unpack(LU, piv)
        # gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T, with gL, gU the packed halves
        gA = (L.mT @ gLU.tril(-1)).tril(-1) + (gLU.triu() @ U.mT).triu()
        gA = _solve_triangular(U, gA.mT, True, False).mT
        gA = _solve_triangular(L.mT, gA, True, True)
        return P @ gA
