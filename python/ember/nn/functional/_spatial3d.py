"""3-D convolution and pooling composed from strided views, pad and matmul: what nn.Conv3d,
ConvTranspose3d, MaxPool3d, AvgPool3d and the adaptive 3-D pools call. float32 and float64
conv3d (so ConvTranspose3d's too) run on the 3-d kernels of `_C._nn.conv3d` instead.

Each window offset (a, b, c) of the kernel is one strided view of the padded input; stacking the
K = kD*kH*kW views gives the im2col matrix, so one matmul (convolution) or one reduction over K
(pooling) computes the op, and autograd differentiates the views, pad and matmul."""

import math

from ... import _C
from ..._autocast_policy import fp32 as _autocast_fp32
from ..._autocast_policy import lower_precision as _autocast_lower
from ..._C import _nn, cat, float32, float64, int64, matmul, stack
from ..._ops.creation import arange, empty, ones, zeros
from ..._process import channels_last_3d as _channels_last_3d
from ..._type_info import scalar_type_name
from ._activation import _float_kernel
from ._complex_conv import with_complex_path
from ._spatial import pad

__all__ = [
    "conv3d",
    "conv_transpose3d",
    "max_pool3d",
    "max_pool3d_with_indices",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
]


def _triple(v, name="kernel_size"):
    if isinstance(v, int):
        return (v, v, v)
    v = tuple(v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise RuntimeError(f"{name} must be an int or a tuple of three ints; got {v}")
    return v


def _batched(input, op):
    if input.dim() == 4:
        return input.unsqueeze(0), True
    if input.dim() != 5:
        raise RuntimeError(
            f"{op}: Expected 4D (unbatched) or 5D (batched) input, but got input of "
            f"size: {list(input.shape)}"
        )
    return input, False


def _windows(x, kernel, stride, dilation, out):
    """The K strided views of x (N, C, D, H, W), stacked at dim 2: (N, C, K, Do, Ho, Wo)."""
    views = []
    for a in range(kernel[0]):
        for b in range(kernel[1]):
            for c in range(kernel[2]):
                start = (a * dilation[0], b * dilation[1], c * dilation[2])
                views.append(
                    x[
                        :,
                        :,
                        start[0] : start[0] + stride[0] * (out[0] - 1) + 1 : stride[0],
                        start[1] : start[1] + stride[1] * (out[1] - 1) + 1 : stride[1],
                        start[2] : start[2] + stride[2] * (out[2] - 1) + 1 : stride[2],
                    ]
                )
    return stack(views, 2)


def _pad3(x, pads, value=0.0):
    # pads: ((front, back), (top, bottom), (left, right)) in D, H, W order.
    flat = [pads[2][0], pads[2][1], pads[1][0], pads[1][1], pads[0][0], pads[0][1]]
    if not any(flat):
        return x
    return pad(x, flat, value=value)


@_autocast_lower
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor

    3-d convolution over (N, C, D, H, W) or (C, D, H, W) input."""
    x, unbatched = _batched(input, "conv3d")
    stride, dilation = _triple(stride, "stride"), _triple(dilation, "dilation")
    kernel = tuple(weight.shape[2:])
    if weight.dim() != 5:
        raise RuntimeError(f"conv3d: expected a 5-D weight; got {list(weight.shape)}")
    n, c = x.shape[0], x.shape[1]
    o = weight.shape[0]
    if groups > 0 and o % groups:  # torch prints this size in double brackets
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )
    if c != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {weight.shape[1] * groups} channels, but "
            f"got {c} channels instead"
        )
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * 3
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pads = tuple((t // 2, t - t // 2) for t in total)
        else:
            raise ValueError(
                f"Invalid padding string '{padding}', should be one of ['valid', 'same']"
            )
    else:
        pads = tuple((p, p) for p in _triple(padding, "padding"))
    if x.dtype in (float32, float64) and weight.dtype == x.dtype:
        # the 3-d kernels (Note [conv3d] in cpu/conv3d.cpp) take symmetric padding: an odd
        # "same" total pads its extra element on the far side first
        extra = [back - front for front, back in pads]
        if any(extra):
            x = _pad3(x, tuple((0, e) for e in extra))
        front = [p for p, _ in pads]
        y = _nn.conv3d(x, weight, bias, list(stride), front, list(dilation), groups)
        if x.dtype == float64:  # torch's float64 conv3d (slow_conv3d) gives contiguous results
            y = y.contiguous()
        return y.squeeze(0) if unbatched else y
    keep_cl = _channels_last_3d in (_suggest(x), _suggest(weight))  # torch's conv3d keeps NDHWC
    xp = _pad3(x, pads)
    out = tuple(
        (xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(3)
    )
    if min(out) <= 0:
        raise RuntimeError(
            f"conv3d: the padded input {list(xp.shape[2:])} is smaller than the dilated kernel"
        )
    k = math.prod(kernel)
    cols = _windows(xp, kernel, stride, dilation, out)  # (N, C, K, Do, Ho, Wo)
    cols = cols.reshape(n, groups, (c // groups) * k, math.prod(out))
    w = weight.reshape(groups, o // groups, (c // groups) * k)
    y = matmul(w, cols).reshape(n, o, *out)
    if keep_cl:
        y = y.contiguous(memory_format=_channels_last_3d)
    if bias is not None:
        y = y + bias.reshape(1, o, 1, 1, 1)
    return y.squeeze(0) if unbatched else y


def _suggest(t):
    """The memory format t's strides follow (channels_last_3d or contiguous_format for 5-d)."""
    return _channels_last_3d if _C._suggest_memory_format(t) == 2 else None


@_autocast_lower
def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
        dilation=1) -> Tensor

    The adjoint of conv3d: zeros between the input's elements, then a stride-1 convolution
    with the spatially flipped, in/out-swapped kernel."""
    x, unbatched = _batched(input, "conv_transpose3d")
    stride, dilation = _triple(stride, "stride"), _triple(dilation, "dilation")
    padding, output_padding = _triple(padding, "padding"), _triple(output_padding, "output_padding")
    n, c = x.shape[0], x.shape[1]
    kernel = tuple(weight.shape[2:])
    if c != weight.shape[0]:
        raise RuntimeError(
            f"conv_transpose3d: expected input with {weight.shape[0]} channels; got {c}"
        )
    size = [(x.shape[2 + i] - 1) * stride[i] + 1 for i in range(3)]
    if stride != (1, 1, 1):
        spread = zeros(n, c, *size, dtype=x.dtype)
        spread[:, :, :: stride[0], :: stride[1], :: stride[2]] = x
        x = spread
    edge = [dilation[i] * (kernel[i] - 1) - padding[i] for i in range(3)]
    pads = tuple((max(edge[i], 0), max(edge[i], 0) + output_padding[i]) for i in range(3))
    x = _pad3(x, pads)
    crop = [max(-e, 0) for e in edge]
    if any(crop):
        x = x[
            :,
            :,
            crop[0] : x.shape[2] - crop[0],
            crop[1] : x.shape[3] - crop[1],
            crop[2] : x.shape[4] - crop[2],
        ]
    cin_g, cout_g = c // groups, weight.shape[1]
    w = weight.reshape(groups, cin_g, cout_g, *kernel).transpose(1, 2)
    w = w.reshape(groups * cout_g, cin_g, *kernel).flip([2, 3, 4])
    y = conv3d(x, w, bias, 1, 0, dilation, groups)
    return y.squeeze(0) if unbatched else y


def _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode, op):
    kernel = _triple(kernel_size)
    stride = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _triple(stride, "stride")
    )
    padding, dilation = _triple(padding, "padding"), _triple(dilation, "dilation")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"{op}: pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation=1"
            )
    out = []
    for i in range(3):
        size = x.shape[2 + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1
        o = (size + (stride[i] - 1 if ceil_mode else 0)) // stride[i] + 1
        # A last window that would start in the right padding is dropped, as torch does.
        if ceil_mode and (o - 1) * stride[i] >= x.shape[2 + i] + padding[i]:
            o -= 1
        out.append(o)
    if min(out) <= 0:
        raise RuntimeError(
            f"{op}: Given input size {list(x.shape[1:])}, the calculated output size "
            f"{[x.shape[1]] + out} is too small"
        )
    return kernel, stride, padding, dilation, tuple(out)


def _pool_pad(x, kernel, stride, padding, dilation, out, value):
    # Pad left by `padding`, right by enough for the last window (ceil_mode may need more).
    need = [(out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 for i in range(3)]
    pads = tuple((padding[i], max(need[i] - x.shape[2 + i] - padding[i], 0)) for i in range(3))
    return _pad3(x, pads, value)


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    """max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
        ceil_mode=False, return_indices=False)

    max_pool3d returning (values, flat indices within each D * H * W volume)."""
    x, unbatched = _batched(input, "max_pool3d")
    kernel, stride, padding, dilation, out = _pool_geometry(
        x, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d"
    )
    xp = _pool_pad(x, kernel, stride, padding, dilation, out, float("-inf"))
    cols = _windows(xp, kernel, stride, dilation, out)  # (N, C, K, Do, Ho, Wo)
    values, k_idx = cols.max(2)
    # The window offset picked, turned into the flat index of that element in the input.
    pos = []
    for i in range(3):
        start = arange(out[i]) * stride[i] - padding[i]
        offs = arange(kernel[i]) * dilation[i]
        pos.append(start.reshape(1, -1) + offs.reshape(-1, 1))  # (k_i, out_i)
    kd, kh, kw = kernel
    a, rem = k_idx // (kh * kw), k_idx % (kh * kw)
    b, c = rem // kw, rem % kw
    grid = [arange(o) for o in out]
    d = pos[0][a, grid[0].reshape(-1, 1, 1)]
    h = pos[1][b, grid[1].reshape(1, -1, 1)]
    w = pos[2][c, grid[2].reshape(1, 1, -1)]
    idx = (d * x.shape[3] + h) * x.shape[4] + w
    if unbatched:
        values, idx = values.squeeze(0), idx.squeeze(0)
    return values, idx


@_autocast_fp32
def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
        return_indices=False)

    3-d max pooling over (N, C, D, H, W) or (C, D, H, W) input; return_indices=True also returns
    the argmax positions."""
    values, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (values, idx) if return_indices else values


