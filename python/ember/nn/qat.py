"""ember.nn.qat: the legacy name of ember.ao.nn.qat (torch.nn.qat)."""

from ..ao.nn.qat import *  # noqa: F401,F403
from ..ao.nn.qat import __all__  # noqa: F401
