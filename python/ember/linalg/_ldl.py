"""LDL^T factorization with Bunch-Kaufman pivoting (torch.linalg.ldl_factor / ldl_solve).

torch calls LAPACK's sytrf/hetrf (lower triangle) and sytrs/hetrs. ember's C++ core has no binding
for them, so this module runs the same unblocked algorithm (LAPACK's sytf2/hetf2 column by column,
vectorized in numpy per step) and returns the compact form LAPACK gives: L below the diagonal, D's
1x1 and 2x2 blocks on and next to it, the upper triangle zeroed, and 1-based pivots, negative for
a 2x2 block. Matrices below LAPACK's block size factor exactly as sytrf's unblocked path does. No
autograd graph is recorded (torch's factorization has no derivative either)."""

import math

import numpy as np

from .. import _C, return_types
from .._ops.creation import from_numpy
from .._type_info import scalar_type_name

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # Bunch-Kaufman's growth bound
_SUPPORTED = (_C.float32, _C.float64, _C.complex64, _C.complex128)


def _cabs1(x):
    """LAPACK's |re| + |im| (the plain absolute value for real entries)."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _factor_one(a, herm):
    """Factor one matrix in place (its lower triangle); returns (pivots, info)."""
    n = a.shape[0]
    conj = np.conj if herm else (lambda x: x)
    diag_abs = (lambda x: abs(x.real)) if herm else _cabs1
    piv = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = diag_abs(a[k, k])
        imax, colmax = k, 0.0
        if k < n - 1:
            col = _cabs1(a[k + 1 :, k])
            imax = k + 1 + int(np.argmax(col))
            colmax = col[imax - k - 1]
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            info = info or k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                rowmax = _cabs1(a[imax, k:imax]).max()
                if imax < n - 1:
                    rowmax = max(rowmax, _cabs1(a[imax + 1 :, imax]).max())
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag_abs(a[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                # swap rows and columns kk and kp of the trailing matrix (its lower triangle)
                a[kp + 1 :, [kk, kp]] = a[kp + 1 :, [kp, kk]]
                between = a[kk + 1 : kp, kk].copy()
                a[kk + 1 : kp, kk] = conj(a[kp, kk + 1 : kp])
                a[kp, kk + 1 : kp] = conj(between)
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            _eliminate(a, k, kstep, herm)
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return piv, info


def _eliminate(a, k, kstep, herm):
    """The rank-1 or rank-2 update of the trailing lower triangle by the pivot block at k."""
    n = a.shape[0]
    conj = np.conj if herm else (lambda x: x)
    if kstep == 1:
        if k < n - 1:
            r = 1.0 / (a[k, k].real if herm else a[k, k])
            x = a[k + 1 :, k].copy()
            a[k + 1 :, k + 1 :] += np.outer(x, -r * conj(x))
            a[k + 1 :, k] = x * r
            if herm:
                _real_diagonal(a, k + 1)
        return
    if k >= n - 2:
        return
    if herm:
        d = abs(a[k + 1, k])
        d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
        d21 = a[k + 1, k] / d
        scale = (1.0 / (d11 * d22 - 1.0)) / d
    else:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        scale = (1.0 / (d11 * d22 - 1.0)) / d21
        d21 = 1.0
    ck, ck1 = a[k + 2 :, k].copy(), a[k + 2 :, k + 1].copy()
    wk = scale * (d11 * ck - d21 * ck1)
    wk1 = scale * (d22 * ck1 - conj(d21) * ck)
    a[k + 2 :, k + 2 :] -= np.outer(ck, conj(wk))
    a[k + 2 :, k + 2 :] -= np.outer(ck1, conj(wk1))
    a[k + 2 :, k] = wk
    a[k + 2 :, k + 1] = wk1
    if herm:
        _real_diagonal(a, k + 2)


def _real_diagonal(a, start):
    """hetrf keeps the diagonal real: rounding leaves no imaginary part there."""
    idx = np.arange(start, a.shape[0])
    a[idx, idx] = a[idx, idx].real


def _solve_one(a, piv, b, herm):
    """Solve with one factorization (sytrs/hetrs, lower): b (n, nrhs) is overwritten."""
    n = a.shape[0]
    conj = np.conj if herm else (lambda x: x)
    k = 0
    while k < n:  # L D y = P b
        if piv[k] > 0:
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1 :] -= np.outer(a[k + 1 :, k], b[k])
            b[k] = b[k] * (1.0 / (a[k, k].real if herm else a[k, k]))
            k += 1
            continue
        kp = -piv[k] - 1
        b[[k + 1, kp]] = b[[kp, k + 1]]
        b[k + 2 :] -= np.outer(a[k + 2 :, k], b[k])
        b[k + 2 :] -= np.outer(a[k + 2 :, k + 1], b[k + 1])
        akm1k = a[k + 1, k]
        akm1, ak = a[k, k] / conj(akm1k), a[k + 1, k + 1] / akm1k
        denom = akm1 * ak - 1.0
        bkm1, bk = b[k] / conj(akm1k), b[k + 1] / akm1k
        b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
        k += 2
    k = n - 1
    while k >= 0:  # L^T (L^H) P^T x = y
        first = k if piv[k] > 0 else k - 1
        for j in range(first, k + 1):
            b[j] -= conj(a[k + 1 :, j]) @ b[k + 1 :]
        kp = abs(piv[k]) - 1
        b[[k, kp]] = b[[kp, k]]
        k = first - 1
    return b


def _factor(A, hermitian):
    name = "torch.linalg.ldl_factor_ex"  # torch's ldl_factor checks through ldl_factor_ex
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. "
            f"Got {scalar_type_name(A.dtype)}"
        )
    if A.dtype not in _SUPPORTED:
        raise NotImplementedError(
            f"\"ldl_factor_kernel_cpu\" not implemented for '{scalar_type_name(A.dtype)}'"
        )
    batch, n = tuple(A.shape[:-2]), A.shape[-1]
    count = math.prod(batch)
    mats = A.detach().resolve_conj().numpy().reshape((count, n, n)).copy()
    herm = hermitian and np.iscomplexobj(mats)
    pivots = np.zeros((count, n), dtype=np.int32)
    infos = np.zeros(count, dtype=np.int32)
    for i, a in enumerate(mats):
        pivots[i], infos[i] = _factor_one(a, herm)
    ld = np.ascontiguousarray(np.swapaxes(np.tril(mats), -1, -2).reshape(batch + (n, n)))
    # LAPACK's output is column-major: torch's LD has strides (1, n)
    LD = from_numpy(ld).mT
    return LD, from_numpy(pivots.reshape(batch + (n,))), from_numpy(infos.reshape(batch))


def _raise_info(info, name):
    bad = info.reshape(-1).tolist()
    first = next((i for i in bad if i != 0), 0)
    if first:
        raise RuntimeError(f"{name}: Unknown error code: {first}.")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None) -> (Tensor, Tensor,
        Tensor)

    The compact LDL factorization of the lower triangle of A with Bunch-Kaufman pivoting, as
    LAPACK's sytrf gives it, and info (k > 0: D[k-1, k-1] is exactly zero)."""
    LD, pivots, info = _factor(A, hermitian)
    if check_errors:
        _raise_info(info, "torch.linalg.ldl_factor_ex")
    return _write_out(return_types.linalg_ldl_factor_ex, (LD, pivots, info), out)


