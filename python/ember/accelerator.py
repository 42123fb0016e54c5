"""ember.accelerator: torch.accelerator's device-agnostic API, answering as a CPU-only torch does
(no accelerator: queries say so, device operations raise RuntimeError)."""

import warnings

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "empty_host_cache",
    "get_device_capability",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]

_NONE = "Cannot access accelerator device when none is available."


def _unavailable(*args, **kwargs):
    raise RuntimeError(_NONE)


def is_available():
    """is_available() -> bool

    Whether an accelerator is present: never in this CPU-only build."""
    return False


def current_accelerator(check_available=False):
    """current_accelerator(check_available=False) -> torch.device | None

    The accelerator device type, or None when there is none (always here)."""
    return None


def device_count():
    """device_count() -> int

    The number of accelerator devices: 0."""
    return 0


def current_device_index():
    """current_device_index() -> int

    The current accelerator's index; raises RuntimeError: there is none."""
    _unavailable()


def current_device_idx():
    """current_device_idx() -> int

    Deprecated name of :func:`current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """set_device_index(device, /) -> None

    Selects an accelerator; raises: there is none."""
    if device is None:
        raise ValueError(
            "Expected a torch.device with a specified index or an integer, but got:None"
        )
    _unavailable()


def set_device_idx(device, /):
    """set_device_idx(device, /) -> None

    Deprecated name of :func:`set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


class device_index:
    """device_index(device, /)

    A context manager selecting accelerator `device` (None: nothing to select)."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            _unavailable()
        return self

    def __exit__(self, *exc):
        return False


def current_stream(device=None, /):
    """current_stream(device=None, /) -> torch.Stream

    The accelerator's current stream; raises RuntimeError: there is none."""
    _unavailable()


def set_stream(stream):
    """set_stream(stream) -> None

    Makes `stream` current; raises RuntimeError: there is no accelerator."""
    _unavailable()


def synchronize(device=None, /):
    """synchronize(device=None, /) -> None

    Waits for the accelerator; raises RuntimeError: there is none."""
    _unavailable()


def empty_cache():
    """empty_cache() -> None

    Releases the accelerator's cached memory; raises RuntimeError: there is none."""
    _unavailable()


def empty_host_cache():
    """empty_host_cache() -> None

    Releases cached pinned host memory; raises RuntimeError: there is no accelerator."""
    _unavailable()


def get_device_capability(device=None, /):
    """get_device_capability(device=None, /) -> dict

    The accelerator's capabilities; raises RuntimeError: there is none."""
    _unavailable()


def get_memory_info(device_index=None, /):
    """get_memory_info(device_index=None, /) -> tuple[int, int]

    Free and total accelerator memory; raises RuntimeError: there is none."""
    _unavailable()


def memory_stats(device_index=None, /):
    """memory_stats(device_index=None, /) -> OrderedDict

    The accelerator allocator's statistics; raises RuntimeError: there is none."""
    _unavailable()


def memory_allocated(device_index=None, /):
    """memory_allocated(device_index=None, /) -> int

    Bytes held by accelerator tensors; raises RuntimeError: there is none."""
    _unavailable()


def max_memory_allocated(device_index=None, /):
    """max_memory_allocated(device_index=None, /) -> int

    Peak of :func:`memory_allocated`; raises RuntimeError: there is no accelerator."""
    _unavailable()


def memory_reserved(device_index=None, /):
    """memory_reserved(device_index=None, /) -> int

    Bytes the accelerator allocator holds; raises RuntimeError: there is none."""
    _unavailable()


def max_memory_reserved(device_index=None, /):
    """max_memory_reserved(device_index=None, /) -> int

    Peak of :func:`memory_reserved`; raises RuntimeError: there is no accelerator."""
    _unavailable()


def reset_peak_memory_stats(device_index=None, /):
    """reset_peak_memory_stats(device_index=None, /) -> None

    Resets the peaks; raises RuntimeError: there is no accelerator."""
    _unavailable()


def reset_accumulated_memory_stats(device_index=None, /):
    """reset_accumulated_memory_stats(device_index=None, /) -> None

    Resets the accumulated statistics; raises RuntimeError: there is no accelerator."""
    _unavailable()
