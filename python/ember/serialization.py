"""ember.save and ember.load: checkpoints in ember's data-only format (docs/FORMAT.md).

Loading never runs code, so ``weights_only`` is accepted for compatibility and has no effect.
"""

import collections
import io
import os

from . import _C

__all__ = ["save", "load"]

_ser = _C._serialize


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def save(
    obj,
    f,
    pickle_module=None,
    pickle_protocol=None,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves ``obj`` (tensors inside dicts, lists, tuples, str, int, float, bool, None) to ``f``.

    ``f`` is a path, written atomically (temporary file, fsync, rename), or a binary file object.
    Objects of other types raise TypeError: checkpoints hold data only, never pickled code.
    """
    if _is_path(f):
        _ser.save_file(obj, os.fsdecode(f), collections.OrderedDict)
    else:
        _ser.save_stream(obj, f.write, collections.OrderedDict)


def load(
    f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args
):
    """load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None,
        **pickle_load_args)

    Loads what :func:`save` wrote; ``f`` is a path or a binary file object.

    Tensors are fresh copies, or views of a private memory map of the file when ``mmap=True``
    (paths only). Every tensor loads on the CPU, the only device, whatever ``map_location`` says.
    A truncated or corrupt file raises RuntimeError.
    """
    if _is_path(f):
        with open(f, "rb") as fh:
            return _ser.load_fd(fh.fileno(), bool(mmap), collections.OrderedDict)
    if mmap:
        raise ValueError("ember.load: mmap=True requires f to be a path (str or os.PathLike)")
    if isinstance(f, (io.BufferedIOBase, io.RawIOBase)) and hasattr(f, "getbuffer"):
        data = bytes(f.getbuffer()[f.tell() :])
    else:
        data = f.read()
    return _ser.load_bytes(bytes(data), collections.OrderedDict)
