"""ember.futures: the Future that asynchronous calls return (torch.futures.Future).

ember.distributed's Work.get_future() gives one that completes when the collective finishes; its
value is the list of tensors the collective wrote.
"""

import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """Future(*, devices=None)

    A value that becomes available later: wait() blocks for it, then() chains a callback."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        """done() -> bool

        Whether the value (or an error) was set."""
        return self._done.is_set()

    def wait(self):
        """wait() -> T

        Blocks until the value is set and returns it; raises the error set instead."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """value() -> T

        The value of a completed future; raises its error."""
        if self._error is not None:
            raise self._error
        return self._value

    def _complete(self, value=None, error=None):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_result(self, result):
        """set_result(result) -> None

        Completes the future with result, running the callbacks added so far."""
        self._complete(result)

    def set_exception(self, result):
        """set_exception(result) -> None

        Completes the future with an error that wait() and value() raise."""
        self._complete(error=result)

    def add_done_callback(self, callback):
        """add_done_callback(callback) -> None

        Calls callback(future) once the future completed (at once if it did)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """then(callback) -> Future

        A future completed with callback(self) once this one completed."""
        nxt = Future()

        def run(fut):
            try:
                nxt.set_result(callback(fut))
            except Exception as e:  # the chained future carries the callback's error
                nxt.set_exception(e)

        self.add_done_callback(run)
        return nxt


def collect_all(futures):
    """collect_all(futures) -> Future

    A future completed with the list of futures once every one of them completed."""
    out = Future()
    futures = list(futures)
    left = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])

    def one(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures):
    """wait_all(futures) -> List

    Waits for every future and returns their values."""
    return [f.wait() for f in futures]
