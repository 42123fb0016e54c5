"""Quantized activations (torch.ao.nn.quantized.ReLU6, ...): they keep the input's parameters
or requantize to their own."""

from .....nn.modules.module import Module
from .. import functional as qF
from .utils import _ember

__all__ = ["ReLU6", "Hardswish", "LeakyReLU", "Sigmoid", "Softmax"]


class ReLU6(Module):
    """ReLU6(inplace=False)

    min(max(x, 0), 6) of a quantized tensor, on its integers."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return qF.relu6(input, self.inplace)

    def _get_name(self):
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> ReLU6

        The quantized ReLU6 of a float one."""
        return ReLU6(mod.inplace)


class _Requantizing(Module):
    """An activation computed in float and requantized to (scale, zero_point)."""

    def __init__(self, scale=1.0, zero_point=0):
        super().__init__()
        self.scale = scale
        self.zero_point = zero_point

    def _float(self, x):
        raise NotImplementedError

    def forward(self, input):
        e = _ember()
        return e.quantize_per_tensor(
            self._float(input.dequantize()), self.scale, self.zero_point, input.dtype
        )

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> module

        The quantized activation of an observed float one."""
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new = cls(float(scale), int(zero_point))
        for name in ("negative_slope", "dim"):
            if hasattr(mod, name):
                setattr(new, name, getattr(mod, name))
        return new


class Hardswish(_Requantizing):
    """Hardswish(scale, zero_point)

    Hardswish of a quantized tensor, requantized."""

    def _float(self, x):
        return _ember().nn.functional.hardswish(x)

    def _get_name(self):
        return "QuantizedHardswish"


class LeakyReLU(_Requantizing):
    """LeakyReLU(scale, zero_point, negative_slope=0.01)

    Leaky ReLU of a quantized tensor, requantized."""

    def __init__(self, scale=1.0, zero_point=0, negative_slope=0.01, inplace=False):
        super().__init__(scale, zero_point)
        self.negative_slope = negative_slope

    def _float(self, x):
        return _ember().nn.functional.leaky_relu(x, self.negative_slope)

    def _get_name(self):
        return "QuantizedLeakyReLU"


class Sigmoid(_Requantizing):
    """Sigmoid(output_scale, output_zero_point)

    Sigmoid of a quantized tensor, requantized."""

    def _float(self, x):
        return _ember().sigmoid(x)

    def _get_name(self):
        return "QuantizedSigmoid"


class Softmax(_Requantizing):
    """Softmax(dim=None, scale=1.0, zero_point=0)

    Softmax of a quantized tensor, requantized."""

    def __init__(self, dim=None, scale=1.0, zero_point=0):
        super().__init__(scale, zero_point)
        self.dim = dim

    def _float(self, x):
        dim = self.dim if self.dim is not None else -1
        return _ember().softmax(x, dim)

    def _get_name(self):
        return "QuantizedSoftmax"
