"""ember.ao.nn.intrinsic (torch.ao.nn.intrinsic): fused float modules, their QAT forms in
ember.ao.nn.intrinsic.qat and their quantized forms in ember.ao.nn.intrinsic.quantized."""

from . import qat, quantized
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _names
from .modules import _FusedModule  # noqa: F401

__all__ = [*_names, "qat", "quantized"]
