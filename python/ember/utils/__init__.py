"""ember.utils, as torch.utils."""

from . import (
    _python_dispatch,  # noqa: F401 (torch.utils._python_dispatch is there after import torch)
    backend_registration,  # noqa: F401
    checkpoint,  # noqa: F401,E402
    data,  # noqa: F401
    dlpack,  # noqa: F401
    hooks,  # noqa: F401
    model_zoo,  # noqa: F401
)
from ._swap import swap_tensors  # noqa: E402,F401
from .backend_registration import (  # noqa: F401
    generate_methods_for_privateuse1_backend,
    rename_privateuse1_backend,
)


def set_module(obj, mod):
    """set_module(obj, mod) -> None

    Sets obj.__module__ to the string mod (for nicer printing of a class or function)."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod
