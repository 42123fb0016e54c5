"""ember.xpu: torch.xpu's queries, answering as a torch built without XPU does."""

__all__ = [
    "device_count",
    "empty_cache",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "seed",
    "seed_all",
    "current_device",
    "synchronize",
    "get_device_name",
]


def _not_compiled(*args, **kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


def is_available():
    """is_available() -> bool

    Whether an XPU is present: never in this build."""
    return False


def device_count():
    """device_count() -> int

    The number of XPUs: 0."""
    return 0


def is_initialized():
    """is_initialized() -> bool

    Whether the XPU runtime started: never."""
    return False


def is_bf16_supported(including_emulation=True):
    """is_bf16_supported(including_emulation=True) -> bool

    Whether the XPU supports bfloat16: there is no XPU."""
    return False


def manual_seed(seed):
    """manual_seed(seed) -> None

    Seeds the XPU generators: nothing to seed (a no-op, as in torch)."""


def manual_seed_all(seed):
    """manual_seed_all(seed) -> None

    Seeds every XPU's generator: a no-op here."""


def seed():
    """seed() -> None

    Seeds the XPU generator randomly: a no-op here."""


def seed_all():
    """seed_all() -> None

    Seeds every XPU generator randomly: a no-op here."""


def empty_cache():
    """empty_cache() -> None

    Releases cached XPU memory: none is held."""


def memory_allocated(device=None):
    """memory_allocated(device=None) -> int

    Bytes held by XPU tensors: 0."""
    return 0


def current_device():
    """current_device() -> int

    The current XPU; raises AssertionError: ember has no XPU support."""
    _not_compiled()


def synchronize(device=None):
    """synchronize(device=None) -> None

    Waits for the XPU; raises AssertionError: ember has no XPU support."""
    _not_compiled()


def get_device_name(device=None):
    """get_device_name(device=None) -> str

    The XPU's name; raises AssertionError: ember has no XPU support."""
    _not_compiled()
