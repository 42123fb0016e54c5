"""torch's top-level functions that real programs reached for and ember lacked, composed from
ember's ops: narrow_copy, the unsafe_ chunk/split forms, numpy-style gradient, index_reduce,
and the randomized low-rank factorizations svd_lowrank / pca_lowrank."""

import builtins

from .. import linalg
from .._C import Tensor, cat
from .random import randn

__all__ = [
    "narrow_copy",
    "unsafe_chunk",
    "unsafe_split",
    "gradient",
    "index_reduce",
    "svd_lowrank",
    "pca_lowrank",
]


def narrow_copy(input, dim, start, length):
    """narrow_copy(input, dim, start, length) -> Tensor

    A contiguous copy of input.narrow(dim, start, length) (never a view)."""
    return input.narrow(dim, start, length).clone().contiguous()


def unsafe_chunk(input, chunks, dim=0):
    """unsafe_chunk(input, chunks, dim=0) -> List of Tensors

    chunk() without the checks that torch skips here; the same pieces."""
    return input.chunk(chunks, dim)


def unsafe_split(input, split_size_or_sections, dim=0):
    """unsafe_split(input, split_size_or_sections, dim=0) -> List of Tensors

    split() without the checks that torch skips here; the same pieces."""
    return input.split(split_size_or_sections, dim)


def _norm_dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [d % ndim for d in dims]


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """gradient(input, *, spacing=1, dim=None, edge_order=1) -> List of Tensors

    The derivative of input estimated along each of `dim` (every dimension by default) with
    second-order central differences inside and first- or second-order one-sided differences at
    the two ends (edge_order), as numpy.gradient. `spacing` is a scalar step, one scalar per
    dimension, or one coordinate tensor per dimension."""
    if edge_order not in (1, 2):
        raise RuntimeError(
            f"torch.gradient only supports edge_order=1 and edge_order=2.; got {edge_order}"
        )
    dims = _norm_dims(dim, input.dim())
    if isinstance(spacing, (int, float)):
        spacing = [spacing] * len(dims)
    elif isinstance(spacing, Tensor):
        spacing = [spacing]
    spacing = list(spacing)
    if len(spacing) == 1 and len(dims) > 1 and not isinstance(spacing[0], Tensor):
        spacing = spacing * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length "
            f"{len(spacing)} and a dim argument of length {len(dims)}."
        )
    x = input if input.dtype.is_floating_point or input.is_complex() else input.float()
    out = []
    for d, h in zip(dims, spacing):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )

        def s(a, b):
            return x.narrow(d, a, b - a)

        if isinstance(h, Tensor):
            # Coordinates: non-uniform steps, as numpy's second-order formula.
            shape = [1] * x.dim()
            shape[d] = -1
            c = h.to(x.dtype)
            dx = c[1:] - c[:-1]
            h1, h2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
            a = -h2 / (h1 * (h1 + h2))
            b = (h2 - h1) / (h1 * h2)
            cc = h1 / (h2 * (h1 + h2))
            inner = a * s(0, n - 2) + b * s(1, n - 1) + cc * s(2, n)
            if edge_order == 1:
                first = (s(1, 2) - s(0, 1)) / dx[0]
                last = (s(n - 1, n) - s(n - 2, n - 1)) / dx[-1]
            else:
                d1, d2 = dx[0], dx[1]
                first = (
                    -(2 * d1 + d2) / (d1 * (d1 + d2)) * s(0, 1)
                    + (d1 + d2) / (d1 * d2) * s(1, 2)
                    - d1 / (d2 * (d1 + d2)) * s(2, 3)
                )
                d1, d2 = dx[-2], dx[-1]
                last = (
                    d2 / (d1 * (d1 + d2)) * s(n - 3, n - 2)
                    - (d2 + d1) / (d1 * d2) * s(n - 2, n - 1)
                    + (2 * d2 + d1) / (d2 * (d1 + d2)) * s(n - 1, n)
                )
        else:
            inner = (s(2, n) - s(0, n - 2)) / (2 * h)
            if edge_order == 1:
                first = (s(1, 2) - s(0, 1)) / h
                last = (s(n - 1, n) - s(n - 2, n - 1)) / h
            else:
                first = (-1.5 * s(0, 1) + 2 * s(1, 2) - 0.5 * s(2, 3)) / h
                last = (0.5 * s(n - 3, n - 2) - 2 * s(n - 2, n - 1) + 1.5 * s(n - 1, n)) / h
        out.append(cat([first, inner, last], d))
    return tuple(out)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """index_reduce(input, dim, index, source, reduce, *, include_self=True) -> Tensor

    Reduces the slices of source into input's slices at `index` along dim with reduce ('prod',
    'mean', 'amax' or 'amin'); with include_self=False input's own values at those slices do not
    take part."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    n = builtins.max(input.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    dim = dim % n
    _check_reduce_index(input, dim, index, include_self)
    shape = [1] * source.dim()
    if source.dim():
        shape[dim] = -1
    idx = index.reshape(shape).expand(source.shape) if source.dim() else index.reshape(())
    return input.scatter_reduce(dim, idx, source, reduce, include_self=include_self)


def _check_reduce_index(input, dim, index, include_self):
    """torch's IndexError for an index out of [0, size) (negative ones too): with include_self=False
    its first fill names the index, its reduction does not."""
    size = input.shape[dim] if input.dim() else 1
    flat = index.reshape(-1)
    bad = flat[(flat < 0) | (flat >= size)]
    if bad.numel() == 0:
        return
    if include_self:
        raise IndexError("index out of range in self")
    raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {dim} with size {size}")


def _matmul_range(a, q, niter):
    """An orthonormal basis of a's range from the sketch a @ q, refined by niter subspace
    iterations."""
    y = a @ q
    basis = linalg.qr(y).Q
    for _ in range(niter):
        z = linalg.qr(a.mT @ basis).Q
        basis = linalg.qr(a @ z).Q
    return basis


def svd_lowrank(A, q=6, niter=2, M=None):
    """svd_lowrank(A, q=6, niter=2, M=None) -> (Tensor, Tensor, Tensor)

    A rank-q approximation U diag(S) V^T of A (or of A - M) by randomized subspace iteration
    (Halko, Martinsson and Tropp), q <= min(m, n): exact for matrices of rank <= q."""
    a = A if M is None else A - M
    m, n = a.shape[-2], a.shape[-1]
    q = 6 if q is None else q
    if not 0 <= q <= builtins.min(m, n):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    omega = randn(*a.shape[:-2], n, q, dtype=a.dtype)
    basis = _matmul_range(a, omega, niter)
    b = basis.mT @ a
    u, s, vh = linalg.svd(b, full_matrices=False)
    return basis @ u, s, vh.mT


def pca_lowrank(A, q=None, center=True, niter=2):
    """pca_lowrank(A, q=None, center=True, niter=2) -> (Tensor, Tensor, Tensor)

    Principal components of the rows of A: svd_lowrank of A with its column means subtracted
    (center=True); q defaults to min(6, m, n)."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = builtins.min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= builtins.min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    mean = A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A - mean, q, niter=niter)
