"""The quantized_decomposed operators (torch.ao.quantization.fx._decomposed): quantize and
dequantize with the quantization parameters passed as arguments, on plain integer tensors
(uint8, int8, int16, int32) rather than quantized tensors. They are what a decomposed reference
graph (quantize_fx._convert_to_reference_decomposed_fx) calls around each quantized op, so that
ember.export captures the q/dq pattern as one node per call, as torch's graphs do.

The per-token and per-channel-group variants (torchao's and ExecuTorch's int8 / int4 graphs)
and fake_quant_per_channel (with the straight-through gradient) are here too, as in torch.

Each kernel is torch's formula with ember's elementwise ops, in float32: quantize is
clamp(round(x * (1 / scale)) + zero_point, quant_min, quant_max) rounded half to even;
dequantize is (q - zero_point) * scale."""

import math

from ...._type_info import finfo, iinfo
from ....autograd.function import Function
from ....library import Library, impl
from ... import _torch as _t
from .. import _qtypes as qt
from ..utils import determine_qparams, validate_qmin_qmax

quantized_decomposed_lib = Library("quantized_decomposed", "DEF")

_DTYPE_TO_QVALUE_BOUNDS = {
    d: (iinfo(d).min, iinfo(d).max) for d in (_t.uint8, _t.int8, _t.int16, _t.int32)
}
_LOW_FLOATS = (_t.float16, _t.bfloat16)


def _quant_min_max_bounds_check(quant_min, quant_max, dtype):
    if dtype not in _DTYPE_TO_QVALUE_BOUNDS:
        raise ValueError(f"Unsupported dtype: {dtype}")
    lower, upper = _DTYPE_TO_QVALUE_BOUNDS[dtype]
    if quant_min < lower:
        raise AssertionError(
            "quant_min out of bounds for dtype, "
            f"quant_min_lower_bound: {lower} quant_min: {quant_min}"
        )
    if quant_max > upper:
        raise AssertionError(
            "quant_max out of bounds for dtype, "
            f"quant_max_upper_bound: {upper} quant_max: {quant_max}"
        )


def _float_input(input):
    if input.dtype in _LOW_FLOATS:
        input = input.to(_t.float32)
    if input.dtype != _t.float32:
        raise AssertionError(
            f"Expecting input to have dtype torch.float32, but got dtype: {input.dtype}"
        )
    return input


def _one_element(zero_point, scale):
    """The numbers held by one-element scale and zero-point tensors (the .tensor overloads)."""
    if zero_point.numel() != 1:
        raise AssertionError(
            f"Expecting zero_point tensor to be one element, but received : {zero_point.numel()}"
        )
    if scale.numel() != 1:
        raise AssertionError(
            f"Expecting scale tensor to be one element, but received : {scale.numel()}"
        )
    return scale.item(), zero_point.item()


def _check_axis(input, axis):
    if axis >= input.dim():
        raise AssertionError(f"Expecting axis to be < {input.dim()}")


def _along(values, input, axis):
    """values (one per channel) shaped to broadcast along input's dimension axis."""
    shape = [1] * input.dim()
    shape[axis] = values.shape[0]
    return values.view(shape)


