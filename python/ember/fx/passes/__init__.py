"""ember.fx.passes: analyses and transformations over fx graphs (``shape_prop``,
``split_module``)."""

from . import shape_prop, split_module

__all__ = ["shape_prop", "split_module"]
