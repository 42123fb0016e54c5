"""ember.nn: modules, parameters, initialization and utilities, as torch.nn."""

from . import (  # noqa: F401
    attention,
    functional,  # noqa: F401
    init,
    modules,
    parallel,
    utils,
)
from .modules import *  # noqa: F403
from .parallel import DataParallel  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
