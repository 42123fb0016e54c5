"""Convolution, pooling, padding, interpolation, fold/unfold, embedding."""

import math
import warnings

from ... import _C
from ..._autocast_policy import lower_precision as _autocast_lower
from ..._ops import _names, _op_range
from ..._ops import quantized as _quantized
from ._activation import _float_kernel, _raise_if_not_tensor
from ._complex_conv import with_complex_path

__all__ = [
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "max_pool1d",
    "max_pool2d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "pad",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "unfold",
    "fold",
    "embedding",
    "embedding_bag",
]

_nn = _C._nn


def _ints(value):
    """An int or a sequence of ints as a list (the C++ side broadcasts one value)."""
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(value)]


def _stride(stride):
    return (
        []
        if stride is None or (isinstance(stride, (list, tuple)) and not stride)
        else _ints(stride)
    )


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor

    1-d convolution over (N, C, L) or (C, L) input; padding may be 'same' or 'valid'."""
    if isinstance(padding, str):
        return _nn.conv1d_mode(input, weight, bias, _ints(stride), padding, _ints(dilation), groups)
    return _nn.conv1d(input, weight, bias, _ints(stride), _ints(padding), _ints(dilation), groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor

    2-d convolution over (N, C, H, W) or (C, H, W) input; padding may be 'same' or 'valid'."""
    if isinstance(padding, str):
        return _nn.conv2d_mode(input, weight, bias, _ints(stride), padding, _ints(dilation), groups)
    stride, padding, dilation = _ints(stride), _ints(padding), _ints(dilation)
    if _C._profiler_enabled():
        _op_range.note_flops(
            "aten::conv2d", _conv2d_flops(input, weight, stride, padding, dilation, groups)
        )
    return _nn.conv2d(input, weight, bias, stride, padding, dilation, groups)


def _conv2d_flops(input, weight, stride, padding, dilation, groups):
    """torch's profiler count for conv2d (with_flops): 2 x batch x output pixels x kernel area x
    in_channels x out_channels / groups; 0 unless input and weight are 4-d, as torch's."""
    try:
        (n, c_in, h, w), (c_out, _, kh, kw) = input.shape, weight.shape
        (sh, sw), (ph, pw), (dh, dw) = (
            v * 2 if len(v) == 1 else v for v in (stride, padding, dilation)
        )
        out_h = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        out_w = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        return 2 * n * out_h * out_w * kh * kw * c_in * c_out // groups
    except (AttributeError, ValueError, TypeError, ZeroDivisionError):
        return 0  # bad arguments: the kernel raises torch's error


@_autocast_lower
def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
        dilation=1) -> Tensor

    Transposed 1-d convolution (the gradient of conv1d with respect to its input)."""
    dilation = _ints(dilation)
    if dilation == [0] and _onednn_transpose1d(input, weight, groups):
        dilation = [1]  # a dilation does nothing to a 1-wide kernel
    args = (weight, bias, _ints(stride), _ints(padding), _ints(output_padding), groups, dilation)
    return _transposed(_nn.conv_transpose1d, 1, input, *args)


def _transposed(kernel, nd, input, weight, bias, stride, padding, output_padding, groups, dil):
    """kernel(...), except that torch sizes an empty batch's output without checking
    output_padding against the stride and dilation: there the kernel runs without it and the
    output grows by it (a zero pad, which keeps the graph)."""
    empty = isinstance(input, _C.Tensor) and input.dim() == nd + 2 and input.shape[0] == 0
    if not (empty and any(output_padding)):
        return kernel(input, weight, bias, stride, padding, output_padding, groups, dil)
    out = kernel(input, weight, bias, stride, padding, [0] * len(output_padding), groups, dil)
    grow = output_padding * nd if len(output_padding) == 1 else output_padding
    return pad(out, [p for g in reversed(grow) for p in (0, g)])


def _onednn_transpose1d(input, weight, groups):
    """Whether torch takes dilation 0 for this conv_transpose1d with a 1-wide kernel (where it is
    dilation 1): an empty batch (torch sizes the output without checking it), or a batched
    float32 input on torch's oneDNN path (a batch other than 1, groups, or more than 20480
    elements); its other paths refuse a dilation below 1."""
    if not (isinstance(input, _C.Tensor) and isinstance(weight, _C.Tensor)):
        return False
    if input.dim() != 3 or weight.dim() != 3 or weight.shape[-1] != 1:
        return False
    onednn = input.shape[0] != 1 or groups > 1 or input.numel() > 20480
    return input.shape[0] == 0 or (input.dtype == _C.float32 and onednn)


@_autocast_lower
def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
        dilation=1) -> Tensor

    Transposed 2-d convolution (the gradient of conv2d with respect to its input)."""
    args = (weight, bias, _ints(stride), _ints(padding), _ints(output_padding), groups)
    return _transposed(_nn.conv_transpose2d, 2, input, *args, _ints(dilation))


