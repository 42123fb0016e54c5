"""Quantized ConvReLU1d/ConvReLU2d (torch.ao.nn.intrinsic.quantized): ReLU fused into the
requantization of the int8 convolution."""

from ....quantized import _ops
from ....quantized.modules import conv as _qconv

__all__ = ["ConvReLU1d", "ConvReLU2d"]


class ConvReLU1d(_qconv.Conv1d):
    """ConvReLU1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
        groups=1, bias=True, padding_mode='zeros')

    relu(conv1d(x)) on quint8 tensors in one int8 kernel."""

    _FLOAT_MODULE_NAME = "ConvReLU1d"
    _FUSED_NAMES = ("ConvReLU1d",)

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError("Input shape must be `(N, C, L)`!")
        return _ops.conv1d(
            self._padded(input), self._packed_params, self.scale, self.zero_point, relu=True
        )

    def _get_name(self):
        return "QuantizedConvReLU1d"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> ConvReLU1d

        The quantized module of an observed fused ConvReLU1d."""
        return super().from_float(mod, use_precomputed_fake_quant)

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        """from_reference(ref_qconv, output_scale, output_zero_point) -> ConvReLU1d

        The quantized module of a reference (Conv1d, ReLU) pair."""
        return super().from_reference(ref_qconv[0], output_scale, output_zero_point)


class ConvReLU2d(_qconv.Conv2d):
    """ConvReLU2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
        groups=1, bias=True, padding_mode='zeros')

    relu(conv2d(x)) on quint8 tensors in one int8 kernel."""

    _FLOAT_MODULE_NAME = "ConvReLU2d"
    _FUSED_NAMES = ("ConvReLU2d",)

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return _ops.conv2d(
            self._padded(input), self._packed_params, self.scale, self.zero_point, relu=True
        )

    def _get_name(self):
        return "QuantizedConvReLU2d"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> ConvReLU2d

        The quantized module of an observed fused ConvReLU2d."""
        return super().from_float(mod, use_precomputed_fake_quant)

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        """from_reference(ref_qconv, output_scale, output_zero_point) -> ConvReLU2d

        The quantized module of a reference (Conv2d, ReLU) pair."""
        return super().from_reference(ref_qconv[0], output_scale, output_zero_point)
