"""``while_loop`` where torch keeps it (``torch._higher_order_ops.while_loop``); the function is
ember's top-level ``while_loop``."""

from .._ops.api_s12 import while_loop

__all__ = ["while_loop"]
