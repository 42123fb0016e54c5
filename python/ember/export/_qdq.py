"""quantized_decomposed quantize / dequantize calls in an exported program, lowered for
run_decompositions (so for save and the C++ runtime) onto the runtime ops their definitions
compute with (ao/quantization/fx/_decomposed.py): round(x * (1 / scale)) + zero_point,
clamped to [quant_min, quant_max] and converted to the integer dtype; (q - zero_point) * scale
back. The arithmetic is the definitions', op for op, so a saved program gives their results bit
for bit. torch saves these calls by name and its loader resolves them to the Python operators;
ember's file holds runtime ops only, which its C++ runtime runs without Python.

The ``.tensor`` / ``.tensor2`` overloads (scale, zero point and, for tensor2, the bounds held by
one-element tensors, as dynamic quantization's graphs pass them from choose_qparams.tensor) read
those as 0-d tensors: a 0-d float64 scale and int64 zero point enter float32 arithmetic as the
Python numbers the definitions take from ``.item()`` do. choose_qparams(_symmetric).tensor is
lowered to determine_qparams' arithmetic on the input's minimum and maximum."""

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


def _scalar(t):
    """A one-element tensor as a 0-d one (a number in promotion, as ``.item()`` would give)."""
    return t.reshape(())


def _choose_qparams(e, symmetric):
    """determine_qparams' arithmetic for a per-tensor range (without its check of an empty
    range, which a tensor's own minimum and maximum never are)."""

    def choose(x, quant_min, quant_max, eps, dtype):
        lo, hi = e.amin(x), e.amax(x)
        neg = e.minimum(lo, e.zeros_like(lo))
        pos = e.maximum(hi, e.zeros_like(hi))
        if symmetric:
            pos = e.maximum(-neg, pos)
            scale = pos / (float(quant_max - quant_min) / 2)
        else:
            scale = (pos - neg) / float(quant_max - quant_min)
        # max(scale, tensor([eps])): a float32 scale of shape (1,)
        scale = e.clamp(scale.to(e.float32).reshape(1), min=eps)
        if symmetric:
            mid = 128 if dtype in (e.uint8, e.quint8) else 0
            zero_point = e.zeros_like(scale, dtype=e.int64) + mid
        else:
            zero_point = quant_min - e.round(neg / scale).to(e.int32)
            zero_point = e.clamp(zero_point, quant_min, quant_max)
        return scale.to(e.float64), zero_point.to(e.int64)

    return choose


def _per_tensor_tensor(e, name, node, vals):
    """The decomposition of a .tensor / .tensor2 per-tensor overload or choose_qparams, or
    None."""
    if name in (
        "quantized_decomposed.choose_qparams.tensor",
        "quantized_decomposed.choose_qparams_symmetric.tensor",
    ):
        return _choose_qparams(e, "symmetric" in name)
    kind, _, overload = name[len("quantized_decomposed.") :].rpartition(".")
    if overload not in ("tensor", "tensor2"):
        return None
    if kind == "quantize_per_tensor" and not node.kwargs:

        def quantize(x, scale, zero_point, quant_min, quant_max, dtype):
            if overload == "tensor2":
                quant_min, quant_max = _scalar(quant_min), _scalar(quant_max)
            q = e.round(_as_float(x, vals[0]) * _scalar(scale).reciprocal()) + _scalar(zero_point)
            return e.clamp(q, quant_min, quant_max).to(dtype)

        return quantize
    if kind == "dequantize_per_tensor":

        def dequantize(x, scale, zero_point, quant_min, quant_max, dtype, out_dtype=None):
            return (x.to(out_dtype or e.float32) - _scalar(zero_point)) * _scalar(scale)

        return dequantize
    return None


def _decomposition(node):
    """A function of the node's arguments computing it from runtime ops, or None."""
    name = str(node.target)
    if not name.startswith("quantized_decomposed.") or node.op != "call_function":
        return None
    e = _ember()
    vals = [a.meta.get("val") if hasattr(a, "meta") else a for a in node.args]
    per_tensor = _per_tensor_tensor(e, name, node, vals)
    if per_tensor is not None:
        return per_tensor
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


def _fill_vals(graph):
    """Example values for the nodes the decompositions added (the call's own node keeps the
    call's): computed from their inputs' ones, so that mapping onto the runtime ops tells
    tensors from numbers."""
    from .. import fx

    def val(a):
        return fx.map_arg(a, lambda n: n.meta["val"])

    for node in graph.nodes:
        if "val" in node.meta or node.op not in ("call_function", "call_method"):
            continue
        inputs = node.all_input_nodes
        if not all("val" in n.meta for n in inputs):
            continue
        args, kwargs = val(node.args), val(node.kwargs)
        if node.op == "call_method":
            self_, *rest = args
            node.meta["val"] = getattr(self_, node.target)(*rest, **kwargs)
        else:
            node.meta["val"] = node.target(*args, **kwargs)


def lower(graph):
    """``graph`` with its quantize / dequantize calls replaced by runtime-op calls (the same
    graph when it has none)."""
    from ._decomp import apply

    new = apply(graph, None, _decomposition)
    if new is not graph:
        _fill_vals(new)
    return new
