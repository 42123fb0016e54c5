"""ember.multiprocessing: Python's multiprocessing with torch's additions.

Tensors that called share_memory_() (or belong to a Module that called share_memory()) keep
their data in an anonymous shared mapping: processes forked afterwards (the default start method
on Linux, as Hogwild training uses) read and update the same memory. Tensors sent through a Queue
or as arguments to a spawned process are pickled copies; torch passes shared memory there.
"""

import multiprocessing
import sys
import traceback
from multiprocessing import *  # noqa: F401,F403

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

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    """Accepted for compatibility: ember shares through anonymous mappings either way."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy = new_strategy


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
