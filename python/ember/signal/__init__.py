"""ember.signal: signal-processing helpers, as torch.signal (the window functions)."""

from . import windows

__all__ = ["windows"]
