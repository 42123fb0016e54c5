"""Discrete Fourier transforms (torch.fft).

Every transform reduces to the core's complex-to-complex kernel `_fft_c2c` (any length: Stockham
mixed radix, Bluestein for large prime factors; lines spread over the thread pool; see Note [FFT]
in csrc/ember/cpu/fft.cpp) plus views, slices and concatenations, so autograd follows from that
kernel's gradient (the transform of the opposite sign) and the real ops around it:
- rfft: c2c of the input made complex, cut to n // 2 + 1 outputs;
- irfft: the Hermitian spectrum rebuilt from its half, inverse c2c, real part;
- hfft / ihfft: irfft / rfft of the conjugate with the opposite normalization;
- n-dimensional forms: the same over several dims (irfftn runs the other dims first, then the
  one-dimensional c2r over the last).
"""

import builtins

from .. import _C
from .._autocast_policy import fp32 as _autocast_fp32
from .._C import Tensor
from .._ops import complex as _cx
from .._ops.creation import arange as _arange
from .._ops.creation import zeros as _zeros
from .._ops.index import where as _where
from .._type_info import scalar_type_name

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "hfft2",
    "ihfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")


def _dense(x):
    """x, or a row-major copy where a stride is 0 (expanded, or a size-1 dim of an expanded
    tensor, which contiguous() leaves as is): the FFT kernels divide by strides."""
    return x.reshape(-1).clone().reshape(x.shape) if 0 in x.stride() else x


def _norm_code(norm, forward):
    """torch's normalization code for the kernel: 0 none, 1 1/sqrt(n), 2 1/n."""
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if norm == "ortho":
        return 1
    return 0 if (norm == "backward") == forward else 2


def _swap(norm):
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _check_precision(x):
    # torch's CPU FFT (pocketfft) has no half-precision kernels
    if x.dtype in (_C.float16, _C.bfloat16):
        raise RuntimeError(f"Unsupported dtype {scalar_type_name(x.dtype)}")


def _to_complex(x):
    if x.dtype.is_complex:
        return x
    _check_precision(x)
    if x.dtype.is_floating_point:
        return x.to(_C.complex128 if x.dtype == _C.float64 else _C.complex64)
    return x.to(_cx._default_complex())


def _to_real(x, fn):
    if x.dtype.is_complex:
        raise RuntimeError(f"{fn} expects a real input tensor, but got {scalar_type_name(x.dtype)}")
    _check_precision(x)
    if x.dtype.is_floating_point:
        return x
    return x.to(_C.get_default_dtype())


def _wrap(d, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -builtins.max(ndim, 1) <= d < builtins.max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
            f"{d})"
        )
    return d % builtins.max(ndim, 1)


