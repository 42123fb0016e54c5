"""Quantized Linear (torch.ao.nn.quantized.Linear) and its packed parameters."""

from .....nn.modules.module import Module
from .. import _ops
from .utils import (
    WeightedQuantizedModule,
    _ember,
    _hide_packed_params_repr,
    _is_float_module,
    _quantize_weight,
    _tensor,
)

__all__ = ["LinearPackedParams", "Linear"]


class LinearPackedParams(Module):
    """Holds a qint8 weight and float bias packed for the int8 GEMM; its state dict is torch's
    (`dtype`, `_packed_params` = (weight, bias))."""

    _version = 3

    def __init__(self, dtype=None):
        super().__init__()
        e = _ember()
        self.dtype = e.qint8 if dtype is None else dtype
        if self.dtype == e.qint8:
            wq = e._empty_affine_quantized([1, 1], scale=1.0, zero_point=0, dtype=e.qint8)
        elif self.dtype == e.float16:
            wq = e.zeros([1, 1], dtype=e.float32)
        else:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        self.set_weight_bias(wq, None)

    def set_weight_bias(self, weight, bias):
        """set_weight_bias(weight, bias) -> None

        Packs a qint8 weight and a float bias (or None); with dtype float16, a float weight
        rounded to float16 (saturated at its range, as torch's fp16 packing)."""
        if self.dtype == _ember().float16:
            self._packed_params = (_ops.fp16_weight(weight), bias)
        else:
            self._packed_params = _ops.linear_prepack(weight, bias)

    def _weight_bias(self):
        if self.dtype == _ember().float16:
            return self._packed_params
        return _ops.linear_unpack(self._packed_params)

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            self.dtype = _ember().qint8
        else:
            self.dtype = state_dict.pop(prefix + "dtype")
        if version is None or version < 3:
            self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        if version == 3:
            weight, bias = state_dict.pop(prefix + "_packed_params")
            self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def __repr__(self):
        return self._weight_bias().__repr__()


class Linear(WeightedQuantizedModule):
    """Linear(in_features, out_features, bias_=True, dtype=qint8)

    A linear layer on quint8 tensors: int8 weights, int32 accumulation, the output requantized
    with `scale` and `zero_point`."""

    _version = 3
    _FLOAT_MODULE_NAMES = ("Linear", "NonDynamicallyQuantizableLinear")
    _FUSED_RELU = "LinearReLU"

    def __init__(self, in_features, out_features, bias_=True, dtype=None):
        super().__init__()
        e = _ember()
        dtype = e.qint8 if dtype is None else dtype
        self.in_features = in_features
        self.out_features = out_features
        bias = e.zeros(out_features, dtype=e.float32) if bias_ else None
        if dtype == e.qint8:
            qweight = e._empty_affine_quantized(
                [out_features, in_features], scale=1, zero_point=0, dtype=e.qint8
            )
        elif dtype == e.float16:  # the dynamic Linear's fp16 form
            qweight = e.zeros([out_features, in_features], dtype=e.float32)
        else:
            raise RuntimeError("Unsupported dtype specified for quantized Linear!")
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "QuantizedLinear"

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"scale={self.scale}, zero_point={self.zero_point}, "
            f"qscheme={self.weight().qscheme()}"
        )

    def __repr__(self):
        return _hide_packed_params_repr(self, LinearPackedParams)

    def forward(self, x):
        return _ops.linear(x, self._packed_params._packed_params, self.scale, self.zero_point)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = _tensor(self.scale)
        destination[prefix + "zero_point"] = _tensor(self.zero_point)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        version = local_metadata.get("version", None)
        if version is None or version == 1:
            weight = state_dict.pop(prefix + "weight")
            bias = state_dict.pop(prefix + "bias")
            state_dict[prefix + "_packed_params.weight"] = weight
            state_dict[prefix + "_packed_params.bias"] = bias
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        """weight() -> Tensor

        The qint8 weight."""
        return self._weight_bias()[0]

    def bias(self):
        """bias() -> Optional[Tensor]

        The float bias."""
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        """set_weight_bias(w, b) -> None

        Replaces the qint8 weight and float bias (packing them)."""
        self._packed_params.set_weight_bias(w, b)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> Linear

        The quantized module of an observed float Linear (or fused LinearReLU, or QAT Linear):
        the weight quantized with mod.qconfig.weight() (or its weight_fake_quant), the output
        parameters from mod.activation_post_process."""
        if hasattr(mod, "weight_fake_quant"):
            weight_post_process = mod.weight_fake_quant
            activation_post_process = mod.activation_post_process
        else:
            names = cls._FLOAT_MODULE_NAMES + ((cls._FUSED_RELU,) if cls._FUSED_RELU else ())
            if not _is_float_module(mod, names):
                raise AssertionError(
                    f"nnq.{cls.__name__}.from_float only works for "
                    f"{', '.join(names)}, but got: {type(mod)}"
                )
            if not hasattr(mod, "qconfig"):
                raise AssertionError("Input float module must have qconfig defined")
            activation_post_process = mod.activation_post_process
            if type(mod).__name__ == cls._FUSED_RELU:
                mod = mod[0]
            weight_post_process = mod.qconfig.weight()
        if not use_precomputed_fake_quant:
            weight_post_process(mod.weight)
        dtype = weight_post_process.dtype
        act_scale, act_zp = activation_post_process.calculate_qparams()
        if dtype != _ember().qint8:
            raise AssertionError(f"Weight observer must have dtype torch.qint8, got {dtype}")
        qweight = _quantize_weight(mod.weight.float(), weight_post_process)
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        qlinear.scale = float(act_scale)
        qlinear.zero_point = int(act_zp)
        return qlinear

    @classmethod
    def from_reference(cls, ref_qlinear, output_scale, output_zero_point):
        """from_reference(ref_qlinear, output_scale, output_zero_point) -> Linear

        The quantized module of a reference quantized Linear."""
        qlinear = cls(ref_qlinear.in_features, ref_qlinear.out_features)
        qweight = ref_qlinear.get_quantized_weight()
        qlinear.set_weight_bias(qweight, ref_qlinear.bias)
        qlinear.scale = float(output_scale)
        qlinear.zero_point = int(output_zero_point)
        return qlinear