def _check_int32(input, *values):
    """torch's 2-d pooling kernels (and avg_pool1d) read their sizes as 32-bit ints (checked
    after the input's type, as torch's parser does first)."""
    if not isinstance(input, _C.Tensor):
        return
    for v in values:
        for x in v if isinstance(v, (list, tuple)) else (v,):
            if isinstance(x, int) and not -(2**31) <= x < 2**31:
                raise RuntimeError("value cannot be converted to type int without overflow")


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    """max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
        ceil_mode=False, return_indices=False)

    max_pool1d returning (values, indices)."""
    return _nn.max_pool1d_with_indices(
        input, _ints(kernel_size), _stride(stride), _ints(padding), _ints(dilation), ceil_mode
    )


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    """max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
        ceil_mode=False, return_indices=False)

    max_pool2d returning (values, flat indices within each H * W plane)."""
    _check_int32(input, kernel_size, stride, padding, dilation)
    return _nn.max_pool2d_with_indices(
        input, _ints(kernel_size), _stride(stride), _ints(padding), _ints(dilation), ceil_mode
    )


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
        return_indices=False)

    1-d max pooling; return_indices=True also returns the argmax positions."""
    out = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    if return_indices:
        if input.dtype == _C.bool:
            raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool'")
        return out
    _float_kernel("max_pool1d_impl", input.dtype)
    return out[0]


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
        return_indices=False)

    2-d max pooling; return_indices=True also returns the flat argmax positions."""
    _check_int32(input, kernel_size, stride, padding, dilation)
    if isinstance(input, _C.Tensor) and input.is_quantized and not return_indices:
        return _quantized._max_pool2d(
            input, _ints(kernel_size), _stride(stride), _ints(padding), _ints(dilation), ceil_mode
        )
    if not return_indices and _C._profiler_enabled():  # torch's row around the indexed pooling
        handle = _op_range.enter("aten::max_pool2d", input, autograd=True)
        try:
            return max_pool2d_with_indices(
                input, kernel_size, stride, padding, dilation, ceil_mode
            )[0]
        finally:
            _C._record_function_exit(handle)
    out = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
        count_include_pad=True) -> Tensor

    1-d average pooling."""
    _check_int32(input, kernel_size, stride, padding)
    if isinstance(input, _C.Tensor) and input.is_quantized and input.dim() in (2, 3):
        # torch pools a quantized sequence as a 2-d image of height 1
        k, s, p = _ints(kernel_size), _stride(stride), _ints(padding)
        out = _quantized._avg_pool2d(
            input.unsqueeze(-2),
            [1, *k],
            [1, *s] if s else [],
            [0, *p],
            ceil_mode,
            count_include_pad,
            None,
        )
        return out.squeeze(-2)
    return _nn.avg_pool1d(
        input, _ints(kernel_size), _stride(stride), _ints(padding), ceil_mode, count_include_pad
    )


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
        count_include_pad=True, divisor_override=None) -> Tensor

    2-d average pooling."""
    _check_int32(input, kernel_size, stride, padding)
    if isinstance(input, _C.Tensor) and input.dim() < 3:
        # torch reads the size of dim -3 first: the class is IndexError, as for any bad dim
        n = max(input.dim(), 1)
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got -3)"
        )
    quantized = isinstance(input, _C.Tensor) and input.is_quantized
    return (_quantized._avg_pool2d if quantized else _nn.avg_pool2d)(
        input,
        _ints(kernel_size),
        _stride(stride),
        _ints(padding),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def _adaptive_size(input, output_size, nd, name):
    """output_size as nd ints; None entries keep the input's size. A wrong count is refused
    with the RuntimeError of torch's op `name` (each words it its own way)."""
    if nd > 1 and isinstance(output_size, (list, tuple)) and input.dim() <= len(output_size):
        # torch's Python layer reads the input's sizes for the sequence form first
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    sizes = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size] * nd
    if len(sizes) != nd:
        if nd == 1:
            message = f"{name}() argument 'output_size' should contain one int (got {len(sizes)})"
        elif "max" in name:
            message = f"{name}(): internal error: output_size.size() must be {nd}"
        else:
            message = f"{name}: output_size must be {nd}"
        raise RuntimeError(message)
    return [
        int(input.shape[input.dim() - nd + i]) if s is None else int(s) for i, s in enumerate(sizes)
    ]


