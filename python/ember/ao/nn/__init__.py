"""ember.ao.nn: fused (intrinsic), quantization-aware (qat) and quantized modules."""

from . import intrinsic, qat, quantized

__all__ = ["intrinsic", "qat", "quantized"]
