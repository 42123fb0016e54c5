"""torch.amp.grad_scaler: the module some programs import GradScaler from."""

from . import GradScaler

__all__ = ["GradScaler"]
