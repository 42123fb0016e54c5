"""The storage of ember.distributed.checkpoint: a directory holding one data file per writing
rank (`__<rank>_0.distcp`, the raw bytes of the chunks it owns, back to back) and `.metadata`,
a JSON document the coordinator writes last. Every file is written atomically (a temporary file
in the same directory, fsync, rename), and loading parses JSON and copies bytes: nothing it
reads can run code (no pickle). The format is ember's own; torch's DCP files are not read."""

import json
import math
import os

import numpy as np

from ... import _C
from ..._atomic import atomic_write
from ..tensor._api import _lib

__all__ = ["FileSystemReader", "FileSystemWriter"]

_METADATA = ".metadata"
_FORMAT = "ember-dcp"
_VERSION = 1


def _dtype_name(dtype):
    return repr(dtype).split(".", 1)[1]


def _dtype(name):
    dtype = getattr(_C, name, None)
    if not isinstance(dtype, _C.dtype):
        raise ValueError(f"checkpoint: unknown dtype {name!r} in the metadata")
    return dtype


def _tensor_bytes(t):
    """The bytes of a contiguous tensor, as a numpy uint8 array."""
    t = t.detach().contiguous().reshape(-1)
    if t.dtype == _C.bfloat16:
        t = t.view(_C.int16)
    return t.numpy().view(np.uint8)


def _tensor_bytes_view(t):
    """A writable numpy uint8 view of a contiguous tensor's memory."""
    flat = t.detach().reshape(-1)
    if flat.dtype == _C.bfloat16:
        flat = flat.view(_C.int16)
    return flat.numpy().view(np.uint8)


# --- values that are not tensors: JSON with tagged containers --------------------------------


