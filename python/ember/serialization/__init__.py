"""ember.save and ember.load, as torch.save and torch.load (docs/FORMAT.md).

``save`` writes PyTorch's zip checkpoint format, which ``torch.load(weights_only=True)`` reads.
``load`` reads that format, PyTorch's legacy (pre-1.6) format and ember's own earlier format.
By default (``weights_only=True``) loading rebuilds data only: tensors, Parameters, containers,
numbers, strings, numpy arrays; any other global a file names stops the load unless it was
allow-listed with :func:`add_safe_globals`. ``weights_only=False`` is Python's full pickle, as in
torch: only for files from a trusted source.
"""

import collections
import io
import os

from .. import _C
from .._atomic import atomic_write
from . import _torch_format, _unpickle

__all__ = ["save", "load"]

DEFAULT_PROTOCOL = 2
_ser = _C._serialize
_EMBER_MAGIC = b"EMBERCKP"


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def add_safe_globals(safe_globals):
    """add_safe_globals(safe_globals) -> None

    Allow-lists classes and functions for ``weights_only=True`` loads. Each entry is the object,
    matched by ``f"{obj.__module__}.{obj.__qualname__}"``, or a pair ``(obj, "module.name")``
    naming it as the file does."""
    for entry in safe_globals:
        if isinstance(entry, tuple) and (len(entry) != 2 or not isinstance(entry[1], str)):
            raise TypeError("add_safe_globals: expected objects or (object, str) pairs")
    _unpickle._safe_globals.extend(safe_globals)


def get_safe_globals():
    """get_safe_globals() -> list

    The globals allow-listed with :func:`add_safe_globals`."""
    return list(_unpickle._safe_globals)


def clear_safe_globals():
    """clear_safe_globals() -> None

    Empties the allow-list of :func:`add_safe_globals`."""
    _unpickle._safe_globals.clear()


class safe_globals:
    """safe_globals(safe_globals)

    A context manager that allow-lists `safe_globals` (as :func:`add_safe_globals`) inside its
    block only."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)
        self._saved = None

    def __enter__(self):
        self._saved = get_safe_globals()
        add_safe_globals(self.safe_globals)
        return self

    def __exit__(self, *exc):
        _unpickle._safe_globals[:] = self._saved
        return False


def _atomic_write(path, write):
    directory = os.path.dirname(os.path.abspath(os.fsdecode(path)))
    if not os.path.isdir(directory):
        raise RuntimeError(f"ember.save: parent directory {directory} does not exist")
    atomic_write(path, write)


def save(
    obj,
    f,
    pickle_module=None,
    pickle_protocol=DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves ``obj`` to ``f`` in PyTorch's checkpoint format (a zip archive; the legacy stream with
    ``_use_new_zipfile_serialization=False``), so torch.load reads it too.

    Tensors that share a storage (views, tied weights) are saved with that one storage and load
    back sharing it, with their strides and offsets; a Parameter stays a Parameter and
    ``requires_grad`` is kept. Other objects are pickled as torch.save pickles them (loading
    them back needs ``weights_only=False`` or :func:`add_safe_globals`). ``f`` is a path,
    written atomically (temporary file, fsync, rename), or a binary file object.
    """
    if pickle_module is not None and getattr(pickle_module, "__name__", "") != "pickle":
        raise ValueError("ember.save: only the standard pickle module is supported")
    protocol = DEFAULT_PROTOCOL if pickle_protocol is None else int(pickle_protocol)
    writer = (
        _torch_format.write_zip if _use_new_zipfile_serialization else _torch_format.write_legacy
    )
    if _is_path(f):
        _atomic_write(f, lambda fh: writer(obj, fh, protocol))
    else:
        writer(obj, f, protocol)


def _save_ember_format(obj, f):
    """Writes ember's own data-only format (docs/FORMAT.md, "ember's own format"): the container
    of exported programs (read by the C++ runtime) and of C++ `ember::save`."""
    if _is_path(f):
        _ser.save_file(obj, os.fsdecode(f), collections.OrderedDict)
    else:
        _ser.save_stream(obj, f.write, collections.OrderedDict)


def _load_ember_format(f, fh, mmap):
    if fh is not None and _is_path(f):
        return _ser.load_fd(fh.fileno(), bool(mmap), collections.OrderedDict)
    if isinstance(fh, (io.BufferedIOBase, io.RawIOBase)) and hasattr(fh, "getbuffer"):
        data = bytes(fh.getbuffer()[fh.tell() :])
    else:
        data = fh.read()
    return _ser.load_bytes(bytes(data), collections.OrderedDict)


def load(
    f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args
):
    """load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None,
        **pickle_load_args)

    Loads a checkpoint written by :func:`save` or by torch.save (zip or legacy format), or by
    earlier ember versions; ``f`` is a path or a binary file object.

    With ``weights_only=True`` (the default) only data is rebuilt and nothing in the file is
    imported or called; a file naming any other global raises an UnpicklingError that names it
    and the :func:`add_safe_globals` remedy. ``weights_only=False`` unpickles anything, as
    torch's, and must only be used on trusted files. ``map_location`` may be ``'cpu'``, a
    device, a dict of locations or a callable, as torch's; every storage lands on the CPU.
    ``mmap=True`` (paths only) makes tensors views of a private copy-on-write mapping of the
    file instead of copies. A truncated or corrupt file raises RuntimeError.
    """
    if weights_only is None:
        weights_only = pickle_module is None and os.environ.get(
            "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0"
        ) in ("0", "", "false", "False")
    if mmap and not _is_path(f):
        raise ValueError("ember.load: mmap=True requires f to be a path (str or os.PathLike)")
    if _is_path(f):
        with open(f, "rb") as fh:
            return _load_open(f, fh, map_location, bool(weights_only), mmap)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_open(f, f, map_location, bool(weights_only), mmap)


def _load_open(f, fh, map_location, weights_only, mmap):
    start = fh.tell()
    head = fh.read(8)
    fh.seek(start)
    if not head:
        raise RuntimeError("ember.load: the file is empty (truncated checkpoint)")
    if head == _EMBER_MAGIC or (len(head) < 8 and _EMBER_MAGIC.startswith(head)):
        return _load_ember_format(f, fh, mmap)
    if start:  # the torch readers address the file from its start
        fh = io.BytesIO(fh.read())
    if head[:2] == b"PK":
        return _torch_format.load_zip(fh, map_location, weights_only, f if mmap else None)
    if mmap:
        raise RuntimeError(
            "ember.load: mmap=True needs a zip checkpoint (torch.save's default format); this "
            "file is in the legacy format"
        )
    return _torch_format.load_legacy(fh, map_location, weights_only)
