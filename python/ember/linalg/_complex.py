"""Complex inputs of ember.linalg and the general eigenproblem.

eig/eigvals run LAPACK's geev (`_C._linalg.eig_ex`; no gradient). solve and inv of complex
matrices solve the real system of twice the size, [[Re A, -Im A], [Im A, Re A]] [Re X; Im X] =
[Re B; Im B], so their gradients come from the real solve's; det of a complex matrix is the
product of its eigenvalues (no gradient)."""

from .. import _C
from .._C import _linalg, view_as_real
from .._ops.creation import eye


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
    w = eig_ex(A, False)[0]
    return w.prod(-1)
