"""Helpers shared by the quantization workflows (torch.ao.quantization.utils): the integer range
of an observer, min/max validity, qscheme predicates and module-path helpers."""

import warnings

from .. import _torch as _t
from . import _qtypes as qt

__all__ = [
    "calculate_qmin_qmax",
    "check_min_max_valid",
    "validate_qmin_qmax",
    "get_qparam_dict",
    "activation_is_statically_quantized",
    "activation_is_dynamically_quantized",
    "weight_is_quantized",
    "op_is_int8_dynamically_quantized",
    "get_combined_dict",
    "determine_qparams",
]


def _is_per_tensor(qscheme):
    return qscheme in qt.PER_TENSOR


def _is_per_channel(qscheme):
    return qscheme in qt.PER_CHANNEL


def _is_float_qparams(qscheme):
    return qscheme == qt.per_channel_affine_float_qparams


def _is_symmetric(qscheme):
    return qscheme in qt.SYMMETRIC


def validate_qmin_qmax(quant_min, quant_max):
    """validate_qmin_qmax(quant_min, quant_max)

    Raises AssertionError unless a user-chosen integer range holds zero and is not empty."""
    if not quant_min <= 0 <= quant_max:
        raise AssertionError("Used-specified quantization range must include 0.")
    if quant_min >= quant_max:
        raise AssertionError(
            "qmin must be strictly less than qmax for user-specified quantization range."
        )


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range)

    The integer range an observer quantizes to: the user's range (halved by reduce_range) or the
    dtype's full range (one bit less with reduce_range)."""
    if has_customized_qrange:
        span = quant_max - quant_min + 1
        if dtype in (qt.qint8, qt.int8) and not 0 < span <= 256:
            raise AssertionError(
                "quantization range should be positive and not exceed the maximum bit range (=256)."
            )
        if dtype in (qt.qint32, qt.int32) and not 0 < span <= 2**32:
            raise AssertionError(
                "quantization range should be positive and not exceed the maximum bit range "
                "(=4294967296)."
            )
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in (qt.qint8, qt.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (qt.quint8, qt.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (qt.qint32, qt.int32):
        return -(2**31), 2**31 - 1
    if dtype == qt.int16:
        return -(2**15), 2**15 - 1
    return 0, 15


def check_min_max_valid(min_val, max_val):
    """check_min_max_valid(min_val, max_val) -> bool

    False (with a warning) when the observer has seen no data; raises when min exceeds max."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn(
            "must run observer before calling calculate_qparams. Returning default values.",
            stacklevel=2,
        )
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            warnings.warn(
                "must run observer before calling calculate_qparams. Returning default values.",
                stacklevel=2,
            )
            return False
        if float(min_val) > float(max_val):
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif bool((min_val > max_val).any()):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True


def get_qparam_dict(observer_or_fake_quant):
    """get_qparam_dict(observer_or_fake_quant)

    The qscheme, dtype, scale, zero point, axis and range of an observer as a dict."""
    qscheme = getattr(observer_or_fake_quant, "qscheme", None)
    out = {"qscheme": qscheme, "dtype": observer_or_fake_quant.dtype}
    if not qscheme:
        return out
    scale, zero_point = observer_or_fake_quant.calculate_qparams()
    if _is_per_channel(qscheme):
        out["axis"] = observer_or_fake_quant.ch_axis
    else:
        scale, zero_point = float(scale), int(zero_point)
    out["scale"] = scale
    out["zero_point"] = zero_point
    if hasattr(observer_or_fake_quant, "quant_min"):
        out["quant_min"] = observer_or_fake_quant.quant_min
    if hasattr(observer_or_fake_quant, "quant_max"):
        out["quant_max"] = observer_or_fake_quant.quant_max
    return out


def _get_dtypes(qconfig):
    act = qconfig.activation()
    weight = qconfig.weight()
    return act.dtype, weight.dtype, getattr(act, "is_dynamic", False)


def activation_is_statically_quantized(qconfig):
    """activation_is_statically_quantized(qconfig) -> bool

    Whether the qconfig's activations are quantized ahead of time (static quantization)."""
    act, _, dynamic = _get_dtypes(qconfig)
    return act in qt.QUANTIZED_DTYPES + (qt.float16, qt.int8, qt.uint8) and not dynamic


def activation_is_dynamically_quantized(qconfig):
    """activation_is_dynamically_quantized(qconfig) -> bool

    Whether the qconfig quantizes activations on the fly (dynamic quantization)."""
    _, _, dynamic = _get_dtypes(qconfig)
    return dynamic


def weight_is_quantized(qconfig):
    """weight_is_quantized(qconfig) -> bool

    Whether the qconfig quantizes weights (to an integer type or float16)."""
    _, weight, _ = _get_dtypes(qconfig)
    return weight in qt.QUANTIZED_DTYPES + (qt.float16, qt.int8, qt.uint8)


def op_is_int8_dynamically_quantized(qconfig):
    """op_is_int8_dynamically_quantized(qconfig) -> bool

    Whether the qconfig asks for int8 dynamic quantization (quint8 activations, qint8 weights)."""
    act, weight, dynamic = _get_dtypes(qconfig)
    return act == qt.quint8 and weight == qt.qint8 and dynamic


def get_combined_dict(default_dict, additional_dict):
    """get_combined_dict(default_dict, additional_dict)

    A copy of default_dict updated with additional_dict."""
    out = dict(default_dict)
    out.update(additional_dict)
    return out


def _parent_name(target):
    """('a.b', 'c') for 'a.b.c'; ('', 'c') for 'c'."""
    parent, _, name = target.rpartition(".")
    return parent, name


def determine_qparams(
    min_val, max_val, quant_min, quant_max, dtype, eps, has_customized_qrange, qscheme=None
):
    """determine_qparams(min_val, max_val, quant_min, quant_max, dtype, eps,
        has_customized_qrange, qscheme=per_tensor_affine) -> (scale, zero_point)

    Scale (float64) and zero point (int64) tensors, one per channel (shape (1,) per tensor),
    for the observed range; (tensor([1.]), tensor([0])) when nothing was observed."""
    if qscheme is None:
        qscheme = qt.per_tensor_affine
    if not check_min_max_valid(min_val, max_val):
        return _t.tensor([1.0]), _t.tensor([0])
    min_val_neg = _t.minimum(min_val, _t.zeros_like(min_val))
    max_val_pos = _t.maximum(max_val, _t.zeros_like(max_val))
    zero_point = _t.zeros(min_val_neg.size(), dtype=_t.int64)
    if _is_symmetric(qscheme):
        max_val_pos = _t.maximum(-min_val_neg, max_val_pos)
        scale = _t.maximum(max_val_pos / (float(quant_max - quant_min) / 2), eps)
        if dtype in (qt.uint8, qt.quint8):
            mid = (quant_min + quant_max) // 2 if has_customized_qrange else 128
            zero_point = _t.full(zero_point.size(), mid, dtype=_t.int64)
    elif _is_float_qparams(qscheme):
        scale = (max_val - min_val) / float(quant_max - quant_min)
        scale = _t.where(scale > eps, scale, _t.ones_like(scale))
        zero_point = -1 * min_val / scale
    else:
        scale = _t.maximum((max_val_pos - min_val_neg) / float(quant_max - quant_min), eps)
        zero_point = quant_min - _t.round(min_val_neg / scale).to(_t.int32)
        zero_point = _t.clamp(zero_point, quant_min, quant_max)
    if scale.dim() == 0:
        scale = scale.reshape(1)
    if zero_point.dim() == 0:
        zero_point = zero_point.reshape(1)
    return scale.to(_t.float64), zero_point.to(_t.int64)