def ldl_factor(A, *, hermitian=False, out=None):
    """ldl_factor(A, *, hermitian=False, out=None) -> (Tensor, Tensor)

    The compact LDL factorization of the lower triangle of A with Bunch-Kaufman pivoting."""
    LD, pivots, info = _factor(A, hermitian)
    _raise_info(info, "torch.linalg.ldl_factor")
    return _write_out(return_types.linalg_ldl_factor, (LD, pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """ldl_solve(LD, pivots, B, *, hermitian=False, out=None) -> Tensor

    Solves A X = B from the compact factorization ldl_factor returned."""
    for t, what in ((LD, "LD"), (B, "B")):
        if t.dim() < 2:
            raise RuntimeError(
                f"torch.linalg.ldl_solve: Expected {what} to have at least 2 dimensions, "
                f"but it has {t.dim()} dimensions instead"
            )
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(
            "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is "
            f"{n} by {n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    if B.dtype != LD.dtype:
        raise RuntimeError(
            "Expected b and A to have the same dtype, but found b of type "
            f"{scalar_type_name(B.dtype)} and A of type {scalar_type_name(LD.dtype)} instead."
        )
    batch = tuple(_C.broadcast_shapes(LD.shape[:-2], B.shape[:-2], pivots.shape[:-1]))
    count, nrhs = math.prod(batch), B.shape[-1]
    a = np.broadcast_to(LD.detach().resolve_conj().numpy(), batch + (n, n)).reshape(count, n, n)
    p = np.broadcast_to(pivots.numpy(), batch + (n,)).reshape(count, n)
    b = np.broadcast_to(B.detach().resolve_conj().numpy(), batch + (n, nrhs))
    b = b.reshape(count, n, nrhs).copy()
    herm = hermitian and np.iscomplexobj(a)
    for i in range(b.shape[0]):
        _solve_one(a[i], p[i], b[i], herm)
    X = from_numpy(b.reshape(batch + (n, nrhs)))
    if out is not None:
        out.resize_(X.shape).copy_(X)
        return out
    return X


def _write_out(kind, results, out):
    if out is None:
        return kind(results)
    for dst, src in zip(out, results):
        dst.resize_(src.shape).copy_(src)
    return return_types.out_type(kind)(tuple(out))