_Q_ARGS = "int quant_min, int quant_max, ScalarType dtype"
_DQ_TAIL = ", *, ScalarType? out_dtype=None) -> Tensor"
for _schema in (
    f"quantize_per_tensor(Tensor input, float scale, int zero_point, {_Q_ARGS}) -> Tensor",
    f"quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, {_Q_ARGS}) "
    "-> Tensor",
    "quantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, "
    "Tensor quant_min, Tensor quant_max, ScalarType dtype) -> Tensor",
    f"dequantize_per_tensor(Tensor input, float scale, int zero_point, {_Q_ARGS}{_DQ_TAIL}",
    "dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, "
    f"{_Q_ARGS}{_DQ_TAIL}",
    "dequantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, "
    f"Tensor quant_min, Tensor quant_max, ScalarType dtype{_DQ_TAIL}",
    "choose_qparams.tensor(Tensor input, int quant_min, int quant_max, float eps, "
    "ScalarType dtype) -> (Tensor, Tensor)",
    "choose_qparams_symmetric.tensor(Tensor input, int quant_min, int quant_max, float eps, "
    "ScalarType dtype) -> (Tensor, Tensor)",
    "quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, "
    f"{_Q_ARGS}) -> Tensor",
    "dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, "
    f"{_Q_ARGS}{_DQ_TAIL}",
    "choose_qparams_per_token(Tensor input, ScalarType dtype) -> (Tensor, Tensor)",
    "_choose_qparams_per_token_asymmetric_impl(Tensor input, ScalarType dtype) -> (Tensor, Tensor)",
    "choose_qparams_per_token_asymmetric(Tensor input, ScalarType dtype) -> (Tensor, Tensor)",
    f"quantize_per_token(Tensor input, Tensor scales, Tensor zero_points, {_Q_ARGS}) -> Tensor",
    "dequantize_per_token(Tensor input, Tensor scales, Tensor zero_points, "
    f"{_Q_ARGS}, ScalarType output_dtype) -> Tensor",
    "quantize_per_channel_group(Tensor input, Tensor scales, Tensor zero_points, "
    f"{_Q_ARGS}, int group_size) -> Tensor",
    "dequantize_per_channel_group(Tensor input, Tensor scales, Tensor? zero_points, "
    f"{_Q_ARGS}, int group_size, ScalarType output_dtype) -> Tensor",
    "fake_quant_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, "
    "int quant_min, int quant_max) -> Tensor",
    "convert_element_type.no_fuse(Tensor input, ScalarType dtype) -> Tensor",
):
    quantized_decomposed_lib.define(_schema)


@impl(quantized_decomposed_lib, "quantize_per_tensor", "CompositeExplicitAutograd")
def quantize_per_tensor(input, scale, zero_point, quant_min, quant_max, dtype):
    input = _float_input(input)
    _quant_min_max_bounds_check(quant_min, quant_max, dtype)
    q = _t.round(input * (1.0 / scale)) + zero_point
    return _t.clamp(q, quant_min, quant_max).to(dtype)


@impl(quantized_decomposed_lib, "quantize_per_tensor.tensor", "CompositeExplicitAutograd")
def quantize_per_tensor_tensor(input, scale, zero_point, quant_min, quant_max, dtype):
    scale, zero_point = _one_element(zero_point, scale)
    return quantize_per_tensor(input, scale, zero_point, quant_min, quant_max, dtype)


@impl(quantized_decomposed_lib, "quantize_per_tensor.tensor2", "CompositeExplicitAutograd")
def quantize_per_tensor_tensor2(input, scale, zero_point, quant_min, quant_max, dtype):
    scale, zero_point = _one_element(zero_point, scale)
    return quantize_per_tensor(input, scale, zero_point, quant_min.item(), quant_max.item(), dtype)


@impl(quantized_decomposed_lib, "dequantize_per_tensor", "CompositeExplicitAutograd")
def dequantize_per_tensor(input, scale, zero_point, quant_min, quant_max, dtype, *, out_dtype=None):
    # quant_min, quant_max and dtype describe the input for pattern matching; torch checks
    # only that dtype is the input's.
    if input.dtype != dtype:
        raise AssertionError(f"Expecting input to have dtype: {dtype}, but got {input.dtype}")
    if dtype not in _DTYPE_TO_QVALUE_BOUNDS:
        raise ValueError(f"Unsupported dtype in dequantize_per_tensor: {dtype}")
    return (input.to(out_dtype or _t.float32) - zero_point) * scale


@impl(quantized_decomposed_lib, "dequantize_per_tensor.tensor", "CompositeExplicitAutograd")
def dequantize_per_tensor_tensor(
    input, scale, zero_point, quant_min, quant_max, dtype, *, out_dtype=None
):
    scale, zero_point = _one_element(zero_point, scale)
    return dequantize_per_tensor(
        input, scale, zero_point, quant_min, quant_max, dtype, out_dtype=out_dtype
    )


