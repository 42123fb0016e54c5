"""Complex inputs of ember.linalg and the general eigenproblem.

eig/eigvals run LAPACK's geev (`_C._linalg.eig_ex`; no gradient). solve and inv of complex
matrices solve the real system of twice the size, [[Re A, -Im A], [Im A, Re A]] [Re X; Im X] =
[Re B; Im B], so their gradients come from the real solve's; det of a complex matrix is the
product of its eigenvalues (no gradient)."""

from .. import _C
from .._C import _linalg, view_as_real
from .._ops.creation import eye, ones_like, zeros_like
from .._ops.shape import diag_embed


def _c(x):
    return x.dtype.is_complex


def _complex_dtype(*ts):
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = _C.promote_types(dt, t.dtype)
    return _C.complex128 if dt in (_C.complex128, _C.float64) else _C.complex64


def eig_ex(A, compute_v=True):
    """(eigenvalues, eigenvectors or empty, info) of square A, real or complex."""
    if A.requires_grad and _C.is_grad_enabled():
        raise NotImplementedError("linalg.eig: ember has no gradient for eig yet")
    return _linalg.eig_ex(A.detach(), compute_v)


def _embed(A):
    ar, ai = view_as_real(A).select(-1, 0), view_as_real(A).select(-1, 1)
    top = _C.cat([ar, -ai], -1)
    bottom = _C.cat([ai, ar], -1)
    return _C.cat([top, bottom], -2)


def solve(A, B, solve_real):
    """X with A X = B for complex A or B, through the real system of twice the size."""
    from .._ops.complex import _as_complex, _make

    ct = _complex_dtype(A, B)
    A, B = _as_complex(A, ct), _as_complex(B, ct)
    vec = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vec:
        B = B.unsqueeze(-1)
    n = A.shape[-1]
    br, bi = view_as_real(B).select(-1, 0), view_as_real(B).select(-1, 1)
    X = solve_real(_embed(A), _C.cat([br, bi], -2))
    out = _make(X[..., :n, :], X[..., n:, :])
    return out.squeeze(-1) if vec else out


def inv(A, solve_real):
    real = _C.float64 if A.dtype == _C.complex128 else _C.float32
    identity = eye(A.shape[-1], dtype=real).expand(A.shape)
    return solve(A, identity, solve_real)


def det(A):
    """The product of the eigenvalues; gradient g conj(det) A^-H (A must be invertible)."""
    from ..autograd.function import Function

    class _DetC(Function):
        @staticmethod
        def forward(ctx, A):
            d = _linalg.eig_ex(A, False)[0].prod(-1)
            ctx.save_for_backward(A, d)
            return d

        @staticmethod
        def backward(ctx, g):
            A, d = ctx.saved_tensors
            Ainv = inv(A, _real_solve)
            return (g * _C.conj_physical(d)).unsqueeze(-1).unsqueeze(-1) * Ainv.mH

    return _DetC.apply(A)


# --- complex paths through the real embedding --------------------------------------------------
# _embed is a *-homomorphism: embed(A B) = embed(A) embed(B), embed(A^H) = embed(A)^T, so
# pinv and matrix functions commute with it, and each singular value or eigenvalue of a
# Hermitian A appears twice in embed(A). Gradients then come from the real ops' (svdvals and
# eigvalsh need no 1 / (s_i - s_j) terms, so the doubled values do no harm).


def _real_of(dtype):
    return _C.float64 if dtype == _C.complex128 else _C.float32


def _unembed(X, m, n):
    """The complex m x n matrix whose embedding's left column block is X[..., :2m, :n]."""
    from .._ops.complex import _make

    return _make(X[..., :m, :n], X[..., m:, :n])


def svdvals(A, svdvals_real):
    return svdvals_real(_embed(A))[..., ::2]


def hermitian_part(A, upper):
    """The Hermitian matrix LAPACK's heevd reads from one triangle (real diagonal)."""
    from .._ops.complex import _make
    from .._ops.complex_more import _tri

    T = _tri(_C.triu, A, 1) if upper else _tri(_C.tril, A, -1)
    d = view_as_real(A.diagonal(0, -2, -1)).select(-1, 0)
    return T + T.mH + _make(diag_embed(d), zeros_like(diag_embed(d)))


def eigvalsh(A, upper, eigvalsh_real):
    return eigvalsh_real(_embed(hermitian_part(A, upper)))[..., ::2]


