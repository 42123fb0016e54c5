"""ember.utils, as torch.utils."""

from . import (
    checkpoint,  # noqa: F401,E402
    data,  # noqa: F401
)
