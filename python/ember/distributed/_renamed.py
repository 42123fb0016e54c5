"""torch 2.13's deprecated names of the collectives it renamed (all_gather_single,
reduce_scatter_single): each warns with torch's FutureWarning, then runs the new one. ember's
own callers use the new names, so only a user's call warns."""

import warnings

from . import distributed_c10d as c10d

__all__ = [
    "_all_gather_base",
    "_reduce_scatter_base",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
]


def _deprecated(old, new, private=False):
    """torch 2.13's FutureWarning for a collective it renamed."""
    said = "is a private function and will be deprecated" if private else "is deprecated"
    warnings.warn(
        f"`torch.distributed.{old}` {said}. Please use `torch.distributed.{new}` instead.",
        FutureWarning,
        stacklevel=3,
    )


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False)
        -> Optional[Work]

    all_gather_single's old name (deprecated: warns as torch 2.13)."""
    _deprecated("all_gather_into_tensor", "all_gather_single")
    return c10d.all_gather_single(output_tensor, input_tensor, group, async_op)


def _all_gather_base(output_tensor, input_tensor, group=None, async_op=False):
    """_all_gather_base(output_tensor, input_tensor, group=None, async_op=False)
        -> Optional[Work]

    all_gather_single's private old name (warns as torch 2.13)."""
    _deprecated("_all_gather_base", "all_gather_single", private=True)
    return c10d.all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter_tensor(output, input, op=c10d.ReduceOp.SUM, group=None, async_op=False):
    """reduce_scatter_tensor(output, input, op=c10d.ReduceOp.SUM, group=None, async_op=False)
        -> Optional[Work]

    reduce_scatter_single's old name (deprecated: warns as torch 2.13)."""
    _deprecated("reduce_scatter_tensor", "reduce_scatter_single")
    return c10d.reduce_scatter_single(output, input, op, group, async_op)


def _reduce_scatter_base(output, input, op=c10d.ReduceOp.SUM, group=None, async_op=False):
    """_reduce_scatter_base(output, input, op=c10d.ReduceOp.SUM, group=None, async_op=False)
        -> Optional[Work]

    reduce_scatter_single's private old name (warns as torch 2.13)."""
    _deprecated("_reduce_scatter_base", "reduce_scatter_single", private=True)
    return c10d.reduce_scatter_single(output, input, op, group, async_op)
