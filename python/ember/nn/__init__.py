"""ember.nn: modules, parameters, initialization and utilities, as torch.nn."""

from . import functional  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module, MultiheadAttention, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401
from . import init, utils  # noqa: F401,E402
from . import modules  # noqa: F401,E402
