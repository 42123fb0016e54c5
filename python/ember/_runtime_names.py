"""torch's top-level runtime names that are not ops: the error classes, device-generic
Stream/Event (CPU semantics, as torch's CPU build), the symbolic-number helpers (sym_int ...),
the legacy autocast queries for the CPU, build flags (has_lapack ...) and small utilities
(is_storage, get_device_module, from_file ...)."""

import builtins
import enum
import math
import os
import warnings

from . import _C

__all__ = [
    "GradScaler",
    "OutOfMemoryError",
    "AcceleratorError",
    "Stream",
    "Event",
    "SymInt",
    "sym_int",
    "sym_float",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_ite",
    "sym_sum",
    "sym_sqrt",
    "get_autocast_cpu_dtype",
    "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled",
    "set_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "has_lapack",
    "has_mkl",
    "has_openmp",
    "has_spectral",
    "set_flush_denormal",
    "is_storage",
    "get_device_module",
    "init_num_threads",
    "from_file",
    "compiled_with_cxx11_abi",
    "Tag",
    "fork",
    "wait",
    "is_distributed",
    "is_vulkan_available",
    "addmv_",
    "conj_physical_",
    "native_channel_shuffle",
    "to_dlpack",
    "DisableTorchFunctionSubclass",
    "Future",
]

from ._dynamo import capture as _capture  # noqa: E402
from ._fork import fork, wait  # noqa: E402
from ._subclass_dispatch import DisableTorchFunctionSubclass  # noqa: E402
from .amp import GradScaler  # noqa: E402
from .futures import Future  # noqa: E402  (torch.Future: the base of torch.futures.Future)
from .utils.dlpack import to_dlpack  # noqa: E402  (torch.GradScaler is torch.amp.GradScaler)


class _SymIntMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _capture.SymInt)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _capture.SymInt)


class SymInt(metaclass=_SymIntMeta):
    """SymInt(value, node, cap, sources, expr=None)

    The type of symbolic sizes: a size read while ember.compile captures a function with dynamic
    shapes (ember._dynamo's SymInt) is an instance of it, a plain int is not. Arithmetic on one
    stays symbolic; int(), bool() or comparisons read the concrete value. Constructing one builds
    the capture's SymInt."""

    def __new__(cls, *args, **kwargs):
        return _capture.SymInt(*args, **kwargs)


class OutOfMemoryError(RuntimeError):
    """OutOfMemoryError(message)

    Raised when a device allocation fails (torch.OutOfMemoryError; torch.cuda.OutOfMemoryError
    is the same class)."""


class AcceleratorError(RuntimeError):
    """AcceleratorError(message)

    Raised for an error reported by an accelerator's runtime (torch.AcceleratorError)."""


def _device_type(device):
    from ._device import device as _dev

    if device is None:
        return _dev("cpu")
    d = _dev(device) if not isinstance(device, _dev) else device
    if d.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return d


