"""A hook that communicates nothing, to measure DDP without its communication."""

from ....futures import Future

__all__ = ["noop_hook"]


def noop_hook(_, bucket):
    """noop_hook(_, bucket) -> Future

    Returns the bucket's buffer unreduced: every rank keeps its local gradients."""
    fut = Future()
    fut.set_result(bucket.buffer())
    return fut
