"""torch.cpu.amp and torch.cuda.amp: autocast and GradScaler bound to one device type (torch
deprecates these forms: each call warns as torch's, naming the torch.amp form to use)."""

import warnings


def _deprecated(device, name, form):
    warnings.warn(
        f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use {form} instead.",
        FutureWarning,
        stacklevel=3,
    )


def amp_namespace(device, doc):
    """A class whose static autocast and GradScaler build ember.amp's for `device` (and, for
    cuda, the custom_fwd / custom_bwd decorators of custom Functions)."""

    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast as _autocast

        _deprecated(device, "autocast", f"`torch.amp.autocast('{device}', args...)`")
        return _autocast(device, dtype, enabled, cache_enabled)

    def GradScaler(
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        from .amp import GradScaler as _GradScaler

        _deprecated(device, "GradScaler", f"`torch.amp.GradScaler('{device}', args...)`")
        return _GradScaler(
            device, init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )

    def custom_fwd(fwd=None, *, cast_inputs=None):
        from .amp import custom_fwd as _custom_fwd

        _deprecated(
            device, "custom_fwd", f"`torch.amp.custom_fwd(args..., device_type='{device}')`"
        )
        return _custom_fwd(fwd, device_type=device, cast_inputs=cast_inputs)

    def custom_bwd(bwd):
        from .amp import custom_bwd as _custom_bwd

        _deprecated(
            device, "custom_bwd", f"`torch.amp.custom_bwd(args..., device_type='{device}')`"
        )
        return _custom_bwd(bwd, device_type=device)

    attrs = {
        "__doc__": doc,
        "autocast": staticmethod(autocast),
        "GradScaler": staticmethod(GradScaler),
    }
    if device == "cuda":
        attrs.update(custom_fwd=staticmethod(custom_fwd), custom_bwd=staticmethod(custom_bwd))
    return type("amp", (), attrs)