class Stream:
    """Stream(device=None, *, priority=0) -> Stream

    A device's in-order queue of work. ember runs every op synchronously on the CPU, so as with
    torch's CPU streams the work is always done: query() is True, synchronize() and the waits
    return at once, and `with stream:` changes nothing."""

    def __init__(self, device=None, *, priority=0):
        self.device = _device_type(device)
        self.priority = priority
        self.stream_id = 0
        self.device_index = -1 if self.device.index is None else self.device.index
        self.device_type = 0  # the CPU's number among torch's device types

    def query(self):
        """query() -> bool

        Whether all work on the stream is done (always, on the CPU)."""
        return True

    def synchronize(self):
        """synchronize() -> None

        Waits for the stream's work (none is pending on the CPU)."""

    def wait_stream(self, stream):
        """wait_stream(stream) -> None

        Orders later work after stream's (a no-op on the CPU)."""

    def wait_event(self, event):
        """wait_event(event) -> None

        The CPU backend has no events: raises RuntimeError, as torch's does."""
        raise RuntimeError("cpu backend doesn't support events.")

    def record_event(self, event=None):
        """record_event(event=None) -> Event

        The CPU backend has no events: raises RuntimeError, as torch's does."""
        raise RuntimeError("cpu backend doesn't support events.")

    def is_capturing(self):
        """is_capturing() -> bool

        Whether a graph capture is running on the stream (never on the CPU)."""
        return False

    @property
    def native_handle(self):
        """native_handle -> int

        The CPU backend has no native stream handle: raises RuntimeError, as torch's does."""
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and (other.device, other.stream_id) == (
            self.device,
            self.stream_id,
        )

    def __hash__(self):
        return hash((str(self.device), self.stream_id))

    def __repr__(self):
        return (
            f"torch.Stream device_type=cpu, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class Event:
    """Event(device=None, *, enable_timing=False, blocking=False, interprocess=False) -> Event

    A marker in a stream's work. As torch's on the CPU: query() is True (nothing is pending),
    synchronize() and wait() return at once, and record() raises since the CPU backend has no
    events."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _device_type(device)
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self.event_id = 0

    def record(self, stream=None):
        """record(stream=None) -> None

        The CPU backend has no events: raises RuntimeError, as torch's does."""
        raise RuntimeError("cpu backend doesn't support events.")

    def query(self):
        """query() -> bool

        Whether the work before the event is done (always, on the CPU)."""
        return True

    def synchronize(self):
        """synchronize() -> None

        Waits for the event (nothing is pending on the CPU)."""

    def wait(self, stream=None):
        """wait(stream=None) -> None

        Makes stream wait for the event (a no-op on the CPU)."""

    def elapsed_time(self, end_event):
        """elapsed_time(end_event) -> float

        Raises ValueError unless both events were created with enable_timing=True; the CPU
        records no events, so timing is never available."""
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError("cpu backend doesn't support events.")

    def __repr__(self):
        flag = (
            (1 if self.enable_timing else 0)
            | (2 if self.blocking else 0)
            | (4 if self.interprocess else 0)
        )
        return f"torch.Event device_type=cpu, device_index=-1, event_flag={flag}, event_id=0"


def sym_int(a):
    """sym_int(a) -> int

    int(a) for plain numbers (truncating toward zero); a SymInt stays symbolic."""
    if isinstance(a, SymInt):
        return a
    if isinstance(a, builtins.float):
        return math.trunc(a)
    return builtins.int(a)


def sym_float(a):
    """sym_float(a) -> float

    float(a), for plain and symbolic numbers."""
    return builtins.float(a)


def sym_max(a, b):
    """sym_max(a, b) -> number

    The larger of a and b; a float when either is a float (as torch's)."""
    result = a if a >= b else b
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(result)
    return result


def sym_min(a, b):
    """sym_min(a, b) -> number

    The smaller of a and b; a float when either is a float (as torch's)."""
    result = a if a <= b else b
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(result)
    return result


def sym_not(a):
    """sym_not(a) -> bool

    Logical not of a (a bool or a 0-d bool tensor)."""
    if isinstance(a, _C.Tensor):
        return a.logical_not()
    return not a


def sym_ite(b, t, f):
    """sym_ite(b, t, f) -> value

    t if b else f."""
    return t if b else f


def sym_sum(args):
    """sym_sum(args) -> number

    The sum of args (starting from 0)."""
    total = 0
    for a in args:
        total = total + a
    return total


def sym_sqrt(a):
    """sym_sqrt(a) -> float

    math.sqrt(a)."""
    return math.sqrt(a)


def _deprecated_autocast(old, new):
    warnings.warn(
        f"torch.{old} is deprecated. Please use torch.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def get_autocast_cpu_dtype():
    """get_autocast_cpu_dtype() -> dtype

    The dtype that autocast uses on the CPU (get_autocast_dtype('cpu'))."""
    _deprecated_autocast("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _C._autocast_get_dtype("cpu")


def is_autocast_cpu_enabled():
    """is_autocast_cpu_enabled() -> bool

    Whether autocast is on for the CPU (is_autocast_enabled('cpu'))."""
    _deprecated_autocast("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _C._autocast_is_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """set_autocast_cpu_enabled(enabled) -> None

    Turns autocast on or off for the CPU (set_autocast_enabled('cpu', enabled))."""
    _deprecated_autocast(
        "set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)"
    )
    _C._autocast_set_enabled("cpu", builtins.bool(enabled))


def set_autocast_cpu_dtype(dtype):
    """set_autocast_cpu_dtype(dtype) -> None

    Sets the dtype autocast uses on the CPU (set_autocast_dtype('cpu', dtype))."""
    _deprecated_autocast("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _C._autocast_set_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """get_autocast_gpu_dtype() -> dtype

    The dtype that autocast uses for 'cuda' (get_autocast_dtype('cuda'))."""
    _deprecated_autocast("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _C._autocast_get_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """set_autocast_gpu_dtype(dtype) -> None

    Sets the dtype autocast uses for 'cuda' (set_autocast_dtype('cuda', dtype))."""
    _deprecated_autocast("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _C._autocast_set_dtype("cuda", dtype)


def autocast_increment_nesting():
    """autocast_increment_nesting() -> int

    Counts one more entered autocast region; returns the new depth."""
    return _C._autocast_increment_nesting()


def autocast_decrement_nesting():
    """autocast_decrement_nesting() -> int

    Counts one autocast region left; returns the new depth (at 0 the region's cast cache is
    dropped by the caller, as autocast's exit does)."""
    return _C._autocast_decrement_nesting()


# Build flags: ember links a LAPACK (OpenBLAS's), has its own FFT and thread pool (reported as
# OpenMP-equivalent parallelism: torch's flag tells programs that intra-op threads exist), no MKL.
has_lapack = True
has_spectral = True
has_openmp = True
has_mkl = False

_flush_denormal = [False]


def set_flush_denormal(mode):
    """set_flush_denormal(mode) -> bool

    Asks the CPU to flush denormal floats to zero; returns whether that is supported. ember's
    kernels do not switch the FPU mode, so this returns False (as torch does on CPUs without
    SSE3)."""
    _flush_denormal[0] = builtins.bool(mode)
    return False


def is_storage(obj):
    """is_storage(obj) -> bool

    Whether obj is a storage (what Tensor.untyped_storage() or Tensor.storage() return)."""
    from ._storage import UntypedStorage

    return isinstance(obj, UntypedStorage)  # TypedStorage derives from it


def get_device_module(device=None):
    """get_device_module(device=None) -> module

    The module of a device type (ember.cpu for 'cpu', ember.cuda for 'cuda', ...); with none,
    the current accelerator's, else ember.cpu."""
    import importlib

    from ._device import device as _dev

    if device is None:
        from . import accelerator

        acc = accelerator.current_accelerator()
        name = acc.type if acc is not None else "cpu"
    elif isinstance(device, _dev):
        name = device.type
    elif isinstance(device, str):
        name = _dev(device).type
    else:
        raise RuntimeError(
            "get_device_module: expected a torch.device, a str or None; "
            f"got {type(device).__name__}"
        )
    try:
        return importlib.import_module(f"ember.{name}")
    except ImportError:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered.")


def init_num_threads():
    """init_num_threads() -> None

    Initializes the intra-op thread pool for the calling thread (ember's pool is ready when the
    extension loads, so nothing is left to do)."""


def compiled_with_cxx11_abi():
    """compiled_with_cxx11_abi() -> bool

    Whether the C++ extension was built with the C++11 ABI of libstdc++ (ember always is)."""
    return True


def from_file(
    filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False
):
    """from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
    pin_memory=False) -> Tensor

    A 1-D tensor of `size` elements of dtype read from the start of filename. With shared=True
    the tensor maps the file, so writes to the tensor reach the file; otherwise the data are
    copied. A missing file is created (shared) or an error."""
    if pin_memory:  # torch's check, before it opens the file
        raise RuntimeError("tensors constructed from a file cannot be pinned")
    import mmap

    import numpy as np

    from ._ops.creation import from_numpy

    if dtype is None:
        dtype = _C.get_default_dtype()
    np_dtype = _numpy_dtype(dtype)
    nbytes = size * np_dtype.itemsize
    if shared:
        mode = "r+b" if os.path.exists(filename) else "w+b"
        with open(filename, mode) as f:
            if os.fstat(f.fileno()).st_size < nbytes:
                f.truncate(nbytes)
            if nbytes == 0:
                return from_numpy(np.empty(0, dtype=np_dtype))
            buf = mmap.mmap(f.fileno(), nbytes)
        arr = np.frombuffer(buf, dtype=np_dtype, count=size)
        return from_numpy(arr)
    with open(filename, "rb") as f:
        data = f.read(nbytes)
    if len(data) < nbytes:
        raise RuntimeError(
            f"from_file: expected the file to hold {nbytes} bytes ({size} elements); "
            f"got {len(data)}"
        )
    return from_numpy(np.frombuffer(data, dtype=np_dtype, count=size).copy())


def _numpy_dtype(dtype):
    import numpy as np

    from ._ops.creation import empty

    return np.dtype(empty(0, dtype=dtype).numpy().dtype)


class Tag(enum.Enum):
    """Tag(value)

    The tags that torch puts on its operators (torch.Tag.pointwise, torch.Tag.inplace_view ...)."""

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19


def is_distributed(input):
    """is_distributed(input) -> bool

    Whether input is a distributed tensor of torch's legacy THD API (never, as in torch)."""
    return False


def is_vulkan_available():
    """is_vulkan_available() -> bool

    Whether the Vulkan backend is built in (never in ember)."""
    return False


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """addmv_(input, mat, vec, *, beta=1, alpha=1) -> Tensor

    In-place addmv: input = beta * input + alpha * (mat @ vec); returns input."""
    from ._ops.products import addmv

    return input.copy_(addmv(input, mat, vec, beta=beta, alpha=alpha))


def conj_physical_(input):
    """conj_physical_(input) -> Tensor

    Conjugates input in place (nothing to do for a real dtype); returns input."""
    if input.is_complex():
        from ._ops.complex import conj_physical

        input.copy_(conj_physical(input))
    return input


def native_channel_shuffle(input, groups):
    """native_channel_shuffle(input, groups) -> Tensor

    channel_shuffle(input, groups): the channels regrouped from (groups, C / groups) to
    (C / groups, groups)."""
    from .nn.functional import channel_shuffle

    return channel_shuffle(input, groups)
