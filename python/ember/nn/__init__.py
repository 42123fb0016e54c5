"""ember.nn: modules, parameters, initialization and utilities, as torch.nn."""

from . import functional  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F403
from . import attention, init, modules, parallel, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401
