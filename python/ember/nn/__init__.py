"""ember.nn: modules, parameters, initialization and utilities, as torch.nn."""

from . import (  # noqa: F401
    attention,
    common_types,
    functional,  # noqa: F401
    grad,
    init,
    modules,
    parallel,
    utils,
)
from .modules import *  # noqa: F403
from .parallel import DataParallel  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401


def factory_kwargs(kwargs):
    """factory_kwargs(kwargs) -> dict

    The device/dtype/memory_format arguments of kwargs as one dict for factory functions
    (empty(..., **factory_kwargs(kwargs))), merged with a nested "factory_kwargs" dict; raises
    TypeError for any other key or one given twice."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple & kwargs.keys():
        if key in out:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        out[key] = kwargs[key]
    return out


# torch.nn's legacy names of ember.ao.nn's packages, loaded at first use (they import ember.nn)
_LAZY = ("quantized", "qat", "intrinsic", "quantizable")


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