def pinv(A, pinv_real, **kwargs):
    """pinv through the embedding, with the gradient from the pseudo-inverse's differential
    dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P (the embedding's duplicated
    singular values would make the real SVD's gradient divide by zero)."""
    from ..autograd.function import Function

    m, n = A.shape[-2], A.shape[-1]

    class _PinvC(Function):
        @staticmethod
        def forward(ctx, A):
            P = _unembed(pinv_real(_embed(A), **kwargs), n, m).contiguous()
            ctx.save_for_backward(A, P)
            return P

        @staticmethod
        def backward(ctx, G):
            A, P = ctx.saved_tensors
            Gh, Ph = G.mH, P.mH
            g = -(Ph @ G @ Ph)
            g = g + (Gh @ P @ Ph - A @ (P @ (Gh @ P @ Ph)))
            g = g + (Ph @ P @ Gh - Ph @ P @ Gh @ P @ A)
            return g

    return _PinvC.apply(A)


def _is_unitary(V):
    I = eye(V.shape[-1], dtype=V.dtype)
    err = (V.mH @ V - I).abs().amax().item() if V.numel() else 0.0
    return err <= (1e-3 if V.dtype == _C.complex64 else 1e-8)


def _pick_clusters(w2, W2, n):
    """(See below.) W2: 2n x 2c real candidates, w2: their sorted values; returns n x c."""
    """Eigenvectors of Hermitian A from E(A)'s when eigenvalues repeat: the 2m real vectors of a
    cluster of m equal eigenvalues span the real form of the m-dim eigenspace, and any of them
    is a complex eigenvector; m orthonormal ones are picked by pivoted Gram-Schmidt (largest
    residual first), one matrix at a time. Forward only (the gradient is undefined there)."""
    c2 = W2.shape[-1]
    cands = _unembed(W2, n, c2).detach()
    flat_w, flat_c = w2.detach().reshape(-1, c2), cands.reshape(-1, n, c2)
    out = []
    for b in range(flat_c.shape[0]):
        wb, cb = flat_w[b].tolist(), flat_c[b]
        scale = max(1.0, max(abs(x) for x in wb)) if wb else 1.0
        tol = scale * (1e-4 if cb.dtype == _C.complex64 else 1e-9) * n
        cols, start = [], 0
        while start < c2:
            end = start + 1
            while end < c2 and abs(wb[end] - wb[end - 1]) <= tol:
                end += 1
            group = [cb[:, j] for j in range(start, end)]
            for _ in range((end - start + 1) // 2):
                res = []
                for c in group:
                    for q in cols:
                        c = c - q * (_C.conj_physical(q) * c).sum()
                    res.append(c)
                norms = [float(r.abs().pow(2).sum()) for r in res]
                j = max(range(len(res)), key=norms.__getitem__)
                cols.append(res[j] / norms[j] ** 0.5)
            start = end
        out.append(_C.stack([view_as_real(c) for c in cols[: c2 // 2]], -2))
    return view_as_complex_c(_C.stack(out, 0).reshape(*W2.shape[:-2], n, c2 // 2, 2))


def _svd_repeated(A, Se, Vhe, m, n, k):
    """Reduced (U, V) of complex A whose singular values repeat: V's clusters picked as eigh's,
    U = A V / s for the nonzero values, the rest completed by a complex QR."""
    V = _pick_clusters(Se, Vhe.mT, n)
    S = Se[..., ::2]
    tol = S.amax().item() * max(m, n) * (1e-6 if A.dtype == _C.complex64 else 1e-13)
    U = A.detach() @ V
    flat_u, flat_s = U.reshape(-1, m, k), S.reshape(-1, k)
    out = []
    for b in range(flat_u.shape[0]):
        r = int((flat_s[b] > tol).sum().item())
        Ub = flat_u[b][:, :r] / flat_s[b][:r].to(A.dtype).unsqueeze(-2)
        if r < k:
            seed = _join(Ub, eye(m, dtype=_real_of(A.dtype)).to(A.dtype)) if r else None
            Q = qr(seed if r else eye(m, dtype=_real_of(A.dtype)).to(A.dtype), "complete")[0]
            Ub = _join(Ub, Q[:, r:k]) if r else Q[:, :k]
        out.append(Ub)
    U = view_as_complex_c(_C.stack([view_as_real(u) for u in out], 0)).reshape(*A.shape[:-2], m, k)
    return U, V


def _check_unitary(V, op):
    if not _is_unitary(V):
        raise NotImplementedError(
            f"{op}: ember's complex path needs distinct eigenvalues / singular values for the "
            "vectors; this matrix has repeated ones"
        )


def eigh(A, upper, eigh_real):
    from ..autograd.function import Function

    class _EighC(Function):
        @staticmethod
        def forward(ctx, H):
            n = H.shape[-1]
            w2, W2 = eigh_real(_embed(H))
            w, V = w2[..., ::2].contiguous(), _unembed(W2[..., ::2], n, n).contiguous()
            if not _is_unitary(V):  # repeated eigenvalues: pick each cluster's vectors apart
                V = _pick_clusters(w2, W2, n)
            ctx.save_for_backward(w, V)
            return w, V

        @staticmethod
        def backward(ctx, gw, gV):
            w, V = ctx.saved_tensors
            return _eig_grad(w, V, gw, gV, hermitian=True)

    return _EighC.apply(hermitian_part(A, upper))


def _eig_grad(w, V, gw, gV, hermitian):
    """The gradient of (eigenvalues, eigenvectors) with respect to A, in torch's convention:
    V^-H (diag(gw) + P(V^H gV) / conj(w_j - w_i)) V^H, P projecting out the gauge freedom
    (the skew-Hermitian part for Hermitian A; for general A the unit-norm columns)."""
    from .._ops.complex import _as_complex

    n = w.shape[-1]
    cw = _as_complex(w, V.dtype)
    I = eye(n, dtype=V.dtype)
    if gV is not None:
        M = V.mH @ gV
        if hermitian:
            M = (M - M.mH) * 0.5
        else:
            d = view_as_real(M.diagonal(0, -2, -1)).select(-1, 0)
            M = M - V.mH @ (V * _as_complex(d, V.dtype).unsqueeze(-2))
        E = cw.unsqueeze(-2) - cw.unsqueeze(-1)
        E = _C.conj_physical(E) + I
        M = M / E * (1 - I)
    else:
        M = zeros_like(I).expand(V.shape)
    if gw is not None:
        M = M + _diag_c(_as_complex(gw, V.dtype))
    if hermitian:
        return V @ M @ V.mH
    return solve(V.mH, M @ V.mH, _real_solve)


def _diag_c(v):
    from .._ops.complex import _make

    return _make(
        diag_embed(view_as_real(v).select(-1, 0)), diag_embed(view_as_real(v).select(-1, 1))
    )


def _real_solve(M, B):
    from . import solve as real_solve

    return real_solve(M, B)


def eig_grad_fn(A, compute_v):
    """eig / eigvals with a gradient (torch's formula; the eigenvalues must be distinct)."""
    from ..autograd.function import Function

    class _EigC(Function):
        @staticmethod
        def forward(ctx, A):
            w, V, info = _linalg.eig_ex(A, True)
            ctx.save_for_backward(w, V)
            ctx.real_input = not _c(A)
            return w, V, info

        @staticmethod
        def backward(ctx, gw, gV, _ginfo):
            w, V = ctx.saved_tensors
            g = _eig_grad(w, V, gw, gV if compute_v else None, hermitian=False)
            return view_as_real(g).select(-1, 0) if ctx.real_input else g

    w, V, info = _EigC.apply(A)
    return w, V, info


def cholesky(A):
    """The lower Cholesky factor of Hermitian positive-definite A, composed recursively over
    2x2 blocks of complex ops (so its gradient is the composition's)."""
    from .._ops.complex import _make

    n = A.shape[-1]
    if n == 1:
        d = _C.sqrt(view_as_real(A).select(-1, 0))
        return _make(d, zeros_like(d))
    k = n // 2
    L11 = cholesky(A[..., :k, :k])
    # L21 = A21 L11^-H, as the solve L11 X = A21^H, X = L21^H
    L21 = solve(L11, A[..., k:, :k].mH, _real_solve).mH
    L22 = cholesky(A[..., k:, k:] - L21 @ L21.mH)
    top = _C.cat([view_as_real(L11), zeros_like(view_as_real(L21.mH))], -2)
    bottom = _C.cat([view_as_real(L21), view_as_real(L22)], -2)
    return view_as_complex_c(_C.cat([top, bottom], -3))


def view_as_complex_c(x):
    return _C.view_as_complex(x.contiguous())


def qr(A, mode):
    """Householder QR composed over complex ops, with LAPACK's (geqrf/ungqr) conventions: each
    reflector H = I - tau v v^H maps the column to beta e1 with beta real and of the opposite
    sign to the pivot's real part, so R has a real diagonal and matches torch's factors."""
    from .._ops.complex import _as_complex, _cat, _where
    from .._ops.index import where as _real_where

    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    rdt = _real_of(A.dtype)
    R = A
    Q = _as_complex(eye(m, dtype=rdt), A.dtype).expand(*A.shape[:-2], m, m) if mode != "r" else None
    for j in range(k if m > 1 else 0):
        x = R[..., j:, j]
        alpha = x[..., :1]
        rest = x[..., 1:]
        ar = view_as_real(alpha).select(-1, 0)
        ai = view_as_real(alpha).select(-1, 1)
        xnorm2 = (rest.abs() ** 2).sum(-1, keepdim=True) if m - j > 1 else zeros_like(ar)
        skip = (xnorm2 == 0) & (ai == 0)
        nrm = _C.sqrt(ar * ar + ai * ai + xnorm2)
        beta = -_real_where(ar >= 0, nrm, -nrm)
        one = ones_like(beta)
        beta_safe = _real_where(skip, one, beta)
        bc = _as_complex(beta_safe, A.dtype)
        tau = _where(skip, 0, (bc - alpha) / bc)
        denom = _where(skip, 1, alpha - bc)
        v = _cat([_as_complex(one, A.dtype), rest / denom], -1)
        if j:
            v = _cat([_as_complex(zeros_like(R[..., :j, 0]), A.dtype), v], -1)
        vh = _C.conj_physical(v)
        # R <- H^H R, Q <- Q H
        R = R - (_C.conj_physical(tau) * v).unsqueeze(-1) * (vh.unsqueeze(-2) @ R)
        if Q is not None:
            Q = Q - ((Q @ v.unsqueeze(-1)) * tau.unsqueeze(-1)) * vh.unsqueeze(-2)
    # exact zeros below the diagonal (and the skipped reflectors' real pivots)
    from .._ops.complex_more import _tri

    R = _tri(_C.triu, R, 0)
    if mode == "complete":
        return Q, R
    if mode == "r":
        return A.new_empty(0), R[..., :k, :]
    return Q[..., :k], R[..., :k, :]


def svd(A, full_matrices, svd_real):
    """(U, S, Vh) of complex A: the reduced factors read from the embedding's SVD (every other
    singular pair), the full ones completed by a complex QR; the gradient is the complex SVD's
    (Wan and Zhang, 2019) through the reduced factors, as torch's."""
    from ..autograd.function import Function

    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)

    class _SvdC(Function):
        @staticmethod
        def forward(ctx, A):
            Ue, Se, Vhe = svd_real(_embed(A), full_matrices=False)
            S = Se[..., ::2].contiguous()
            U = _unembed(Ue[..., ::2], m, k).contiguous()
            V = _unembed(Vhe.mT[..., ::2], n, k).contiguous()
            if not (_is_unitary(U) and _is_unitary(V)):
                U, V = _svd_repeated(A, Se, Vhe, m, n, k)
            ctx.save_for_backward(U, S, V)
            return U, S, V

        @staticmethod
        def backward(ctx, gU, gS, gV):
            from .._ops.complex import _as_complex

            U, S, V = ctx.saved_tensors
            cS = _as_complex(S, U.dtype)
            I = eye(k, dtype=U.dtype)
            inner = _diag_c(_as_complex(gS, U.dtype)) if gS is not None else 0
            s2 = S * S
            diff = s2.unsqueeze(-2) - s2.unsqueeze(-1)  # s_j^2 - s_i^2
            F = _as_complex(1 / (diff + eye(k, dtype=S.dtype)), U.dtype) * (1 - I)
            gA = 0
            if gU is not None:
                J = F * (U.mH @ gU)
                inner = inner + (J + J.mH) * cS.unsqueeze(-2)
                if m > k:
                    gA = gA + ((gU - U @ (U.mH @ gU)) / cS.unsqueeze(-2)) @ V.mH
            if gV is not None:
                VhgV = V.mH @ gV
                K = F * VhgV
                inner = inner + cS.unsqueeze(-1) * (K + K.mH)
                d = VhgV.diagonal(0, -2, -1)
                inner = inner + _diag_c((_C.conj_physical(d) - d) / (2 * cS))
                if n > k:
                    gA = gA + (U / cS.unsqueeze(-2)) @ (gV - V @ VhgV).mH
            return U @ inner @ V.mH + gA

    U, S, V = _SvdC.apply(A)
    if full_matrices and m != n:
        if m > k:
            Q = qr(U, "complete")[0]
            U = _join(U, Q[..., k:])
        else:
            Q = qr(V, "complete")[0]
            V = _join(V, Q[..., k:])
    return U, S, V.mH


def _join(a, b):
    return view_as_complex_c(_C.cat([view_as_real(a), view_as_real(b)], -2))


def slogdet(w):
    """(sign, log|det|) from the eigenvalues w (differentiable through eig's gradient)."""
    a = w.abs()
    return (w / a).prod(-1), _C.log(a).sum(-1)


def solve_triangular(A, B, upper, left, unitriangular, solve_any):
    """The triangular solve of complex A or B as a general solve of A's triangle."""
    from .._ops.complex import _as_complex
    from .._ops.complex_more import _tri

    ct = _complex_dtype(A, B)
    A = _tri(_C.triu if upper else _C.tril, _as_complex(A, ct))
    if unitriangular:
        I = eye(A.shape[-1], dtype=_real_of(ct))
        A = A * (1 - I) + I
    if not left:
        return solve_any(A.mT, _as_complex(B, ct).mT).mT
    return solve_any(A, _as_complex(B, ct))
