"""Quantized ConvReLU1d/2d/3d (torch.ao.nn.intrinsic.quantized): ReLU fused into the
requantization of the int8 convolution."""

from ....quantized import _ops
from ....quantized.modules import conv as _qconv

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]


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


class ConvReLU3d(_qconv.Conv3d):
    """ConvReLU3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
        groups=1, bias=True, padding_mode='zeros')

    relu(conv3d(x)) on quint8 tensors, the relu a clamp at the output zero point."""

    _FLOAT_MODULE_NAME = "ConvReLU3d"
    _FUSED_NAMES = ("ConvReLU3d",)

    def forward(self, input):
        if input.dim() != 5:
            raise ValueError("Input shape must be `(N, C, D, H, W)`!")
        return _ops.conv3d(input, self._packed_params, self.scale, self.zero_point, relu=True)

    def _get_name(self):
        return "QuantizedConvReLU3d"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> ConvReLU3d

        The quantized module of an observed fused ConvReLU3d."""
        return super().from_float(mod, use_precomputed_fake_quant)

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        """from_reference(ref_qconv, output_scale, output_zero_point) -> ConvReLU3d

        The quantized module of a reference (Conv3d, ReLU) pair."""
        return super().from_reference(ref_qconv[0], output_scale, output_zero_point)
