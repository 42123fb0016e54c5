"""detect_anomaly / set_detect_anomaly: autograd's debugging mode.

While it is on, every backward node remembers the Python stack of the forward call that created it,
and the engine checks what each node's backward returns: a NaN raises RuntimeError ("Function
'MulBackward0' returned nan values in its 0th output."), and before any error of a node propagates
the remembered stack is emitted as a UserWarning ("Error detected in MulBackward0. Traceback of
forward call that caused the error: ..."), as torch does. The work is in the C++ engine (see
Note [Anomaly mode] in csrc/ember/autograd/anomaly.h); off, it costs one branch per node."""

import functools
import warnings

from .. import _process

__all__ = ["detect_anomaly", "set_detect_anomaly"]


def _switch(mode, check_nan):
    _process.set_anomaly_enabled(mode, check_nan)


class detect_anomaly:
    """detect_anomaly(check_nan=True)

    Context manager (and decorator) turning anomaly detection on: forward calls record their
    stack on the nodes they create, and backward raises on NaN results (if check_nan) and shows
    the forward stack of a failing node."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = _process.is_anomaly_enabled()
        self.prev_check_nan = _process.is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        _switch(True, self.check_nan)

    def __exit__(self, *exc):
        _switch(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True)

    Sets anomaly detection on or off now, and restores the previous setting when used as a
    context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = _process.is_anomaly_enabled()
        self.prev_check_nan = _process.is_anomaly_check_nan_enabled()
        self.mode = mode
        _switch(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _switch(self.prev, self.prev_check_nan)