def _empty_mean_pool(input, sizes):
    """torch pools to all-ones sizes as a mean over the pooled dims, which takes an empty input
    (NaN, or nothing for an empty batch) where the pooling kernel refuses it, and refuses a bool
    or integer input as mean does (RuntimeError); None otherwise (the kernel's path)."""
    nd = len(sizes)
    if not nd + 1 <= input.dim() <= nd + 2 or not all(s == 1 for s in sizes):
        return None
    if input.numel() == 0 or not (input.dtype.is_floating_point or input.dtype.is_complex):
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    return None


def adaptive_avg_pool1d(input, output_size):
    """adaptive_avg_pool1d(input, output_size) -> Tensor

    Adaptive 1-d average pooling to length output_size."""
    sizes = _adaptive_size(input, output_size, 1, "adaptive_avg_pool1d")
    if isinstance(input, _C.Tensor) and input.is_quantized and input.dim() in (2, 3):
        # torch pools a quantized sequence as a 2-d image of height 1
        return _quantized._adaptive_avg_pool2d(input.unsqueeze(-2), [1] + sizes).squeeze(-2)
    out = _empty_mean_pool(input, sizes) if isinstance(input, _C.Tensor) else None
    if out is None:
        out = _nn.adaptive_avg_pool1d(input, sizes)
        _pooled_dtype("adaptive_avg_pool2d", input, out)  # torch pools 1-d as 2-d
    return out


def _pooled_dtype(kernel, input, out):
    """torch's adaptive average pools check the sizes and allocate the output (an output that
    does not fit in memory fails there, whatever the dtype) and return an empty output before
    they dispatch on the dtype; so ember pools first and checks the dtype after."""
    if out.numel() and input.numel():
        _float_kernel(kernel, input.dtype)


