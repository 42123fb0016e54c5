"""Short-time Fourier transforms (torch.stft, torch.istft) composed from ember.fft: frames are an
unfold view of the (padded) signal, each windowed and transformed along the last dim; istft
inverts each frame, windows it again and overlap-adds with col2im (nn.functional.fold), dividing
by the summed squared window. Gradients follow from the ops they are made of."""

import builtins

from .. import _C
from .._autocast_policy import fp32 as _autocast_fp32
from .complex import complex as _complex
from .creation import ones, zeros

__all__ = ["stft", "istft"]


def _window(window, win_length, n_fft, dtype):
    if window is None:
        w = ones(win_length, dtype=dtype)
    else:
        if window.dim() != 1 or window.shape[0] != win_length:
            raise RuntimeError(
                f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but "
                f"got window with size {list(window.shape)}"
            )
        w = window
    if win_length < n_fft:  # centered in a frame of n_fft
        left = (n_fft - win_length) // 2
        w = _C.cat(
            [
                zeros(left, dtype=w.dtype),
                w,
                zeros(n_fft - win_length - left, dtype=w.dtype),
            ]
        )
    return w


@_autocast_fp32
def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
):
    """stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
        pad_mode='reflect', normalized=False, onesided=None, return_complex=None) -> Tensor

    The short-time Fourier transform of a 1-d signal or a batch of them (B, L): frames of n_fft
    samples every hop_length, multiplied by window, transformed; the result is
    (B?, n_fft // 2 + 1 or n_fft, n_frames), complex (return_complex=True) or its real view."""
    from .. import fft
    from ..nn import functional as F

    if return_complex is None:
        if not input.dtype.is_complex and not (window is not None and window.dtype.is_complex):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not 0 < win_length <= n_fft:
        raise RuntimeError(
            f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}"
        )
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        x = F.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"stft: expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
    real_dtype = (
        x.dtype
        if not x.dtype.is_complex
        else (_C.float64 if x.dtype == _C.complex128 else _C.float32)
    )
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        x = x.to(_C.get_default_dtype())
        real_dtype = x.dtype
    w = _window(window, win_length, n_fft, real_dtype)
    frames = x.unfold(-1, n_fft, hop_length) * w  # (B, n_frames, n_fft)
    complex_input = frames.dtype.is_complex
    if onesided is None:
        onesided = not complex_input
    if onesided and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = fft.rfft(frames, dim=-1, norm=norm) if onesided else fft.fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    if not batched:
        spec = spec.squeeze(0)
    if not return_complex:
        return _C.view_as_real(spec.contiguous())
    return spec


def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
        normalized=False, onesided=None, length=None, return_complex=False) -> Tensor

    The inverse of stft: each frame inverted, windowed and overlap-added, divided by the summed
    squared window (which must not vanish inside the signal)."""
    from .. import fft
    from ..nn import functional as F

    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)  # (B, freq, frames)
    n_frames = spec.shape[-1]
    if onesided is None:
        onesided = spec.shape[-2] != n_fft
    real_dtype = _C.float64 if spec.dtype == _C.complex128 else _C.float32
    w = _window(window, win_length, n_fft, real_dtype)
    norm = "ortho" if normalized else "backward"
    frames_spec = spec.transpose(-1, -2)  # (B, frames, freq)
    if onesided:
        frames = fft.irfft(frames_spec, n=n_fft, dim=-1, norm=norm)
    else:
        frames = fft.ifft(frames_spec, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            frames = frames.real
    frames = frames * w
    total = n_fft + hop_length * (n_frames - 1)
    B = frames.shape[0]

    def overlap_add(f):
        cols = f.transpose(1, 2).contiguous()  # (B, n_fft, frames)
        out = F.fold(cols, output_size=(1, total), kernel_size=(1, n_fft), stride=(1, hop_length))
        return out.reshape(f.shape[0], total)

    if frames.dtype.is_complex:
        y = _complex(overlap_add(frames.real.contiguous()), overlap_add(frames.imag.contiguous()))
    else:
        y = overlap_add(frames)
    env = overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - (n_fft // 2 if center else 0)
    y = y[:, start : builtins.min(end, total)]
    env = env[:, start : builtins.min(end, total)]
    if builtins.bool((env.abs() < 1e-11).any()):
        raise RuntimeError(
            "istft: window overlap add min: the window envelope vanishes (nonzero overlap-add "
            "constraint failed)"
        )
    y = y / env
    if length is not None and y.shape[-1] < length:
        pad_n = length - y.shape[-1]
        y = _C.cat([y, zeros(B, pad_n, dtype=y.dtype)], -1) if not y.dtype.is_complex else y
    return y if batched else y.squeeze(0)
