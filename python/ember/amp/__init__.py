"""ember.amp: autocast and GradScaler, as torch.amp.

autocast records that a region asked for mixed precision (is_autocast_enabled reads it) but ember
computes in the tensors' own dtypes: programs written for AMP run, at full precision. GradScaler
implements torch's dynamic loss scaling for device 'cpu'; for 'cuda', which ember lacks, it is
disabled, as torch's is on a machine without CUDA."""

import functools
import warnings

from .. import _C
from .._C import Tensor, isfinite
from ..autograd.grad_mode import no_grad

__all__ = ["autocast", "GradScaler", "is_autocast_available"]

_state = {}  # device_type -> (enabled, dtype)
_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16"}


def is_autocast_available(device_type):
    return device_type == "cpu"


def is_autocast_enabled(device_type="cuda"):
    return _state.get(device_type, (False, None))[0]


def get_autocast_dtype(device_type):
    return _state.get(device_type, (False, None))[1] or getattr(
        _C, _DEFAULT_DTYPE.get(device_type, "float16")
    )


class autocast:
    """Context manager and decorator: `with autocast("cpu", dtype=torch.bfloat16): ...`."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type == "cuda" and enabled:
            warnings.warn(
                "User provided device_type of 'cuda', but CUDA is not available. Disabling"
            )
            enabled = False
        self.device_type, self.enabled = device_type, enabled
        self.dtype = dtype or getattr(_C, _DEFAULT_DTYPE.get(device_type, "bfloat16"))

    def __enter__(self):
        self.prev = _state.get(self.device_type, (False, None))
        _state[self.device_type] = (self.enabled, self.dtype)
        return self

    def __exit__(self, *exc):
        _state[self.device_type] = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.dtype, self.enabled):
                return fn(*args, **kwargs)

        return wrapper


class GradScaler:
    """Dynamic loss scaling (torch.amp.GradScaler): scale the loss, unscale and check the grads,
    skip steps with inf/NaN grads, and grow or back off the scale."""

    def __init__(
        self,
        device="cuda",
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        if device == "cuda" and enabled:
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."
            )
            enabled = False
        self._device, self._enabled = device, enabled
        self._scale, self._growth_factor = float(init_scale), float(growth_factor)
        self._backoff_factor, self._growth_interval = float(backoff_factor), int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        return type(outputs)(self.scale(o) for o in outputs)

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        state = self._per_optimizer.setdefault(
            id(optimizer), {"unscaled": False, "found_inf": False}
        )
        if state["unscaled"]:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        inv = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(inv)
                        found = found or not bool(isfinite(p.grad).all())
        state["unscaled"], state["found_inf"] = True, found

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        state = self._per_optimizer.setdefault(
            id(optimizer), {"unscaled": False, "found_inf": False}
        )
        if not state["unscaled"]:
            self.unscale_(optimizer)
        if not state["found_inf"]:
            return optimizer.step(*args, **kwargs)
        return None

    def update(self, new_scale=None):
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        elif any(s["found_inf"] for s in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._per_optimizer = {}

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a "
                "disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
