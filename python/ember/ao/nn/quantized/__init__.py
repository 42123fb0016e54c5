"""ember.ao.nn.quantized (torch.ao.nn.quantized): modules on quantized tensors with int8
kernels (csrc/ember/cpu/quantized.cpp), their functional forms, and the dynamic modules."""

from . import dynamic, functional
from .modules import (
    BatchNorm2d,
    BatchNorm3d,
    Conv1d,
    Conv2d,
    Conv3d,
    DeQuantize,
    Embedding,
    EmbeddingBag,
    FloatFunctional,
    FXFloatFunctional,
    Hardswish,
    LeakyReLU,
    Linear,
    QFunctional,
    Quantize,
    ReLU6,
    Sigmoid,
    Softmax,
)

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
    "dynamic",
    "functional",
]
