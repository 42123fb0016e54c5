"""torch's remaining top-level math names: norms under their ATen names, igamma/igammac, the
LAPACK-style QR trio (geqrf, orgqr, ormqr), histogramdd, segment_reduce, and the functions torch
removed in 1.9 (solve, lstsq, eig, symeig, matrix_rank), which raise as torch's do."""

from .. import return_types
from .._autocast_policy import fp32 as _autocast_fp32

__all__ = [
    "frobenius_norm",
    "nuclear_norm",
    "norm_except_dim",
    "igamma",
    "igammac",
    "geqrf",
    "orgqr",
    "ormqr",
    "histogramdd",
    "segment_reduce",
    "solve",
    "lstsq",
    "eig",
    "symeig",
    "matrix_rank",
]


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """frobenius_norm(input, dim, keepdim=False, *, out=None) -> Tensor

    The 2-norm of input's elements over dim (the Frobenius norm of matrices)."""
    from ..linalg import vector_norm

    return vector_norm(input, 2, list(dim) if isinstance(dim, (list, tuple)) else dim, keepdim)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """nuclear_norm(input, dim=None, keepdim=False, *, out=None) -> Tensor

    The sum of the singular values of the matrices over dim (a 2-D input when dim is not
    given)."""
    from ..linalg import matrix_norm

    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(
                f"nuclear_norm: expected a 2-D tensor when dim is not given; got {input.dim()}-D"
            )
        dim = (0, 1)
    return matrix_norm(input, "nuc", tuple(dim), keepdim)


def norm_except_dim(v, pow=2, dim=0):
    """norm_except_dim(v, pow=2, dim=0) -> Tensor

    The pow-norm of v over every dimension but dim, keeping them as size 1 (the whole tensor's
    norm, a scalar, when dim is -1); weight normalization's norm."""
    from ..linalg import vector_norm

    if dim == -1:
        return vector_norm(v, pow)
    dims = [d for d in range(v.dim()) if d != dim]
    return vector_norm(v, pow, dims, keepdim=True)


def igamma(input, other, *, out=None):
    """igamma(input, other, *, out=None) -> Tensor

    The regularized lower incomplete gamma function (ember.special.gammainc)."""
    from ..special import gammainc

    return gammainc(input, other, out=out) if out is not None else gammainc(input, other)


def igammac(input, other, *, out=None):
    """igammac(input, other, *, out=None) -> Tensor

    The regularized upper incomplete gamma function (ember.special.gammaincc)."""
    from ..special import gammaincc

    return gammaincc(input, other, out=out) if out is not None else gammaincc(input, other)


@_autocast_fp32
def geqrf(input, *, out=None):
    """geqrf(input, *, out=None) -> (Tensor, Tensor)

    LAPACK's geqrf: the QR decomposition stored compactly as (a, tau): R on and above a's
    diagonal, the Householder vectors below it, and their scales tau. Batches are supported;
    no autograd (as torch's)."""
    import numpy as np

    from .creation import from_numpy

    if input.dim() < 2:
        raise RuntimeError(f"geqrf: expected a tensor of 2 or more dimensions; got {input.dim()}-D")
    arr = input.detach().numpy()
    m, n = arr.shape[-2:]
    flat = arr.reshape(-1, m, n)
    a = np.empty_like(flat)
    tau = np.empty((flat.shape[0], min(m, n)), dtype=arr.dtype)
    for i, mat in enumerate(flat):
        h, t = np.linalg.qr(mat, mode="raw")  # LAPACK's own geqrf (h is transposed)
        a[i], tau[i] = h.T, t
    a = from_numpy(a.reshape(arr.shape))
    tau = from_numpy(tau.reshape(arr.shape[:-2] + (min(m, n),)))
    return return_types.geqrf((a, tau))


def orgqr(input, tau):
    """orgqr(input, tau) -> Tensor

    The first n columns of the Q that geqrf's (input, tau) stands for
    (ember.linalg.householder_product)."""
    from ..linalg import householder_product

    return householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """ormqr(input, tau, other, left=True, transpose=False, *, out=None) -> Tensor

    other multiplied by the full m-by-m Q of geqrf's (input, tau): Q other, Q^T other (transpose),
    other Q or other Q^T (left=False)."""
    from .. import cat, zeros
    from ..linalg import householder_product

    m, k = input.shape[-2], input.shape[-1]
    if m > k:  # pad with reflectors of scale 0 (identities) to build the square Q
        input = cat([input, zeros(*input.shape[:-1], m - k, dtype=input.dtype)], -1)
    tau = tau[..., : min(m, tau.shape[-1])]
    if tau.shape[-1] < m:
        tau = cat([tau, zeros(*tau.shape[:-1], m - tau.shape[-1], dtype=tau.dtype)], -1)
    q = householder_product(input[..., :m], tau)
    if transpose:
        q = q.transpose(-2, -1)
    return q @ other if left else other @ q


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """histogramdd(input, bins, *, range=None, weight=None, density=False, out=None) -> (Tensor,
    Tensor[])

    The D-dimensional histogram of the points in input's last dimension (size D): bins is a
    count, a count per dimension, or the edges per dimension; returns (hist, bin_edges)."""
    import numpy as np

    from .creation import from_numpy, linspace

    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"histogramdd: expected a floating-point input; got {str(input.dtype)[6:]}"
        )
    dims = input.shape[-1]
    points = input.detach().reshape(-1, dims).numpy()
    dtype = points.dtype
    if isinstance(bins, (list, tuple)) and bins and hasattr(bins[0], "numpy"):
        np_bins = [b.detach().numpy() for b in bins]
    else:
        counts = [bins] * dims if isinstance(bins, int) else list(bins)
        flat = None if range is None else [float(v) for v in range]
        np_bins = []
        for d, count in enumerate(counts):
            if flat is not None:
                lo, hi = flat[2 * d], flat[2 * d + 1]
            elif points.shape[0]:
                lo, hi = float(points[:, d].min()), float(points[:, d].max())
            else:
                lo, hi = 0.0, 1.0
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            # the edges in input's dtype, spaced as linspace spaces them (torch's edges)
            np_bins.append(linspace(lo, hi, count + 1, dtype=input.dtype).numpy())
    w = None if weight is None else weight.detach().reshape(-1).numpy()
    hist, edges = np.histogramdd(points, bins=np_bins, weights=w, density=density)
    hist = from_numpy(np.ascontiguousarray(hist.astype(dtype)))
    edges = tuple(from_numpy(np.ascontiguousarray(e.astype(dtype))) for e in edges)
    return return_types.histogramdd((hist, edges))


