"""ember.distributed.elastic.multiprocessing.errors: `@record` on a worker's entry point, as
torchrun's docs show. An exception that escapes the function is written, as torch's error file
does, to the JSON file named by TORCHELASTIC_ERROR_FILE (when the launcher sets one) and raised
again; without that variable the function runs unchanged."""

import functools
import json
import os
import time
import traceback

__all__ = ["ChildFailedError", "ErrorHandler", "record"]


class ChildFailedError(Exception):
    """ChildFailedError(name, failures)

    A launched worker failed: failures maps global ranks to what each reported."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        super().__init__(f"{name} FAILED: " + ", ".join(f"rank {r}" for r in sorted(failures)))


class ErrorHandler:
    """ErrorHandler()

    Writes an exception to TORCHELASTIC_ERROR_FILE (record uses it)."""

    def initialize(self):
        """initialize() -> None

        Nothing to set up in ember (torch's installs a fault handler)."""

    def record_exception(self, e):
        """record_exception(e) -> None

        Writes e and its traceback to the error file, if the launcher named one."""
        path = os.environ.get("TORCHELASTIC_ERROR_FILE")
        if not path:
            return
        data = {
            "message": {
                "message": f"{type(e).__name__}: {e}",
                "extraInfo": {
                    "py_callstack": traceback.format_exc(),
                    "timestamp": str(int(time.time())),
                },
            }
        }
        with open(path, "w") as f:
            json.dump(data, f)


def record(fn=None, error_handler=None):
    """record(fn, error_handler=None) -> Callable

    Decorates a worker's entry point: an exception escaping it is written to the launcher's
    error file and raised again."""
    handler = error_handler or ErrorHandler()

    def wrap(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            handler.initialize()
            try:
                return f(*args, **kwargs)
            except SystemExit as e:
                if e.code not in (None, 0):
                    handler.record_exception(e)
                raise
            except Exception as e:
                handler.record_exception(e)
                raise

        return wrapper

    return wrap(fn) if fn is not None else wrap
