"""torch.cpu.amp and torch.cuda.amp: autocast and GradScaler bound to one device type."""


def amp_namespace(device, doc):
    """A class whose static autocast and GradScaler build ember.amp's for `device`."""

    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast as _autocast

        return _autocast(device, dtype, enabled, cache_enabled)

    def GradScaler(
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        from .amp import GradScaler as _GradScaler

        return _GradScaler(
            device, init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )

    return type(
        "amp",
        (),
        {
            "__doc__": doc,
            "autocast": staticmethod(autocast),
            "GradScaler": staticmethod(GradScaler),
        },
    )