@impl(quantized_decomposed_lib, "dequantize_per_tensor.tensor2", "CompositeExplicitAutograd")
def dequantize_per_tensor_tensor2(
    input, scale, zero_point, quant_min, quant_max, dtype, *, out_dtype=None
):
    scale, zero_point = _one_element(zero_point, scale)
    return dequantize_per_tensor(
        input, scale, zero_point, quant_min.item(), quant_max.item(), dtype, out_dtype=out_dtype
    )


def _choose_qparams(input, qmin, qmax, eps, dtype, qscheme):
    if input.dtype not in (_t.float32, *_LOW_FLOATS):
        raise AssertionError(
            f"Expecting input to have dtype torch.float32/16/b16, but got dtype: {input.dtype}"
        )
    if dtype not in _DTYPE_TO_QVALUE_BOUNDS:
        raise AssertionError(
            f"Expecting target dtype to be one of {_DTYPE_TO_QVALUE_BOUNDS.keys()}, "
            f"but got: {dtype}"
        )
    validate_qmin_qmax(qmin, qmax)
    min_val, max_val = _t.aminmax(input)
    eps = _t.tensor([eps], dtype=_t.float32)
    return determine_qparams(min_val, max_val, qmin, qmax, dtype, eps, False, qscheme)


@impl(quantized_decomposed_lib, "choose_qparams.tensor", "CompositeExplicitAutograd")
def choose_qparams_tensor(input, qmin, qmax, eps, dtype):
    return _choose_qparams(input, qmin, qmax, eps, dtype, qt.per_tensor_affine)


@impl(quantized_decomposed_lib, "choose_qparams_symmetric.tensor", "CompositeExplicitAutograd")
def choose_qparams_symmetric_tensor(input, qmin, qmax, eps, dtype):
    return _choose_qparams(input, qmin, qmax, eps, dtype, qt.per_tensor_symmetric)


@impl(quantized_decomposed_lib, "quantize_per_channel", "CompositeExplicitAutograd")
def quantize_per_channel(input, scales, zero_points, axis, quant_min, quant_max, dtype):
    input = _float_input(input)
    _check_axis(input, axis)
    _quant_min_max_bounds_check(quant_min, quant_max, dtype)
    q = _t.round(input * (1.0 / _along(scales, input, axis))) + _along(zero_points, input, axis)
    return _t.clamp(q, quant_min, quant_max).to(dtype)


@impl(quantized_decomposed_lib, "dequantize_per_channel", "CompositeExplicitAutograd")
def dequantize_per_channel(
    input, scales, zero_points, axis, quant_min, quant_max, dtype, *, out_dtype=None
):
    if input.dtype != dtype:
        raise AssertionError(
            f"Expecting input to have dtype: {dtype}, but got dtype: {input.dtype}"
        )
    _check_axis(input, axis)
    _quant_min_max_bounds_check(quant_min, quant_max, dtype)
    if zero_points is not None:
        input = input - _along(zero_points, input, axis)
    return (input * _along(scales, input, axis)).to(out_dtype or _t.float32)


def _quantized_like(input, quant_min, quant_max, dtype):
    _float_input(input)
    return _t.empty_like(input, dtype=dtype)


@impl(quantized_decomposed_lib, "quantize_per_tensor", "Meta")
@impl(quantized_decomposed_lib, "quantize_per_tensor.tensor", "Meta")
@impl(quantized_decomposed_lib, "quantize_per_tensor.tensor2", "Meta")
def _quantize_per_tensor_meta(input, scale, zero_point, quant_min, quant_max, dtype):
    return _quantized_like(input, quant_min, quant_max, dtype)


@impl(quantized_decomposed_lib, "quantize_per_channel", "Meta")
def _quantize_per_channel_meta(input, scales, zero_points, axis, quant_min, quant_max, dtype):
    _check_axis(input, axis)
    _quant_min_max_bounds_check(quant_min, quant_max, dtype)
    return _quantized_like(input, quant_min, quant_max, dtype)


@impl(quantized_decomposed_lib, "dequantize_per_tensor", "Meta")
@impl(quantized_decomposed_lib, "dequantize_per_tensor.tensor", "Meta")
@impl(quantized_decomposed_lib, "dequantize_per_tensor.tensor2", "Meta")
@impl(quantized_decomposed_lib, "dequantize_per_channel", "Meta")
def _dequantize_meta(input, *args, out_dtype=None):
    return _t.empty_like(input, dtype=out_dtype or _t.float32)


