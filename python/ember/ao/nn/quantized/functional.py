"""Functional forms of the quantized ops (torch.ao.nn.quantized.functional): quint8 inputs,
qint8 weights, quantized outputs. linear and the convolutions pack the weight on every call
(the modules pack once). Ops without an int8 kernel here (pooling, interpolation, the smooth
activations) dequantize, run the float op and requantize."""

from ...._ops import quantized as _qt
from . import _ops

__all__ = [
    "linear",
    "conv1d",
    "conv2d",
    "relu",
    "relu6",
    "hardtanh",
    "clamp",
    "threshold",
    "leaky_relu",
    "hardswish",
    "hardsigmoid",
    "elu",
    "celu",
    "max_pool1d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
]


def _ember():
    import ember

    return ember


def _pair(x):
    return list(x) if isinstance(x, (tuple, list)) else [x, x]


def _single(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _requantize_like(y, q, scale=None, zero_point=None):
    e = _ember()
    s = q.q_scale() if scale is None else scale
    z = q.q_zero_point() if zero_point is None else zero_point
    return e.quantize_per_tensor(y, float(s), int(z), q.dtype)


def linear(input, weight, bias=None, scale=None, zero_point=None):
    """linear(input, weight, bias=None, scale=None, zero_point=None) -> Tensor

    y = x W^T + b on a quint8 input with a qint8 weight, requantized to scale and zero_point
    (the input's when omitted)."""
    if scale is None:
        scale = input.q_scale()
    if zero_point is None:
        zero_point = input.q_zero_point()
    return _ops.linear(input, _ops.linear_prepack(weight, bias), scale, zero_point)


def _check_conv(input, weight, padding_mode, dims, shape):
    e = _ember()
    if padding_mode != "zeros":
        raise NotImplementedError("Only zero-padding is supported!")
    if input.dtype != e.quint8:
        raise NotImplementedError("Only torch.quint8 is supported for activation tensor!")
    if weight.dtype != e.qint8:
        raise NotImplementedError("Only torch.qint8 is supported for weight tensor!")
    if input.ndim != dims:
        raise ValueError(f"Input shape must be `{shape}`!")


def conv1d(
    input,
    weight,
    bias,
    stride=1,
    padding=0,
    dilation=1,
    groups=1,
    padding_mode="zeros",
    scale=1.0,
    zero_point=0,
    dtype=None,
):
    """conv1d(input, weight, bias, stride=1, padding=0, dilation=1, groups=1,
        padding_mode='zeros', scale=1.0, zero_point=0, dtype=quint8) -> Tensor

    1-d convolution of a quint8 input with a qint8 weight, requantized."""
    _check_conv(input, weight, padding_mode, 3, "(N, C, L)")
    packed = _ops.conv_prepack(
        weight, bias, _single(stride), _single(padding), _single(dilation), groups
    )
    return _ops.conv1d(input, packed, scale, zero_point)


def conv2d(
    input,
    weight,
    bias,
    stride=1,
    padding=0,
    dilation=1,
    groups=1,
    padding_mode="zeros",
    scale=1.0,
    zero_point=0,
    dtype=None,
):
    """conv2d(input, weight, bias, stride=1, padding=0, dilation=1, groups=1,
        padding_mode='zeros', scale=1.0, zero_point=0, dtype=quint8) -> Tensor

    2-d convolution of a quint8 input with a qint8 weight, requantized."""
    _check_conv(input, weight, padding_mode, 4, "(N, C, H, W)")
    packed = _ops.conv_prepack(weight, bias, _pair(stride), _pair(padding), _pair(dilation), groups)
    return _ops.conv2d(input, packed, scale, zero_point)


def relu(input, inplace=False):
    """relu(input, inplace=False) -> Tensor

    max(q, zero_point) on the integers of a quantized tensor."""
    return _qt._relu(input, inplace)


def _clamp_ints(input, lo, hi, inplace=False):
    e = _ember()
    if not input.is_quantized:
        raise ValueError("Input must be quantized!")
    s, z = input.q_scale(), input.q_zero_point()
    qlo = None if lo is None else e.quantize_per_tensor(e.tensor([float(lo)]), s, z, input.dtype)
    qhi = None if hi is None else e.quantize_per_tensor(e.tensor([float(hi)]), s, z, input.dtype)
    r = e._C._quantized.repr_view(input)
    out = r.clamp(
        min=None if qlo is None else int(qlo.int_repr()[0]),
        max=None if qhi is None else int(qhi.int_repr()[0]),
    )
    if inplace:
        r.copy_(out)
        return input
    return e._C._quantized.from_repr(out.contiguous(), input)


def relu6(input, inplace=False):
    """relu6(input, inplace=False) -> Tensor

    min(max(x, 0), 6) of a quantized tensor, on its integers."""
    return _clamp_ints(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False) -> Tensor

    Clamps a quantized tensor to [min_val, max_val], on its integers."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.hardtanh' must be quantized!")
    return _clamp_ints(input, min_val, max_val, inplace)