def adaptive_avg_pool2d(input, output_size):
    """adaptive_avg_pool2d(input, output_size)

    Adaptive 2-d average pooling to output_size (None keeps an input size)."""
    try:
        sizes = _adaptive_size(input, output_size, 2, "adaptive_avg_pool2d")
        if isinstance(input, _C.Tensor) and input.is_quantized and input.dim() in (3, 4):
            return _quantized._adaptive_avg_pool2d(input, sizes)
        out = _empty_mean_pool(input, sizes) if isinstance(input, _C.Tensor) else None
        if out is None and isinstance(input, _C.Tensor) and input.dim() not in (3, 4):
            if sizes == [1, 1]:  # torch's mean path takes any rank (a vector: IndexError)
                return input.mean((-1, -2), keepdim=True)
            raise RuntimeError(  # the rank is checked before the dtype
                f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}"
            )
        if out is None:
            out = _nn.adaptive_avg_pool2d(input, sizes)
            _pooled_dtype("adaptive_avg_pool2d", input, out)
        return out
    except TypeError:
        _raise_if_not_tensor(input, "dim")
        raise


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """adaptive_max_pool1d_with_indices(input, output_size, return_indices=False)

    adaptive_max_pool1d returning (values, indices)."""
    sizes = _adaptive_size(input, output_size, 1, "adaptive_max_pool1d")
    return _nn.adaptive_max_pool1d(input, sizes)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """adaptive_max_pool2d_with_indices(input, output_size, return_indices=False)

    adaptive_max_pool2d returning (values, flat indices)."""
    try:
        sizes = _adaptive_size(input, output_size, 2, "adaptive_max_pool2d")
        out = _nn.adaptive_max_pool2d(input, sizes)
    except TypeError:
        _raise_if_not_tensor(input, "dim")
        raise
    _float_kernel("adaptive_max_pool2d", input.dtype)  # an empty input too, after the sizes
    return out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """adaptive_max_pool1d(input, output_size, return_indices=False)

    Adaptive 1-d max pooling; return_indices=True also returns the argmax positions."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    _float_kernel("adaptive_max_pool2d", input.dtype)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """adaptive_max_pool2d(input, output_size, return_indices=False)

    Adaptive 2-d max pooling; return_indices=True also returns the flat argmax positions."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def pad(input, pad, mode="constant", value=None):
    """pad(input, pad, mode="constant", value=None) -> Tensor

    Pads trailing dims by (left, right) pairs, last dim first.

    mode is 'constant' (value, default 0; negative pads crop), 'reflect', 'replicate' or
    'circular'.
    """
    if not isinstance(pad, (list, tuple)):
        raise TypeError(f"pad: expected pad to be a tuple of ints; got {type(pad).__name__}")
    for i, v in enumerate(pad):
        if isinstance(v, float):
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found element of "
                f"type float at pos {i}"
            )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant" and isinstance(input, _C.Tensor) and len(pad) <= 2 * input.dim():
        # torch crops the negative pads first (a narrow), which refuses a negative length even
        # where the positive pad on the other side would restore it
        for i in range(0, len(pad) - 1, 2):
            size = input.shape[input.dim() - 1 - i // 2]
            if isinstance(pad[i], int) and isinstance(pad[i + 1], int):
                if size + min(pad[i], 0) + min(pad[i + 1], 0) < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
    if _C._autocast_is_active() and (mode == "replicate" or (mode == "reflect" and len(pad) <= 4)):
        # reflection_pad1d/2d and replication_pad1d/2d/3d are on torch's autocast float32 list
        input = _C._autocast_cast(_C.float32, input)
    if mode == "constant" and isinstance(input, _C.Tensor) and input.is_quantized:
        return _quantized._constant_pad(input, _ints(pad), value)
    if mode in ("reflect", "replicate") and isinstance(input, _C.Tensor):
        _check_reflect_replicate(input, _ints(pad), mode)
    out = _nn.pad(input, _ints(pad), mode, None if value is None else float(value))
    if mode in ("reflect", "replicate") and input.dtype == _C.bool:  # torch's kernels lack bool
        kind = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f"\"{kind}_pad{len(pad) // 2}d\" not implemented for 'Bool'")
    return out


