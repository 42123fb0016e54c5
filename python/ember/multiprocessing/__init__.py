"""ember.multiprocessing: Python's multiprocessing with torch's additions.

Tensors sent to another process through multiprocessing's pickler (a Queue or Pipe, the args of
a Process started with spawn or forkserver, spawn(fn, args)) travel as their shared-memory
segment: the receiver maps the same memory, so in-place writes on either side are seen by the
other. A tensor that is not shared yet is moved into shared memory first (share_memory_), as
torch does. How segments are made and passed is the sharing strategy (file_descriptor, the
default, or file_system); see ember/_shared.py and docs/ARCHITECTURE.md.
"""

import multiprocessing
import sys
import traceback
from multiprocessing import *  # noqa: F401,F403

from .._shared import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy
from . import reductions  # noqa: F401  (registers the tensor reduction)

__all__ = list(multiprocessing.__all__) + [
    "spawn",
    "start_processes",
    "ProcessContext",
    "ProcessRaisedException",
    "ProcessExitedException",
    "set_sharing_strategy",
    "get_sharing_strategy",
    "get_all_sharing_strategies",
]


class ProcessRaisedException(Exception):
    """A spawned process raised; the message carries its traceback."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.error_index = error_index
        self.error_pid = error_pid


class ProcessExitedException(Exception):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg)
        self.error_index = error_index
        self.error_pid = error_pid
        self.exit_code = exit_code
        self.signal_name = signal_name


def _run(fn, i, args, errors):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes of one spawn; join() waits for them and raises the first failure."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True once every process has exited cleanly; raises if one failed (and terminates
        the others, as torch does)."""
        for p in self.processes:
            p.join(timeout)
        failed = [i for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)]
        if failed:
            for p in self.processes:
                if p.is_alive():
                    p.terminate()
                p.join()
            i = failed[0]
            proc, queue = self.processes[i], self.error_queues[i]
            if not queue.empty():
                raise ProcessRaisedException(
                    f"\n\n-- Process {i} terminated with the following error:\n{queue.get()}",
                    i,
                    proc.pid,
                )
            code = proc.exitcode
            if code < 0:
                import signal

                name = signal.Signals(-code).name
                raise ProcessExitedException(
                    f"process {i} terminated with signal {name}", i, proc.pid, code, name
                )
            raise ProcessExitedException(
                f"process {i} terminated with exit code {code}", i, proc.pid, code
            )
        return all(p.exitcode == 0 for p in self.processes)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs fn(i, *args) for i in range(nprocs), each in its own process."""
    ctx = multiprocessing.get_context(start_method)
    queues = [ctx.SimpleQueue() for _ in range(nprocs)]
    procs = [
        ctx.Process(target=_run, args=(fn, i, args, q), daemon=daemon) for i, q in enumerate(queues)
    ]
    for p in procs:
        p.start()
    context = ProcessContext(procs, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn: fn(i, *args) in nprocs processes; raises if one fails."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