def clamp(input, min_, max_):
    """clamp(input, min_, max_) -> Tensor

    Clamps a quantized tensor to [min_, max_], on its integers."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.clamp' must be quantized!")
    return _clamp_ints(input, min_, max_)


def _through_float(input, fn, scale=None, zero_point=None):
    return _requantize_like(fn(input.dequantize()), input, scale, zero_point)


def threshold(input, threshold, value):
    """threshold(input, threshold, value) -> Tensor

    Elements not above threshold replaced by value, in the input's parameters."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.threshold' must be quantized!")
    F = _ember().nn.functional
    return _through_float(input, lambda x: F.threshold(x, threshold, value))


def leaky_relu(input, negative_slope=0.01, inplace=False, scale=None, zero_point=None):
    """leaky_relu(input, negative_slope=0.01, inplace=False, scale=None, zero_point=None) -> Tensor

    Leaky ReLU of a quantized tensor, requantized (to the input's parameters by default)."""
    F = _ember().nn.functional
    return _through_float(input, lambda x: F.leaky_relu(x, negative_slope), scale, zero_point)


def hardswish(input, scale, zero_point):
    """hardswish(input, scale, zero_point) -> Tensor

    Hardswish of a quantized tensor, requantized."""
    F = _ember().nn.functional
    return _through_float(input, F.hardswish, scale, zero_point)


def hardsigmoid(input, inplace=False):
    """hardsigmoid(input, inplace=False) -> Tensor

    Hardsigmoid of a quantized tensor, in the input's parameters."""
    F = _ember().nn.functional
    return _through_float(input, F.hardsigmoid)


def elu(input, scale, zero_point, alpha=1.0):
    """elu(input, scale, zero_point, alpha=1.0) -> Tensor

    ELU of a quantized tensor, requantized."""
    F = _ember().nn.functional
    return _through_float(input, lambda x: F.elu(x, alpha), scale, zero_point)


def celu(input, scale, zero_point, alpha=1.0):
    """celu(input, scale, zero_point, alpha=1.0) -> Tensor

    CELU of a quantized tensor, requantized."""
    F = _ember().nn.functional
    return _through_float(input, lambda x: F.celu(x, alpha), scale, zero_point)


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
        return_indices=False) -> Tensor

    Max pooling of a quantized tensor (the maxima are input values, so exact)."""
    if return_indices:
        raise NotImplementedError("return_indices is not yet implemented!")
    F = _ember().nn.functional
    return _through_float(
        input, lambda x: F.max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)
    )


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
        return_indices=False) -> Tensor

    Max pooling of a quantized tensor (the maxima are input values, so exact)."""
    if return_indices:
        raise NotImplementedError("return_indices is not yet implemented!")
    F = _ember().nn.functional
    return _through_float(
        input, lambda x: F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
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

    Average pooling of a quantized tensor, in the input's parameters."""
    F = _ember().nn.functional
    return _through_float(
        input,
        lambda x: F.avg_pool2d(
            x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        ),
    )


def adaptive_avg_pool2d(input, output_size):
    """adaptive_avg_pool2d(input, output_size) -> Tensor

    Adaptive average pooling of a quantized tensor, in the input's parameters."""
    F = _ember().nn.functional
    return _through_float(input, lambda x: F.adaptive_avg_pool2d(x, output_size))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None)
        -> Tensor

    Resizes a quantized tensor (nearest or bilinear), in the input's parameters."""
    F = _ember().nn.functional
    return _through_float(
        input, lambda x: F.interpolate(x, size, scale_factor, mode, align_corners)
    )


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None)
        -> Tensor

    interpolate() under its old name."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """upsample_nearest(input, size=None, scale_factor=None) -> Tensor

    Nearest-neighbour resize of a quantized tensor."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """upsample_bilinear(input, size=None, scale_factor=None) -> Tensor

    Bilinear resize (align_corners=True) of a quantized tensor."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