def _check_reflect_replicate(input, pad, mode):
    """torch's reflection/replication kernels refuse an empty non-batch dim, and the 1-d ones a
    width cropped below 1 by negative pads (the 2-d and 3-d ones return an empty result)."""
    k = len(pad) // 2
    if len(pad) % 2 or k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
        return
    if 0 in input.shape[-(k + 1) :]:
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(input.shape)}"
        )
    width = input.shape[-1]
    if k != 1 or (mode == "reflect" and max(pad) >= width):
        return  # the 1-d reflection kernel's pad-size check comes first
    if width + pad[0] + pad[1] < 1:
        raise RuntimeError(
            f"input (W: {width}) is too small. Calculated output W: {width + pad[0] + pad[1]}"
        )


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """unfold(input, kernel_size, dilation=1, padding=0, stride=1)

    Extracts sliding blocks of (N, C, H, W) input as columns (N, C * kH * kW, L)."""
    args = (_ints(kernel_size), _ints(dilation), _ints(padding), _ints(stride))
    if isinstance(input, _C.Tensor) and input.dtype == _C.bool:  # torch unfolds bools too
        return _nn.im2col(input.to(_C.float32), *args).to(_C.bool)
    if isinstance(input, _C.Tensor) and input.is_complex():  # the parts unfold as real images
        from ..._ops.complex import complex as _complex

        return _complex(_nn.im2col(input.real, *args), _nn.im2col(input.imag, *args))
    return _nn.im2col(input, *args)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1)

    Sums columns (N, C * kH * kW, L) back into an (N, C, *output_size) image."""
    args = (_ints(output_size), _ints(kernel_size), _ints(dilation), _ints(padding), _ints(stride))
    if isinstance(input, _C.Tensor) and input.dtype == _C.bool:  # torch folds bools: an OR
        return _nn.col2im(input.to(_C.float32), *args) != 0
    return _nn.col2im(input, *args)


_LINEAR_MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
        recompute_scale_factor=None, antialias=False)

    Resizes the trailing spatial dims by 'nearest', 'nearest-exact', 'linear', 'bilinear',
    'bicubic', 'trilinear' or 'area', to `size` or by `scale_factor`."""
    dim = input.dim() - 2
    if dim < 1 or dim > 3:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
            f"(got {mode})"
        )
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(
            "Anti-alias option is restricted to bilinear and bicubic modes and "
            "requires a 4-D tensor as input"
        )
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if len(sizes) != dim:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {list(input.shape[2:])} and output size of {sizes}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                "(o1, o2, ...,oK) format."
            )
        output_size, scales = [int(s) for s in sizes], [None] * dim
    elif scale_factor is not None:
        factors = (
            list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * dim
        )
        if len(factors) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                f"shape {factors}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format."
            )
        factors = [float(f) for f in factors]
        output_size = [
            int(math.floor(float(input.shape[i + 2]) * f)) for i, f in enumerate(factors)
        ]
        scales = [None] * dim if recompute_scale_factor else factors
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "bilinear" and dim == 2 and input.is_quantized and not antialias:
        return _quantized._upsample_bilinear2d(input, output_size, align_corners, scales)
    if mode != "area" and input.shape[1] == 0 and min(list(input.shape[2:]) + output_size) > 0:
        # torch's resize kernels allow an empty batch only, checked before the dtype
        raise RuntimeError(
            f"Non-empty {input.dim()}D data tensor expected but got a tensor with sizes "
            f"{list(input.shape)}"
        )
    _check_interpolate_dtype(input, mode, dim, output_size)
    if antialias and dim == 2 and min(output_size + list(input.shape[2:])) <= 0:
        (ih, iw), (oh, ow) = input.shape[2:], output_size
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"(H: {ih}, W: {iw}) output (H: {oh}, W: {ow})"
        )
    uint8 = str(input.dtype).endswith("uint8") and min(output_size + list(input.shape[2:])) > 0
    if mode in ("bilinear", "bicubic") and dim == 2 and uint8:
        from ._uint8_resize import uint8_resize  # torch's fixed-point uint8 kernel

        return uint8_resize(input, output_size, scales, align_corners, mode == "bicubic", antialias)
    if antialias:
        from ._antialias import antialias_resize

        return antialias_resize(input, output_size, scales, align_corners, mode)
    if mode in ("nearest", "nearest-exact"):
        return _nn.upsample_nearest(input, output_size, scales, mode == "nearest-exact")
    if mode == "area":
        from ._spatial3d import adaptive_avg_pool3d

        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](
            input, output_size
        )
    if mode in _LINEAR_MODES:
        need = _LINEAR_MODES[mode]
        if dim != need:
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {need + 2}D input"
            )
        if mode == "bicubic":
            return _nn.upsample_bicubic2d(input, output_size, align_corners, scales)
        return _nn.upsample_linear(input, output_size, align_corners, scales)
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
        f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
        f"(got {mode})"
    )


