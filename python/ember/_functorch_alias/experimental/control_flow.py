"""``functorch.experimental.control_flow`` under ember.run: ember's ``cond`` and ``map``, the
functions that ember.export and ember.compile record as higher-order graph nodes."""

from ..._higher_order_ops import cond, map  # noqa: A004 (torch's name)

__all__ = ["cond", "map"]
