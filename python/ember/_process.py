"""Process-level switches and constants: determinism, float32 matmul precision,
printing options, memory formats, and `compile` (the entry point of ember._dynamo)."""

import math

from ._device import device as _device
from ._tensor_str import set_printoptions  # noqa: F401

__all__ = [
    "set_printoptions",
    "compile",
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "get_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
    "memory_format",
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
    "preserve_format",
    "get_default_device",
    "set_default_device",
    "is_anomaly_enabled",
    "set_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_warn_always",
    "is_warn_always_enabled",
    "autocast",
    "is_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_dtype",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "strided",
    "layout",
]

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None


def compile(
    model=None,
    *,
    fullgraph=False,
    dynamic=None,
    backend=None,
    mode=None,
    options=None,
    name=None,
    disable=False,
    recompile_limit=None,
    isolate_recompiles=False,
    shapes_spec=None,
):
    """compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,
        options=None, name=None, disable=False, recompile_limit=None, isolate_recompiles=False,
        shapes_spec=None)

    Compiles a function or module: the first call records its tensor operations into a graph
    (with guards on shapes, dtypes, grad mode, modules, scalars and globals), the backend
    ('inductor' unless ``ember.compiler.set_default_backend`` chose another, 'eager',
    'aot_eager' or a callable ``backend(gm, example_inputs)``) compiles it, and later calls
    whose guards hold run the compiled graph. Graph breaks (``.item()``, data-dependent control
    flow, Python side effects) run the function eagerly, or raise
    ``ember._dynamo.exc.Unsupported`` under ``fullgraph=True``. ``recompile_limit`` caps this
    function's captures (default ``ember._dynamo.config.recompile_limit``); ``name``,
    ``isolate_recompiles`` and ``shapes_spec`` are accepted (each compiled function already
    keeps its own cache). Without ``model``, a decorator; a Module comes back wrapped
    (``OptimizedModule``); ``disable=True`` returns it unchanged."""
    from ._dynamo import optimize

    return optimize(
        model,
        backend=backend,
        fullgraph=fullgraph,
        dynamic=dynamic,
        mode=mode,
        options=options,
        disable=disable,
        recompile_limit=recompile_limit,
    )


_flags = {
    "deterministic": False,
    "warn_only": False,
    "matmul_precision": "highest",
    "anomaly": False,
    "anomaly_nan": True,
    "warn_always": False,
}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """use_deterministic_algorithms(mode, *, warn_only=False)

    ember's CPU kernels are deterministic already; the flag is kept for the getters."""
    _flags["deterministic"], _flags["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    """are_deterministic_algorithms_enabled() -> bool

    Whether use_deterministic_algorithms(True) is in effect."""
    return _flags["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """is_deterministic_algorithms_warn_only_enabled() -> bool

    Whether deterministic mode only warns instead of raising."""
    return _flags["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """set_deterministic_debug_mode(debug_mode)

    Sets the deterministic debug mode from 0/1/2 or 'default'/'warn'/'error'."""
    names = {"default": 0, "warn": 1, "error": 2}
    level = names[debug_mode] if isinstance(debug_mode, str) else int(debug_mode)
    if level not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(level > 0, warn_only=level == 1)


def get_deterministic_debug_mode():
    """get_deterministic_debug_mode() -> int

    The deterministic debug mode as an int: 0 off, 1 warn, 2 error."""
    if not _flags["deterministic"]:
        return 0
    return 1 if _flags["warn_only"] else 2


def set_float32_matmul_precision(precision):
    """set_float32_matmul_precision(precision)

    Records the precision setting for float32 matrix products; ember always computes them in full
    float32."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision}")
    _flags["matmul_precision"] = precision


def get_float32_matmul_precision():
    """get_float32_matmul_precision() -> str

    The precision setting for float32 matrix products ('highest', 'high' or 'medium')."""
    return _flags["matmul_precision"]


def is_anomaly_enabled():
    """is_anomaly_enabled() -> bool

    Whether autograd anomaly detection is switched on."""
    return _flags["anomaly"]


def is_anomaly_check_nan_enabled():
    """is_anomaly_check_nan_enabled() -> bool

    Whether anomaly detection also checks backward results for NaN."""
    return _flags["anomaly_nan"]


def set_anomaly_enabled(enabled, check_nan=True):
    """set_anomaly_enabled(enabled, check_nan=True) -> None

    Switches autograd anomaly detection on or off for the rest of the program."""
    _flags["anomaly"], _flags["anomaly_nan"] = bool(enabled), bool(check_nan)
    from . import _C  # the engine's own switch (Note [Anomaly mode] in autograd/anomaly.h)

    _C._set_anomaly_enabled(bool(enabled), bool(check_nan))


