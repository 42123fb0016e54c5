"""ember.save and ember.load."""

__all__ = []
