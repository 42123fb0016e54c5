"""The float fused modules of ember.ao.nn.intrinsic."""

from .fused import *  # noqa: F401,F403
from .fused import (
    __all__,  # noqa: F401
    _FusedModule,  # noqa: F401
)
