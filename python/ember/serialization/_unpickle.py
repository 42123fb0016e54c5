"""Unpickling PyTorch checkpoints into ember objects.

`WeightsUnpickler` is the ``weights_only=True`` reader: every global a pickle names goes through
``find_class``, which answers only from a fixed table of data types and tensor-rebuild functions
(ember's own implementations, never torch's or numpy's pickle hooks) plus the globals a user
allow-listed with ``add_safe_globals``; anything else stops the load before it is imported.
`FullUnpickler` is ``weights_only=False``: Python's whole pickle, as torch's, with ``torch.*``
names resolved to ``ember.*``.
"""

import collections
import importlib
import math
import pickle
import re

from .. import _C
from .._device import device as _device
from .._ops.creation import empty
from .._size import Size
from ..nn.parameter import Parameter

Tensor = _C.Tensor

# ---- the user's allow-list (torch.serialization.add_safe_globals) ----

_safe_globals = []


def _qualified(obj):
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def _user_global(full_name):
    for entry in _safe_globals:
        if isinstance(entry, tuple):
            obj, name = entry
            if name == full_name:
                return obj
        elif _qualified(entry) == full_name:
            return entry
    return None


class UnpicklingError(pickle.UnpicklingError, RuntimeError):
    """A weights_only load refused the file: a pickle.UnpicklingError under that class name, as
    torch raises, and a RuntimeError like every other ember.load failure."""


class CheckpointError(RuntimeError):
    """A checkpoint that is truncated, corrupt or inconsistent."""


def _forbidden(full_name):
    return UnpicklingError(
        "ember.load: Weights only load failed. This file can still be loaded, to do so you have "
        "two options, do those steps only if you trust the source of the checkpoint.\n"
        "\t(1) Re-running `ember.load` with `weights_only` set to `False` will likely succeed, "
        "but it can result in arbitrary code execution. Do it only if you got the file from a "
        "trusted source.\n"
        "\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
        "steps in the following error message.\n"
        f"\tWeightsUnpickler error: Unsupported global: GLOBAL {full_name} was not an allowed "
        "global by default. Please use "
        f"`ember.serialization.add_safe_globals([{full_name}])` or the "
        f"`ember.serialization.safe_globals([{full_name}])` context manager to allowlist this "
        "global if you trust this class/function."
    )


# ---- dtypes and storage types ----

# torch's legacy storage class name -> dtype name (ember has no quantized dtypes yet).
_STORAGE_DTYPES = {
    "ByteStorage": "uint8",
    "CharStorage": "int8",
    "ShortStorage": "int16",
    "IntStorage": "int32",
    "LongStorage": "int64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
    "QInt8Storage": "qint8",
    "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4",
}
DTYPE_STORAGE = {v: k for k, v in _STORAGE_DTYPES.items()}

_TORCH_DTYPE_NAMES = (
    "uint8 int8 int16 int32 int64 float16 bfloat16 float32 float64 bool complex32 complex64 "
    "complex128 uint16 uint32 uint64 float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz "
    "qint8 quint8 qint32 quint4x2 quint2x4 half float double long int short cfloat cdouble"
).split()


def ember_dtype(name):
    """The ember dtype called `name`, or a CheckpointError naming what ember lacks."""
    dt = getattr(_C, name, None)
    if not isinstance(dt, _C.dtype):
        raise CheckpointError(
            f"ember.load: the checkpoint holds tensors of dtype torch.{name}, "
            "which ember does not support"
        )
    return dt


def dtype_name(dt):
    return repr(dt).split(".", 1)[1]


class StorageType:
    """What a pickled storage class (torch.FloatStorage, torch.storage.UntypedStorage) names."""

    __slots__ = ("dtype_name",)

    def __init__(self, dtype_name):
        self.dtype_name = dtype_name  # None for UntypedStorage (bytes)

    def __repr__(self):
        return f"StorageType({self.dtype_name})"


