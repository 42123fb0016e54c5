"""ember.ao.nn: fused (intrinsic), quantization-aware (qat) and quantized modules."""

from . import intrinsic, qat

__all__ = ["intrinsic", "qat"]
