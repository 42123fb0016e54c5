"""ember.ao.nn.intrinsic.qat (torch.ao.nn.intrinsic.qat): fused modules for QAT."""

from .modules import *  # noqa: F401,F403
from .modules import __all__  # noqa: F401
