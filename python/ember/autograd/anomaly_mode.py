"""detect_anomaly / set_detect_anomaly: the switches torch programs set while debugging.

ember records the flag (torch.is_anomaly_enabled reads it) but does not yet attach forward
tracebacks to backward errors."""

from .. import _process


class detect_anomaly:
    """detect_anomaly(check_nan=True)

    Context manager (and decorator) turning anomaly detection on."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = (_process.is_anomaly_enabled(), _process.is_anomaly_check_nan_enabled())

    def __enter__(self):
        _process.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _process.set_anomaly_enabled(*self.prev)

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True)

    Sets anomaly detection on or off now, and restores it when used as a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_process.is_anomaly_enabled(), _process.is_anomaly_check_nan_enabled())
        _process.set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _process.set_anomaly_enabled(*self.prev)