class _MissingDtype:
    """A torch dtype ember lacks, kept as data; building a tensor with it fails clearly."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


def _dtype_global(name):
    dt = getattr(_C, name, None)
    return dt if isinstance(dt, _C.dtype) else _MissingDtype(name)


# ---- storages and tensor rebuilding ----


class LazyStorage:
    """A storage named by a persistent id: its bytes are read once, when a tensor first needs
    them, as elements of that tensor's dtype."""

    __slots__ = ("reader", "key", "nbytes", "dtype_name", "tensor", "location")

    def __init__(self, reader, key, nbytes, dtype_name, location):
        self.reader, self.key, self.nbytes = reader, key, nbytes
        self.dtype_name, self.location, self.tensor = dtype_name, location, None

    def materialize(self, dtype):
        if self.tensor is None:
            itemsize = dtype.itemsize
            if self.nbytes % itemsize:
                raise CheckpointError(
                    f"ember.load: storage {self.key!r} holds {self.nbytes} bytes, not a whole "
                    f"number of {dtype_name(dtype)} elements"
                )
            self.tensor = self.reader.read_storage(self, dtype)
        elif self.tensor.dtype != dtype:
            raise CheckpointError(
                f"ember.load: storage {self.key!r} is viewed as both "
                f"{dtype_name(self.tensor.dtype)} and {dtype_name(dtype)}, which ember cannot share"
            )
        return self.tensor


def _int_tuple(value, what):
    if not isinstance(value, (tuple, list)) or len(value) > 64:
        raise CheckpointError(f"ember.load: corrupt tensor record: {what} is not a tuple of ints")
    for v in value:
        if type(v) is not int:
            raise CheckpointError(
                f"ember.load: corrupt tensor record: {what} is not a tuple of ints"
            )
    return tuple(value)


def tensor_from_storage(storage, offset, size, stride, dtype):
    """A tensor over `storage` with the given geometry, after checking it stays inside."""
    if not isinstance(storage, LazyStorage):
        raise CheckpointError("ember.load: corrupt tensor record: no storage")
    size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
    if type(offset) is not int or offset < 0 or len(size) != len(stride):
        raise CheckpointError("ember.load: corrupt tensor record: bad offset or stride")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise CheckpointError("ember.load: corrupt tensor record: negative size or stride")
    if getattr(storage.reader, "dry", False):  # a first pass that only learns the storages
        return empty(0, dtype=dtype)
    base = storage.materialize(dtype)
    numel = base.shape[0]
    if math.prod(size) == 0:
        ok = offset <= numel
    else:
        ok = offset + sum((n - 1) * s for n, s in zip(size, stride)) < numel
    if not ok:
        raise CheckpointError(
            f"ember.load: corrupt tensor record: size {list(size)}, stride {list(stride)} at "
            f"offset {offset} reach outside storage {storage.key!r} of {numel} elements"
        )
    if size == (numel,) and stride == (1,) and offset == 0:
        return base.detach()
    return base.as_strided(size, stride, offset).detach()


def _with_grad(t, requires_grad):
    if requires_grad is True:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    dt = ember_dtype(storage.dtype_name or "uint8") if isinstance(storage, LazyStorage) else None
    return tensor_from_storage(storage, storage_offset, size, stride, dt)


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
):
    return _with_grad(_rebuild_tensor(storage, storage_offset, size, stride), requires_grad)


def _rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
):
    if isinstance(dtype, _MissingDtype):
        ember_dtype(dtype.name)
    if not isinstance(dtype, _C.dtype):
        raise CheckpointError("ember.load: corrupt tensor record: no dtype")
    t = tensor_from_storage(storage, storage_offset, size, stride, dtype)
    return _with_grad(t, requires_grad)


_QUANTIZED_REPR = {"qint8": "int8", "quint8": "uint8", "qint32": "int32", "quint4x2": "uint8"}