_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "max": float("-inf"), "min": float("inf")}


def segment_reduce(
    data,
    reduce,
    *,
    lengths=None,
    indices=None,
    offsets=None,
    axis=0,
    unsafe=False,
    initial=None,
):
    """segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
    unsafe=False, initial=None) -> Tensor

    Reduces consecutive segments of data along axis ('sum', 'mean', 'max', 'min' or 'prod'),
    the segments given by 1-D lengths or offsets; an empty segment gives initial (else the
    reduction's identity, nan for mean). Differentiable."""
    from .. import stack
    from .creation import full

    if reduce not in _EMPTY:
        raise RuntimeError(
            "segment_reduce: expected reduce to be one of sum, mean, max, min, prod; "
            f"got {reduce!r}"
        )
    if indices is not None:
        raise NotImplementedError("segment_reduce: indices= is not supported (as torch's)")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce: expected lengths or offsets to be given")
    if lengths is not None:
        if lengths.dim() != 1:
            raise NotImplementedError("segment_reduce: only 1-D lengths are supported")
        sizes = [int(v) for v in lengths.tolist()]
    else:
        if offsets.dim() != 1:
            raise NotImplementedError("segment_reduce: only 1-D offsets are supported")
        o = [int(v) for v in offsets.tolist()]
        sizes = [b - a for a, b in zip(o, o[1:])]
    axis = axis % data.dim()
    if not unsafe and sum(sizes) != data.shape[axis]:
        raise RuntimeError(
            f"segment_reduce: expected the segment lengths to sum to {data.shape[axis]}; "
            f"got {sum(sizes)}"
        )
    rest = list(data.shape[:axis]) + list(data.shape[axis + 1 :])
    empty = _EMPTY[reduce] if initial is None else float(initial)
    parts, start = [], 0
    for size in sizes:
        seg = data.narrow(axis, start, size)
        start += size
        if size == 0:
            parts.append(full(rest, empty, dtype=data.dtype))
            continue
        if reduce == "sum":
            r = seg.sum(axis)
        elif reduce == "mean":
            r = seg.mean(axis)
        elif reduce == "prod":
            r = seg.prod(axis)
        else:
            r = seg.amax(axis) if reduce == "max" else seg.amin(axis)
        if initial is not None:  # initial joins each segment (mean: (sum + initial) / size)
            r = (
                r + float(initial) / size
                if reduce == "mean"
                else _combine(reduce, r, float(initial))
            )
        parts.append(r)
    return stack(parts, axis)


def _combine(reduce, r, initial):
    if reduce == "sum":
        return r + initial
    if reduce == "prod":
        return r * initial
    return r.clamp(min=initial) if reduce == "max" else r.clamp(max=initial)


def _removed(name, advice):
    def fn(*args, **kwargs):
        raise RuntimeError(
            f"This function was deprecated since version 1.9 and is now removed. {advice}"
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"{name}(*args, **kwargs)\n\nRemoved from torch in 1.9; raises RuntimeError. {advice}"
    )
    return fn


solve = _removed(
    "solve",
    "Use `torch.linalg.solve(A, B)` (note the reversed arguments; `torch.lu` with "
    "`torch.lu_solve` or `torch.lu_unpack` gives the LU factorization): "
    "X = torch.solve(B, A).solution becomes X = torch.linalg.solve(A, B)",
)
lstsq = _removed(
    "lstsq",
    "Use `torch.linalg.lstsq(A, B)` (reversed arguments; it returns no QR decomposition, see "
    "`torch.linalg.qr`, and the residuals are in its 'residuals' field): "
    "X = torch.lstsq(B, A).solution[:A.size(1)] becomes X = torch.linalg.lstsq(A, B).solution",
)
eig = _removed(
    "eig",
    "Use `torch.linalg.eig` or `torch.linalg.eigvals`, which return complex tensors (cfloat or "
    "cdouble): L, _ = torch.eig(A) becomes L = torch.linalg.eigvals(A), and "
    "L, V = torch.eig(A, eigenvectors=True) becomes L, V = torch.linalg.eig(A)",
)
symeig = _removed(
    "symeig",
    "Use `torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')` for the eigenvalues and "
    "`torch.linalg.eigh(A, UPLO=...)` for both (the default triangle is now the lower one)",
)
matrix_rank = _removed(
    "matrix_rank",
    "Use `torch.linalg.matrix_rank` (its `symmetric` parameter is named `hermitian`).",
)
