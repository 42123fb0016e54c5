"""ember._higher_order_ops: operators that take functions (torch._higher_order_ops' names).

``cond(pred, true_fn, false_fn, operands)`` runs one of two functions picked by a boolean
(tensor). It is a public ember function, so ember.compile's capture and fx tracing record it as
one graph node whose branch is chosen when the graph runs: a data-dependent branch that does not
break the graph."""

import types

from .cond import cond, cond_op
from .map import map  # noqa: A004 (torch's name; the submodule stays importable by path)
from .while_loop import while_loop

__all__ = ["cond", "map", "while_loop", "namespace"]

# ``ember.ops.higher_order``: what exported graphs call (``ember.ops.higher_order.cond``)
namespace = types.ModuleType("ember.ops.higher_order")
namespace.cond = cond_op
