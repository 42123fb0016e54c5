"""ember.fx.passes: analyses and transformations over fx graphs (``shape_prop``)."""

from . import shape_prop

__all__ = ["shape_prop"]