@impl(quantized_decomposed_lib, "choose_qparams_per_token", "CompositeExplicitAutograd")
def choose_qparams_per_token(input, dtype):
    """Symmetric int8 scales per token (the last dimension's rows), zero points 0."""
    scales = input.abs().amax(dim=-1, keepdim=True)
    if scales.dtype == _t.float16:
        scales = scales.float()  # torch's: fp16 scales could overflow
    if dtype != _t.int8:
        raise Exception(f"unsupported dtype in choose_qparams_per_token: {dtype}")  # noqa: TRY002
    scales = scales.clamp(min=1e-5).div(127)
    return scales, _t.zeros_like(scales)


@impl(quantized_decomposed_lib, "_choose_qparams_per_token_asymmetric_impl")
def _choose_qparams_per_token_asymmetric_impl(input, dtype):
    """Asymmetric int8 qparams per token, the zero point chosen by the smaller rounding error
    at either end of the range (torch's rule)."""
    qmin, qmax = -128, 127
    min_val_neg = _t.minimum(input.amin(dim=-1, keepdim=True), _t.zeros(1, dtype=input.dtype))
    max_val_pos = _t.maximum(input.amax(dim=-1, keepdim=True), _t.zeros(1, dtype=input.dtype))
    scale = ((max_val_pos - min_val_neg) / float(qmax - qmin)).clamp(min=finfo(_t.float32).eps)
    descaled_min, descaled_max = min_val_neg / scale, max_val_pos / scale
    from_min, from_max = qmin + descaled_min, qmax + descaled_max
    zero_point = _t.where(from_min + from_max > 0, qmin - descaled_min, qmax - descaled_max)
    zero_point = _t.clamp(zero_point, qmin, qmax).round()
    return scale.to(_t.float64), zero_point.to(_t.int64)


@impl(quantized_decomposed_lib, "choose_qparams_per_token_asymmetric", "CompositeExplicitAutograd")
def choose_qparams_per_token_asymmetric(input, dtype):
    return _choose_qparams_per_token_asymmetric_impl(input, dtype)


def _per_token_quant_qparam_dim_check(input, scales, zero_points):
    num_tokens = math.prod(list(input.size())[:-1])
    if num_tokens != scales.numel():
        raise AssertionError(f"num_tokens: {num_tokens} scales: {scales.size()}")
    if num_tokens != zero_points.numel():
        raise AssertionError(f"num_tokens: {num_tokens} zero_points: {zero_points.size()}")


@impl(quantized_decomposed_lib, "quantize_per_token", "CompositeExplicitAutograd")
def quantize_per_token(input, scales, zero_points, quant_min, quant_max, dtype):
    _quant_min_max_bounds_check(quant_min, quant_max, dtype)
    _per_token_quant_qparam_dim_check(input, scales, zero_points)
    q = input.mul(1.0 / scales).add(zero_points).round()
    return q.clamp(quant_min, quant_max).to(dtype)


@impl(quantized_decomposed_lib, "dequantize_per_token", "CompositeExplicitAutograd")
def dequantize_per_token(
    input, scales, zero_points, quant_min, quant_max, dtype, output_dtype=_t.float32
):
    return ((input - zero_points) * scales).to(output_dtype)


def _group_size(input, scales, group_size, name):
    """The group size checked as torch checks it (one group when it exceeds a row)."""
    if group_size <= 1:
        raise AssertionError("group_size must be > 1")
    if group_size > input.shape[-1] and scales.shape[-1] == 1:
        group_size = input.shape[-1]
    if input.shape[-1] % group_size != 0:
        raise AssertionError(f"{name}.shape[-1] must be divisible by group_size")
    if input.dim() != 2:
        raise AssertionError(f"{name} must be 2-dimensional")
    return group_size