# The kernel torch's CPU resize dispatches to by mode and spatial rank, named in its error; the
# nearest and the 2-d bilinear/bicubic kernels take uint8 as well as floats, the others floats only.
_INTERP_KERNELS = {
    ("nearest", 1): "compute_indices_weights_nearest",
    ("nearest", 2): "upsample_nearest2d_channels_last",
    ("nearest", 3): "compute_indices_weights_nearest",
    ("linear", 1): "compute_indices_weights_linear",
    ("bilinear", 2): "upsample_bilinear2d_channels_last",
    ("bicubic", 2): "compute_indices_weights_cubic",
    ("trilinear", 3): "compute_indices_weights_linear",
}


def _check_interpolate_dtype(input, mode, dim, output_size):
    """NotImplementedError for a dtype torch's CPU resize kernels lack (integers and bool; uint8
    is taken by nearest, bilinear and bicubic), once the sizes are valid (torch checks those
    first)."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        return
    base = "nearest" if mode == "nearest-exact" else mode
    kernel = _INTERP_KERNELS.get((base, dim))
    if base == "area":
        return  # torch's area mode is its adaptive average pool, which checks its own dtype
    if kernel is None or min(list(input.shape[2:]) + list(output_size), default=1) <= 0:
        return
    if str(input.dtype).endswith("uint8") and base in ("nearest", "bilinear", "bicubic"):
        return
    from ..._type_info import scalar_type_name

    raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(input.dtype)}'")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None)

    Deprecated alias of interpolate."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """upsample_nearest(input, size=None, scale_factor=None)

    Deprecated: interpolate(mode='nearest')."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """upsample_bilinear(input, size=None, scale_factor=None)

    Deprecated: interpolate(mode='bilinear', align_corners=True)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _padding_idx(padding_idx, weight):
    if padding_idx is None:
        return -1
    rows = weight.shape[0]
    if padding_idx > 0:
        assert padding_idx < rows, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -rows, "Padding_idx must be within num_embeddings"
        padding_idx += rows
    return padding_idx


def _renorm_(weight, input, max_norm, norm_type):
    """Scales the rows of weight used by input to norm at most max_norm, in place, untracked."""
    from ... import no_grad

    with no_grad():
        rows = input.reshape(-1).unique()
        norms = weight[rows].norm(p=norm_type, dim=1, keepdim=True)
        scale = (max_norm / (norms + 1e-7)).clamp(max=1.0)
        weight[rows] = weight[rows] * scale


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
        scale_grad_by_freq=False, sparse=False)

    Looks up rows of weight; padding_idx's row gets no gradient; max_norm renormalizes the
    used rows of weight in place."""
    padding_idx = _padding_idx(padding_idx, weight)
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if sparse and weight.requires_grad and _C.is_grad_enabled():
        from ...sparse._grad import gather_rows  # weight.grad becomes a sparse COO tensor

        rows = gather_rows(weight, input.reshape(-1), padding_idx, scale_grad_by_freq)
        return rows.reshape(tuple(input.shape) + tuple(weight.shape[1:]))
    try:
        return _nn.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
    except IndexError:
        if isinstance(weight, _C.Tensor) and weight.dim() > 0 and weight.shape[0] == 0:
            # torch's index_select refuses an empty table before it reads any index
            raise RuntimeError(
                "index_select(): self indexing axis dim should be positive"
            ) from None
        raise


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
        scale_grad_by_freq=False, mode='mean', sparse=False, per_sample_weights=None,
        include_last_offset=False, padding_idx=None)

    Sums, means or maxima over bags of embedding rows (2-D input, or 1-D input + offsets)."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
            f"not None, then it must have the same shape as the input "
            f"({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if input.dim() == 1 and offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if input.dim() == 1 and offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    padding_idx = _padding_idx(padding_idx, weight)
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if sparse and weight.requires_grad and _C.is_grad_enabled():
        return _sparse_embedding_bag(
            input, weight, offsets, scale_grad_by_freq, mode, per_sample_weights,
            include_last_offset, padding_idx,
        )  # fmt: skip
    try:
        return _nn.embedding_bag(
            weight,
            input,
            offsets,
            scale_grad_by_freq,
            mode,
            sparse,
            per_sample_weights,
            include_last_offset,
            padding_idx,
        )
    except (IndexError, RuntimeError):
        _check_bag_indices(input, weight.shape[0], mode)
        raise


def _check_bag_indices(input, num_embeddings, mode):
    """Raises torch's embedding_bag error for the first index outside the table, if any."""
    flat = input.reshape(-1).tolist()
    for i, v in enumerate(flat):
        if not 0 <= v < num_embeddings:
            if mode == "max":
                raise RuntimeError(
                    "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to "
                    f"be {v}"
                ) from None
            raise RuntimeError(
                f"Index {i} of input takes value {v} which is not in the valid range "
                f"[0, {num_embeddings})"
            ) from None


