"""ember.cuda: ember has no CUDA backend, so programs that probe for one take their CPU path.

Each function answers as torch's own CPU-only build does: the probes (is_available,
device_count, is_initialized, memory counters, seeding) return quietly, and the calls that
would need a device (synchronize, current_device, get_device_name, streams...) raise
torch's errors, so a program that forgets to guard one fails the way it does on PyTorch."""

import collections

from ._device import NoCudaError
from ._device_amp import amp_namespace
from ._legacy_types import CUDA_TYPES

globals().update(CUDA_TYPES)  # torch.cuda.FloatTensor ... (constructing one raises)


def _not_compiled():
    raise NoCudaError("Torch not compiled with CUDA enabled")


def is_available():
    """is_available() -> bool

    False: ember runs on the CPU only."""
    return False


def device_count():
    """device_count() -> int

    0: there are no CUDA devices."""
    return 0


def is_initialized():
    """is_initialized() -> bool

    False: CUDA is never initialized."""
    return False


def init():
    """init() -> None

    Raises AssertionError, as torch's CPU build does."""
    _not_compiled()


def is_bf16_supported(including_emulation=True):
    """is_bf16_supported(including_emulation=True) -> bool

    False without a CUDA device."""
    return False


def get_arch_list():
    """get_arch_list() -> List[str]

    The CUDA architectures compiled in: none."""
    return []


def manual_seed(seed):
    """manual_seed(seed) -> None

    No CUDA generators to seed; kept so seeding code runs unchanged."""


manual_seed_all = manual_seed


def seed():
    """seed() -> None

    No CUDA generators to seed."""


seed_all = seed


def get_rng_state_all():
    """get_rng_state_all() -> List[Tensor]

    One state per CUDA device: none."""
    return []


def set_rng_state_all(new_states):
    """set_rng_state_all(new_states) -> None

    Nothing to restore without CUDA devices."""


def empty_cache():
    """empty_cache() -> None

    There is no device cache."""


def memory_allocated(device=None):
    """memory_allocated(device=None) -> int

    0: no CUDA memory is ever allocated."""
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def _needs_device(name, doc):
    def fn(*args, **kwargs):
        _not_compiled()

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + "\n\nRaises AssertionError: ember was not compiled with CUDA."
    return fn


synchronize = _needs_device("synchronize", "synchronize(device=None) -> None")
current_device = _needs_device("current_device", "current_device() -> int")
get_device_name = _needs_device("get_device_name", "get_device_name(device=None) -> str")
get_device_capability = _needs_device(
    "get_device_capability", "get_device_capability(device=None) -> Tuple[int, int]"
)
get_device_properties = _needs_device(
    "get_device_properties", "get_device_properties(device=None) -> _CudaDeviceProperties"
)
set_device = _needs_device("set_device", "set_device(device) -> None")
get_rng_state = _needs_device("get_rng_state", "get_rng_state(device='cuda') -> Tensor")
set_rng_state = _needs_device("set_rng_state", "set_rng_state(new_state, device='cuda') -> None")
mem_get_info = _needs_device("mem_get_info", "mem_get_info(device=None) -> Tuple[int, int]")
current_stream = _needs_device("current_stream", "current_stream(device=None) -> Stream")
default_stream = _needs_device("default_stream", "default_stream(device=None) -> Stream")
ipc_collect = _needs_device("ipc_collect", "ipc_collect() -> None")
reset_peak_memory_stats = _needs_device(
    "reset_peak_memory_stats", "reset_peak_memory_stats(device=None) -> None"
)
memory_summary = _needs_device(
    "memory_summary", "memory_summary(device=None, abbreviated=False) -> str"
)


def memory_stats_as_nested_dict(device=None):
    """memory_stats_as_nested_dict(device=None) -> Dict[str, Any]

    {}: torch's answer while CUDA is not initialized, which it never is here."""
    return {}


def memory_stats(device=None):
    """memory_stats(device=None) -> Dict[str, Any]

    An empty OrderedDict: torch flattens memory_stats_as_nested_dict, empty here."""
    return collections.OrderedDict()


class device:
    """device(device) -> device

    Context manager that would select a CUDA device; entering it raises RuntimeError, as
    torch's CPU build does."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc):
        return False


class Stream:
    """Stream(device=None, priority=0) -> Stream

    A CUDA stream: cannot be made without CUDA (RuntimeError)."""

    def __init__(self, device=None, priority=0, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    """Event(enable_timing=False, blocking=False, interprocess=False) -> Event

    A CUDA event: cannot be made without CUDA (RuntimeError)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        raise RuntimeError("Tried to instantiate dummy base class Event")


def stream(stream):
    """stream(stream) -> StreamContext

    Selecting a stream needs CUDA (AssertionError)."""
    _not_compiled()


class _Nvtx:
    """torch.cuda.nvtx without NVTX: every marker raises RuntimeError, as torch's CPU build."""

    def _missing(self, *args, **kwargs):
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")

    range_push = range_pop = mark = range_start = range_end = range = _missing


nvtx = _Nvtx()

amp = amp_namespace(
    "cuda", "torch.cuda.amp: the CUDA forms of autocast and GradScaler (disabled without CUDA)."
)
