"""ember.cpu: torch.cpu's device queries and its amp forms."""

from ._device_amp import amp_namespace


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """CPU work is synchronous."""


amp = amp_namespace("cpu", "torch.cpu.amp: autocast and GradScaler for device 'cpu'.")
