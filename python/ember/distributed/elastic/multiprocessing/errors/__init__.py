"""ember.distributed.elastic.multiprocessing.errors: `@record` on a worker's entry point, as
torchrun's docs show, and the launcher's report of failed workers. An exception that escapes the
function is written, as torch's error file does, to the JSON file named by
TORCHELASTIC_ERROR_FILE (the launcher sets one for each worker) and raised again; without that
variable the function runs unchanged. When workers fail the launcher raises ChildFailedError,
whose text is torch's table: the first failure (root cause) with its rank, exit code, error file
and the traceback the error file holds, then the others (the workers it stopped)."""

import datetime
import functools
import json
import os
import signal
import socket
import time
import traceback

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "record"]

_NOT_AVAILABLE = "<N/A>"


class ProcessFailure:
    """ProcessFailure(local_rank, pid, exitcode, error_file)

    A failed worker: its message and timestamp come from its error file when it wrote one
    (through @record), else they are made up from the exit code and the current time."""

    def __init__(self, local_rank, pid, exitcode, error_file):
        self.local_rank = local_rank
        self.pid = pid
        self.exitcode = exitcode
        self.error_file = error_file
        self.error_file_data = {"message": ""}
        self.message = ""
        self.timestamp = int(time.time())
        if error_file and os.path.isfile(error_file):
            with open(error_file) as f:
                self.error_file_data = json.load(f)
            message = self.error_file_data["message"]
            self.message = message
            if isinstance(message, str):
                self.timestamp = int(self.error_file_data.get("timestamp", 0))
            else:
                self.timestamp = int(message["extraInfo"]["timestamp"])
        else:
            self.error_file = _NOT_AVAILABLE
        if not self.message:
            if exitcode < 0:
                self.message = f"Signal {-exitcode} ({self.signal_name()}) received by PID {pid}"
            else:
                self.message = (
                    "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
                )

    def signal_name(self):
        """signal_name() -> str

        The name of the signal that ended the worker ("<N/A>" for an exit code)."""
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                pass
        return _NOT_AVAILABLE

    def timestamp_isoformat(self):
        """timestamp_isoformat() -> str

        The failure's time as YYYY-MM-DD_HH:MM:SS."""
        return datetime.datetime.fromtimestamp(self.timestamp).isoformat(sep="_")

    def __repr__(self):
        return (
            f"ProcessFailure(local_rank={self.local_rank}, pid={self.pid}, "
            f"exitcode={self.exitcode}, error_file='{self.error_file}')"
        )


class ChildFailedError(Exception):
    """ChildFailedError(name, failures)

    Launched workers failed: failures maps global ranks to their ProcessFailure; the message is
    torch's table of them, the earliest first (the root cause)."""

    def __init__(self, name, failures):
        if not failures:
            raise ValueError("ChildFailedError: failures must not be empty")
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self):
        """get_first_failure() -> (rank, ProcessFailure)

        The failure with the earliest timestamp."""
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        """format_msg(boarder_delim="=", section_delim="-") -> str"""
        title = f"{self.name} FAILED"
        root_rank, _ = self.get_first_failure()
        root, others = "", []
        width = len(title)
        for idx, (rank, failure) in enumerate(self.failures.items()):
            text = _format_failure(idx, rank, failure)
            width = max(width, *(len(line) for line in text.split("\n")))
            if rank == root_rank:
                root = text
            else:
                others.append(text)
        width = min(width, 60)
        return "\n".join(
            [
                "",
                boarder_delim * width,
                title,
                section_delim * width,
                "Failures:",
                "\n".join(others or ["  <NO_OTHER_FAILURES>"]),
                section_delim * width,
                "Root Cause (first observed failure):",
                root,
                boarder_delim * width,
            ]
        )


def _format_failure(idx, rank, failure):
    msg = failure.message
    if isinstance(msg, dict):  # an error file's message: show its traceback, indented
        msg = msg.get("extraInfo", {}).get("py_callstack", msg.get("message", _NOT_AVAILABLE))
        msg = msg.replace("\n", "\n  ")
    sig = failure.signal_name()
    sig = f" ({sig})" if sig != _NOT_AVAILABLE else ""
    return "\n".join(
        [
            f"[{idx}]:",
            f"  time      : {failure.timestamp_isoformat()}",
            f"  host      : {socket.getfqdn()}",
            f"  rank      : {rank} (local_rank: {failure.local_rank})",
            f"  exitcode  : {failure.exitcode} (pid: {failure.pid}) {sig}",
            f"  error_file: {failure.error_file}",
            f"  traceback : {msg}",
        ]
    )


class ErrorHandler:
    """ErrorHandler()

    Writes an exception to TORCHELASTIC_ERROR_FILE (record uses it)."""

    def initialize(self):
        """initialize() -> None

        Nothing to set up in ember (torch's installs a fault handler)."""

    def record_exception(self, e):
        """record_exception(e) -> None

        Writes e and its traceback to the error file, if the launcher named one."""
        path = _own_error_file()
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

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """dump_error_file(rootcause_error_file, error_code=0) -> None

        Copies a child's error file to this process's own (if the launcher named one), with
        the child's exit code."""
        path = _own_error_file()
        if not path:
            return
        with open(rootcause_error_file) as f:
            data = json.load(f)
        if error_code and isinstance(data.get("message"), dict):
            data["message"]["errorCode"] = error_code
        with open(path, "w") as f:
            json.dump(data, f)


def _own_error_file():
    return os.environ.get("TORCHELASTIC_ERROR_FILE")


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
                # an exit is no exception to report (torch's record writes no error file)
                if e.code == 0:
                    return None
                raise
            except ChildFailedError as e:  # a nested launcher: pass its root cause up
                _, failure = e.get_first_failure()
                if failure.error_file != _NOT_AVAILABLE:
                    handler.dump_error_file(failure.error_file, failure.exitcode)
                raise
            except Exception as e:
                handler.record_exception(e)
                raise

        return wrapper

    return wrap(fn) if fn is not None else wrap
