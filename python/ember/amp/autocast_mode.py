"""torch.amp.autocast_mode: the module some programs import autocast and its decorators from."""

from . import autocast, custom_bwd, custom_fwd, is_autocast_available

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
