"""The quantized modules of ember.ao.nn.quantized, plus Quantize and DeQuantize."""

from .....nn.modules.module import Module
from .activation import Hardswish, LeakyReLU, ReLU6, Sigmoid, Softmax
from .batchnorm import BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d
from .embedding_ops import Embedding, EmbeddingBag
from .functional_modules import FloatFunctional, FXFloatFunctional, QFunctional
from .linear import Linear
from .utils import _ember

__all__ = [
    "BatchNorm2d",
    "BatchNorm3d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "DeQuantize",
    "Embedding",
    "EmbeddingBag",
    "FloatFunctional",
    "FXFloatFunctional",
    "Hardswish",
    "LeakyReLU",
    "Linear",
    "QFunctional",
    "Quantize",
    "ReLU6",
    "Sigmoid",
    "Softmax",
]


class Quantize(Module):
    """Quantize(scale, zero_point, dtype)

    Quantizes its float input per tensor with fixed parameters (the buffers `scale` and
    `zero_point`)."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        e = _ember()
        self.register_buffer("scale", e.tensor([float(scale)]))
        self.register_buffer("zero_point", e.tensor([int(zero_point)], dtype=e.int64))
        self.dtype = dtype

    def forward(self, X):
        return _ember().quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> Quantize

        The Quantize of an observed QuantStub."""
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(
            scale.float().item(), zero_point.long().item(), mod.activation_post_process.dtype
        )

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(Module):
    """DeQuantize()

    Dequantizes its quantized input to float32."""

    def forward(self, Xq):
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> DeQuantize

        The DeQuantize of a DeQuantStub."""
        return DeQuantize()
