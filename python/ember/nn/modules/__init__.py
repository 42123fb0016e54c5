"""The torch.nn layer classes."""

from .activation import *  # noqa: F401,F403
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .attention import MultiheadAttention  # noqa: F401
from .batchnorm import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fractional import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .linear_cross_entropy import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import Module, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .syncbatchnorm import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

# Export the classes only: the submodule names (utils, loss, ...) must not shadow ember.nn's own.
__all__ = [
    _n
    for _n, _v in list(globals().items())
    if isinstance(_v, type) or _n.startswith("register_module")
]
