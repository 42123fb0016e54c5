"""ember.amp: autocast and GradScaler, as torch.amp.

autocast turns on mixed precision for a region: on device 'cpu' the ops of torch's CPU lists run
in bfloat16 (or float16), float32 or the widest input dtype (Note [Autocast] in
csrc/ember/dispatch/autocast.h); the state is the C++ dispatcher's, per thread. For 'cuda',
which ember lacks, autocast warns and stays disabled, as torch's does on a machine without CUDA.
GradScaler implements torch's dynamic loss scaling for device 'cpu' (disabled for 'cuda')."""

import functools
import warnings

from .. import _C
from .._argparse import _caller_level
from .._C import Tensor, isfinite
from .._process import get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled
from ..autograd.grad_mode import no_grad

__all__ = [
    "autocast",
    "GradScaler",
    "is_autocast_available",
    "custom_fwd",
    "custom_bwd",
]


def is_autocast_available(device_type):
    """is_autocast_available(device_type) -> bool

    Whether autocast can be turned on for the device type ('cpu' here)."""
    return device_type == "cpu"


_LOWER = {"cpu": ("bfloat16", "float16"), "cuda": ("float16", "bfloat16")}


class autocast:
    """autocast(device_type, dtype=None, enabled=True, cache_enabled=None)

    Context manager and decorator: inside it, ops on the device type run in the precision their
    autocast list gives (`with autocast("cpu", dtype=torch.bfloat16): ...`)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        if device_type == "cuda" and enabled:
            warnings.warn(
                "User provided device_type of 'cuda', but CUDA is not available. Disabling"
            )
            enabled = False
        elif device_type not in _LOWER and enabled:
            warnings.warn(
                f"User provided device_type of '{device_type}', but autocast is only available "
                "for 'cpu' here. Disabling"
            )
            enabled = False
        elif device_type == "cpu" and enabled:
            names = {getattr(_C, n) for n in _LOWER["cpu"]}
            if self.fast_dtype not in names:
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                    "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently."
                )
                enabled = False
        self._enabled = bool(enabled)

    # torch's attribute names, which some programs read
    @property
    def device_type(self):
        return self.device

    @property
    def enabled(self):
        return self._enabled

    @property
    def dtype(self):
        return self.fast_dtype

    def __enter__(self):
        self._prev_cache = is_autocast_cache_enabled()
        self._prev = is_autocast_enabled(self.device)
        self._prev_dtype = get_autocast_dtype(self.device)
        _C._autocast_set_enabled(self.device, self._enabled)
        if self._enabled:  # a disabled region may name a dtype autocast does not take
            _C._autocast_set_dtype(self.device, self.fast_dtype)
        _C._autocast_increment_nesting()
        _C._autocast_set_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        if _C._autocast_decrement_nesting() == 0:
            _C._autocast_clear_cache()
        _C._autocast_set_enabled(self.device, self._prev)
        _C._autocast_set_dtype(self.device, self._prev_dtype)
        _C._autocast_set_cache_enabled(self._prev_cache)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)

        return wrapper


def _cast_floats(value, dtype):
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floats(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_floats(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """custom_fwd(fwd=None, *, device_type, cast_inputs=None)

    Decorates a custom autograd.Function's forward: with cast_inputs, the forward runs with
    autocast off and its floating tensor inputs cast to cast_inputs (when autocast is on);
    without, it runs in the caller's autocast state, which custom_bwd then restores."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def wrapper(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_floats(args, cast_inputs), **_cast_floats(kwargs, cast_inputs))
        return fwd(*args, **kwargs)

    return wrapper


def custom_bwd(bwd=None, *, device_type):
    """custom_bwd(bwd=None, *, device_type)

    Decorates a custom autograd.Function's backward: it runs in the autocast state its forward
    (decorated with custom_fwd) ran in."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def wrapper(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return wrapper


class GradScaler:
    """GradScaler(device='cuda', init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)

    Dynamic loss scaling (torch.amp.GradScaler): scale the loss, unscale and check the grads,
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
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=_caller_level(),  # the user's line, however ember's forms wrap it
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
