"""interpolate(...) of uint8 images in 'bilinear' and 'bicubic' modes, antialias or not: the
fixed-point separable resampling of torch's CPU uint8 kernel, reproduced bit for bit.

Each axis gets filter weights in float64 (a triangle, or Keys' cubic with a = -0.5 under
antialias and -0.75 without): under antialias PIL's window, stretched by the downscaling factor
and normalized per output pixel; without it the interpolating filter at the source position,
the taps past a border folded onto the border pixel. They are scaled to int16 at the largest
precision whose biggest weight still fits 15 bits. The width pass runs first and rounds into
uint8, then the height pass: sum(pixel * weight) + half, shifted right by the precision,
clamped to [0, 255]. An axis whose size does not change is not resampled (torch skips it,
whatever the scale)."""

import math
import struct

from ..._C import int64, uint8
from ..._ops.creation import tensor
from ._antialias import _source_scale

__all__ = ["uint8_resize"]


def _filter(bicubic, a):
    if not bicubic:
        return lambda x: 1.0 - abs(x) if abs(x) < 1.0 else 0.0

    def cubic(x):  # Keys' cubic convolution, evaluated in torch's operation order
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0

    return cubic


def _float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _weights_aa(in_size, out_size, scale, interp, filt):
    """PIL's filter window: stretched by the downscaling factor, normalized to sum 1."""
    support = interp * 0.5 * scale if scale >= 1.0 else interp * 0.5
    max_size = math.ceil(support) * 2 + 1
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    rows, wt_max = [], 0.0
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        size = min(max(min(int(center + support + 0.5), in_size) - lo, 0), max_size)
        w = [filt((j + lo - center + 0.5) * inv) for j in range(size)]
        total = 0.0
        for v in w:
            total += v
        if total != 0.0:
            w = [v / total for v in w]
            wt_max = max([wt_max, *w])
        rows.append((lo, w))
    return rows, wt_max


def _weights_plain(in_size, out_size, scale, interp, filt, align_corners):
    """The interpolating filter at the source position, taps past a border folded onto it."""
    rows, wt_max = [], 0.0
    support = interp // 2
    for i in range(out_size):
        if align_corners:
            real = scale * i
        else:
            real = scale * (i + 0.5) - 0.5
            real = 0.0 if interp == 2 and real < 0 else real
        index = min(math.floor(_float32(real)), in_size - 1)  # torch floors a float here
        lam = min(max(real - index, 0.0), 1.0)
        lo_unbound = index - support + 1
        lo = max(lo_unbound, 0)
        size = min(max(min(index + support + 1, in_size) - lo, 0), interp)
        w = [0.0] * (interp + 1)
        at = 0
        for j in range(interp):
            w[j] = 0.0
            v = filt(float(j + 1 - support) - lam)
            if lo_unbound + j <= 0:
                at = 0
            elif lo_unbound + j >= in_size - 1:
                at = size - 1
            w[at] += v
            wt_max = max(wt_max, w[at])
            at += 1
        rows.append((lo, w[:size]))
    return rows, wt_max


def _int16_weights(in_size, out_size, align_corners, scale_factor, bicubic, antialias):
    """(first input index, int16 weights) per output pixel, and the weights' precision."""
    scale = _source_scale(in_size, out_size, align_corners, scale_factor)
    interp = 4 if bicubic else 2
    filt = _filter(bicubic, -0.5 if antialias else -0.75)
    if antialias:
        rows, wt_max = _weights_aa(in_size, out_size, scale, interp, filt)
    else:
        rows, wt_max = _weights_plain(in_size, out_size, scale, interp, filt, align_corners)
    precision = 0
    while precision < 22 and int(0.5 + wt_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    one = 1 << precision
    rows = [
        (lo, [int(v * one - 0.5) if v * one < 0 else int(v * one + 0.5) for v in w])
        for lo, w in rows
    ]
    return rows, precision


def _resample(x, dim, rows, precision):
    """One pass along `dim` of the int64 image x, rounded and clamped to uint8 values."""
    k = max(1, max(len(w) for _, w in rows))
    idx = [[lo + j if j < len(w) else 0 for j in range(k)] for lo, w in rows]
    wts = [w + [0] * (k - len(w)) for _, w in rows]
    picked = x.index_select(dim, tensor(idx, dtype=int64).flatten())
    shape = list(x.shape)
    shape[dim : dim + 1] = [len(rows), k]
    picked = picked.reshape(shape)
    w = tensor(wts, dtype=int64).reshape([len(rows), k] + [1] * (x.dim() - dim - 1))
    acc = (picked * w).sum(dim + 1) + (1 << (precision - 1))
    return (acc >> precision).clamp(0, 255)


def uint8_resize(input, output_size, scales, align_corners, bicubic, antialias):
    """The resized uint8 4-D input (N, C, H, W) -> (N, C, *output_size)."""
    x = input.to(int64)
    for dim in (3, 2):  # width first, as torch
        in_size, out_size = input.shape[dim], output_size[dim - 2]
        if in_size == out_size:
            continue
        rows, precision = _int16_weights(
            in_size, out_size, align_corners, scales[dim - 2], bicubic, antialias
        )
        x = _resample(x, dim, rows, precision)
    return x.to(uint8)
