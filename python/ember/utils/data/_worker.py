"""What runs inside DataLoader worker processes, and how their batches reach the main process.

Note [Batches through shared memory]
A worker writes every tensor of a batch into one file in /dev/shm (tmpfs: RAM, no disk) and sends
only a small description through the result queue. The main process maps the file, unlinks its
name at once and wraps the mapping zero-copy with ember.from_numpy: the memory is released when
the last tensor of the batch dies. Files of batches never received are removed by name prefix
when the iterator shuts down.
"""

import copy
import glob
import mmap
import os
import pickle
import queue
import random
import sys
import tempfile
import traceback

from ... import _C
from ..._C import (
    Tensor,
    bfloat16,
    float16,
    float32,
    float64,
    from_numpy,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from ..._ops.random import manual_seed

__all__ = ["WorkerInfo", "get_worker_info"]

_worker_info = None
_SHM_DIR = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
_ALIGN = 64
_POLL_S = 1.0  # how often a waiting worker checks that its parent is alive


class WorkerInfo:
    """WorkerInfo(**kwargs)

    Describes the current worker process: ``id``, ``num_workers``, ``seed`` and ``dataset``
    (this worker's copy)."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")

    def __repr__(self):
        return (
            f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
            f"dataset={self.dataset})"
        )


def get_worker_info():
    """The :class:`WorkerInfo` of the calling DataLoader worker, or None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback text."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.type_name = self.exc_type.__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:  # a class defined inside a function cannot travel; raise RuntimeError instead
            pickle.dumps(self.exc_type)
        except Exception:
            self.exc_type = RuntimeError

    def reraise(self):
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            raise KeyError(_KeyErrorMessage(msg))
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError shows repr() of its argument; this keeps the traceback's line breaks readable."""

    def __repr__(self):
        return self


def send(data_queue, idx, data, worker_id):
    """Pickles ``(idx, data)`` here rather than in the queue's feeder thread, where a failure
    would silently drop the batch and leave the main process waiting for it."""
    try:
        payload = pickle.dumps((idx, data), pickle.HIGHEST_PROTOCOL)
    except Exception:
        discard(data)
        error = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
        payload = pickle.dumps((idx, error), pickle.HIGHEST_PROTOCOL)
    data_queue.put(payload)


class IterableStop:
    """Sent by a worker whose copy of an iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Tells a persistent worker that a new epoch starts."""


# ---- fetching ----


class MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.iterator = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.iterator))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.iterator)
        return self.collate_fn(data)


# ---- shared-memory transport, Note [Batches through shared memory] ----


class _Slot:
    """Where one tensor of a shared batch lies in the batch's file."""

    __slots__ = ("dtype", "shape", "offset", "requires_grad")

    def __init__(self, dtype, shape, offset, requires_grad):
        self.dtype = dtype
        self.shape = shape
        self.offset = offset
        self.requires_grad = requires_grad

    def __getstate__(self):
        return (self.dtype, self.shape, self.offset, self.requires_grad)

    def __setstate__(self, state):
        self.dtype, self.shape, self.offset, self.requires_grad = state


class SharedBatch:
    """A batch whose tensors live in a file of shared memory; ``tree`` holds _Slot placeholders."""

    def __init__(self, path, size, tree):
        self.path, self.size, self.tree = path, size, tree


def _map_tree(obj, leaf_type, fn):
    """``obj`` with every ``leaf_type`` leaf replaced by ``fn(leaf)`` inside dicts, lists, tuples
    and namedtuples."""
    if isinstance(obj, leaf_type):
        return fn(obj)
    if isinstance(obj, dict):
        clone = copy.copy(obj)
        clone.update((k, _map_tree(v, leaf_type, fn)) for k, v in obj.items())
        return clone
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_map_tree(v, leaf_type, fn) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_tree(v, leaf_type, fn) for v in obj)
    return obj


def _raw(t):
    # numpy has no bfloat16: move its bits as int16.
    t = t.detach().contiguous()
    return (t.view(int16) if t.dtype == bfloat16 else t).numpy()


def share(data, prefix, seq):
    """Moves the tensors of ``data`` into one shared-memory file named after ``prefix``."""
    placed = []  # (array, offset)
    end = 0

    def place(t):
        nonlocal end
        arr = _raw(t)
        placed.append((arr, end))
        slot = _Slot(t.dtype, tuple(t.shape), end, t.requires_grad)
        end += -(-arr.nbytes // _ALIGN) * _ALIGN
        return slot

    tree = _map_tree(data, Tensor, place)
    if not placed:
        return data
    size = max(end, 1)
    path = f"{prefix}{os.getpid()}_{seq}"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, size)
        for arr, offset in placed:
            view = memoryview(arr.reshape(-1).view("uint8"))
            while view:  # pwrite may write less than asked (over 2 GiB)
                n = os.pwrite(fd, view, offset)
                view, offset = view[n:], offset + n
    except BaseException:
        os.unlink(path)
        raise
    finally:
        os.close(fd)
    return SharedBatch(path, size, tree)


def unshare(data):
    """Rebuilds a batch sent by :func:`share` as zero-copy tensors over the mapped file."""
    if not isinstance(data, SharedBatch):
        return data
    import numpy as np

    fd = os.open(data.path, os.O_RDWR)
    try:
        buf = mmap.mmap(fd, data.size)
    finally:
        os.close(fd)
        os.unlink(data.path)

    def rebuild(slot):
        if slot.dtype == bfloat16:
            arr = np.frombuffer(buf, np.int16, _numel(slot.shape), slot.offset)
            t = from_numpy(arr.reshape(slot.shape)).view(bfloat16)
        else:
            arr = np.frombuffer(buf, _NP_DTYPES[slot.dtype], _numel(slot.shape), slot.offset)
            t = from_numpy(arr.reshape(slot.shape))
        return t.requires_grad_() if slot.requires_grad else t

    return _map_tree(data.tree, _Slot, rebuild)


def discard(data):
    """Frees the shared memory of a batch that will never be used."""
    if isinstance(data, SharedBatch):
        try:
            os.unlink(data.path)
        except FileNotFoundError:
            pass


def remove_leftovers(prefix):
    """Removes shared-memory files of batches that were never received."""
    for path in glob.glob(glob.escape(prefix) + "*"):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


_NP_DTYPES = {
    uint8: "uint8",
    int8: "int8",
    int16: "int16",
    int32: "int32",
    int64: "int64",
    float16: "float16",
    float32: "float32",
    float64: "float64",
    _C.bool: "bool",
}


# ---- the worker process ----


def _seed_worker(seed, base_seed, worker_id):
    random.seed(seed)
    manual_seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(
            np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFFFFFFFFFF]).generate_state(4)
        )


def worker_loop(
    dataset_kind,
    dataset,
    index_queue,
    data_queue,
    done_event,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
    prefix,
    parent_pid,
):
    """The body of a worker: fetches the batches whose indices arrive and sends them back
    through shared memory."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = dataset_kind(dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(
                sys.exc_info(), f"in DataLoader worker process {worker_id}"
            )
        iteration_end = False
        seq = 0
        while True:
            try:
                r = index_queue.get(timeout=_POLL_S)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    break  # the main process died: nobody will read our batches
                continue
            if isinstance(r, ResumeIteration):
                send(data_queue, r, None, worker_id)
                iteration_end = False
                fetcher = dataset_kind(dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = share(fetcher.fetch(index), prefix, seq)
                    seq += 1
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind is IterableFetcher:
                        data = IterableStop(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            sys.exc_info(), f"in DataLoader worker process {worker_id}"
                        )
            send(data_queue, idx, data, worker_id)
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