def _sparse_embedding_bag(
    input, weight, offsets, scale_grad_by_freq, mode, per_sample_weights, include_last_offset, pad
):
    """embedding_bag whose weight gradient is sparse: the bags are taken over the rows read
    (one per index, their gradient a sparse tensor's values), padding entries sent to an extra
    zero row that is the padding row of that table."""
    from ... import arange, cat, where, zeros
    from ...sparse._grad import gather_rows

    flat = input.reshape(-1)
    n = flat.numel()
    rows = gather_rows(weight, flat, pad, scale_grad_by_freq)
    table = cat([rows, zeros((1, weight.shape[1]), dtype=weight.dtype)])
    local = arange(n).reshape(input.shape)
    if pad >= 0:
        local = where(input == pad, n, local)
    return _nn.embedding_bag(
        table, local, offsets, False, mode, False, per_sample_weights, include_last_offset,
        n if pad >= 0 else -1,
    )  # fmt: skip


# ---- torch's grad_fn names (see ember/_ops/_names.py) ----

_PAD_NODES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0"}
_UPSAMPLE_NODES = {
    "nearest": "UpsampleNearest{}DBackward0",
    "nearest-exact": "UpsampleNearestExact{}DBackward0",
    "linear": "UpsampleLinear1DBackward0",
    "bilinear": "UpsampleBilinear2DBackward0",
    "bicubic": "UpsampleBicubic2DBackward0",
    "trilinear": "UpsampleTrilinear3DBackward0",
    "area": "AdaptiveAvgPool{}DBackward0",
}


def _pad_name(args, kwargs):
    mode = _names.arg(args, kwargs, 2, "mode", "constant")
    if mode == "constant":
        return "ConstantPadNdBackward0"
    pads = _names.arg(args, kwargs, 1, "pad")
    node = _PAD_NODES.get(mode)
    return node.format(len(pads) // 2) if node and pads is not None else None


def _interpolate_name(args, kwargs):
    input = args[0] if args else kwargs.get("input")
    node = _UPSAMPLE_NODES.get(_names.arg(args, kwargs, 3, "mode", "nearest"))
    if node is None or not isinstance(input, _C.Tensor):
        return None
    if _names.arg(args, kwargs, 6, "antialias", False):
        node = node.replace("2DBackward0", "2DAaBackward0")
    return node.format(input.dim() - 2)


pad = _names.named(pad, _pad_name)
interpolate = _names.named(interpolate, _interpolate_name)
conv1d = _names.named(conv1d, "ConvolutionBackward0")
conv_transpose1d = _names.named(conv_transpose1d, "ConvolutionBackward0")
conv_transpose2d = _names.named(conv_transpose2d, "ConvolutionBackward0")
embedding_bag = _names.named(embedding_bag, "EmbeddingBagBackward0")


# complex inputs take four real convolutions (_complex_conv.py)
conv1d = with_complex_path(conv1d)
conv2d = with_complex_path(conv2d)
conv_transpose1d = with_complex_path(conv_transpose1d)
conv_transpose2d = with_complex_path(conv_transpose2d)
