"""ember.mps: torch.mps's queries, answering as a torch without the MPS backend does."""

__all__ = [
    "device_count",
    "empty_cache",
    "is_available",
    "manual_seed",
    "seed",
    "synchronize",
    "current_allocated_memory",
    "driver_allocated_memory",
    "recommended_max_memory",
]


def _no_backend(what):
    raise RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available():
    """is_available() -> bool

    Whether Apple's Metal backend is usable: never in this build."""
    return False


def device_count():
    """device_count() -> int

    The number of MPS devices: 0."""
    return 0


def manual_seed(seed):
    """manual_seed(seed) -> None

    Seeds the MPS generator: nothing to seed (a no-op, as in torch)."""


def seed():
    """seed() -> None

    Seeds the MPS generator randomly; raises RuntimeError: there is no MPS backend."""
    _no_backend("getDefaultGenerator")


def synchronize():
    """synchronize() -> None

    Waits for the MPS device; raises RuntimeError: there is no MPS backend."""
    _no_backend("deviceSynchronize")


def empty_cache():
    """empty_cache() -> None

    Releases cached MPS memory; raises RuntimeError: there is no MPS backend."""
    _no_backend("emptyCache")


def current_allocated_memory():
    """current_allocated_memory() -> int

    Bytes held by MPS tensors; raises RuntimeError: there is no MPS backend."""
    _no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory():
    """driver_allocated_memory() -> int

    Bytes the Metal driver holds; raises RuntimeError: there is no MPS backend."""
    _no_backend("getDriverAllocatedMemory")


def recommended_max_memory():
    """recommended_max_memory() -> int

    Metal's recommended working-set size; raises RuntimeError: there is no MPS backend."""
    _no_backend("getRecommendedMaxMemory")