@_autocast_fp32
def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
        count_include_pad=True, divisor_override=None) -> Tensor

    3-d average pooling over (N, C, D, H, W) or (C, D, H, W) input."""
    x, unbatched = _batched(input, "avg_pool3d")
    kernel, stride, padding, _, out = _pool_geometry(
        x, kernel_size, stride, padding, 1, ceil_mode, "avg_pool3d"
    )
    # torch's CPU kernel: float32, float64 and int64 (whose averages truncate), even when empty
    if x.dtype not in (float32, float64, int64):
        raise NotImplementedError(
            f"\"avg_pool3d_out_frame\" not implemented for '{scalar_type_name(x.dtype)}'"
        )
    ones3 = (1, 1, 1)
    sums = _windows(
        _pool_pad(x, kernel, stride, padding, ones3, out, 0.0), kernel, stride, ones3, out
    ).sum(2)
    if divisor_override is not None:
        counts = divisor_override
    else:
        # Window sizes: clipped to input + padding (count_include_pad) or to the input alone.
        one = ones(1, 1, *x.shape[2:], dtype=x.dtype)
        if count_include_pad:
            one = _pad3(one, tuple((p, p) for p in padding), 1.0)
            counts = _windows(
                _pool_pad(one, kernel, stride, (0, 0, 0), ones3, out, 0.0),
                kernel,
                stride,
                ones3,
                out,
            ).sum(2)
        else:
            counts = _windows(
                _pool_pad(one, kernel, stride, padding, ones3, out, 0.0), kernel, stride, ones3, out
            ).sum(2)
    y = sums.div(counts, rounding_mode="trunc") if x.dtype == int64 else sums / counts
    return y.squeeze(0) if unbatched else y


def _adaptive_ranges(size, out):
    return [(i * size // out, -((-(i + 1) * size) // out)) for i in range(out)]


@_autocast_fp32
def adaptive_avg_pool3d(input, output_size):
    """adaptive_avg_pool3d(input, output_size)

    Adaptive 3-d average pooling to output_size (None keeps an input size)."""
    sizes = _triple(output_size, "output_size")
    if any(s is not None and s < 0 for s in sizes):
        raise RuntimeError(
            "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{', '.join(str(s) for s in sizes)}}}"
        )
    x, unbatched = _batched(input, "adaptive_avg_pool3d")
    out = [x.shape[2 + i] if s is None else s for i, s in enumerate(sizes)]
    if out != [1, 1, 1]:  # all-ones sizes are torch's mean (its dtype rule, its empty input)
        if 0 in input.shape[1:]:
            raise RuntimeError(
                "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension "
                f"{1 + list(input.shape[1:]).index(0)} being empty"
            )
        empty(*x.shape[:2], *out, dtype=x.dtype)  # an output past memory fails first
        _float_kernel("adaptive_avg_pool3d_cpu", x.dtype)
    # Averages over boxes factor into averages along each dim in turn.
    for i in range(3):
        dim = 2 + i
        parts = [
            x.narrow(dim, s, e - s).mean(dim, keepdim=True)
            for s, e in _adaptive_ranges(x.shape[dim], out[i])
        ]
        x = cat(parts, dim)
    return x.squeeze(0) if unbatched else x


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """adaptive_max_pool3d_with_indices(input, output_size, return_indices=False)

    adaptive_max_pool3d returning (values, indices)."""
    x, unbatched = _batched(input, "adaptive_max_pool3d")
    out = [
        x.shape[2 + i] if s is None else s
        for i, s in enumerate(_triple(output_size, "output_size"))
    ]
    D, H, W = x.shape[2:]
    flat_idx = arange(D * H * W).reshape(1, 1, D, H, W).expand_as(x)
    vals, idxs = [], []
    for ds, de in _adaptive_ranges(D, out[0]):
        for hs, he in _adaptive_ranges(H, out[1]):
            for ws, we in _adaptive_ranges(W, out[2]):
                box = x[:, :, ds:de, hs:he, ws:we].reshape(x.shape[0], x.shape[1], -1)
                v, k = box.max(2)
                vals.append(v)
                idxs.append(
                    flat_idx[:, :, ds:de, hs:he, ws:we]
                    .reshape(x.shape[0], x.shape[1], -1)
                    .gather(2, k.unsqueeze(2))
                    .squeeze(2)
                )
    values = stack(vals, 2).reshape(x.shape[0], x.shape[1], *out)
    idx = stack(idxs, 2).reshape(x.shape[0], x.shape[1], *out)
    if unbatched:
        values, idx = values.squeeze(0), idx.squeeze(0)
    return values, idx


@_autocast_fp32
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """adaptive_max_pool3d(input, output_size, return_indices=False)

    Adaptive 3-d max pooling; return_indices=True also returns the argmax positions."""
    values, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (values, idx) if return_indices else values


# complex inputs take four real convolutions (_complex_conv.py)
conv3d = with_complex_path(conv3d)
conv_transpose3d = with_complex_path(conv_transpose3d)
