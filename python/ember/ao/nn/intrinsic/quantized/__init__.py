"""ember.ao.nn.intrinsic.quantized (torch.ao.nn.intrinsic.quantized): fused modules on
quantized tensors (ReLU fused into the int8 kernels' requantization)."""

from .modules import BNReLU2d, BNReLU3d, ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "BNReLU2d", "BNReLU3d"]
