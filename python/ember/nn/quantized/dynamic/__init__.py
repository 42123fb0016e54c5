"""ember.nn.quantized.dynamic: the legacy name of ember.ao.nn.quantized.dynamic."""

from ....ao.nn.quantized.dynamic import *  # noqa: F401,F403
