"""PyTorch's checkpoint formats: the zip archive (torch >= 1.6) and the legacy stream of pickles.

Reading checks every size and offset against the file before allocating, so a file cannot claim
more memory than it holds; see docs/FORMAT.md.
"""

import io
import os
import pickle
import struct
import sys
import zipfile

from .. import _C, _process
from .._ops.creation import empty, from_numpy
from .._ops.quantized import qscheme as _qscheme
from . import _unpickle as U
from ._unpickle import CheckpointError

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
ALIGNMENT = 64
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # 30 bytes


def np_bytes(t):
    """A writable uint8 numpy view of contiguous tensor `t`'s bytes (shares memory)."""
    import numpy as np

    if t.dtype == _C.bfloat16:
        t = t.view(_C.int16)
    return t.numpy().reshape(-1).view(np.uint8)


def _np_dtype_of(dtype):
    import numpy as np

    name = U.dtype_name(dtype)
    return np.dtype({"bfloat16": "int16", "bool": "bool"}.get(name, name))


# ---- map_location ----


def _target(map_location, location):
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif map_location is not None and not callable(map_location):
        location = str(map_location)
    if not isinstance(location, str) or not (location == "cpu" or location.startswith("cpu:")):
        raise RuntimeError(
            f"ember.load: the checkpoint puts a storage on device {location!r}, but this ember "
            "build runs on the CPU only. Use ember.load with map_location='cpu' (or "
            "map_location=ember.device('cpu')) to map the storages to the CPU."
        )


class _Reader:
    """Turns persistent ids into LazyStorages and reads their bytes on demand."""

    def __init__(self, map_location):
        self.map_location = map_location
        self.storages = {}

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise CheckpointError("ember.load: unsupported persistent id in the checkpoint")
        storage_type, key, location, numel = pid[1:5]
        if not isinstance(storage_type, U.StorageType) or type(numel) is not int or numel < 0:
            raise CheckpointError("ember.load: corrupt storage record in the checkpoint")
        if not isinstance(key, str) or not isinstance(location, str):
            raise CheckpointError("ember.load: corrupt storage record in the checkpoint")
        if len(pid) > 5 and pid[5] is not None:
            raise CheckpointError(
                "ember.load: storage views of pre-1.0 checkpoints are not supported"
            )
        _target(self.map_location, location)
        if key in self.storages:
            return self.storages[key]
        name = storage_type.dtype_name
        itemsize = U.ember_dtype(name).itemsize if name is not None else 1
        lazy = U.LazyStorage(self, key, numel * itemsize, name, location)
        self.check(lazy)
        self.storages[key] = lazy
        return lazy

    def finish(self, t, lazy):
        if callable(self.map_location) and not isinstance(self.map_location, dict):
            from .._storage import TypedStorage

            out = self.map_location(TypedStorage._wrap(t), lazy.location)
            if out is not None:
                t = getattr(out, "_tensor", t)
        return t


