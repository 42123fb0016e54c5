"""Quantized tensors: the qscheme objects, quantize/dequantize and the accessors of quantization
parameters (Note [Quantized tensors] in csrc/ember/core/quantizer.h). The tensors themselves
are ember tensors of dtype qint8, quint8, qint32 or quint4x2 whose parameters live in C++."""

import builtins

from .. import _C
from .._C import Tensor
from .creation import tensor as _tensor
from .creation import zeros as _zeros

__all__ = [
    "qscheme",
    "per_tensor_affine",
    "per_channel_affine",
    "per_tensor_symmetric",
    "per_channel_symmetric",
    "per_channel_affine_float_qparams",
    "quantize_per_tensor",
    "quantize_per_channel",
    "quantize_per_tensor_dynamic",
    "dequantize",
    "int_repr",
    "q_scale",
    "q_zero_point",
    "q_per_channel_scales",
    "q_per_channel_zero_points",
    "q_per_channel_axis",
    "_make_per_tensor_quantized_tensor",
    "_make_per_channel_quantized_tensor",
    "_empty_affine_quantized",
    "_empty_per_channel_affine_quantized",
]

_Q = _C._quantized


class qscheme:
    """qscheme(name, code)

    A quantization scheme (torch.qscheme): one of the fixed objects per_tensor_affine,
    per_channel_affine, per_tensor_symmetric, per_channel_symmetric and
    per_channel_affine_float_qparams."""

    def __init__(self, name, code):
        self.name, self._code = name, code

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name


per_tensor_affine = qscheme("per_tensor_affine", 0)
per_channel_affine = qscheme("per_channel_affine", 1)
per_tensor_symmetric = qscheme("per_tensor_symmetric", 2)
per_channel_symmetric = qscheme("per_channel_symmetric", 3)
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams", 4)
_SCHEMES = {
    s.name: s
    for s in (
        per_tensor_affine,
        per_channel_affine,
        per_tensor_symmetric,
        per_channel_symmetric,
        per_channel_affine_float_qparams,
    )
}


def _number(v, kind):
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise RuntimeError(
                f"quantize_per_tensor: expected a one-element {kind} tensor; got "
                f"{v.numel()} elements"
            )
        return v.item()
    return v


def quantize_per_tensor(input, scale, zero_point, dtype):
    """quantize_per_tensor(input, scale, zero_point, dtype) -> Tensor

    Quantizes a float tensor with one scale and zero point: round(input / scale) + zero_point,
    rounded half to even and clamped to dtype's range. input may be a list of tensors, with scale
    and zero_point tensors of one value per tensor; the result is then a tuple."""
    if isinstance(input, (list, tuple)):
        scales = scale.tolist() if isinstance(scale, Tensor) else list(scale)
        zps = zero_point.tolist() if isinstance(zero_point, Tensor) else list(zero_point)
        return tuple(
            _Q.quantize_per_tensor(t, float(s), int(z), dtype)
            for t, s, z in zip(input, scales, zps)
        )
    return _Q.quantize_per_tensor(
        input, float(_number(scale, "scale")), int(_number(zero_point, "zero_point")), dtype
    )