def _rebuild_qtensor(
    storage, storage_offset, size, stride, quantizer_params, requires_grad, backward_hooks
):
    """A quantized tensor: its integers from the storage, its scheme and parameters from
    quantizer_params ((scheme, scale, zero_point) or (scheme, scales, zero_points, axis))."""
    from .._ops import quantized as Q

    name = getattr(storage, "dtype_name", None)
    if name not in _QUANTIZED_REPR or not isinstance(quantizer_params, tuple):
        raise CheckpointError("ember.load: corrupt quantized tensor record")
    ints = tensor_from_storage(
        storage, storage_offset, size, stride, ember_dtype(_QUANTIZED_REPR[name])
    )
    qdtype = ember_dtype(name)
    scheme = quantizer_params[0]
    if scheme in (Q.per_tensor_affine, Q.per_tensor_symmetric) and len(quantizer_params) == 3:
        q = _C._quantized.from_repr_per_tensor(
            ints, qdtype, float(quantizer_params[1]), int(quantizer_params[2])
        )
    elif len(quantizer_params) == 4 and isinstance(quantizer_params[1], _C.Tensor):
        if getattr(storage.reader, "dry", False):
            return ints
        reader = storage.reader
        if getattr(reader, "pending", None):  # the parameters are copied: read their bytes now
            reader.read_pending()
            reader.pending = []
        q = _C._quantized.from_repr_per_channel(
            ints, qdtype, quantizer_params[1], quantizer_params[2], int(quantizer_params[3])
        )
    else:
        raise CheckpointError(f"ember.load: unsupported quantization scheme {scheme!r}")
    return q


def _set_state(obj, state):
    if isinstance(state, tuple) and len(state) == 2:
        state = {**(state[0] or {}), **(state[1] or {})}
    if isinstance(state, dict):
        for k, v in state.items():
            if isinstance(k, str) and not k.startswith("__"):
                setattr(obj, k, v)
    return obj


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, Tensor):
        raise CheckpointError("ember.load: corrupt Parameter record: its data is not a tensor")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


_REBUILDERS = {
    "_rebuild_tensor": _rebuild_tensor,
    "_rebuild_tensor_v2": _rebuild_tensor_v2,
    "_rebuild_tensor_v3": _rebuild_tensor_v3,
    "_rebuild_parameter": _rebuild_parameter,
    "_rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "_rebuild_qtensor": _rebuild_qtensor,
}


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in _REBUILDERS.values() or not isinstance(args, tuple):
        raise CheckpointError("ember.load: corrupt tensor record (_rebuild_from_type_v2)")
    ret = func(*args)
    if new_type is Parameter and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    elif new_type not in (Tensor, Parameter):
        raise CheckpointError("ember.load: corrupt tensor record (_rebuild_from_type_v2)")
    return _set_state(ret, state)


# ---- numpy objects, rebuilt from checked data only ----


class _NdarrayMarker:
    """numpy.ndarray as named by a pickle: only `_reconstruct` may use it."""

    def __repr__(self):
        return "numpy.ndarray"


_NDARRAY = _NdarrayMarker()
_DTYPE_CODE = re.compile(r"[<>|=]?[a-zA-Z][0-9]{0,4}")


def _np_reconstruct(subtype, shape, dtype_code):
    import numpy as np

    if subtype is not _NDARRAY and subtype is not np.ndarray:
        raise CheckpointError("ember.load: corrupt numpy record: not an ndarray")
    shape = _int_tuple(shape, "numpy shape")
    if math.prod(shape) != 0 or not isinstance(dtype_code, bytes) or len(dtype_code) > 4:
        raise CheckpointError("ember.load: corrupt numpy record")
    # An empty array: BUILD then gives it its shape, dtype and bytes through numpy's own
    # __setstate__, which checks that the bytes match the shape before using them.
    return np.ndarray.__new__(np.ndarray, shape, dtype_code.decode("latin1"))


def _np_dtype(obj, align=False, copy=False):
    import numpy as np

    if not isinstance(obj, str) or not _DTYPE_CODE.fullmatch(obj):
        raise CheckpointError(f"ember.load: corrupt numpy dtype record {obj!r}")
    return np.dtype(obj, bool(align), bool(copy))


def _np_scalar(dtype, data=None):
    import numpy as np

    if not isinstance(dtype, np.dtype):
        raise CheckpointError("ember.load: corrupt numpy scalar record")
    if dtype.hasobject:
        return data
    if not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise CheckpointError("ember.load: corrupt numpy scalar record: wrong byte count")
    return np.frombuffer(data, dtype=dtype)[0].copy()


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8"):
        raise CheckpointError("ember.load: corrupt bytes record")
    return obj.encode(encoding, errors if errors == "strict" else "strict")