def encode_value(value, where):
    """A JSON-able form of value (None, bool, int, float, str, bytes, complex, list, tuple, dict,
    dtype, Size), tagged so that decode_value gives back the same types."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else {"__int__": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, complex):
        return {"__complex__": [encode_value(value.real, where), encode_value(value.imag, where)]}
    if isinstance(value, bytes):
        return {"__bytes__": value.hex()}
    if isinstance(value, _C.dtype):
        return {"__dtype__": _dtype_name(value)}
    if isinstance(value, _lib().Size):
        return {"__size__": [int(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v, where) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode_value(v, where) for v in value]}
    if isinstance(value, dict):
        return {
            "__dict__": [[encode_value(k, where), encode_value(v, where)] for k, v in value.items()]
        }
    raise TypeError(
        f"checkpoint.save: expected None, bool, int, float, complex, str, bytes, dtype or "
        f"lists/tuples/dicts of them for the value at {where!r} (a checkpoint is loaded without "
        f"running code, so arbitrary objects cannot be stored); got {type(value).__name__}"
    )


def decode_value(obj):
    """The value encode_value encoded (plain JSON data only: nothing is imported or called)."""
    if isinstance(obj, list):
        return [decode_value(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if len(obj) != 1:
        raise ValueError("checkpoint: malformed value in the metadata")
    ((tag, body),) = obj.items()
    if tag == "__int__":
        return int(body)
    if tag == "__float__":
        return float(body)
    if tag == "__complex__":
        return complex(decode_value(body[0]), decode_value(body[1]))
    if tag == "__bytes__":
        return bytes.fromhex(body)
    if tag == "__dtype__":
        return _dtype(body)
    if tag == "__size__":
        return _lib().Size(body)
    if tag == "__tuple__":
        return tuple(decode_value(v) for v in body)
    if tag == "__dict__":
        return {decode_value(k): decode_value(v) for k, v in body}
    raise ValueError(f"checkpoint: unknown tag {tag!r} in the metadata")


# --- files ------------------------------------------------------------------------------------


def _atomic_write(path, chunks, sync):
    def write(f):
        for c in chunks:
            f.write(c)

    atomic_write(path, write, sync=sync)


class _FileSystemStorage:
    """What FileSystemWriter and FileSystemReader share: the checkpoint directory they name."""

    @property
    def checkpoint_id(self):
        return self.path

    def reset(self, checkpoint_id=None):
        """reset(checkpoint_id=None) -> None

        Points the storage at another checkpoint directory."""
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        """validate_checkpoint_id(checkpoint_id) -> bool

        Whether checkpoint_id names a local path."""
        return isinstance(checkpoint_id, (str, os.PathLike))


class FileSystemWriter(_FileSystemStorage):
    """FileSystemWriter(path, single_file_per_rank=True, sync_files=True, thread_count=1,
        per_thread_copy_ahead=10000000, cache_staged_state_dict=False, overwrite=True)

    Writes a checkpoint into the directory path (created if missing): one data file per rank
    that owns data and a JSON metadata file, each written atomically."""

    def __init__(
        self,
        path,
        single_file_per_rank=True,
        sync_files=True,
        thread_count=1,
        per_thread_copy_ahead=10_000_000,
        cache_staged_state_dict=False,
        overwrite=True,
        **kwargs,
    ):
        self.path = os.fspath(path)
        self.sync_files = sync_files
        self.overwrite = overwrite

    def _prepare(self):
        os.makedirs(self.path, exist_ok=True)
        if not self.overwrite and os.path.exists(os.path.join(self.path, _METADATA)):
            raise RuntimeError(f"checkpoint.save: a checkpoint exists at {self.path}")

    def _write_data(self, rank, items):
        """Writes [(key, chunk offsets, contiguous tensor)] into this rank's data file; returns
        {key: [chunk records]}."""
        if not items:
            return {}
        name = f"__{rank}_0.distcp"
        records, buffers, pos = {}, [], 0
        for key, offsets, t in items:
            data = _tensor_bytes(t)  # a view of the tensor's memory when it is contiguous
            buffers.append(data)
            records.setdefault(key, []).append(
                {
                    "offsets": list(offsets),
                    "sizes": list(t.shape),
                    "file": name,
                    "offset": pos,
                    "length": int(data.nbytes),
                }
            )
            pos += int(data.nbytes)
        _atomic_write(os.path.join(self.path, name), buffers, self.sync_files)
        return records

    def _write_metadata(self, metadata):
        text = json.dumps(dict(metadata, format=_FORMAT, version=_VERSION), indent=None)
        _atomic_write(os.path.join(self.path, _METADATA), [text.encode()], self.sync_files)


class FileSystemReader(_FileSystemStorage):
    """FileSystemReader(path)

    Reads a checkpoint directory that FileSystemWriter wrote: the JSON metadata, then only the
    byte ranges of the chunks each rank needs."""

    def __init__(self, path, **kwargs):
        self.path = os.fspath(path)
        self._files = {}

    def read_metadata(self):
        """read_metadata() -> Metadata

        The checkpoint's table of contents: each key's dtype, size and chunks, or a value."""
        from .metadata import from_json

        return from_json(self._read_json(), _dtype, decode_value)

    def _read_json(self):
        """The checkpoint's metadata file, parsed."""
        path = os.path.join(self.path, _METADATA)
        with open(path, "rb") as f:
            meta = json.loads(f.read().decode())
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise RuntimeError(
                f"checkpoint.load: expected an ember checkpoint (format {_FORMAT!r}) at "
                f"{self.path}; got another format (torch's DCP files are not read by ember)"
            )
        if meta.get("version", 0) > _VERSION:
            raise RuntimeError(
                f"checkpoint.load: the checkpoint's version {meta['version']} is newer than "
                f"this ember's ({_VERSION})"
            )
        return meta

    def _read_into(self, name, offset, tensor):
        """Reads tensor.nbytes bytes of data file name at offset straight into the memory of
        tensor (contiguous)."""
        if "/" in name or "\\" in name or name.startswith(".."):
            raise ValueError(f"checkpoint.load: bad data file name {name!r} in the metadata")
        f = self._files.get(name)
        if f is None:
            f = self._files[name] = open(os.path.join(self.path, name), "rb", buffering=0)
        f.seek(offset)
        view = memoryview(_tensor_bytes_view(tensor))
        done = 0
        while done < len(view):
            n = f.readinto(view[done:])
            if not n:
                raise RuntimeError(f"checkpoint.load: {name} is truncated")
            done += n

    def _close(self):
        for f in self._files.values():
            f.close()
        self._files = {}
