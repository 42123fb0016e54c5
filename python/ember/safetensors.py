"""The safetensors format, with the API of the ``safetensors.torch`` package.

A file is an 8-byte little-endian header length N, N bytes of JSON header (padded with spaces),
then the tensors' bytes. Every header is validated before any tensor is made: its size, its JSON,
the dtype names, shapes against byte counts, and offsets that tile the data exactly (no holes, no
overlaps, nothing past the end). Files are memory-mapped: ``load_file`` and ``safe_open`` give
tensors that are views of a private copy-on-write mapping (zero-copy; writing to them never
changes the file), copies only where a tensor's bytes are not aligned to its element size.

    >>> from ember.safetensors import save_file, load_file, safe_open
"""

import json
import math
import mmap
import os
import struct

from . import _C
from ._ops.creation import empty, from_numpy

__all__ = ["save_file", "save", "load_file", "load", "safe_open", "SafetensorError"]

MAX_HEADER_SIZE = 100_000_000

# safetensors dtype name -> ember dtype name (ember has no complex, unsigned wide or float8 yet).
_DTYPES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "I16": "int16",
    "I32": "int32",
    "I64": "int64",
    "F16": "float16",
    "BF16": "bfloat16",
    "F32": "float32",
    "F64": "float64",
}
_KNOWN = set(_DTYPES) | {
    "U16",
    "U32",
    "U64",
    "F8_E4M3",
    "F8_E5M2",
    "C64",
    "C128",
    "F4",
    "F6_E2M3",
    "F6_E3M2",
    "F8_E8M0",
    "F8_E4M3FNUZ",
    "F8_E5M2FNUZ",
    "E8M0",
}
_NAMES = {v: k for k, v in _DTYPES.items()}


class SafetensorError(Exception):
    """A safetensors file or buffer that is malformed, or a request it cannot answer."""


def _dtype_name(dt):
    return repr(dt).split(".", 1)[1]


def _np_dtype(dt):
    import numpy as np

    name = _dtype_name(dt)
    return np.dtype({"bfloat16": "int16"}.get(name, name))


def _bytes_of(t):
    import numpy as np

    if t.dtype == _C.bfloat16:
        t = t.view(_C.int16)
    return t.numpy().reshape(-1).view(np.uint8)


# ---- writing ----


def _serialize(tensors, metadata):
    if not isinstance(tensors, dict):
        raise SafetensorError("expected a dict of str -> Tensor")
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            raise SafetensorError("metadata must be a dict of str -> str")
    seen = {}
    items = []
    for name, t in tensors.items():
        if not isinstance(name, str) or not isinstance(t, _C.Tensor):
            raise SafetensorError("expected a dict of str -> Tensor")
        if _dtype_name(t.dtype) not in _NAMES:
            raise SafetensorError(f"cannot save tensor {name!r} of dtype {t.dtype}")
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. "
                "It either means you are trying to save tensors which are reference of each "
                "other in which case it's recommended to save only the full tensors, and reslice "
                "at load time, or simply call `.contiguous()` on your tensor to pack it before "
                "saving."
            )
        if t.numel():
            span = (t.data_ptr(), t.data_ptr() + t.numel() * t.element_size())
            for other, (lo, hi) in seen.items():
                if span[0] < hi and lo < span[1]:
                    raise RuntimeError(
                        f"Some tensors share memory, this will lead to duplicate memory on disk "
                        f"and potential differences when loading them again: [{other!r}, "
                        f"{name!r}]. Save copies (`.clone()`) or only one of them."
                    )
            seen[name] = span
        items.append((name, t.detach()))
    # Largest elements first keeps every tensor aligned to its element size in the file.
    items.sort(key=lambda kv: (-kv[1].element_size(), kv[0]))
    header = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, t in items:
        n = t.numel() * t.element_size()
        header[name] = {
            "dtype": _NAMES[_dtype_name(t.dtype)],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + n],
        }
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)
    return struct.pack("<Q", len(text)) + text, items


def save(tensors, metadata=None):
    """save(tensors, metadata=None) -> bytes

    The safetensors bytes of a dict of contiguous tensors that share no memory."""
    head, items = _serialize(tensors, metadata)
    parts = [head] + [bytes(_bytes_of(t.contiguous())) for _, t in items if t.numel()]
    return b"".join(parts)


def save_file(tensors, filename, metadata=None):
    """save_file(tensors, filename, metadata=None) -> None

    Writes a dict of contiguous tensors to `filename` in the safetensors format, atomically
    (a temporary file in the same directory, fsync, rename)."""
    head, items = _serialize(tensors, metadata)
    filename = os.fspath(filename)
    tmp = f"{filename}.tmp{os.getpid()}.{os.urandom(4).hex()}"
    try:
        with open(tmp, "wb") as f:
            f.write(head)
            for _, t in items:
                if t.numel():
                    f.write(_bytes_of(t))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---- reading ----


