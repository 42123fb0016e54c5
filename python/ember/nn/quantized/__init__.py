"""ember.nn.quantized: the legacy name of ember.ao.nn.quantized (torch.nn.quantized)."""

from ...ao.nn.quantized import *  # noqa: F401,F403
from ...ao.nn.quantized import dynamic, functional  # noqa: F401
