"""ember.linalg: torch.linalg over LAPACK factorizations (_C._linalg) and public ops.

The factorizations record no graph in C++; each differentiable one is an autograd.Function here
whose backward is written in public ops (so double backward works): see _functions.py."""

import math

from .. import _C, _argparse, return_types
from .._autocast_policy import fp32 as _autocast_fp32
from .._autocast_policy import inner_excluded as _autocast_inner_excluded
from .._autocast_policy import lower_precision as _autocast_lower
from .._C import Tensor, _linalg, broadcast_shapes, int64, maximum, stack
from .._ops import _names
from .._ops import creation as _creation
from .._ops._util import _check_repeats_in_order
from .._ops._util import wrap_dim as _wrap_dim
from .._ops.creation import as_tensor, ones, zeros
from .._ops.foreign_guards import reads_values as _reads_values
from .._ops.index import where
from .._ops.products import cross as _cross
from .._type_info import finfo, scalar_type_name
from . import _complex
from ._extra import householder_product, tensorinv, tensorsolve
from ._functions import (
    LinAlgError,
    _check,
    _cholesky,
    _det,
    _eigh,
    _LuFactorFn,
    _qr,
    _slogdet,
    _solve,
    _solve_triangular,
    _svd,
)
from ._lu import lu, lu_solve

__all__ = [
    "LinAlgError",
    "householder_product",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "tensorinv",
    "tensorsolve",
    "inv",
    "inv_ex",
    "det",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "cholesky",
    "cholesky_ex",
    "qr",
    "svd",
    "svdvals",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "pinv",
    "matrix_rank",
    "lstsq",
    "norm",
    "vector_norm",
    "matrix_norm",
    "cross",
    "multi_dot",
    "matrix_power",
    "matrix_exp",
    "lu_factor",
    "lu_factor_ex",
    "lu",
    "lu_solve",
    "cond",
    "vecdot",
    "matmul",
    "diagonal",
    "vander",
]


@_autocast_fp32
def inv_ex(A, *, check_errors=False):
    """inv_ex(A, *, check_errors=False) -> (Tensor, Tensor)

    inv returning (inverse, info), where info is nonzero for singular matrices."""
    _check("linalg.inv", A, square=True)
    eye = _creation.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand_as(A)
    X, info = _solve(A, eye, "linalg.inv", check_errors)
    return return_types.linalg_inv_ex((X, info))


@_autocast_fp32
def inv(A):
    """inv(A) -> Tensor

    The inverse of each square matrix in the batch; singular matrices raise."""
    if A.dtype.is_complex:
        return _complex.inv(A, lambda M, B: solve(M, B))
    return inv_ex(A, check_errors=True).inverse


def det(A):
    """det(A) -> Tensor

    The determinant of each square matrix in the batch."""
    if A.dtype.is_complex:
        return _complex.det(A)
    _check("linalg.det", A, square=True)
    return _det(A)


def slogdet(A):
    """slogdet(A) -> (Tensor, Tensor)

    The sign and the log of the absolute value of the determinant."""
    if A.dim() >= 2 and A.dtype.is_complex:
        return return_types.linalg_slogdet(_complex.slogdet(eigvals(A)))
    _check("linalg.slogdet", A, square=True)
    return return_types.linalg_slogdet(_slogdet(A))


def _vector_rhs(A, B):
    # torch treats B as a batch of vectors when it is (n,) or has A's shape minus the last dim.
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@_autocast_fp32
def solve_ex(A, B, *, left=True, check_errors=False):
    """solve_ex(A, B, *, left=True, check_errors=False) -> (Tensor, Tensor)

    solve returning (X, info), where info is nonzero for singular A."""
    _check("linalg.solve", A, square=True)
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found "
            f"A of type {scalar_type_name(A.dtype)} and B of type "
            f"{scalar_type_name(B.dtype)} instead"
        )
    vector = _vector_rhs(A, B)
    b = B.unsqueeze(-1) if vector else B
    if not left:
        A, b = A.mT, b.mT
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
            f"({A.shape[-2]}x{A.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})"
        )
    batch = broadcast_shapes(A.shape[:-2], b.shape[:-2])
    X, info = _solve(
        A.expand(batch + tuple(A.shape[-2:])),
        b.expand(batch + tuple(b.shape[-2:])),
        "linalg.solve",
        check_errors,
    )
    if not left:
        X = X.mT
    return return_types.linalg_solve_ex((X.squeeze(-1) if vector else X, info))


