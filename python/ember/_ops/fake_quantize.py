"""torch.fake_quantize_per_tensor_affine and torch.fake_quantize_per_channel_affine: quantize and
immediately dequantize in float (round(x / scale) + zero_point, clamped to [quant_min, quant_max])
with torch's straight-through gradient, which passes the incoming gradient where the value was
not clamped and zero where it was.

Built from existing ops (an autograd.Function whose backward multiplies by the saved in-range
mask) rather than a kernel; the arithmetic is torch's kernel's in float32: x * (1 / scale),
rounded half to even."""

from .. import _C
from .._autocast_policy import fp32 as _autocast_fp32
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from .creation import tensor as _tensor

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]


def _as_float_tensor(v):
    if isinstance(v, _C.Tensor):
        return v.detach().to(_C.float32)
    return _tensor(float(v), dtype=_C.float32)


def _as_zp_tensor(v):
    if isinstance(v, _C.Tensor):
        return v.detach().to(_C.float32)
    return _tensor(float(int(v)), dtype=_C.float32)


class _FakeQuant(Function):
    """Quantize-dequantize with the straight-through gradient masked to the unclamped entries."""

    @staticmethod
    def forward(ctx, input, scale, zero_point, quant_min, quant_max):
        # clamp(round(x / s) + z, lo, hi) - z == clamp(round(x / s), lo - z, hi - z): every
        # value is an integer held exactly in float32, so this is torch's result with two fewer
        # passes over the data.
        lo, hi = quant_min - zero_point, quant_max - zero_point
        q = _C.round(input * _C.reciprocal(scale))
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward((q >= lo) & (q <= hi))
        return (_C.clamp(q, lo, hi) * scale).to(input.dtype)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * mask, None, None, None, None


def _fake_quant(input, scale, zero_point, quant_min, quant_max):
    if input.requires_grad:
        return _FakeQuant.apply(input, scale, zero_point, quant_min, quant_max)
    with no_grad():
        return _FakeQuant.forward(_NoGradCtx, input, scale, zero_point, quant_min, quant_max)


class _NoGradCtx:
    needs_input_grad = (False,)


# c10's names of the scalar types, as torch's dtype checks print them.
_TITLES = {"int64": "Long", "int8": "Char", "uint8": "Byte", "int16": "Short", "float64": "Double"}


def _dtype_title(dtype):
    name = repr(dtype).split(".")[-1]
    return _TITLES.get(name, name.capitalize())


def _check_range(name, quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError(
            f"{name}: expected `quant_min` to be less than or equal to `quant_max`; "
            f"got {quant_min} and {quant_max}"
        )


@_autocast_fp32
def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max) -> Tensor

    Returns input quantized with one scale and zero point and dequantized back to float:
    (clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale. The
    gradient flows straight through where the value was inside the range and is zero outside."""
    _check_range("fake_quantize_per_tensor_affine", quant_min, quant_max)
    if input.dtype not in (_C.float32, _C.float64, _C.float16, _C.bfloat16):
        raise RuntimeError(
            f"fake_quantize_per_tensor_affine: expected a floating point input; got {input.dtype}"
        )
    s = _as_float_tensor(scale).reshape([])
    z = _as_zp_tensor(zero_point).reshape([])
    return _fake_quant(input, s, z, quant_min, quant_max)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min,
        quant_max) -> Tensor

    Returns input quantized with one scale and zero point per slice along axis and dequantized
    back to float, with the straight-through gradient of fake_quantize_per_tensor_affine."""
    _check_range("fake_quantize_per_channel_affine", quant_min, quant_max)
    if scale.dim() != 1 or zero_point.dim() != 1:
        raise RuntimeError(
            "fake_quantize_per_channel_affine: expected 1-D scale and zero_point; got "
            f"{scale.dim()}-D and {zero_point.dim()}-D"
        )
    if scale.dtype not in (_C.float32, _C.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {_dtype_title(scale.dtype)}")
    if zero_point.dtype not in (_C.int32, _C.float32, _C.float16):
        raise RuntimeError(
            f"Zero-point must be Int32, Float or Half, found {_dtype_title(zero_point.dtype)}"
        )
    axis = axis + input.dim() if axis < 0 else axis
    if scale.numel() != input.shape[axis] or zero_point.numel() != input.shape[axis]:
        raise RuntimeError(
            "fake_quantize_per_channel_affine: expected dimensions of scale and zero-point to "
            f"match the input's size {input.shape[axis]} along axis {axis}; got "
            f"{scale.numel()} and {zero_point.numel()}"
        )
    shape = [1] * input.dim()
    shape[axis] = -1
    s = _as_float_tensor(scale).reshape(shape)
    z = _as_zp_tensor(zero_point).reshape(shape)
    return _fake_quant(input, s, z, quant_min, quant_max)
