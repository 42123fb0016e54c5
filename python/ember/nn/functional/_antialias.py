"""interpolate(..., antialias=True) for 'bilinear' and 'bicubic': PIL-style resampling, as torch's.

Each output pixel averages the input pixels under a filter (a triangle for bilinear, Keys' cubic
with a = -0.5 for bicubic) stretched by the downscaling factor, so that shrinking an image
low-pass filters it instead of skipping pixels; upscaling uses the plain filter width. The
resampling is separable: one (out x in) weight matrix per spatial axis, applied as two matmuls
(autograd differentiates them as usual)."""

import math

from ..._ops.creation import tensor

__all__ = ["antialias_resize"]


def _triangle(x):
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


def _cubic(x, a=-0.5):
    x = abs(x)
    if x < 1.0:
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    if x < 2.0:
        return (((x - 5.0) * x + 8.0) * x - 4.0) * a
    return 0.0


def _source_scale(in_size, out_size, align_corners, scale_factor):
    """Input pixels per output pixel, as torch's resize kernels compute it."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return in_size / out_size


def _weights(in_size, out_size, align_corners, scale_factor, bicubic):
    scale = _source_scale(in_size, out_size, align_corners, scale_factor)
    half = 2.0 if bicubic else 1.0  # half the filter's support at scale 1
    filt = _cubic if bicubic else _triangle
    support = half * scale if scale >= 1.0 else half
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    rows = []
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        w = [filt((j + lo - center + 0.5) * inv) for j in range(hi - lo)]
        total = math.fsum(w)
        row = [0.0] * in_size
        for j, v in enumerate(w):
            row[lo + j] = v / total if total != 0.0 else v
        rows.append(row)
    return rows


def antialias_resize(input, output_size, scales, align_corners, mode):
    """The resized 4-D input (N, C, H, W) -> (N, C, *output_size)."""
    if input.dim() != 4:
        raise ValueError(
            "Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D "
            "tensor as input"
        )
    bicubic = mode == "bicubic"
    (in_h, in_w), (out_h, out_w) = input.shape[2:], output_size
    dtype = input.dtype if input.is_floating_point() else None
    wh = tensor(_weights(in_h, out_h, align_corners, scales[0], bicubic), dtype=dtype)
    ww = tensor(_weights(in_w, out_w, align_corners, scales[1], bicubic), dtype=dtype)
    return wh @ input @ ww.T