@_autocast_fp32
def solve(A, B, *, left=True):
    """solve(A, B, *, left=True) -> Tensor

    The solution X of A X = B (or X A = B with left=False) for square A."""
    if A.dtype.is_complex or B.dtype.is_complex:
        if not left:
            return solve(A.mT, B.mT).mT
        return _complex.solve(A, B, lambda M, R: solve(M, R))
    return solve_ex(A, B, left=left, check_errors=True)[0]


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """solve_triangular(A, B, *, upper, left=True, unitriangular=False) -> Tensor

    The solution of a triangular system, using only the upper or lower triangle of A."""
    if A.dtype.is_complex or B.dtype.is_complex:
        return _complex.solve_triangular(A, B, upper, left, unitriangular, solve)
    _check("linalg.solve_triangular", A, square=True)
    if not left:
        # X A = B  <=>  A^T X^T = B^T, and A^T is triangular on the other side.
        return solve_triangular(
            A.mT, B.mT, upper=not upper, left=True, unitriangular=unitriangular
        ).mT
    batch = broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return _solve_triangular(
        A.expand(batch + tuple(A.shape[-2:])),
        B.expand(batch + tuple(B.shape[-2:])),
        upper,
        unitriangular,
    )


@_autocast_fp32
def cholesky_ex(A, *, upper=False, check_errors=False):
    """cholesky_ex(A, *, upper=False, check_errors=False) -> (Tensor, Tensor)

    cholesky returning (L, info), where info is nonzero for matrices that are not positive-
    definite."""
    if A.dim() >= 2 and A.dtype.is_complex:
        L = _complex.cholesky(A)
        bad = _C.isnan(L.abs()).any(-1).any(-1)
        if check_errors and bool(bad.any()):
            raise LinAlgError(
                "linalg.cholesky: The factorization could not be completed because "
                "the input is not positive-definite."
            )
        return return_types.linalg_cholesky_ex((L.mH if upper else L, bad.to(_C.int32)))
    _check("linalg.cholesky", A, square=True)
    L, info = _cholesky(A, upper, check_errors)
    return return_types.linalg_cholesky_ex((L, info))


@_autocast_fp32
def cholesky(A, *, upper=False):
    """cholesky(A, *, upper=False) -> Tensor

    The Cholesky factor L (or U with upper=True) of a batch of symmetric positive-definite
    matrices."""
    return cholesky_ex(A, upper=upper, check_errors=True).L


@_autocast_fp32
def qr(A, mode="reduced"):
    """qr(A, mode='reduced') -> (Tensor, Tensor)

    The QR decomposition of A in 'reduced', 'complete' or 'r' mode."""
    if not A.dtype.is_complex:
        _check("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
            "(default), 'r', or 'complete'"
        )
    if A.dtype.is_complex and A.dim() >= 2:
        return return_types.linalg_qr(_complex.qr(A, mode))
    return return_types.linalg_qr(_qr(A, mode))


@_autocast_fp32
def svd(A, full_matrices=True, *, driver=None):
    """svd(A, full_matrices=True, *, driver=None) -> (Tensor, Tensor, Tensor)

    The singular value decomposition (U, S, Vh), full or reduced."""
    if A.dim() >= 2 and A.dtype.is_complex:
        return return_types.linalg_svd(_complex.svd(A, full_matrices, svd))
    _check("linalg.svd", A)
    return return_types.linalg_svd(_svd(A, full_matrices, True))


@_autocast_fp32
def svdvals(A, *, driver=None):
    """svdvals(A, *, driver=None) -> Tensor

    The singular values of A in descending order."""
    if A.dim() >= 2 and A.dtype.is_complex:
        return _complex.svdvals(A, svdvals)
    _check("linalg.svdvals", A)
    return _svd(A, False, False)[1]


