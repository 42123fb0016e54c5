"""torch.nn.utils.skip_init: a module built on the meta device (so its initializers run nothing)
and then given uninitialized storage on the requested device, as torch's."""

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """skip_init(module_cls, *args, **kwargs)

    Builds module_cls(*args, **kwargs) without running its parameter initialization."""
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
