"""Quantized LinearReLU (torch.ao.nn.intrinsic.quantized.LinearReLU): ReLU fused into the
requantization of the int8 linear."""

from ....quantized import _ops
from ....quantized.modules import linear as _qlinear

__all__ = ["LinearReLU"]


class LinearReLU(_qlinear.Linear):
    """LinearReLU(in_features, out_features, bias=True, dtype=qint8)

    relu(linear(x)) on quint8 tensors in one int8 kernel."""

    _FLOAT_MODULE_NAMES = ("LinearReLU",)
    _FUSED_RELU = "LinearReLU"

    def __init__(self, in_features, out_features, bias=True, dtype=None):
        super().__init__(in_features, out_features, bias, dtype)

    def forward(self, x):
        return _ops.linear_relu(x, self._packed_params._packed_params, self.scale, self.zero_point)

    def _get_name(self):
        return "QuantizedLinearReLU"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> LinearReLU

        The quantized module of an observed fused LinearReLU."""
        return super().from_float(mod, use_precomputed_fake_quant)

    @classmethod
    def from_reference(cls, ref_linear_relu, output_scale, output_zero_point):
        """from_reference(ref_linear_relu, output_scale, output_zero_point) -> LinearReLU

        The quantized module of a reference (Linear, ReLU) pair."""
        return super().from_reference(ref_linear_relu[0], output_scale, output_zero_point)
