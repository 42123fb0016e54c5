"""ember.ao.nn.intrinsic (torch.ao.nn.intrinsic): fused float modules, and their QAT forms in
ember.ao.nn.intrinsic.qat."""

from . import qat
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _names
from .modules import _FusedModule  # noqa: F401

__all__ = [*_names, "qat"]
