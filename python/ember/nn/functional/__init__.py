"""ember.nn.functional: the functional forms of every layer and loss, as torch.nn.functional."""

from ._activation import *  # noqa: F401,F403
from ._composite import *  # noqa: F401,F403
from ._extra import *  # noqa: F401,F403
from ._grid import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._spatial import *  # noqa: F401,F403
from ._spatial3d import *  # noqa: F401,F403
