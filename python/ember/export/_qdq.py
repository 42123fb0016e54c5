"""quantized_decomposed quantize / dequantize calls in an exported program, lowered for
run_decompositions (so for save and the C++ runtime) onto the runtime ops their definitions
compute with (ao/quantization/fx/_decomposed.py): round(x * (1 / scale)) + zero_point,
clamped to [quant_min, quant_max] and converted to the integer dtype; (q - zero_point) * scale
back. The arithmetic is the definitions', op for op, so a saved program gives their results bit
for bit. torch saves these calls by name and its loader resolves them to the Python operators;
ember's file holds runtime ops only, which its C++ runtime runs without Python."""

import sys

__all__ = ["lower"]

_FLOATS = ("bfloat16", "float16")


def _ember():
    return sys.modules["ember"]


def _as_float(x, val):
    """The definitions' input conversion: bfloat16 / float16 values are quantized from float32."""
    if str(getattr(val, "dtype", "")).split(".")[-1] in _FLOATS:
        return x.to(_ember().float32)
    return x


def _along(values, val_input, val_values, axis):
    shape = [1] * val_input.dim()
    shape[axis] = val_values.shape[0]
    return values.view(shape)


def _decomposition(node):
    """A function of the node's arguments computing it from runtime ops, or None."""
    name = str(node.target)
    if not name.startswith("quantized_decomposed.") or node.op != "call_function":
        return None
    e = _ember()
    vals = [a.meta.get("val") if hasattr(a, "meta") else a for a in node.args]
    if name == "quantized_decomposed.quantize_per_tensor.default" and not node.kwargs:

        def quantize(x, scale, zero_point, quant_min, quant_max, dtype):
            q = e.round(_as_float(x, vals[0]) * (1.0 / scale)) + zero_point
            return e.clamp(q, quant_min, quant_max).to(dtype)

        return quantize
    if name == "quantized_decomposed.dequantize_per_tensor.default":
        out_dtype = node.kwargs.get("out_dtype") or e.float32

        def dequantize(x, scale, zero_point, quant_min, quant_max, dtype):
            return (x.to(out_dtype) - zero_point) * scale

        return dequantize
    if name == "quantized_decomposed.quantize_per_channel.default" and not node.kwargs:

        def quantize_channels(x, scales, zero_points, axis, quant_min, quant_max, dtype):
            inv = 1.0 / _along(scales, vals[0], vals[1], axis)
            zp = _along(zero_points, vals[0], vals[2], axis)
            q = e.round(_as_float(x, vals[0]) * inv) + zp
            return e.clamp(q, quant_min, quant_max).to(dtype)

        return quantize_channels
    if name == "quantized_decomposed.dequantize_per_channel.default":
        out_dtype = node.kwargs.get("out_dtype") or e.float32

        def dequantize_channels(x, scales, zero_points, axis, quant_min, quant_max, dtype):
            if zero_points is not None:
                x = x - _along(zero_points, vals[0], vals[2], axis)
            return (x * _along(scales, vals[0], vals[1], axis)).to(out_dtype)

        return dequantize_channels
    return None


def lower(graph):
    """``graph`` with its quantize / dequantize calls replaced by runtime-op calls (the same
    graph when it has none)."""
    from ._decomp import apply

    return apply(graph, None, _decomposition)
