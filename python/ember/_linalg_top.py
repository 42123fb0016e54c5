"""torch's top-level linear-algebra names (det, inverse, svd ...) and the torch.nn.functional
ops torch also exposes at top level, over ember.linalg and ember.nn.functional."""

import ember as E  # the package being initialised; attributes are read at call time
from . import return_types

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
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "max_pool1d",
    "max_pool2d",
    "max_pool1d_with_indices",
    "avg_pool1d",
    "embedding",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "constant_pad_nd",
    "pdist",
    "conv3d",
    "conv_transpose3d",
    "max_pool3d",
    "lu",
    "lu_unpack",
    "lu_solve",
]


def det(input):
    return E.linalg.det(input)


def inverse(input):
    return E.linalg.inv(input)


def slogdet(input):
    return return_types.slogdet(*E.linalg.slogdet(input))


def logdet(input):
    """log(det): NaN for a negative determinant, -inf for a zero one."""
    sign, logabs = E.linalg.slogdet(input)
    nan = E.full([], float("nan"), dtype=logabs.dtype)
    return E.where(
        sign < 0, nan, E.where(sign == 0, E.full([], -float("inf"), dtype=logabs.dtype), logabs)
    )


def cholesky(input, upper=False):
    return E.linalg.cholesky(input, upper=upper)


def cholesky_solve(B, L, upper=False):
    """X with (L L^T) X = B, from the Cholesky factor L (or U = L^T when upper)."""
    low = L.mT if upper else L
    y = E.linalg.solve_triangular(low, B, upper=False)
    return E.linalg.solve_triangular(low.mT, y, upper=True)


def cholesky_inverse(L, upper=False):
    eye = E.eye(L.shape[-1], dtype=L.dtype).expand_as(L)
    return cholesky_solve(eye, L, upper)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    a = A.mT if transpose else A
    x = E.linalg.solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return return_types.triangular_solve(x, A.clone())


def matrix_power(input, n):
    return E.linalg.matrix_power(input, n)


def matrix_exp(input):
    return E.linalg.matrix_exp(input)


def pinverse(input, rcond=1e-15):
    return E.linalg.pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True):
    """torch.svd: returns V (not Vh), reduced unless some=False; zeros for U, V without uv."""
    if not compute_uv:
        m, n, batch = input.shape[-2], input.shape[-1], list(input.shape[:-2])
        S = E.linalg.svdvals(input)
        return return_types.svd(
            E.zeros(batch + [m, m], dtype=S.dtype), S, E.zeros(batch + [n, n], dtype=S.dtype)
        )
    U, S, Vh = E.linalg.svd(input, full_matrices=not some)
    return return_types.svd(U, S, Vh.mT)


def qr(input, some=True):
    return return_types.qr(*E.linalg.qr(input, "reduced" if some else "complete"))


def _F(name):
    def fn(*args, **kwargs):
        return getattr(E.nn.functional, name)(*args, **kwargs)

    fn.__name__ = name
    return fn


conv1d = _F("conv1d")
conv2d = _F("conv2d")
conv_transpose1d = _F("conv_transpose1d")
conv_transpose2d = _F("conv_transpose2d")
max_pool1d = _F("max_pool1d")
max_pool2d = _F("max_pool2d")
max_pool1d_with_indices = _F("max_pool1d_with_indices")
avg_pool1d = _F("avg_pool1d")
pixel_shuffle = _F("pixel_shuffle")
pixel_unshuffle = _F("pixel_unshuffle")
channel_shuffle = _F("channel_shuffle")
rms_norm = _F("rms_norm")
rrelu = _F("rrelu")
rrelu_ = _F("rrelu_")
adaptive_avg_pool1d = _F("adaptive_avg_pool1d")
pdist = _F("pdist")
conv3d = _F("conv3d")
conv_transpose3d = _F("conv_transpose3d")
max_pool3d = _F("max_pool3d")


def lu(A, pivot=True, get_infos=False):
    LU, piv, info = E.linalg.lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    from .linalg._lu import lu_unpack as _unpack

    return _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


def lu_solve(b, LU_data, LU_pivots):
    return E.linalg.lu_solve(LU_data, LU_pivots, b)


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding takes (weight, indices), the reverse of F.embedding."""
    return E.nn.functional.embedding(
        input,
        weight,
        None if padding_idx == -1 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


def adaptive_max_pool1d(input, output_size):
    """Returns (values, indices), as torch's top-level form does."""
    return E.nn.functional.adaptive_max_pool1d(input, output_size, return_indices=True)


def constant_pad_nd(input, pad, value=0):
    return E.nn.functional.pad(input, pad, "constant", value)