def set_warn_always(b):
    """set_warn_always(b, /)

    Makes warnings that normally fire once fire every time (or not)."""
    _flags["warn_always"] = bool(b)


def is_warn_always_enabled():
    """is_warn_always_enabled() -> bool

    Whether warnings that normally fire once are raised every time."""
    return _flags["warn_always"]


class memory_format:
    """memory_format()

    A memory-format tag: the dim order a tensor's elements lie in memory (row-major
    contiguous_format, NHWC channels_last, NDHWC channels_last_3d), or preserve_format (keep
    the input's layout)."""

    def __init__(self, name, code):
        self._name = name
        self._ember_format = code  # ember::MemoryFormat in csrc/ember/core/memory_format.h

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name  # pickles as the module-level singleton


contiguous_format = memory_format("contiguous_format", 0)
channels_last = memory_format("channels_last", 1)
channels_last_3d = memory_format("channels_last_3d", 2)
preserve_format = memory_format("preserve_format", 3)


def get_default_device():
    """get_default_device() -> device

    The device that factory functions use when none is given: the innermost
    ``with ember.device(...)`` block's in this thread, else the one set_default_device gave,
    else cpu."""
    from ._device import default_device

    return default_device() or _device("cpu")


def set_default_device(device):
    """set_default_device(device)

    Sets the device that factory functions (empty, zeros, rand, arange, tensor, ...) and module
    constructors use when given none, in this thread (None: cpu). A ``with ember.device(...)``
    block overrides it while it runs; an explicit ``device=`` argument always wins."""
    from ._device import check_device, set_default

    if device is not None:
        check_device(device, "set_default_device")
    set_default(device)


def autocast(device_type, dtype=None, enabled=True, cache_enabled=None):
    """autocast(device_type, dtype=None, enabled=True, cache_enabled=None)

    A context manager (and decorator) that runs the ops inside it in a lower-precision dtype
    where that is safe (ember.amp.autocast)."""
    from .amp import autocast as _autocast

    return _autocast(device_type, dtype, enabled, cache_enabled)


def is_autocast_enabled(device_type=None):
    """is_autocast_enabled(device_type=None) -> bool

    Whether autocast is on for the device type ('cuda' when none is given, as torch's)."""
    from . import _C

    return _C._autocast_is_enabled(device_type or "cuda")


def get_autocast_dtype(device_type):
    """get_autocast_dtype(device_type) -> dtype

    The dtype that autocast uses for the given device type."""
    from . import _C

    return _C._autocast_get_dtype(device_type)


def set_autocast_enabled(device_type, enabled=None):
    """set_autocast_enabled(device_type, enabled) -> None

    Turns autocast on or off for the device type on this thread (one argument: 'cuda')."""
    from . import _C

    if enabled is None:  # the legacy one-argument form
        device_type, enabled = "cuda", device_type
    _C._autocast_set_enabled(device_type, bool(enabled))


def set_autocast_dtype(device_type, dtype):
    """set_autocast_dtype(device_type, dtype) -> None

    Sets the dtype that autocast uses for the given device type."""
    from . import _C

    _C._autocast_set_dtype(device_type, dtype)


def is_autocast_cache_enabled():
    """is_autocast_cache_enabled() -> bool

    Whether autocast caches the casts of parameters within a region."""
    from . import _C

    return _C._autocast_is_cache_enabled()


def set_autocast_cache_enabled(enabled):
    """set_autocast_cache_enabled(enabled) -> None

    Turns autocast's cast cache on or off."""
    from . import _C

    _C._autocast_set_cache_enabled(bool(enabled))


def clear_autocast_cache():
    """clear_autocast_cache() -> None

    Drops the cached casts of parameters."""
    from . import _C

    _C._autocast_clear_cache()


class layout:
    """layout()

    A tensor layout tag; ember has strided tensors only."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name


strided = layout("strided")


_interop = {"threads": 1}


def get_num_interop_threads():
    """get_num_interop_threads() -> int

    The number of inter-op threads set with set_num_interop_threads."""
    return _interop["threads"]


def set_num_interop_threads(n):
    """set_num_interop_threads(int)

    ember runs no inter-op pool; the value is kept for the getter."""
    if n <= 0:
        raise RuntimeError("Expected positive number of threads")
    _interop["threads"] = int(n)


__all__ += ["get_num_interop_threads", "set_num_interop_threads"]