class ZipReader(_Reader):
    """Storages of a torch zip archive: records `<prefix>/data/<key>`, stored uncompressed."""

    def __init__(self, fh, map_location, mmap_path=None):
        super().__init__(map_location)
        self.fh = fh
        fh.seek(0, io.SEEK_END)
        self.size = fh.tell()
        fh.seek(0)
        try:
            self.zf = zipfile.ZipFile(fh)
            infos = self.zf.infolist()
        except (
            zipfile.BadZipFile,
            zipfile.LargeZipFile,
            OSError,
            ValueError,
            EOFError,
            NotImplementedError,
        ) as e:
            raise CheckpointError(f"ember.load: truncated or corrupt zip archive ({e})") from None
        pkls = [i.filename for i in infos if i.filename.endswith("/data.pkl")]
        pkls = [n for n in pkls if n.count("/") == 1]
        if not pkls:
            raise CheckpointError("ember.load: corrupt checkpoint: the zip archive has no data.pkl")
        self.prefix = pkls[0][: -len("data.pkl")]
        self.records = {i.filename: i for i in infos}
        # Where each record's bytes may end: the next local header, or the central directory.
        starts = sorted(i.header_offset for i in infos)
        if any(a == b for a, b in zip(starts, starts[1:])):
            raise CheckpointError(
                "ember.load: corrupt zip archive (two records claim the same bytes: it overlaps)"
            )
        end = getattr(self.zf, "start_dir", self.size)
        self.limit = {}
        for i in infos:
            k = _bisect_right(starts, i.header_offset)
            self.limit[i.filename] = starts[k] if k < len(starts) else end
        self.fd = None
        self.mmap = None
        self.pending = None
        if mmap_path is not None:
            import mmap

            self.mmap = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY) if self.size else None
        elif hasattr(fh, "fileno"):
            try:
                self.fd = fh.fileno()
            except (OSError, io.UnsupportedOperation):
                self.fd = None
        if self.prefix + "byteorder" in self.records:
            if self.read_bytes(self.prefix + "byteorder").strip() != b"little":
                raise CheckpointError("ember.load: big-endian checkpoints are not supported")

    def extent(self, name, nbytes=None):
        """(data offset, size) of record `name`, checked against the file."""
        info = self.records.get(name)
        if info is None:
            raise CheckpointError(f"ember.load: corrupt checkpoint: record {name!r} is missing")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise CheckpointError(
                f"ember.load: record {name!r} is compressed; checkpoints store records uncompressed"
            )
        header = self._pread(info.header_offset, _LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise CheckpointError(f"ember.load: truncated or corrupt zip archive (record {name!r})")
        fields = _LOCAL_HEADER.unpack(header)
        start = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
        size = info.file_size
        if start + size > min(self.limit[name], self.size):
            raise CheckpointError(
                f"ember.load: truncated or corrupt zip archive (record {name!r} "
                "overlaps another or runs past the end)"
            )
        if nbytes is not None and nbytes != size:
            raise CheckpointError(
                f"ember.load: corrupt checkpoint: storage record {name!r} holds {size} bytes, "
                f"the tensors it backs need {nbytes}"
            )
        return start, size

    def _pread(self, offset, n):
        if offset < 0 or n < 0 or offset + n > self.size:
            raise CheckpointError(
                "ember.load: truncated or corrupt zip archive (a record lies outside the file)"
            )
        if self.fd is not None:
            return os.pread(self.fd, n, offset)
        self.fh.seek(offset)
        return self.fh.read(n)

    def read_bytes(self, name):
        start, size = self.extent(name)
        data = self._pread(start, size)
        if len(data) != size:
            raise CheckpointError(f"ember.load: truncated zip archive (record {name!r})")
        return data

    def check(self, lazy):
        self.extent(self.prefix + "data/" + lazy.key, lazy.nbytes)

    def read_storage(self, lazy, dtype):
        start, size = self.extent(self.prefix + "data/" + lazy.key, lazy.nbytes)
        numel = size // dtype.itemsize
        if self.mmap is not None and size and start % ALIGNMENT == 0:
            import numpy as np

            arr = np.frombuffer(self.mmap, dtype=_np_dtype_of(dtype), count=numel, offset=start)
            t = from_numpy(arr)
            if dtype == _C.bfloat16:
                t = t.view(_C.bfloat16)
            return self.finish(t, lazy)
        t = empty(numel, dtype=dtype)
        if size:
            if self.pending is not None:  # read after unpickling, several reads at once
                self.pending.append((np_bytes(t), start))
            else:
                _read_into(self, np_bytes(t), start)
        return self.finish(t, lazy)

    def read_pending(self):
        """Fills the storages whose reads were deferred: chunks of the file read by a few
        threads (os.preadv releases the GIL), so page faults and copies overlap."""
        jobs, self.pending = self.pending, None
        if not jobs:
            return
        chunks = []
        for arr, start in jobs:
            view = memoryview(arr).cast("B")
            for lo in range(0, len(view), _CHUNK):
                chunks.append((view[lo : lo + _CHUNK], start + lo))
        workers = min(_THREADS, len(chunks))
        if workers <= 1 or self.fd is None:
            for view, off in chunks:
                _read_into(self, view, off)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            for f in [pool.submit(_pread_into, self.fd, v, o) for v, o in chunks]:
                f.result()


_CHUNK = 8 << 20
_THREADS = min(4, os.cpu_count() or 1)


def _pread_into(fd, view, offset):
    done = 0
    while done < len(view):
        n = os.preadv(fd, [view[done:]], offset + done)
        if n <= 0:
            raise CheckpointError("ember.load: truncated checkpoint (the file ended early)")
        done += n


def _bisect_right(xs, x):
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < xs[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _read_into(src, arr, offset):
    view = memoryview(arr).cast("B")
    done = 0
    if src.fd is not None:
        return _pread_into(src.fd, view, offset)
    src.fh.seek(offset)
    while done < len(view):
        n = src.fh.readinto(view[done:])
        if not n:
            raise CheckpointError("ember.load: truncated checkpoint (the file ended early)")
        done += n


def load_zip(fh, map_location, weights_only, mmap_path=None):
    try:
        reader = ZipReader(fh, map_location, mmap_path)
    except (
        ValueError,
        OSError,
        struct.error,
        zipfile.BadZipFile,
        OverflowError,
        NotImplementedError,
        EOFError,
    ) as e:
        raise CheckpointError(f"ember.load: truncated or corrupt zip archive ({e})") from None
    data = reader.read_bytes(reader.prefix + "data.pkl")
    # With weights_only no code sees a tensor before load returns, so the bytes can be read
    # after unpickling, all at once; weights_only=False objects may read them in __setstate__.
    if weights_only and not callable(map_location):
        reader.pending = []
    obj = _unpickle(data, reader, weights_only)
    reader.read_pending()
    _check_sparse()
    return obj


def _check_sparse(validate=True):
    """Checks the sparse tensors the load rebuilt, now that their arrays are read (as torch
    does, after the load); validate=False forgets them (the legacy reader's dry pass)."""
    from ..sparse._serialize import check_pending

    try:
        check_pending(validate)
    except RuntimeError as e:
        raise CheckpointError(f"ember.load: corrupt sparse tensor ({e})") from None


def _unpickle(data, reader, weights_only):
    cls = U.WeightsUnpickler if weights_only else U.FullUnpickler
    stream = data if hasattr(data, "read") else io.BytesIO(data)
    try:
        return cls(stream, reader).load()
    except (U.UnpicklingError, CheckpointError, MemoryError):
        raise
    except RuntimeError as e:
        if weights_only or str(e).startswith("ember.load"):
            raise CheckpointError(f"ember.load: corrupt checkpoint ({e})") from None
        raise
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        OverflowError,
        UnicodeDecodeError,
        struct.error,
    ) as e:
        if weights_only or isinstance(e, (pickle.UnpicklingError, EOFError)):
            raise CheckpointError(
                f"ember.load: truncated or corrupt checkpoint ({type(e).__name__}: {e})"
            ) from None
        raise


# ---- the legacy format: pickles of magic, protocol, sys_info, the object, the storage keys,
# then each storage as an int64 element count and its bytes ----


class _Bounded(io.RawIOBase):
    """A read-only window on a seekable file that never asks it for more than it holds."""

    def __init__(self, fh, size):
        self.fh, self.size = fh, size

    def readable(self):
        return True

    def readinto(self, b):
        room = self.size - self.fh.tell()
        view = memoryview(b).cast("B")[: max(room, 0)]
        return self.fh.readinto(view) if len(view) else 0

    def seekable(self):
        return True

    def tell(self):
        return self.fh.tell()

    def seek(self, pos, whence=0):
        return self.fh.seek(pos, whence)


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise CheckpointError(
            "ember.load: not an ember checkpoint nor a PyTorch one (neither ember's format, "
            f"PyTorch's zip archive, nor PyTorch's legacy format: its header names "
            f"{module}.{name})"
        )

    def persistent_load(self, pid):
        raise CheckpointError(
            "ember.load: not an ember checkpoint nor a PyTorch one (a persistent id before the "
            "legacy format's magic number)"
        )


class LegacyReader(_Reader):
    def __init__(self, fh, map_location, size):
        super().__init__(map_location)
        self.fh, self.size, self.fd = fh, size, None
        self.dry = True
        self.offsets = {}

    def check(self, lazy):
        if not self.dry:
            off = self.offsets.get(lazy.key)
            if off is None or off[1] != lazy.nbytes:
                raise CheckpointError(
                    f"ember.load: corrupt legacy checkpoint (storage {lazy.key!r})"
                )

    def read_storage(self, lazy, dtype):
        start, nbytes = self.offsets[lazy.key]
        t = empty(nbytes // dtype.itemsize, dtype=dtype)
        if nbytes:
            _read_into(self, np_bytes(t), start)
        return self.finish(t, lazy)


def _header_pickle(stream, what):
    try:
        return _NoGlobals(stream, encoding="utf-8").load()
    except CheckpointError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever the bytes are, they are not a checkpoint
        raise CheckpointError(
            "ember.load: not an ember checkpoint nor a PyTorch one (neither ember's format, "
            f"PyTorch's zip archive, nor PyTorch's legacy format; {what}: "
            f"{type(e).__name__}: {e})"
        ) from None


def load_legacy(fh, map_location, weights_only):
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    fh.seek(0)
    stream = io.BufferedReader(_Bounded(fh, size))
    if _header_pickle(stream, "magic number") != LEGACY_MAGIC:
        raise CheckpointError(
            "ember.load: not an ember checkpoint nor a PyTorch one (invalid magic number)"
        )
    if _header_pickle(stream, "protocol") != LEGACY_PROTOCOL:
        raise CheckpointError("ember.load: unsupported legacy checkpoint protocol version")
    info = _header_pickle(stream, "sys_info")
    if not isinstance(info, dict) or info.get("little_endian") is not True:
        raise CheckpointError("ember.load: big-endian or corrupt legacy checkpoint")
    body = stream.tell()
    reader = LegacyReader(fh, map_location, size)
    # Pass 1 learns the storages (key -> dtype, numel) without reading or allocating them.
    _unpickle(stream, reader, weights_only)
    body_end = stream.tell()
    keys = _header_pickle(stream, "storage keys")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise CheckpointError("ember.load: corrupt legacy checkpoint (storage keys)")
    pos = stream.tell()
    for key in keys:
        head = _pread_exact(fh, pos, 8, size)
        (numel,) = struct.unpack("<q", head)
        lazy = reader.storages.get(key)
        itemsize = U.ember_dtype(lazy.dtype_name).itemsize if lazy and lazy.dtype_name else 1
        nbytes = numel * itemsize
        if lazy is None or numel < 0 or pos + 8 + nbytes > size or nbytes != lazy.nbytes:
            raise CheckpointError(
                f"ember.load: truncated or corrupt legacy checkpoint (storage {key!r})"
            )
        reader.offsets[key] = (pos + 8, nbytes)
        pos += 8 + nbytes
    # Pass 2 builds the object with the storages read from their checked extents.
    reader.dry = False
    reader.storages = {}
    _check_sparse(validate=False)
    obj = _unpickle(_pread_exact(fh, body, body_end - body, size), reader, weights_only)
    _check_sparse()
    return obj


def _pread_exact(fh, pos, n, size):
    if pos + n > size:
        raise CheckpointError("ember.load: truncated legacy checkpoint")
    fh.seek(pos)
    data = fh.read(n)
    if len(data) != n:
        raise CheckpointError("ember.load: truncated legacy checkpoint")
    return data


# ---- writing ----


class _Global:
    """A global written by name (torch's names), without importing it."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle requires reduce functions to be callable
        raise TypeError(f"{self.module}.{self.name} is only a name written into checkpoints")


_G = {}


def _g(module, name):
    key = (module, name)
    if key not in _G:
        _G[key] = _Global(module, name)
    return _G[key]


class _StorageRef:
    def __init__(self, key, tensor, dtype):
        self.key, self.tensor, self.dtype = key, tensor, dtype
        self.numel = tensor._storage_nbytes() // dtype.itemsize


class SaveError(TypeError, pickle.PicklingError):
    """An object ember.save cannot write (a TypeError, and a PicklingError as torch raises)."""


class _Pickler(pickle._Pickler):
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol, legacy):
        super().__init__(file, protocol)
        self.legacy = legacy
        self.storages = {}  # storage pointer -> _StorageRef, in first-seen order

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            st = _g("torch", U.DTYPE_STORAGE[U.dtype_name(obj.dtype)])
            pid = ("storage", st, obj.key, "cpu", obj.numel)
            return pid + (None,) if self.legacy else pid
        return None

    def save(self, obj, save_persistent_id=True):
        try:
            super().save(obj, save_persistent_id)
        except SaveError:
            raise
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise SaveError(
                f"ember.save: cannot save an object of type {type(obj).__name__}: {e}"
            ) from e

    def _storage(self, t):
        t = t.detach()
        ptr = t._storage_ptr()
        ref = self.storages.get(ptr)
        if ref is None:
            if U.dtype_name(t.dtype) not in U.DTYPE_STORAGE:
                raise SaveError(f"ember.save: cannot save tensors of dtype {t.dtype}")
            key = str(len(self.storages)) if not self.legacy else str(ptr)
            ref = self.storages[ptr] = _StorageRef(key, t, t.dtype)
        elif ref.dtype != t.dtype:
            raise RuntimeError(
                "ember.save: cannot save multiple tensors that view the same data as different "
                f"types ({ref.dtype} and {t.dtype})"
            )
        return ref

    def reducer_override(self, obj):
        from .._device import device
        from .._size import Size
        from ..nn.parameter import Parameter

        if isinstance(obj, _C.Tensor):
            if getattr(obj, "_layout", None) is not None:  # sparse (ember/sparse/_serialize.py)
                from ..sparse._serialize import torch_data

                return (_g("torch._utils", "_rebuild_sparse_tensor"), (obj.layout, torch_data(obj)))
            if isinstance(obj, Parameter):
                plain = obj.detach()
                return (
                    _g("torch._utils", "_rebuild_parameter"),
                    (plain, obj.requires_grad, _ordered()),
                )
            if obj.is_quantized:
                return (_g("torch._utils", "_rebuild_qtensor"), self._qtensor_args(obj))
            args = (
                self._storage(obj),
                obj.storage_offset(),
                Size(obj.shape),
                tuple(obj.stride()),
                obj.requires_grad,
                _ordered(),
            )
            return (_g("torch._utils", "_rebuild_tensor_v2"), args)
        if type(obj) is Size:
            return (_g("torch", "Size"), (tuple(obj),))
        if type(obj) is _process.layout:
            return (_g("torch.serialization", "_get_layout"), (repr(obj),))
        if type(obj) is device:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_g("torch", "device"), args)
        return NotImplemented

    def _qtensor_args(self, obj):
        from .._size import Size

        scheme = obj.qscheme()
        if scheme.name.startswith("per_tensor"):
            params = (scheme, obj.q_scale(), obj.q_zero_point())
        else:
            params = (
                scheme,
                obj.q_per_channel_scales(),
                obj.q_per_channel_zero_points(),
                obj.q_per_channel_axis(),
            )
        return (
            self._storage(obj),
            obj.storage_offset(),
            Size(obj.shape),
            tuple(obj.stride()),
            params,
            False,
            _ordered(),
        )

    def _write_global(self, obj):
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
        self.memoize(obj)

    dispatch[_Global] = _write_global

    def _write_dtype(self, obj):
        self.save(_g("torch", U.dtype_name(obj)))  # a repeated dtype is a memo reference

    dispatch[_C.dtype] = _write_dtype

    def _write_qscheme(self, obj):
        self.save(_g("torch", obj.name))

    dispatch[_qscheme] = _write_qscheme


def _ordered():
    import collections

    return collections.OrderedDict()


def _pickle(obj, protocol, legacy):
    buf = io.BytesIO()
    p = _Pickler(buf, protocol, legacy)
    p.dump(obj)
    return buf.getvalue(), list(p.storages.values())


def write_zip(obj, f, protocol):
    data, storages = _pickle(obj, protocol, legacy=False)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        prefix = "archive/"
        _write_record(zf, f, prefix + "data.pkl", data)
        _write_record(zf, f, prefix + ".format_version", b"1")
        _write_record(zf, f, prefix + ".storage_alignment", str(ALIGNMENT).encode())
        _write_record(zf, f, prefix + "byteorder", b"little")
        for ref in storages:
            _write_record(zf, f, prefix + "data/" + ref.key, _storage_bytes(ref))
        _write_record(zf, f, prefix + "version", b"3\n")
        _write_record(zf, f, prefix + ".data/serialization_id", os.urandom(20).hex().encode())


def _storage_bytes(ref):
    t = ref.tensor
    if t.is_quantized:
        t = _C._quantized.repr_view(t)
    whole = t.as_strided((ref.numel,), (1,), 0)
    return np_bytes(whole)


def _write_record(zf, f, name, data):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o600 << 16
    size = len(data) if isinstance(data, bytes) else data.nbytes
    info.file_size = size
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
    # Pad the local header's extra field so that the record's bytes start on a 64-byte boundary
    # (what makes mmap=True views aligned), as torch's writer does.
    pos = zf.fp.tell() if hasattr(zf.fp, "tell") else 0
    fixed = _LOCAL_HEADER.size + len(name.encode()) + (20 if zip64 else 0) + 4
    pad = (-(pos + fixed)) % ALIGNMENT
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
    with zf.open(info, "w", force_zip64=zip64) as w:
        w.write(data)


def write_legacy(obj, f, protocol):
    data, storages = _pickle(obj, protocol, legacy=True)
    sys_info = {
        "protocol_version": LEGACY_PROTOCOL,
        "little_endian": sys.byteorder == "little",
        "type_sizes": {"short": 2, "int": 4, "long": 4},
    }
    f.write(pickle.dumps(LEGACY_MAGIC, protocol=protocol))
    f.write(pickle.dumps(LEGACY_PROTOCOL, protocol=protocol))
    f.write(pickle.dumps(sys_info, protocol=protocol))
    f.write(data)
    f.write(pickle.dumps([ref.key for ref in storages], protocol=protocol))
    for ref in storages:
        f.write(struct.pack("<q", ref.numel))
        f.write(_storage_bytes(ref))
