"""ember.cuda: ember has no CUDA backend, so programs that probe for one take their CPU path."""

from ._device_amp import amp_namespace


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    """No CUDA generators to seed; kept so seeding code runs unchanged."""


manual_seed_all = manual_seed


def synchronize(device=None):
    """Nothing is queued on a device."""


def empty_cache():
    """There is no device cache."""


def current_device():
    raise RuntimeError("Torch not compiled with CUDA enabled")


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


amp = amp_namespace(
    "cuda", "torch.cuda.amp: the CUDA forms of autocast and GradScaler (disabled without CUDA)."
)
