"""ember.signal.windows: the window functions of torch.signal.windows (SciPy's definitions).

Every window takes its length M and keyword-only sym (True: symmetric, for filter design;
False: periodic, one sample of the M+1 symmetric window dropped, for spectral analysis), dtype,
layout, device and requires_grad. The values are computed in float64 and rounded once to the
requested dtype."""

import math

from ... import _C
from ..._ops.creation import arange, ones, tensor, zeros_like
from ..._process import strided

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _check(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout != strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = dtype or _C.get_default_dtype()
    if dtype not in (_C.float32, _C.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _window(name, M, sym, dtype, layout, requires_grad, values):
    """Builds a window from `values(n, L)`: float64 sample positions n = 0..L-1 of a symmetric
    window of length L (M, or M + 1 when periodic), trimmed back to M samples."""
    dtype = _check(name, M, dtype, layout)
    if M == 0:
        out = tensor([], dtype=dtype)
    elif M == 1:
        out = ones(1, dtype=dtype)
    else:
        L = M if sym else M + 1
        out = values(arange(L, dtype=_C.float64), L)[:M].to(dtype)
    return out.requires_grad_(requires_grad) if requires_grad else out


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_cosine(M, *, a, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    A sum of cosines: w[n] = sum_k (-1)^k a[k] cos(2 pi k n / (M - 1)) for the symmetric window."""
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def values(n, L):
        x = n * (2 * math.pi / (L - 1))
        out = zeros_like(n)
        for k, coef in enumerate(a):
            out = out + ((-1) ** k * coef) * _C.cos(x * k)
        return out

    return _window("general_cosine", M, sym, dtype, layout, requires_grad, values)


def general_hamming(
    M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False
):
    """general_hamming(M, *, alpha=0.54, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The generalized Hamming window: alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(
        M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad
    )


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """hann(M, *, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The Hann window: 0.5 - 0.5 cos(2 pi n / (M - 1))."""
    return general_hamming(
        M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad
    )


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """hamming(M, *, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The Hamming window: 0.54 - 0.46 cos(2 pi n / (M - 1))."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """blackman(M, *, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The Blackman window: a general cosine window with coefficients (0.42, 0.5, 0.08)."""
    return general_cosine(
        M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad
    )


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """nuttall(M, *, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The minimum 4-term Blackman-Harris window of Nuttall."""
    a = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
    return general_cosine(M, a=a, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """bartlett(M, *, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The Bartlett (triangular, zero at both ends) window: 1 - |2 n / (M - 1) - 1|."""

    def values(n, L):
        return 1.0 - (n * (2.0 / (L - 1)) - 1.0).abs()

    return _window("bartlett", M, sym, dtype, layout, requires_grad, values)


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """cosine(M, *, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The cosine (sine) window: sin(pi (n + 0.5) / M)."""

    def values(n, L):
        return _C.sin((n + 0.5) * (math.pi / L))

    return _window("cosine", M, sym, dtype, layout, requires_grad, values)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """gaussian(M, *, std=1.0, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The Gaussian window: exp(-((n - (M - 1) / 2) / std)^2 / 2)."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def values(n, L):
        return _C.exp(-(((n - (L - 1) / 2.0) / std) ** 2) / 2.0)

    return _window("gaussian", M, sym, dtype, layout, requires_grad, values)


def exponential(
    M,
    *,
    center=None,
    tau=1.0,
    sym=True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad=False,
):
    """exponential(M, *, center=None, tau=1.0, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The exponential (Poisson) window: exp(-|n - center| / tau), centred by default."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def values(n, L):
        c = (L - 1) / 2.0 if center is None else center
        return _C.exp(-(n - c).abs() / tau)

    return _window("exponential", M, sym, dtype, layout, requires_grad, values)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """kaiser(M, *, beta=12.0, sym=True, dtype=None,
        layout=torch.strided, device=None, requires_grad=False) -> Tensor

    The Kaiser window: I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (M - 1) / 2."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def values(n, L):
        alpha = (L - 1) / 2.0
        r = ((n - alpha) / alpha).clamp(-1.0, 1.0)
        return _C.i0(beta * _C.sqrt(1.0 - r * r)) / _i0(beta)

    return _window("kaiser", M, sym, dtype, layout, requires_grad, values)


def _i0(x):
    """The modified Bessel function of order 0 of a Python float (power series)."""
    term, total, k = 1.0, 1.0, 1
    while term > 1e-17 * total:
        term *= (x / (2.0 * k)) ** 2
        total += term
        k += 1
    return total
