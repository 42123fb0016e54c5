"""Tensor.share_memory_ and is_shared, and the shared-memory segments behind them (see
ember.multiprocessing for how tensors travel between processes).

A shared tensor's storage lives in a segment mapped MAP_SHARED, made in one of torch's two
sharing strategies:
- "file_descriptor" (the default): an anonymous memfd. Another process receives a duplicate of
  the descriptor (multiprocessing passes it beside the pickle); the kernel frees the memory when
  the last descriptor and mapping are gone, so nothing can leak.
- "file_system": a named file in /dev/shm. Every process holding it keeps a shared flock on it;
  the last one to let go (it alone can take the exclusive lock) unlinks the name. A process that
  dies releases its lock with it, so only a crash of every holder can leave the file behind.
"""

import fcntl
import itertools
import mmap
import os
import secrets
import weakref

from . import _C

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = "file_descriptor"
_SHM_DIR = "/dev/shm"
_counter = itertools.count()

# Storage data address -> its live segment (entries leave when the storage is freed).
_segments = {}

# numpy's element type for each dtype (bfloat16, which numpy lacks, travels as int16 words).
_NP_NAMES = {
    "float32": "float32",
    "float64": "float64",
    "float16": "float16",
    "bfloat16": "int16",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
    "complex64": "complex64",
    "complex128": "complex128",
}


def get_all_sharing_strategies():
    """get_all_sharing_strategies() -> set

    The sharing strategies this system supports: file_descriptor and file_system."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    """get_sharing_strategy() -> str

    The strategy share_memory_() uses for new segments."""
    return _strategy


def set_sharing_strategy(new_strategy):
    """set_sharing_strategy(new_strategy) -> None

    Chooses how new shared segments are made: "file_descriptor" (anonymous memory passed as a
    descriptor) or "file_system" (a named file in /dev/shm)."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy = new_strategy


class Segment:
    """One MAP_SHARED mapping and what names it: an open memfd (file_descriptor) or a /dev/shm
    file name whose shared lock this process holds (file_system)."""

    def __init__(self, strategy, nbytes, fd=None, name=None):
        self.strategy, self.nbytes, self.name = strategy, nbytes, name
        if fd is None:
            fd = _new_file(strategy, nbytes, name)
        self.map = mmap.mmap(fd, max(nbytes, 1), flags=mmap.MAP_SHARED)
        if strategy == "file_system":
            # The lock sits on an open file of its own: mmap keeps a dup of `fd` (the same open
            # file, so the same lock) until the mapping goes, after the release has run.
            lock = os.open(os.path.join(_SHM_DIR, name), os.O_RDONLY | os.O_CLOEXEC)
            fcntl.flock(lock, fcntl.LOCK_SH)
            os.close(fd)
            fd = lock
        self.fd = fd

    @classmethod
    def create(cls, nbytes):
        name = None
        if _strategy == "file_system":
            name = f"ember_{os.getpid()}_{next(_counter)}_{secrets.token_hex(4)}"
        return cls(_strategy, nbytes, name=name)

    @classmethod
    def open_name(cls, name, nbytes):
        fd = os.open(os.path.join(_SHM_DIR, name), os.O_RDWR | os.O_CLOEXEC)
        return cls("file_system", nbytes, fd=fd, name=name)


def _new_file(strategy, nbytes, name):
    if strategy == "file_descriptor":
        fd = os.memfd_create("ember_shared", os.MFD_CLOEXEC)
    else:
        path = os.path.join(_SHM_DIR, name)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    os.ftruncate(fd, max(nbytes, 1))
    return fd


def _release(key, fd, strategy, name):
    """Runs when a segment's storage is freed in this process."""
    _segments.pop(key, None)
    os.close(fd)  # drops this process's shared lock too
    if strategy != "file_system":
        return
    path = os.path.join(_SHM_DIR, name)
    try:
        probe = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody else holds it: the last one
        os.unlink(path)
    except (BlockingIOError, FileNotFoundError):
        pass
    finally:
        os.close(probe)


def can_share(dtype):
    """Whether tensors of this dtype can live in a shared segment (not the quantized ones)."""
    return str(dtype).replace("torch.", "") in _NP_NAMES


def tensor_on(segment, dtype, size, stride, offset, fill=None):
    """A tensor of the given geometry over a segment (which it keeps alive, with the segment's
    registration, until its storage is freed); `fill`, a tensor over the whole storage, is
    copied in first (through numpy: the new storage stays at version 0)."""
    import numpy as np

    name = str(dtype).replace("torch.", "")
    if name not in _NP_NAMES:
        raise RuntimeError(f"share_memory_: expected a non-quantized dtype; got {dtype}")
    np_dtype = np.dtype(_NP_NAMES[name])
    arr = np.frombuffer(segment.map, np_dtype, segment.nbytes // np_dtype.itemsize)
    if fill is not None and arr.size:
        arr[...] = (fill.view(_C.int16) if name == "bfloat16" else fill).numpy()
    whole = _C.from_numpy(arr)  # zero-copy: the array (and so the mapping) lives with the storage
    if whole.dtype != dtype:
        whole = whole.view(dtype)
    key = whole._storage_ptr()
    _segments[key] = segment
    weakref.finalize(arr, _release, key, segment.fd, segment.strategy, segment.name)
    out = whole.detach()  # not a view (its _base is None, as torch's rebuilt tensors)
    out.data = whole.as_strided(tuple(size), tuple(stride), offset)
    return out


def segment_of(tensor):
    """The segment holding the tensor's storage, or None."""
    return _segments.get(tensor._storage_ptr())


def share_memory_(self):
    """share_memory_() -> Tensor

    Moves the storage into shared memory in place (the tensor keeps its identity, shape, strides
    and offset), in the current sharing strategy; processes it is sent to through
    ember.multiprocessing (or forked afterwards) read and write the same memory. A no-op if
    already shared."""
    if is_shared(self):
        return self
    nbytes = self._storage_nbytes()
    src = self.detach()
    n = nbytes // src.element_size()
    fill = src.as_strided((n,), (1,), 0)
    shared = tensor_on(
        Segment.create(nbytes), self.dtype, self.shape, self.stride(), self.storage_offset(), fill
    )
    self.data = shared
    return self


def is_shared(self):
    """is_shared() -> bool

    Whether the tensor's storage lives in shared memory (share_memory_(), or received from
    another process)."""
    return self._storage_ptr() in _segments
