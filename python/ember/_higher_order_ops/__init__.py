"""ember._higher_order_ops: operators that take functions (torch._higher_order_ops' names).

``cond(pred, true_fn, false_fn, operands)`` runs one of two functions picked by a boolean
(tensor). It is a public ember function, so ember.compile's capture and fx tracing record it as
one graph node whose branch is chosen when the graph runs: a data-dependent branch that does not
break the graph."""

from .cond import cond

__all__ = ["cond"]
