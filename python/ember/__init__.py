"""ember: PyTorch's programming model on a fast C++ core. Use it as ``import ember as torch``."""

import builtins as _builtins
import os as _os
import sys as _sys


def _load_extension():
    # OpenBLAS (float64 and matrix-vector products) starts its threads when the extension loads and
    # they spin for about 0.1 s after each use, stealing cores from ember's pool, whose own workers
    # spin between ops (Note [Pool wake-up]). A short timeout makes them sleep at once; the variable
    # is read only while OpenBLAS loads, so a user's own setting wins and the environment is restored.
    ours = "OPENBLAS_THREAD_TIMEOUT" not in _os.environ
    if ours:
        _os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"
    try:
        from . import _C
    finally:
        if ours:
            del _os.environ["OPENBLAS_THREAD_TIMEOUT"]
    return _C


_C = _load_extension()
from ._C import *  # noqa: F401,F403  (every public op of the extension)
from ._C import Generator, Tensor, dtype  # noqa: F401
from ._C import bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8  # noqa: F401
from ._C import bool as _bool_dtype

bool = _bool_dtype  # noqa: A001  (torch.bool)
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

multiply = mul
divide = div
subtract = sub
clip = clamp
greater = gt
greater_equal = ge
less = lt
less_equal = le
not_equal = ne
negative = neg
absolute = abs
arctan2 = atan2
fix = trunc


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints like PyTorch's."""

    def __repr__(self):
        return "torch.Size([" + ", ".join(str(s) for s in self) + "])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __reduce__(self):
        return (Size, (tuple(self),))


_C._set_size_class(Size)

from ._device import device  # noqa: E402
from . import _shared, _storage, _tensor  # noqa: E402,F401  (Tensor's Python-level methods)
from ._creation import *  # noqa: E402,F401,F403
from ._functions import *  # noqa: E402,F401,F403
from .autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402
from ._C import is_grad_enabled, is_inference_mode_enabled  # noqa: E402,F401
from . import autograd, testing  # noqa: E402,F401
from .serialization import *  # noqa: E402,F401,F403
from ._type_info import finfo, iinfo  # noqa: E402,F401
from . import nn, optim, utils  # noqa: E402,F401
from . import datasets  # noqa: E402,F401
# API breadth: composites of the ops above (see each module's docstring).
from ._extra_math import *  # noqa: E402,F401,F403
from ._extra_shape import *  # noqa: E402,F401,F403
from ._linalg_top import *  # noqa: E402,F401,F403
from ._scatter_ops import *  # noqa: E402,F401,F403
from ._process import *  # noqa: E402,F401,F403
from ._tensor_extra import *  # noqa: E402,F401,F403
from ._legacy_types import *  # noqa: E402,F401,F403
from . import (  # noqa: E402,F401
    amp, backends, cpu, cuda, distributed, distributions, func, jit, linalg, multiprocessing,
    random, special, version,
)
from ._random_extra import *  # noqa: E402,F401,F403
from .func import vmap  # noqa: E402,F401

set_default_dtype = _C.set_default_dtype
is_tensor = lambda obj: isinstance(obj, Tensor)  # noqa: E731


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return _builtins.bool(input.item())


from .version import __version__  # noqa: E402

from . import _numpy_kwargs  # noqa: E402

_numpy_kwargs.install(_sys.modules[__name__], Tensor)
