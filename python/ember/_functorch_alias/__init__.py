"""What ``import functorch`` gives under ``python -m ember.run`` (the alias in _torch_alias.py):
the names torch's ``functorch`` package documents, backed by ember's own implementations, so a
program that mixes ``functorch.vmap`` or ``functorch.experimental.control_flow.cond`` with
``torch`` tensors gets ember's functions for both. Only ``functorch.compile``,
``functorch.experimental`` and ``functorch.experimental.control_flow`` exist below it; the alias
raises a ModuleNotFoundError naming any other submodule (``functorch.dim``, ``functorch.einops``).

The transforms at the top level are deprecated in torch (each call warns with a FutureWarning
naming its ``torch.func`` replacement), and so they are here.
"""

import functools
import warnings

from .. import func as _func
from ..fx.experimental.proxy_tensor import make_fx
from ..version import __version__

__all__ = [
    "__version__",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "make_fx",
    "vjp",
    "vmap",
]


def _deprecated(name, new_api=None):
    impl = getattr(_func, name)
    new_api = new_api or f"torch.func.{name}"

    @functools.wraps(impl)
    def api(*args, **kwargs):
        warnings.warn(
            f"We've integrated functorch into PyTorch. As the final step of the integration, "
            f"`functorch.{name}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
            f"version of PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 "
            f"release notes and/or the `torch.func` migration guide for more details "
            f"https://pytorch.org/docs/main/func.migrating.html",
            FutureWarning,
            stacklevel=2,
        )  # torch's text
        return impl(*args, **kwargs)

    return api


vmap = _deprecated("vmap", "torch.vmap")
grad = _deprecated("grad")
grad_and_value = _deprecated("grad_and_value")
vjp = _deprecated("vjp")
jvp = _deprecated("jvp")
jacrev = _deprecated("jacrev")
jacfwd = _deprecated("jacfwd")
hessian = _deprecated("hessian")
functionalize = _deprecated("functionalize")