def _bytearray(source=b"", encoding=None):
    if isinstance(source, str):
        return bytearray(_codecs_encode(source, encoding or "utf-8"))
    if not isinstance(source, (bytes, bytearray, list)):
        raise CheckpointError("ember.load: corrupt bytearray record")
    return bytearray(source)


def _checked(cls):
    """A constructor that accepts only already-built data (no ints that would size a buffer)."""

    def make(*args):
        for a in args:
            if isinstance(a, int) and not isinstance(a, bool) and cls in (set, frozenset):
                raise CheckpointError(f"ember.load: corrupt {cls.__name__} record")
        return cls(*args)

    return make


def _device_global(*args):
    try:
        return _device(*args)
    except Exception as e:  # noqa: BLE001 - a bad device string is a corrupt record
        raise CheckpointError(f"ember.load: corrupt device record: {e}") from None


def _size_global(dims=()):
    return Size(_int_tuple(dims, "Size"))


def _allowed():
    table = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.Size": _size_global,
        "torch.device": _device_global,
        "_codecs.encode": _codecs_encode,
        "builtins.bytearray": _bytearray,
        "builtins.set": _checked(set),
        "builtins.frozenset": _checked(frozenset),
        "builtins.complex": complex,
        "torch.storage.UntypedStorage": StorageType(None),
        "torch.UntypedStorage": StorageType(None),
    }
    for name, fn in _REBUILDERS.items():
        table["torch._utils." + name] = fn
    from ..sparse import _serialize as sparse  # sparse tensors' records (torch's names)

    table["torch._utils._rebuild_sparse_tensor"] = sparse.rebuild_sparse_tensor
    table["torch.serialization._get_layout"] = sparse.get_layout
    for cls, dt in _STORAGE_DTYPES.items():
        table["torch." + cls] = StorageType(dt)
    for name in _TORCH_DTYPE_NAMES:
        table["torch." + name] = _dtype_global(name)
    from .._ops import quantized as Q

    for scheme in Q._SCHEMES.values():
        table["torch." + scheme.name] = scheme
    # numpy arrays, scalars and dtypes are data (torch reads them only with weights_only=False).
    for core in ("numpy.core", "numpy._core"):
        table[core + ".multiarray._reconstruct"] = _np_reconstruct
        table[core + ".multiarray.scalar"] = _np_scalar
    table["numpy.ndarray"] = _NDARRAY
    table["numpy.dtype"] = _np_dtype
    return table


_ALLOWED = None


def _torch_to_ember(full_name):
    return "ember" + full_name[5:] if full_name.startswith("torch.") else full_name


def _py3_name(module, name):
    """Python 2 names that protocols < 3 write (``__builtin__.set``), as Python 3 names them."""
    import _compat_pickle

    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class _Base(pickle.Unpickler):
    def __init__(self, file, reader):
        super().__init__(file, encoding="utf-8")
        self.reader = reader

    def persistent_load(self, pid):
        return self.reader.persistent_load(pid)


class WeightsUnpickler(_Base):
    """weights_only=True: data types only; the first other global stops the load."""

    def find_class(self, module, name):
        global _ALLOWED
        if _ALLOWED is None:
            _ALLOWED = _allowed()
        module, name = _py3_name(module, name)
        full = f"{module}.{name}"
        obj = _ALLOWED.get(full)
        if obj is not None:
            return obj
        obj = _user_global(full)
        if obj is None and full.startswith("torch."):
            obj = _user_global(_torch_to_ember(full))
        if obj is not None:
            return obj
        raise _forbidden(full)


class FullUnpickler(_Base):
    """weights_only=False: any global, as Python's pickle (and torch.load) would import it;
    torch's tensor-rebuild names map to ember's, other ``torch.*`` names to ``ember.*``."""

    def find_class(self, module, name):
        global _ALLOWED
        if _ALLOWED is None:
            _ALLOWED = _allowed()
        full = f"{module}.{name}"
        if full in _ALLOWED and (full.startswith(("torch.", "_codecs."))):
            return _ALLOWED[full]
        if module == "torch" or module.startswith("torch."):
            mod = importlib.import_module("ember" + module[5:])
            obj = mod
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        return super().find_class(module, name)
