"""ember.nn.functional: the functional forms of every layer and loss, as torch.nn.functional."""

from ...sparse import functional_guards as _sparse_guards
from ._activation import *  # noqa: F401,F403
from ._composite import *  # noqa: F401,F403
from ._extra import *  # noqa: F401,F403
from ._fractional import *  # noqa: F401,F403
from ._grid import *  # noqa: F401,F403
from ._grouped_mm import *  # noqa: F401,F403
from ._linear_cross_entropy import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._sequence import *  # noqa: F401,F403
from ._spatial import *  # noqa: F401,F403
from ._spatial3d import *  # noqa: F401,F403

# a sparse argument takes its sparse path or is refused (ember/sparse/__init__.py)
globals().update(_sparse_guards(globals()))


def __getattr__(name):
    # torch.nn.functional.grad is the module torch.nn.grad (which imports this one: loaded at use)
    if name == "grad":
        import importlib

        return importlib.import_module("ember.nn.grad")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