def _parse_header(buf, total):
    """{name: (dtype name, shape, begin, end)}, metadata, data start; `buf` holds the file."""
    if total < 8:
        raise SafetensorError("Error while deserializing header: HeaderTooSmall")
    (n,) = struct.unpack("<Q", bytes(buf[:8]))
    if n > MAX_HEADER_SIZE:
        raise SafetensorError("Error while deserializing header: HeaderTooLarge")
    if 8 + n > total:
        raise SafetensorError("Error while deserializing header: InvalidHeaderLength")
    raw = bytes(buf[8 : 8 + n])
    if not raw.startswith(b"{"):
        raise SafetensorError("Error while deserializing header: InvalidHeaderStart")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SafetensorError(
            f"Error while deserializing header: InvalidHeaderDeserialization ({e})"
        ) from None
    if not isinstance(header, dict):
        raise SafetensorError("Error while deserializing header: InvalidHeaderDeserialization")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise SafetensorError("Error while deserializing header: metadata must map str to str")
    entries = {}
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) - {"dtype", "shape", "data_offsets"}:
            raise SafetensorError(f"Error while deserializing header: bad entry for {name!r}")
        dtype, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dtype not in _KNOWN:
            raise SafetensorError(
                f"Error while deserializing header: unknown dtype {dtype!r} for {name!r}"
            )
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise SafetensorError(f"Error while deserializing header: bad shape for {name!r}")
        if (
            not isinstance(offs, list)
            or len(offs) != 2
            or not all(type(o) is int and o >= 0 for o in offs)
            or offs[0] > offs[1]
        ):
            raise SafetensorError(f"Error while deserializing header: InvalidOffset({name})")
        entries[name] = (dtype, tuple(shape), offs[0], offs[1])
    data_start = 8 + n
    # The tensors must tile [0, data length) exactly, in offset order.
    pos = 0
    for name, (dtype, shape, begin, end) in sorted(entries.items(), key=lambda kv: kv[1][2:]):
        if begin != pos:
            raise SafetensorError(f"Error while deserializing header: InvalidOffset({name})")
        if dtype in _DTYPES:
            itemsize = getattr(_C, _DTYPES[dtype]).itemsize
            if math.prod(shape) * itemsize != end - begin:
                raise SafetensorError(
                    f"Error while deserializing header: TensorInvalidInfo ({name}: shape "
                    f"{list(shape)} of {dtype} is not {end - begin} bytes)"
                )
        pos = end
    if data_start + pos != total:
        raise SafetensorError(
            "Error while deserializing header: MetadataIncompleteBuffer (the offsets do not "
            "cover the data exactly)"
        )
    return entries, metadata, data_start


def _tensor(buf, entry, data_start, name, copy):
    import numpy as np

    dtype, shape, begin, end = entry
    if dtype not in _DTYPES:
        raise SafetensorError(f"ember has no dtype for {name!r} ({dtype})")
    dt = getattr(_C, _DTYPES[dtype])
    numel = math.prod(shape)
    if numel == 0:
        return empty(shape, dtype=dt)
    start = data_start + begin
    arr = np.frombuffer(buf, dtype=_np_dtype(dt), count=numel, offset=start)
    if copy or arr.ctypes.data % dt.itemsize or not arr.flags.writeable:
        t = empty(numel, dtype=dt)
        _bytes_of(t)[:] = np.frombuffer(buf, dtype=np.uint8, count=end - begin, offset=start)
    else:
        t = from_numpy(arr)
        if dt == _C.bfloat16:
            t = t.view(_C.bfloat16)
    return t.view(shape)


class _Slice:
    """A tensor of a safe_open file, read only in the part indexed."""

    def __init__(self, handle, name):
        self._handle, self._name = handle, name

    def get_shape(self):
        """get_shape() -> list

        The tensor's shape."""
        return list(self._handle._entries[self._name][1])

    def get_dtype(self):
        """get_dtype() -> str

        The tensor's safetensors dtype name (e.g. "F32")."""
        return self._handle._entries[self._name][0]

    def __getitem__(self, index):
        return self._handle.get_tensor(self._name)[index].clone()


class safe_open:
    """safe_open(filename, framework="pt", device="cpu")

    Opens a safetensors file (memory-mapped; its header validated) as a context manager with
    ``keys()``, ``get_tensor(name)``, ``get_slice(name)`` and ``metadata()``."""

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "numpy", "np"):
            raise SafetensorError(f"framework {framework!r} is not supported (use 'pt')")
        if str(device) not in ("cpu", "cpu:0"):
            raise SafetensorError(f"device {device!r}: this ember build runs on the CPU only")
        self._framework = framework
        with open(filename, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) if size else b""
        self._entries, self._metadata, self._data_start = _parse_header(self._map, size)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        """keys() -> list

        The tensor names, sorted."""
        return sorted(self._entries)

    def offset_keys(self):
        """offset_keys() -> list

        The tensor names in the order of their bytes in the file."""
        return sorted(self._entries, key=lambda k: self._entries[k][2])

    def metadata(self):
        """metadata() -> dict or None

        The header's ``__metadata__`` (str -> str)."""
        return None if self._metadata is None else dict(self._metadata)

    def get_tensor(self, name):
        """get_tensor(name) -> Tensor

        The tensor `name`, a zero-copy view of the file's private mapping."""
        if name not in self._entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        t = _tensor(self._map, self._entries[name], self._data_start, name, copy=False)
        return t.numpy() if self._framework in ("numpy", "np") else t

    def get_slice(self, name):
        """get_slice(name) -> slice object

        A handle whose ``[...]`` reads part of tensor `name`; also ``get_shape()``,
        ``get_dtype()``."""
        if name not in self._entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        return _Slice(self, name)


def load_file(filename, device="cpu"):
    """load_file(filename, device="cpu") -> Dict[str, Tensor]

    Every tensor of a safetensors file, as zero-copy views of a private memory map of it."""
    with safe_open(filename, framework="pt", device=device) as f:
        return {k: f.get_tensor(k) for k in f.offset_keys()}


def load(data):
    """load(data) -> Dict[str, Tensor]

    The tensors of safetensors bytes (fresh copies)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SafetensorError("expected bytes")
    entries, _, start = _parse_header(data, len(data))
    order = sorted(entries, key=lambda k: entries[k][2])
    return {k: _tensor(data, entries[k], start, k, copy=True) for k in order}
