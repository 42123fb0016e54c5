"""ember.utils, as torch.utils."""

from . import data  # noqa: F401
from . import checkpoint  # noqa: F401,E402