def _choose_qparams(lo, hi, qmin, qmax):
    """torch's (scale, zero_point) for the range [lo, hi] (widened to hold 0) on [qmin, qmax]."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if scale == 0.0:
        scale = 0.1
    zp_min, zp_max = qmin - lo / scale, qmax - hi / scale
    err_min = abs(qmin) - abs(lo / scale)
    err_max = abs(qmax) - abs(hi / scale)
    zp = zp_min if err_min < err_max else zp_max
    zp = qmin if zp < qmin else qmax if zp > qmax else int(builtins.round(zp))
    return scale, zp


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """quantize_per_tensor_dynamic(input, dtype, reduce_range) -> Tensor

    Quantizes input (quint8 or qint8) with the scale and zero point its own min and max give
    (over half the integer range with reduce_range), as dynamic quantization does."""
    if dtype not in (_C.quint8, _C.qint8):
        raise RuntimeError(
            f"quantize_per_tensor_dynamic: expected dtype torch.quint8 or torch.qint8; got {dtype}"
        )
    qmin, qmax = (0, 255) if dtype == _C.quint8 else (-128, 127)
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    x = input.detach().float()
    lo, hi = (float(x.min()), float(x.max())) if x.numel() else (0.0, 0.0)
    scale, zp = _choose_qparams(lo, hi, qmin, qmax)
    return _Q.quantize_per_tensor(input, float(scale), int(zp), dtype)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """quantize_per_channel(input, scales, zero_points, axis, dtype) -> Tensor

    Quantizes each slice of input along axis with its own scale and zero point (float zero
    points give the per_channel_affine_float_qparams scheme)."""
    return _Q.quantize_per_channel(input, scales, zero_points, int(axis), dtype)


def dequantize(tensor):
    """dequantize(tensor) -> Tensor

    The float32 values (q - zero_point) * scale of a quantized tensor (a tuple of them for a
    list of tensors); a plain tensor converted to float32."""
    if isinstance(tensor, (list, tuple)):
        return tuple(dequantize(t) for t in tensor)
    if not tensor.is_quantized:  # torch's: a plain tensor as float32 (a complex one warns)
        return tensor.to(_C.float32)
    return _Q.dequantize(tensor)


def int_repr(input):
    """int_repr(input) -> Tensor

    A copy of the integers of a quantized tensor (int8, uint8 or int32)."""
    return input.int_repr()


def q_scale(input):
    """q_scale(input) -> float

    The scale of a per-tensor quantized tensor."""
    return input.q_scale()


def q_zero_point(input):
    """q_zero_point(input) -> int

    The zero point of a per-tensor quantized tensor."""
    return input.q_zero_point()


def q_per_channel_scales(input):
    """q_per_channel_scales(input) -> Tensor

    The float64 scales of a per-channel quantized tensor."""
    return input.q_per_channel_scales()


def q_per_channel_zero_points(input):
    """q_per_channel_zero_points(input) -> Tensor

    The zero points of a per-channel quantized tensor."""
    return input.q_per_channel_zero_points()


def q_per_channel_axis(input):
    """q_per_channel_axis(input) -> int

    The dim a per-channel quantized tensor is quantized along."""
    return input.q_per_channel_axis()


def _qscheme_method(self):
    """qscheme() -> qscheme

    The quantization scheme of a quantized tensor."""
    return _SCHEMES[_Q.qscheme(self)]


def _make_per_tensor_quantized_tensor(input, scale, zero_point):
    """_make_per_tensor_quantized_tensor(input, scale, zero_point) -> Tensor

    A quantized tensor whose integers are a copy of input (int8 -> qint8, uint8 -> quint8,
    int32 -> qint32)."""
    return _Q.make_per_tensor(input, float(scale), int(zero_point))


def _make_per_channel_quantized_tensor(input, scale, zero_point, axis):
    """_make_per_channel_quantized_tensor(input, scale, zero_point, axis) -> Tensor

    A per-channel quantized tensor whose integers are a copy of input."""
    return _Q.make_per_channel(input, scale, zero_point, int(axis))


_REPR = {"qint8": "int8", "quint8": "uint8", "qint32": "int32", "quint4x2": "uint8"}


def _empty_affine_quantized(
    size, *, scale=1.0, zero_point=0, dtype=None, device=None, memory_format=None, **kwargs
):
    """_empty_affine_quantized(size, *, scale=1.0, zero_point=0, dtype=quint8, device=None,
        memory_format=None) -> Tensor

    A per-tensor quantized tensor of the given size; its integers are zero (torch leaves them
    unset)."""
    dtype = dtype if dtype is not None else _C.quint8
    if isinstance(size, int):
        size = (size,)
    repr_ = _zeros(tuple(size), dtype=getattr(_C, _REPR[builtins.repr(dtype)[6:]]))
    return _Q.from_repr_per_tensor(repr_, dtype, float(scale), int(zero_point))


def _empty_per_channel_affine_quantized(
    size, *, scales, zero_points, axis, dtype=None, device=None, memory_format=None, **kwargs
):
    """_empty_per_channel_affine_quantized(size, *, scales, zero_points, axis, dtype=quint8,
        device=None, memory_format=None) -> Tensor

    A per-channel quantized tensor of the given size with zero integers."""
    dtype = dtype if dtype is not None else _C.quint8
    repr_ = _zeros(tuple(size), dtype=getattr(_C, _REPR[builtins.repr(dtype)[6:]]))
    q = _Q.make_per_channel(repr_, scales, zero_points, int(axis))
    return q if q.dtype == dtype else _Q.retype(q, dtype)


def _relu(q, inplace=False):
    """relu of a quantized tensor: max(q, zero_point) on its integers, parameters kept (what
    nn.functional.relu does for a quantized input)."""
    r = _Q.repr_view(q)
    if q.qscheme().name.startswith("per_tensor"):
        out = r.clamp(min=q.q_zero_point())
    else:
        shape = [1] * q.dim()
        shape[q.q_per_channel_axis()] = -1
        zps = q.q_per_channel_zero_points().to(r.dtype).reshape(shape)
        out = _C.maximum(r, zps)
    if inplace:
        r.copy_(out)
        return q
    return _Q.from_repr(out.contiguous(), q)


def _avg_pool2d(q, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor):
    """avg_pool2d of a quantized tensor (what nn.functional.avg_pool2d does for one): the
    integers averaged, rounded half to even and clamped, the parameters of q kept."""
    r = _Q.repr_view(q)
    out = _C._nn.avg_pool2d(
        r.to(_C.float32), kernel_size, stride, padding, ceil_mode, count_include_pad, divisor
    )
    lo, hi = _int_range(r.dtype)
    return _Q.from_repr(out.round().clamp(lo, hi).to(r.dtype).contiguous(), q)


def _adaptive_avg_pool2d(q, sizes):
    """adaptive_avg_pool2d of a quantized tensor (what nn.functional.adaptive_avg_pool2d does for
    one) as torch's kernel rounds it: per window, the integers' mean rounded half to even (the
    zero point is not taken out first, which moves ties when it is odd); q's parameters kept."""
    r = _Q.repr_view(q)

    def lengths(n_in, n_out):  # the windows' lengths, as adaptive pooling splits a dimension
        return [-(-(i + 1) * n_in // n_out) - i * n_in // n_out for i in range(n_out)]

    size = _tensor(
        [[h * w for w in lengths(r.shape[-1], sizes[1])] for h in lengths(r.shape[-2], sizes[0])],
        dtype=_C.float64,
    )
    sums = (_C._nn.adaptive_avg_pool2d(r.to(_C.float64), sizes) * size).round()
    lo, hi = _int_range(r.dtype)
    return _Q.from_repr((sums / size).round().clamp(lo, hi).to(r.dtype).contiguous(), q)


def _int_range(dtype):
    return {"uint8": (0, 255), "int8": (-128, 127)}.get(
        builtins.repr(dtype)[6:], (-(2**31), 2**31 - 1)
    )


# Note [Quantized activations]: torch's kernels for hardtanh (clamp), leaky_relu and hardsigmoid
# on a quantized tensor work in float32 vectors: the integers dequantized as
# fma(scale, q, -zero_point * scale), the activation, then quantized as round(y * (1 / scale)),
# rounded half to even, plus the zero point (added after the rounding, unlike
# quantize_per_tensor). The helpers below repeat those steps so that ties round as torch's do.


def _vec_dequantize(q):
    r = _Q.repr_view(q).to(_C.float64)
    scale = _tensor(q.q_scale(), dtype=_C.float32).item()
    premul = _tensor(-q.q_zero_point() * scale, dtype=_C.float32).item()
    return (r * scale + premul).to(_C.float32)  # one rounding to float32, as the fma's


def _vec_quantize(y, scale, zero_point, dtype):
    inv = _tensor(1.0 / _tensor(scale, dtype=_C.float32).item(), dtype=_C.float32)
    int_dtype = getattr(_C, _REPR[builtins.repr(dtype)[6:]])
    lo, hi = _int_range(int_dtype)
    r = ((y * inv).round() + zero_point).clamp(lo, hi).to(int_dtype)
    return _Q.from_repr_per_tensor(r, dtype, scale, zero_point)


def _hardtanh(q, min_val, max_val, inplace=False):
    """hardtanh (and relu6) of a quantized tensor: the integers clamped between the bounds
    quantized with q's parameters; the parameters kept."""
    _per_tensor(q)
    s, zp = q.q_scale(), q.q_zero_point()
    lo, hi = _int_range(_Q.repr_view(q).dtype)
    # torch quantizes the bounds as quantize_per_tensor does, in double precision:
    # round(v / scale + zero_point), half to even
    bound = [min(max(round(float(v) / s + zp), lo), hi) for v in (min_val, max_val)]
    r = _Q.repr_view(q)
    out = r.clamp(bound[0], bound[1])
    if inplace:
        r.copy_(out)
        return q
    return _Q.from_repr(out.contiguous(), q)


def _leaky_relu(q, negative_slope, inplace=False):
    """leaky_relu of a quantized tensor, in q's parameters (Note [Quantized activations])."""
    _per_tensor(q)
    x = _vec_dequantize(q)
    slope = _tensor(float(negative_slope), dtype=_C.float32)
    y = x.clamp(min=0.0) + x.clamp(max=0.0) * slope  # exact: one side is zero
    out = _vec_quantize(y, q.q_scale(), q.q_zero_point(), q.dtype)
    if inplace:
        _Q.repr_view(q).copy_(_Q.repr_view(out))
        return q
    return out


def _hardsigmoid(q):
    """hardsigmoid of a quantized tensor, requantized to torch's fixed output range, that of
    sigmoid: [0, 1) in steps of 1/256 (Note [Quantized activations])."""
    _per_tensor(q)
    y = (_vec_dequantize(q) + 3.0).clamp(0.0, 6.0) / 6.0
    qint32 = q.dtype == _C.qint32
    zp = -128 if q.dtype == _C.qint8 else 0
    return _vec_quantize(y, 2.0**-32 if qint32 else 2.0**-8, zp, q.dtype)


def _per_tensor(q):
    if q.qscheme().name != "per_tensor_affine":
        raise RuntimeError(
            "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  (Could "
            "this error message be improved?  If so, please report an enhancement request to "
            "PyTorch.)"
        )


def _equal(a, b):
    """equal() of quantized tensors: the same scheme, parameters, shape and integers."""
    if not (isinstance(b, Tensor) and b.is_quantized) or a.qscheme() != b.qscheme():
        return False
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    if a.qscheme().name.startswith("per_tensor"):
        same = a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    else:
        same = (
            a.q_per_channel_axis() == b.q_per_channel_axis()
            and bool((a.q_per_channel_scales() == b.q_per_channel_scales()).all())
            and bool((a.q_per_channel_zero_points() == b.q_per_channel_zero_points()).all())
        )
    return same and bool((_Q.repr_view(a) == _Q.repr_view(b)).all())


def _max_pool2d(q, kernel_size, stride, padding, dilation, ceil_mode):
    """max_pool2d of a quantized tensor (what nn.functional.max_pool2d does for one): the
    maxima are input values, so pooling the integers as float32 is exact; the result keeps q's
    parameters."""
    r = _Q.repr_view(q)
    args = _pool_args(kernel_size, stride, padding, dilation)
    if r.dim() == 4 and r.dtype in (_C.uint8, _C.int8) and args is not None:
        k, s, p, d = args
        # 8-bit integers pooled in place, NHWC in and out (the layout of the convolutions)
        return _Q.from_repr(_Q.max_pool2d(r, k, s, p, d, bool(ceil_mode)), q)
    out = _C._nn.max_pool2d_with_indices(
        r.to(_C.float32), kernel_size, stride, padding, dilation, ceil_mode
    )[0]
    return _Q.from_repr(out.to(r.dtype), q)


def _pool_args(kernel_size, stride, padding, dilation):
    """max_pool2d's arguments as four pairs when they are valid (positive kernel, stride and
    dilation; padding at most half the kernel), else None (the float path checks and raises)."""

    def pair(v):
        if isinstance(v, int) and not isinstance(v, bool):
            return [v, v]
        if isinstance(v, (list, tuple)) and all(type(i) is int for i in v):
            if len(v) == 1:
                return [v[0], v[0]]
            if len(v) == 2:
                return list(v)
        return None

    k = pair(kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else pair(stride)
    p, d = pair(padding), pair(dilation)
    if None in (k, s, p, d):
        return None
    if min(k + s + d) < 1 or min(p) < 0 or p[0] > k[0] // 2 or p[1] > k[1] // 2:
        return None
    return k, s, p, d


def _gelu(q, approximate):
    """gelu of a quantized tensor (Note [Quantized activations]); torch's kernel keeps the zero
    point and the scale rounded to float32."""
    _per_tensor(q)
    y = _C._nn.gelu(_vec_dequantize(q), approximate)
    scale = _tensor(q.q_scale(), dtype=_C.float32).item()
    return _vec_quantize(y, scale, q.q_zero_point(), q.dtype)


def _threshold(q, threshold, value):
    """threshold of a quantized tensor: x > threshold ? x : value on the dequantized floats
    (float32 bounds, as torch's kernel compares), requantized in q's parameters."""
    _per_tensor(q)
    x = _vec_dequantize(q)
    bound = _tensor(float(threshold), dtype=_C.float32)
    y = _C._where(x > bound, x, _tensor(float(value), dtype=_C.float32))
    return _vec_quantize(y, q.q_scale(), q.q_zero_point(), q.dtype)


def _constant_pad(q, pad, value):
    """Constant padding of a quantized tensor: the integers padded with value quantized in q's
    parameters (torch fills the new entries through a quantized fill_), parameters kept."""
    _per_tensor(q)
    fill = quantize_per_tensor(
        _tensor([0.0 if value is None else float(value)]), q.q_scale(), q.q_zero_point(), q.dtype
    )
    r = _Q.repr_view(q)
    out = _C._nn.pad(r, pad, "constant", float(_Q.repr_view(fill).item()))
    return _Q.from_repr(out.contiguous(), q)


def _upsample_bilinear2d(q, output_size, align_corners, scales):
    """Bilinear resize of a quantized tensor as torch's kernel: the integers interpolated in
    float32 and requantized with the output scale over the input scale (1) through fbgemm's
    quantize, which adds the zero point before rounding: the interpolated integers rounded
    half to even; q's parameters kept."""
    r = _Q.repr_view(q)
    y = _C._nn.upsample_linear(r.to(_C.float32), output_size, align_corners, scales)
    lo, hi = _int_range(r.dtype)
    return _Q.from_repr(y.round().clamp(lo, hi).to(r.dtype).contiguous(), q)
