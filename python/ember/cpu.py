"""ember.cpu: torch.cpu's device queries and its amp forms."""


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """CPU work is synchronous."""


class amp:
    """torch.cpu.amp: autocast and GradScaler for device 'cpu'."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast

        return autocast("cpu", dtype, enabled)

    @staticmethod
    def GradScaler(
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        from .amp import GradScaler

        return GradScaler(
            "cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )
