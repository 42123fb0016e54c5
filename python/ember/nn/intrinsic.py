"""ember.nn.intrinsic: the legacy name of ember.ao.nn.intrinsic (torch.nn.intrinsic)."""

from ..ao.nn.intrinsic import *  # noqa: F401,F403
from ..ao.nn.intrinsic import __all__  # noqa: F401
