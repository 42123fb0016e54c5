"""torch.nn.utils.skip_init: a module built without running its initializers' randomness
mattering to the caller (ember simply constructs it; values are overwritten by the caller)."""

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """skip_init(module_cls, *args, **kwargs)

    Builds module_cls(*args, **kwargs) without running its parameter initialization."""
    if "device" not in module_cls.__init__.__code__.co_varnames:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
