"""torch.jit.fork / torch.jit.wait (also torch.fork / torch.wait) in eager mode: fork runs the
function at once and returns a completed Future holding its result (or its exception), and wait
returns that result; torch's eager fork is synchronous in the same way."""

from .futures import Future

__all__ = ["fork", "wait"]


def fork(func, *args, **kwargs):
    """fork(func, *args, **kwargs) -> Future

    Calls func(*args, **kwargs) and returns a Future completed with its result (or its
    exception, raised again by wait)."""
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001  (handed to the waiter, as torch's future does)
        fut.set_exception(exc)
    return fut


def wait(future):
    """wait(future) -> object

    The result of a Future returned by fork (raising its exception, if it holds one)."""
    if not isinstance(future, Future):
        raise TypeError(f"wait(): expected a Future; got {type(future).__name__}")
    return future.wait()
