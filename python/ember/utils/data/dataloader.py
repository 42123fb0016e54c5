"""DataLoader, as torch.utils.data.DataLoader: batches from a dataset, in the main process or in
worker processes (see _worker.py)."""

import gc
import itertools
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import time
import warnings

from ..._C import int64
from ..._ops.creation import empty
from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]

_POLL_S = 0.5  # how often the main process checks on workers while it waits
_SHUTDOWN_S = 2.0  # how long workers get to exit by themselves before they are terminated


def _death(exitcode):
    """How a worker process ended, from its exit code (negative: the signal that killed it)."""
    if exitcode is not None and exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
            return f"killed by signal {sig.name} ({signal.strsignal(sig)})"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


def _freeze_before_fork(ctx):
    """Moves every object the collector tracks into its permanent generation before workers are
    forked, so that a worker's collections never visit (and never write the header of) an object
    it inherited; True when the caller must unfreeze once the workers exist.

    Note [Workers share the dataset]
    A forked worker shares the parent's memory copy-on-write; its first full collection would
    write the GC header of every inherited container object (dataset items, modules, ...) and so
    copy their pages. Frozen objects are skipped by the collector in the child; the parent
    unfreezes them at once, so its own collections are as before. Nothing changes when the
    program already froze objects itself (it then manages freezing) or workers are spawned. See
    docs/ARCHITECTURE.md (issue 18) for the measurement."""
    method = ctx.get_start_method() if hasattr(ctx, "get_start_method") else None
    if method != "fork" or gc.get_freeze_count() or not gc.isenabled():
        return False
    gc.freeze()
    return True


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: the dataset decides when iteration ends."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
        num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
        worker_init_fn=None, multiprocessing_context=None, generator=None, *,
        prefetch_factor=None, persistent_workers=False, pin_memory_device='', in_order=True)

    Iterates batches of ``dataset``; see torch.utils.data.DataLoader for the arguments.

    ``pin_memory`` has no effect (ember runs on the CPU only). With ``num_workers > 0`` batches are
    produced by worker processes (fork on Linux) and reach this process through shared memory.
    """

    _initialized = False

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers=False,
        pin_memory_device="",
        in_order=True,
    ):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers "
                "> 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used."
            )

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _worker.IterableFetcher
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _worker.MapFetcher

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                    "and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )

        if sampler is None:
            if self._dataset_kind is _worker.IterableFetcher:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._iterator = None
        self._initialized = True

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(ctx, str):
                valid = multiprocessing.get_all_start_methods()
                if ctx not in valid:
                    raise ValueError(
                        f"multiprocessing_context option should specify a valid start method in "
                        f"{valid!r}, but got multiprocessing_context={ctx!r}"
                    )
                ctx = multiprocessing.get_context(ctx)
            elif not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a string "
                    f"specifying the start method, but got multiprocessing_context={ctx}"
                )
        self._mp_context = ctx

    def __setattr__(self, attr, val):
        if self._initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind is _worker.IterableFetcher:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = (
                    length // self.batch_size if self.drop_last else -(-length // self.batch_size)
                )
            return length
        return len(self._index_sampler)


class _BaseIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._timeout = loader.timeout
        self._reset(loader, first=True)

    def _reset(self, loader, first=False):
        self._sampler_iter = iter(self._index_sampler)
        # Drawn whether or not there are workers, so workers=0 and workers=N consume the same
        # random numbers and shuffle the same way.
        self._base_seed = int(empty((), dtype=int64).random_(generator=loader.generator).item())

    def __iter__(self):
        return self

    def _next_index(self):
        return next(self._sampler_iter)

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def _reset(self, loader, first=False):
        super()._reset(loader, first)
        self._fetcher = self._dataset_kind(
            self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def __next__(self):
        return self._fetcher.fetch(self._next_index())


class _MultiProcessIter(_BaseIter):
    _counter = itertools.count()

    def __init__(self, loader):
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._persistent_workers = loader.persistent_workers
        self._shutdown = True  # until the workers exist
        ctx = loader.multiprocessing_context or multiprocessing.get_context(
            "fork" if sys.platform == "linux" else None
        )
        self._prefix = os.path.join(
            _worker._SHM_DIR, f"ember_dl_{os.getpid()}_{next(self._counter)}_"
        )
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        super().__init__(loader)  # draws the base seed the workers need
        self._index_queues, self._workers = [], []
        self._shutdown = False
        # Note [Workers share the dataset]: the collector of a forked worker must not write the
        # header of every object the parent holds (the dataset's too), which copies their pages.
        frozen = _freeze_before_fork(ctx)
        try:
            self._start_workers(ctx, loader)
        finally:
            if frozen:
                gc.unfreeze()
        self._start_epoch(first=True)

    def _start_workers(self, ctx, loader):
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=_worker.worker_loop,
                daemon=True,
                args=(
                    self._dataset_kind,
                    self._dataset,
                    index_queue,
                    self._data_queue,
                    self._done_event,
                    self._auto_collation,
                    self._collate_fn,
                    self._drop_last,
                    self._base_seed,
                    loader.worker_init_fn,
                    i,
                    self._num_workers,
                    self._prefix,
                    os.getpid(),
                ),
            )
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)

    def _reset(self, loader, first=False):
        super()._reset(loader, first)
        if not first:
            self._start_epoch(first=False)

    def _start_epoch(self, first):
        if not first:  # persistent workers: drop what is left of the last epoch
            for info in self._task_info.values():
                if len(info) == 2:
                    _worker.discard(info[1])
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first:  # each worker restarts its iterator, then acknowledges
            for q in self._index_queues:
                q.put(_worker.ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, data = self._get_data()
                if isinstance(idx, _worker.ResumeIteration):
                    pending -= 1
                else:
                    _worker.discard(data)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._send_idx += 1

    def _get_data(self):
        start = time.monotonic()
        while True:
            try:
                return pickle.loads(self._data_queue.get(timeout=_POLL_S))
            except queue.Empty:
                pass
            dead = [
                w
                for i, w in enumerate(self._workers)
                if self._workers_status[i] and not w.is_alive()
            ]
            if dead:
                self._shutdown_workers()
                pids = ", ".join(str(w.pid) for w in dead)
                how = "; ".join(
                    f"worker {self._workers.index(w)} (pid {w.pid}) {_death(w.exitcode)}"
                    for w in dead
                )
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly: {how}")
            if self._timeout > 0 and time.monotonic() - start > self._timeout:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process(self._task_info.pop(self._rcvd_idx)[1])
            idx, data = self._get_data()
            if isinstance(data, _worker.IterableStop):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)  # early: keep it until its turn
            else:
                del self._task_info[idx]
                return self._process(data)

    def _process(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return _worker.unshare(data)

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for q in self._index_queues:
                q.put(None)
            # One deadline for all: a worker stuck in its dataset cannot see the request.
            deadline = time.monotonic() + _SHUTDOWN_S
            for w in self._workers:
                w.join(timeout=max(deadline - time.monotonic(), 0))
            for q in self._index_queues:
                q.close()
            self._data_queue.cancel_join_thread()
            self._data_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_SHUTDOWN_S)
                if w.is_alive():  # it ignores SIGTERM
                    w.kill()
                    w.join()
            _worker.remove_leftovers(self._prefix)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # at interpreter exit modules may already be gone
            pass
