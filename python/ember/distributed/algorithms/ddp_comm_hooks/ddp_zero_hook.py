"""Hooks that would run ZeroRedundancyOptimizer's step from DDP's communication hook
(overlap_with_ddp). Like torch's, they refuse the Gloo backend (torch: "may meet hangs"), and
Gloo is ember's only backend: a program that uses them fails here as it fails on torch's CPU
backend, and trains with ZeRO's own step() instead."""

from ... import distributed_c10d as c10d

__all__ = ["hook_with_zero_step", "hook_with_zero_step_interleaved"]


def _check(ddp, zero):
    if not getattr(zero, "_overlap_with_ddp", False):
        raise ValueError(
            "ZeroRedundancyOptimizer must be constructed with "
            "`overlap_with_ddp=True` to use this hook properly"
        )
    if c10d.get_backend(getattr(ddp, "process_group", None)) == c10d.Backend.GLOO:
        raise RuntimeError("Gloo backend using Overlapping DDP with ZeRO may meet hangs")


def hook_with_zero_step(hook, ddp, zero, shard_buckets=False):
    """hook_with_zero_step(hook, ddp, zero, shard_buckets=False) -> Callable

    hook followed by zero's step on each bucket; refuses the Gloo backend, as torch's."""
    _check(ddp, zero)


def hook_with_zero_step_interleaved(hook, ddp, zero, shard_buckets=False):
    """hook_with_zero_step_interleaved(hook, ddp, zero, shard_buckets=False) -> Callable

    hook with zero's step interleaved per bucket; refuses the Gloo backend, as torch's."""
    _check(ddp, zero)
