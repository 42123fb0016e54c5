"""The error measures torch.ao.ns.fx.utils gives for a float result and its quantized
counterpart (quantized operands are dequantized first)."""

from ....nn import functional as F
from ... import _torch as _t


def _floats(x, y):
    return (x.dequantize() if x.is_quantized else x), (y.dequantize() if y.is_quantized else y)


def compute_sqnr(x, y):
    """compute_sqnr(x, y) -> Tensor

    The signal-to-quantization-noise ratio of y against x, in decibels:
    20 * log10(||x|| / ||x - y||)."""
    x, y = _floats(x, y)
    signal = _t.norm(x)
    noise = _t.norm(x - y)
    return 20 * _t.log10(signal / noise)


def compute_normalized_l2_error(x, y):
    """compute_normalized_l2_error(x, y) -> Tensor

    sqrt(sum((x - y)^2) / sum(x^2))."""
    x, y = _floats(x, y)
    return _t.sqrt(((x - y) ** 2).sum() / (x**2).sum())


def compute_cosine_similarity(x, y):
    """compute_cosine_similarity(x, y) -> Tensor

    The cosine similarity of the flattened operands."""
    x, y = _floats(x, y)
    return F.cosine_similarity(x.reshape(1, -1), y.reshape(1, -1))
