"""Loss functions."""

__all__ = []