@_autocast_fp32
def eigh(A, UPLO="L"):
    """eigh(A, UPLO='L') -> (Tensor, Tensor)

    Eigenvalues (ascending) and eigenvectors of symmetric matrices, read from the UPLO triangle."""
    if A.dim() >= 2 and A.dtype.is_complex and UPLO in ("L", "U"):
        return return_types.linalg_eigh(_complex.eigh(A, UPLO == "U", eigh))
    _check("linalg.eigh", A, square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return return_types.linalg_eigh(_eigh(A, UPLO == "U", True))


@_autocast_fp32
def eig(A):
    """eig(A) -> (Tensor, Tensor)

    Eigenvalues and right eigenvectors (unit-norm columns) of general square matrices, complex
    for real input too (LAPACK geev). No gradient yet."""
    if A.requires_grad and _C.is_grad_enabled():
        w, V, info = _complex.eig_grad_fn(A, True)
    else:
        w, V, info = _complex.eig_ex(A, True)
    _raise_eig(info)
    return return_types.linalg_eig((w, V))


@_autocast_fp32
def eigvals(A):
    """eigvals(A) -> Tensor

    The (complex) eigenvalues of general square matrices."""
    if A.requires_grad and _C.is_grad_enabled():
        w, _, info = _complex.eig_grad_fn(A, False)
    else:
        w, _, info = _complex.eig_ex(A, False)
    _raise_eig(info)
    return w


def _raise_eig(info):
    if info.numel() and bool((info != 0).any()):
        raise LinAlgError("linalg.eig: the algorithm failed to converge")


@_autocast_fp32
def eigvalsh(A, UPLO="L"):
    """eigvalsh(A, UPLO='L') -> Tensor

    The ascending eigenvalues of symmetric matrices, read from the UPLO triangle."""
    if A.dim() >= 2 and A.dtype.is_complex and UPLO in ("L", "U"):
        return _complex.eigvalsh(A, UPLO == "U", eigvalsh)
    _check("linalg.eigvalsh", A, square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _eigh(A, UPLO == "U", False)[0]


def _tolerance(S, atol, rtol, m, n):
    smax = (
        S.amax(-1, keepdim=True) if S.shape[-1] else zeros(list(S.shape[:-1]) + [1], dtype=S.dtype)
    )
    if rtol is None:
        rtol = 0.0 if atol is not None and not _is_zero(atol) else finfo(S.dtype).eps * max(m, n)
    atol = 0.0 if atol is None else atol
    atol = atol.unsqueeze(-1) if isinstance(atol, Tensor) and atol.dim() else atol
    rtol = rtol.unsqueeze(-1) if isinstance(rtol, Tensor) and rtol.dim() else rtol
    return maximum(as_tensor(atol, dtype=S.dtype), rtol * smax)


def _is_zero(x):
    return (not isinstance(x, Tensor)) and x == 0


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """pinv(A, *, atol=None, rtol=None, hermitian=False) -> Tensor

    The Moore-Penrose pseudo-inverse, computed from the SVD with small singular values dropped."""
    if A.dim() >= 2 and A.dtype.is_complex:
        return _complex.pinv(A, pinv, atol=atol, rtol=rtol)
    _check("linalg.pinv", A)
    m, n = A.shape[-2], A.shape[-1]
    if hermitian:
        w, V = eigh(A)
        tol = _tolerance(w.abs(), atol, rtol, m, n)
        keep = w.abs() > tol
        winv = where(keep, 1 / where(keep, w, ones([], dtype=w.dtype)), zeros([], dtype=w.dtype))
        return (V * winv.unsqueeze(-2)) @ V.mT
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tolerance(S, atol, rtol, m, n)
    keep = S > tol
    sinv = where(keep, 1 / where(keep, S, ones([], dtype=S.dtype)), zeros([], dtype=S.dtype))
    return (Vh.mT * sinv.unsqueeze(-2)) @ U.mT


@_autocast_fp32
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    """matrix_rank(A, *, atol=None, rtol=None, hermitian=False) -> Tensor

    The number of singular values above the tolerance max(atol, rtol * largest)."""
    if not A.dtype.is_complex:
        _check("linalg.matrix_rank", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    return (S > _tolerance(S, atol, rtol, A.shape[-2], A.shape[-1])).sum(-1)


@_autocast_fp32
def lstsq(A, B, rcond=None, *, driver=None):
    """lstsq(A, B, rcond=None, *, driver=None) -> (Tensor, Tensor, Tensor, Tensor)

    The minimum-norm least-squares solution (what torch's default CPU driver, gelsy, returns)."""
    if not A.dtype.is_complex:
        _check("linalg.lstsq", A)
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    vector = B.dim() == A.dim() - 1
    b = B.unsqueeze(-1) if vector else B
    if A.shape[-2] != b.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2], A.shape[-1]
    rtol = (
        finfo(_complex._real_of(A.dtype) if A.dtype.is_complex else A.dtype).eps * max(m, n)
        if rcond is None or rcond < 0
        else rcond
    )
    X = pinv(A, rtol=rtol) @ b
    rank = matrix_rank(A, rtol=rtol).long() if driver != "gels" else _creation.empty(0, dtype=int64)
    empty = _creation.empty(0, dtype=_complex._real_of(A.dtype) if A.dtype.is_complex else A.dtype)
    return return_types.linalg_lstsq((X.squeeze(-1) if vector else X, empty, rank, empty))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The ord-norm of x over dim (all elements when dim is None), as if flattened into one vector."""
    if x.dtype.is_complex:
        x = x.abs()
        dtype = _complex._real_of(dtype) if dtype is not None and dtype.is_complex else dtype
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {scalar_type_name(x.dtype)}"
        )
    if dtype is not None:
        x = x.to(dtype)
    dims = (
        tuple(range(x.dim())) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    )
    _check_repeats_in_order("linalg.vector_norm", dims, x.dim())
    if (ord < 0 or ord == math.inf) and x.numel() == 0:  # min, max, 1/sum(1/..): no identity
        if dim is None or (not isinstance(dim, int) and not tuple(dim)):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor because "
                "the operation does not have an identity"
            )
        for d in dims:
            if -x.dim() <= d < x.dim() and x.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {ord:g} norm on the dimension "
                    f"{d % x.dim()}"
                    "because this dimension is empty and the operation does not have an identity"
                )
    if not dims:  # an empty dim list reduces every dim, as torch's
        dims = tuple(range(x.dim()))
    if x.dim() == 0:
        for d in dims:  # a 0-d tensor takes dims -1 and 0 only
            _wrap_dim(d, 0)
        dims = ()
    a = x.abs()
    if ord == math.inf:
        return a.amax(dims, keepdim) if dims else a
    if ord == -math.inf:
        return a.amin(dims, keepdim) if dims else a
    if ord == 0:
        return (a != 0).to(a.dtype).sum(dims, keepdim) if dims else (a != 0).to(a.dtype)
    if not dims:
        return a
    if ord == 2:
        return x.norm(2, list(dims), keepdim)
    if ord == 1:
        return a.sum(dims, keepdim)
    return (a**ord).sum(dims, keepdim) ** (1.0 / ord)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor

    A matrix norm ('fro', 'nuc', inf, -inf, 1, -1, 2, -2) over the two dims in dim."""
    if A.dtype.is_complex and ord not in ("nuc", 2, -2):
        return matrix_norm(A.abs(), ord, dim, keepdim)
    if not A.dtype.is_complex:
        _check("linalg.matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    if len(dim) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}"
        )
    n = A.dim()
    for d in dim:  # range-checked before compared, as torch's
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
    d0, d1 = dim[0] % n, dim[1] % n
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    shape = [1 if i in (d0, d1) else s for i, s in enumerate(A.shape)]
    negative = ord in (-1, -2, -math.inf)
    if A.numel() == 0 and (ord in (1, 2, math.inf) or (math.prod(shape) == 0 and not negative)):
        # torch's largest of nothing is 0 here; an empty batch has no matrices to reduce, though
        # torch's smallest over an empty dim still refuses
        out = zeros(shape, dtype=_complex._real_of(A.dtype) if A.dtype.is_complex else A.dtype)
        return out if keepdim else out.squeeze((d0, d1))
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        out = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            out = out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return out
    if ord in (1, -1, math.inf, -math.inf):
        # 1: largest column sum; inf: largest row sum. pick_dim counts the dims left after the
        # sum, as torch's, so an empty one is named as torch names it
        sum_dim, pick_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(sum_dim, keepdim=keepdim)
        if not keepdim and sum_dim < pick_dim:
            pick_dim -= 1
        return sums.amax(pick_dim, keepdim) if ord > 0 else sums.amin(pick_dim, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """norm(input, ord=None, dim=None, keepdim=False, *, dtype=None) -> Tensor

    A vector norm or a matrix norm, chosen by ord and by how many dims are reduced."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is not None and dim is None:
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.dim() != 1:
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must be "
                f"1D or 2D. Got {A.dim()}D."
            )
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord {ord} is only supported for matrices")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1):
    """cross(input, other, *, dim=-1) -> Tensor

    The 3-vector cross product of input and other along dim, broadcasting the other dims."""
    return _cross(input, other, dim)


def multi_dot(tensors):
    """multi_dot(tensors)

    The product of a chain of matrices, multiplied in the cheapest order."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(-1)
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def matrix_power(A, n):
    """matrix_power(A, n) -> Tensor

    A raised to the integer power n by repeated squaring (negative n inverts first)."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they "
            f"are {A.shape[-2] if A.dim() > 1 else 1} by {A.shape[-1] if A.dim() else 1}"
            f" matrices"
        )
    if n == 0:
        # torch's copy of the identity into a clone of A: it requires grad (zero) as A does
        eye = _creation.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return A.clone().copy_(eye.expand_as(A))
    if n == 1:
        return A.clone()  # a new tensor, as torch's (CloneBackward0)
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


@_autocast_inner_excluded
@_reads_values
def matrix_exp(A):
    """matrix_exp(A) -> Tensor

    Scaling and squaring with a degree-18 Taylor polynomial (accurate to float64 rounding).
    Single precision runs in double: each squaring doubles the relative error, and in float32
    the result had drifted ~1e-6 from torch's (which picks the degree by the norm instead)."""
    if not A.dtype.is_complex:
        _check("linalg.matrix_exp", A, square=True)
    wide = {_C.float32: _C.float64, _C.complex64: _C.complex128}.get(A.dtype)
    if wide is not None:
        return matrix_exp(A.to(wide)).to(A.dtype)
    norm1 = A.detach().abs().sum(-2).amax().item() if A.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm1))) + 1) if norm1 > 0.5 else 0
    X = A / (2**s)
    eye = _creation.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand_as(A)
    result, term = eye, eye
    for k in range(1, 19):
        term = term @ X / k
        result = result + term
    for _ in range(s):
        result = result @ result
    return result


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """lu_factor_ex(A, *, pivot=True, check_errors=False) -> (Tensor, Tensor, Tensor)

    lu_factor returning (LU, pivots, info), where info flags singular factors."""
    _check("linalg.lu_factor", A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    # square: differentiable (torch's is for any shape; the wide/tall backward is not here)
    square = A.shape[-1] == A.shape[-2]
    LU, piv, info = (_LuFactorFn.apply if square else _linalg.lu_factor_ex)(A)
    if check_errors and bool((info > 0).any()):
        raise LinAlgError(
            f"torch.linalg.lu_factor_ex: U[{int(info.amax())},{int(info.amax())}] is "
            "zero and using it on lu_solve would result in a division by zero."
        )
    return return_types.linalg_lu_factor_ex((LU, piv, info))


def lu_factor(A, *, pivot=True):
    """lu_factor(A, *, pivot=True) -> (Tensor, Tensor)

    The compact LU factorization (LU, pivots) that lu_solve consumes."""
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    return return_types.linalg_lu_factor((LU, piv))


def cond(A, p=None):
    """cond(A, p=None) -> Tensor

    The condition number of A in the norm p (2-norm by default)."""
    norms = (None, 1, -1, 2, -2, math.inf, -math.inf, "fro", "nuc")
    if A.dim() >= 2 and A.numel() == 0 and any(p is q or p == q for q in norms):
        # torch's 0 for matrices with no elements (numpy leaves it undefined), in A's real dtype
        return zeros(A.shape[:-2], dtype=A.abs().dtype)
    if p is None or p == 2 or p == -2:
        S = svdvals(A)
        return S.amax(-1) / S.amin(-1) if p != -2 else S.amin(-1) / S.amax(-1)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


@_autocast_lower  # linalg_vecdot is on torch's CPU autocast lower-precision list
def vecdot(x, y, *, dim=-1):
    """vecdot(x, y, *, dim=-1) -> Tensor

    The dot product of x and y along dim, broadcasting the other dims."""
    return (x * y).sum(dim)


def matmul(input, other):
    """matmul(input, other) -> Tensor

    The matrix product of input and other, with torch.matmul's broadcasting rules."""
    return _C.matmul(input, other)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """diagonal(A, *, offset=0, dim1=-2, dim2=-1) -> Tensor

    A view of the diagonal at offset between dims dim1 and dim2 (the last two by default)."""
    return A.diagonal(offset, dim1, dim2)


def vander(x, *, N=None):
    """vander(x, N=None) -> Tensor

    The Vandermonde matrix whose columns are the powers x**0, x**1, ..., x**(N-1)."""
    return (
        _creation.vander(x, N, increasing=True)
        if x.dim() == 1
        else stack(
            [_creation.vander(r, N, increasing=True) for r in x.reshape(-1, x.shape[-1])]
        ).reshape(list(x.shape) + [x.shape[-1] if N is None else N])
    )


# out= on the functions that take it in torch (ember/_argparse.py)
globals().update(_argparse.guarded(globals(), _argparse.LINALG_OUT_OPS, prefix="linalg_"))


# ---- torch's grad_fn names (see ember/_ops/_names.py) ----


def _norm_name(args, kwargs):
    """Vector norms (no ord, a 1-D input or one dim) are torch's linalg_vector_norm."""
    A, ord, dim = (
        args[0] if args else kwargs.get("A"),
        _names.arg(args, kwargs, 1, "ord"),
        _names.arg(args, kwargs, 2, "dim"),
    )
    if ord is None or (isinstance(A, Tensor) and A.dim() == 1) or isinstance(dim, int):
        return "LinalgVectorNormBackward0"
    return None


vector_norm = _names.named(vector_norm, "LinalgVectorNormBackward0")
norm = _names.named(norm, _norm_name)
# The factorizations are autograd.Functions here (_functions.py), torch's are aten ops; a
# tuple's tensors with history each get the name.
for _name, _node in (
    ("inv", "LinalgInvExBackward0"),
    ("inv_ex", "LinalgInvExBackward0"),
    ("det", "LinalgDetBackward0"),
    ("slogdet", "LinalgSlogdetBackward0"),
    ("solve", "LinalgSolveExBackward0"),
    ("solve_ex", "LinalgSolveExBackward0"),
    ("solve_triangular", "LinalgSolveTriangularBackward0"),
    ("cholesky", "LinalgCholeskyExBackward0"),
    ("cholesky_ex", "LinalgCholeskyExBackward0"),
    ("qr", "LinalgQrBackward0"),
    ("svd", "LinalgSvdBackward0"),
    ("svdvals", "LinalgSvdBackward0"),
    ("eigh", "LinalgEighBackward0"),
    ("eigvalsh", "LinalgEighBackward0"),
    ("eig", "LinalgEigBackward0"),
    ("eigvals", "LinalgEigBackward0"),
    ("pinv", "LinalgPinvBackward0"),
    ("matrix_exp", "LinalgMatrixExpBackward0"),
    ("lstsq", "LinalgLstsqBackward0"),
    ("cross", "LinalgCrossBackward0"),
    ("householder_product", "LinalgHouseholderProductBackward0"),
    ("lu_solve", "LinalgLuSolveBackward0"),
    ("lu_factor", "LinalgLuFactorExBackward0"),
    ("lu_factor_ex", "LinalgLuFactorExBackward0"),
    ("lu", "LinalgLuBackward0"),
):
    globals()[_name] = _names.named(globals()[_name], _node)
del _name, _node


# The LDL factorization runs over numpy, which `import ember` leaves unloaded until used.
_LAZY = ("ldl_factor", "ldl_factor_ex", "ldl_solve")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def __getattr__(name):
    if name in _LAZY:
        from . import _ldl

        return getattr(_ldl, name)
    raise AttributeError(f"module 'ember.linalg' has no attribute '{name}'")