@impl(quantized_decomposed_lib, "quantize_per_channel_group", "CompositeExplicitAutograd")
def quantize_per_channel_group(
    input, scales, zero_points, quant_min, quant_max, dtype, group_size=128
):
    group_size = _group_size(input, scales, group_size, "input")
    to_quant = input.reshape(-1, group_size)
    if int(_t.isnan(to_quant).sum()) != 0:
        raise AssertionError("to_quant must not contain NaNs")
    q = to_quant.mul(1.0 / scales.reshape(-1, 1)).add(zero_points.reshape(-1, 1)).round()
    return q.clamp(quant_min, quant_max).to(dtype).reshape_as(input)


@impl(quantized_decomposed_lib, "dequantize_per_channel_group", "CompositeExplicitAutograd")
def dequantize_per_channel_group(
    input,
    scales,
    zero_points,
    quant_min,
    quant_max,
    dtype,
    group_size=128,
    output_dtype=_t.float32,
):
    group_size = _group_size(input, scales, group_size, "w_int8")
    zp = _t.zeros((), dtype=_t.int32) if zero_points is None else zero_points.reshape(-1, 1)
    grouped = input.reshape(-1, group_size).sub(zp).mul(scales.reshape(-1, 1))
    return grouped.reshape_as(input).to(output_dtype)


class _FakeQuantPerChannel(Function):
    """Quantize-dequantize per channel; the gradient passes where the value was not clamped."""

    @staticmethod
    def forward(ctx, input, scales, zero_points, axis, quant_min, quant_max):
        scales, zero_points = scales.to(_t.float32), zero_points.to(_t.int32)
        if input.dtype != _t.float32:
            raise AssertionError(
                f"Expecting input to have dtype torch.float32, but got dtype: {input.dtype}"
            )
        _check_axis(input, axis)
        scales, zero_points = _along(scales, input, axis), _along(zero_points, input, axis)
        temp = _t.round(input * (1.0 / scales)) + zero_points
        ctx.save_for_backward(_t.logical_and(temp >= quant_min, temp <= quant_max))
        return (_t.clamp(temp, quant_min, quant_max) - zero_points) * scales

    @staticmethod
    def backward(ctx, gy):
        (mask,) = ctx.saved_tensors
        return gy * mask, None, None, None, None, None


@impl(quantized_decomposed_lib, "fake_quant_per_channel", "Autograd")
def fake_quant_per_channel(input, scales, zero_points, axis, quant_min, quant_max):
    return _FakeQuantPerChannel.apply(input, scales, zero_points, axis, quant_min, quant_max)


@impl(quantized_decomposed_lib, "convert_element_type.no_fuse", "CompositeExplicitAutograd")
def convert_element_type(input, dtype):
    """A dtype conversion that graph passes leave alone (torch's prims.convert_element_type)."""
    return input.to(dtype)


@impl(quantized_decomposed_lib, "choose_qparams_per_token", "Meta")
@impl(quantized_decomposed_lib, "choose_qparams_per_token_asymmetric", "Meta")
def _per_token_qparams_meta(input, dtype):
    size = [*input.shape[:-1], 1]
    return _t.empty(size, dtype=_t.float64), _t.empty(size, dtype=_t.int64)


@impl(quantized_decomposed_lib, "quantize_per_token", "Meta")
def _quantize_per_token_meta(input, scales, zero_points, quant_min, quant_max, dtype):
    _quant_min_max_bounds_check(quant_min, quant_max, dtype)
    return _t.empty_like(input, dtype=dtype)


@impl(quantized_decomposed_lib, "dequantize_per_token", "Meta")
def _dequantize_per_token_meta(input, *args, output_dtype=_t.float32):
    if len(args) == 6:
        output_dtype = args[5]
    return _t.empty_like(input, dtype=output_dtype)


@impl(quantized_decomposed_lib, "quantize_per_channel_group", "Meta")
def _quantize_per_channel_group_meta(
    input, scales, zero_points, quant_min, quant_max, dtype, group_size=128
):
    _group_size(input, scales, group_size, "input")
    return _t.empty_like(input, dtype=dtype)


@impl(quantized_decomposed_lib, "fake_quant_per_channel", "Meta")
def _fake_quant_per_channel_meta(input, *args):
    return _t.empty_like(input)


@impl(quantized_decomposed_lib, "convert_element_type.no_fuse", "Meta")
def _convert_element_type_meta(input, dtype):
    return _t.empty_like(input, dtype=dtype)