def _resize(x, dim, n, fn):
    """x cut or zero-padded along dim to length n."""
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    size = x.shape[dim]
    if size == n:
        return x
    if size > n:
        return x.narrow(dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n - size
    pad = _zeros(shape, dtype=x.dtype)
    return _C.cat([x, pad], dim) if not x.dtype.is_complex else _cx._cat([x, pad], dim)


def _needs_grad(x):
    return x.requires_grad and _C.is_grad_enabled()


def _c2c(x, dims, norm, forward):
    if not dims:
        return x
    for d in dims:
        if x.shape[d] < 1:
            raise RuntimeError(f"Invalid number of data points ({x.shape[d]}) specified")
    return _C._fft_c2c(_dense(x), list(dims), _norm_code(norm, forward), forward)


def _c2r_last(x, dim, n, norm):
    """The real inverse transform along one dim of a Hermitian half spectrum x (length n // 2 + 1
    after _resize); n the output length."""
    x = _resize(x, dim, n // 2 + 1, "irfft")
    if not _needs_grad(x):
        return _C._fft_c2r(_dense(x), [dim], _norm_code(norm, False), n)
    tail = x.narrow(dim, 1, n - n // 2 - 1)
    full = _cx._cat([x, _cx.conj(_cx._flip(tail, [dim]))], dim) if tail.shape[dim] else x
    return _cx.real(_c2c(full, [dim], norm, False)).contiguous()


@_autocast_fp32
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """fft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor

    The one-dimensional discrete Fourier transform of input along dim (real input is made
    complex); n cuts or zero-pads the signal; norm is "backward" (no scaling), "ortho" or
    "forward" (1/n)."""
    if not input.dtype.is_complex and not _needs_grad(input):
        # a real signal: the real-input kernel, both halves of the spectrum
        x = _to_real(input, "fft")
        dim = _wrap(dim, x.dim())
        if n is not None:
            x = _resize(x, dim, n, "fft")
        if x.shape[dim] < 1:
            raise RuntimeError(f"Invalid number of data points ({x.shape[dim]}) specified")
        return _out(_C._fft_r2c(_dense(x), [dim], _norm_code(norm, True), False), out)
    x = _to_complex(input)
    dim = _wrap(dim, x.dim())
    if n is not None:
        x = _resize(x, dim, n, "fft")
    return _out(_c2c(x, [dim], norm, True), out)


@_autocast_fp32
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """ifft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor

    The one-dimensional inverse discrete Fourier transform along dim; norm "backward" scales
    by 1/n."""
    x = _to_complex(input)
    dim = _wrap(dim, x.dim())
    if n is not None:
        x = _resize(x, dim, n, "ifft")
    return _out(_c2c(x, [dim], norm, False), out)


@_autocast_fp32
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """rfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor

    The Fourier transform of a real signal: the n // 2 + 1 non-negative frequencies of fft."""
    x = _to_real(input, "rfft")
    dim = _wrap(dim, x.dim())
    if n is not None:
        x = _resize(x, dim, n, "rfft")
    m = x.shape[dim]
    if m < 1:
        raise RuntimeError(f"Invalid number of data points ({m}) specified")
    if not _needs_grad(x):
        return _out(_C._fft_r2c(_dense(x), [dim], _norm_code(norm, True), True), out)
    y = _c2c(_to_complex(x), [dim], norm, True)
    return _out(y.narrow(dim, 0, m // 2 + 1), out)


@_autocast_fp32
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """irfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor

    The inverse of rfft: a real signal of length n (default 2 * (input.size(dim) - 1)) from the
    non-negative half of a Hermitian spectrum."""
    x = _to_complex(input)
    dim = _wrap(dim, x.dim())
    n = 2 * (x.shape[dim] - 1) if n is None else n
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return _out(_c2r_last(x, dim, n, norm), out)


@_autocast_fp32
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """hfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor

    The Fourier transform of a signal whose one-sided half is input (Hermitian in time): a real
    spectrum of length n (default 2 * (input.size(dim) - 1))."""
    return irfft(_cx.conj(_to_complex(input)), n, dim, _swap(norm), out=out)


@_autocast_fp32
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """ihfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor

    The inverse of hfft: the n // 2 + 1 non-negative frequencies of the inverse transform of a
    real signal."""
    _to_real(input, "ihfft")
    return _out(_cx.conj(rfft(input, n, dim, _swap(norm))), out)


def _plan(x, s, dim, fn, default_all=True):
    """torch's (s, dim) rules: both lists, s entries of -1 keep that size."""
    nd = x.dim()
    if dim is None:
        if s is None:
            dims = list(range(nd)) if default_all else []
        else:
            dims = list(range(nd - len(s), nd))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap(d, nd) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        s = [x.shape[d] if k == -1 else k for k, d in zip(s, dims)]
    return dims, s


@_autocast_fp32
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """fftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor

    The N-dimensional discrete Fourier transform over dim (every dim by default, or the last
    len(s)); s gives each transformed dim's signal length."""
    x = input if not input.dtype.is_complex and not _needs_grad(input) else _to_complex(input)
    if not x.dtype.is_complex:
        x = _to_real(x, "fftn")
    dims, s = _plan(x, s, dim, "fftn")
    if s is not None:
        for d, k in zip(dims, s):
            x = _resize(x, d, k, "fftn")
    if not x.dtype.is_complex and dims:
        for d in dims:
            if x.shape[d] < 1:
                raise RuntimeError(f"Invalid number of data points ({x.shape[d]}) specified")
        return _out(_C._fft_r2c(_dense(x), dims, _norm_code(norm, True), False), out)
    x = _to_complex(x)
    return _out(_c2c(x, dims, norm, True), out)


@_autocast_fp32
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """ifftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor

    The N-dimensional inverse discrete Fourier transform over dim."""
    x = _to_complex(input)
    dims, s = _plan(x, s, dim, "ifftn")
    if s is not None:
        for d, k in zip(dims, s):
            x = _resize(x, d, k, "ifftn")
    return _out(_c2c(x, dims, norm, False), out)


@_autocast_fp32
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """rfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor

    The N-dimensional transform of a real signal: the last transformed dim keeps its
    n // 2 + 1 non-negative frequencies."""
    x = _to_real(input, "rfftn")
    dims, s = _plan(x, s, dim, "rfftn")
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    if s is not None:
        for d, k in zip(dims, s):
            x = _resize(x, d, k, "rfftn")
    last = dims[-1]
    m = x.shape[last]
    if not _needs_grad(x):
        for d in dims:
            if x.shape[d] < 1:
                raise RuntimeError(f"Invalid number of data points ({x.shape[d]}) specified")
        return _out(_C._fft_r2c(_dense(x), dims, _norm_code(norm, True), True), out)
    y = _c2c(_to_complex(x), dims, norm, True)
    return _out(y.narrow(last, 0, m // 2 + 1), out)


@_autocast_fp32
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """irfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor

    The inverse of rfftn: a real signal from the half spectrum over dim; the last dim's output
    length is s[-1] (default 2 * (input.size(dim[-1]) - 1))."""
    x = _to_complex(input)
    s_in = None if s is None else list(s)
    dims, s = _plan(x, s, dim, "irfftn")
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    last = dims[-1]
    default_last = 2 * (x.shape[last] - 1)
    if s is None:
        s = [x.shape[d] for d in dims[:-1]] + [default_last]
    elif s_in[-1] == -1:
        s[-1] = default_last
    for d, k in zip(dims[:-1], s[:-1]):
        x = _resize(x, d, k, "irfftn")
    if not _needs_grad(x) and s[-1] >= 1:
        x = _resize(x, last, s[-1] // 2 + 1, "irfftn")
        return _out(_C._fft_c2r(_dense(x), dims, _norm_code(norm, False), s[-1]), out)
    x = _c2c(x, dims[:-1], norm, False) if len(dims) > 1 else x
    n = s[-1]
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    # the other dims are already scaled by their own share of the normalization
    return _out(_c2r_last(x, last, n, norm), out)


@_autocast_fp32
def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """hfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor

    The N-dimensional hfft: irfftn of the conjugate with the opposite normalization."""
    return irfftn(_cx.conj(_to_complex(input)), s, dim, _swap(norm), out=out)


@_autocast_fp32
def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """ihfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor

    The N-dimensional ihfft: the conjugate of rfftn with the opposite normalization."""
    _to_real(input, "ihfftn")
    return _out(_cx.conj(rfftn(input, s, dim, _swap(norm))), out)


@_autocast_fp32
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor

    The two-dimensional discrete Fourier transform (fftn over the last two dims)."""
    return fftn(input, s, dim, norm, out=out)


@_autocast_fp32
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor

    The two-dimensional inverse discrete Fourier transform."""
    return ifftn(input, s, dim, norm, out=out)


@_autocast_fp32
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor

    The two-dimensional transform of a real signal (rfftn over the last two dims)."""
    return rfftn(input, s, dim, norm, out=out)


@_autocast_fp32
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor

    The inverse of rfft2."""
    return irfftn(input, s, dim, norm, out=out)


@_autocast_fp32
def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor

    The two-dimensional hfft."""
    return hfftn(input, s, dim, norm, out=out)


@_autocast_fp32
def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor

    The two-dimensional ihfft."""
    return ihfftn(input, s, dim, norm, out=out)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """fftfreq(n, d=1.0, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    The sample frequencies of an fft of length n with sample spacing d:
    [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n)."""
    dtype = dtype or _C.get_default_dtype()
    idx = _arange(n, dtype=_C.int64)
    idx = _where(idx < (n + 1) // 2, idx, idx - n)
    result = (idx.to(dtype) / (d * n)).to(dtype)
    if requires_grad:
        result.requires_grad_(True)
    return _out(result, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False) -> Tensor

    The sample frequencies of an rfft of length n: [0, 1, ..., n // 2] / (d * n)."""
    dtype = dtype or _C.get_default_dtype()
    half = n // 2 if n >= 0 else -(-n // 2)  # C's division, as torch's: rfftfreq(-1) has 1
    result = (_arange(half + 1, dtype=_C.int64).to(dtype) / (d * n)).to(dtype)
    if requires_grad:
        result.requires_grad_(True)
    return _out(result, out)


def _shift(input, dim, sign):
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:  # torch rolls by an empty list of shifts, which it refuses
        raise RuntimeError("`shifts` required")
    dims = [_wrap(d, input.dim()) for d in dims]
    shifts = [sign * (input.shape[d] // 2) for d in dims]
    if input.dtype.is_complex:
        return _cx._roll(input, shifts, dims)
    return _C.roll(input, shifts, dims)


def fftshift(input, dim=None):
    """fftshift(input, dim=None) -> Tensor

    Moves the zero frequency to the center: a roll by size // 2 along dim (every dim by
    default)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """ifftshift(input, dim=None) -> Tensor

    The inverse of fftshift: a roll by -(size // 2) along dim."""
    return _shift(input, dim, -1)


def _out(result, out):
    if out is None:
        return result
    if isinstance(out, Tensor):
        out.resize_(result.shape) if tuple(out.shape) != tuple(result.shape) else None
        return out.copy_(result)
    return result
