"""Factory functions with torch's Python signatures."""

import sys
import warnings

from . import _C
from ._C import Tensor
from ._device import check_device

__all__ = [
    "tensor", "as_tensor", "asarray", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
    "ones_like", "full_like", "arange", "range", "linspace", "logspace", "eye", "rand", "randn",
    "randint", "randperm", "rand_like", "randn_like", "randint_like", "manual_seed", "seed",
    "initial_seed", "default_generator", "bernoulli", "multinomial", "normal", "scalar_tensor",
]

default_generator = _C.default_generator()



def _numpy():
    """numpy if the program imported it (its arrays can exist only then); ember doesn't import
    it itself, which would double `import ember`'s time."""
    return sys.modules.get("numpy")

def _size(size):
    if len(size) == 1 and not isinstance(size[0], int):
        return list(size[0])
    return list(size)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    check_device(device, "tensor")
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() "
            "or sourceTensor.clone().detach().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    np = _numpy()
    if np is not None and isinstance(data, np.generic):  # numpy scalars keep their dtype, as torch
        data = np.asarray(data)
    return _finish(_C._tensor(data, dtype), requires_grad)


def as_tensor(data, dtype=None, device=None):
    check_device(device, "as_tensor")
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    np = _numpy()
    if np is not None and isinstance(data, np.ndarray):
        t = _C._from_numpy_any(data) if data.dtype.kind in "biuf" and data.dtype.itemsize <= 8 else None
        if t is not None and all(s >= 0 for s in data.strides):
            return t if dtype is None or t.dtype == dtype else t.to(dtype)
    return _C._tensor(data, dtype)


asarray = as_tensor


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(_C._full([], s, dtype or _C.get_default_dtype(), False), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, **_):
    check_device(device, "empty")
    return _C._empty(_size(size), dtype, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, **_):
    check_device(device, "zeros")
    return _C._zeros(_size(size), dtype, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, **_):
    check_device(device, "ones")
    return _C._ones(_size(size), dtype, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, **_):
    check_device(device, "full")
    return _C._full(list(size) if not isinstance(size, int) else [size], fill_value, dtype, requires_grad)


def _like(input, dtype):
    return dtype if dtype is not None else input.dtype


def empty_like(input, *, dtype=None, device=None, requires_grad=False, **_):
    return _C._empty(list(input.shape), _like(input, dtype), requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, **_):
    return _C._zeros(list(input.shape), _like(input, dtype), requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, **_):
    return _C._ones(list(input.shape), _like(input, dtype), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, **_):
    return _C._full(list(input.shape), fill_value, _like(input, dtype), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, **_):
    check_device(device, "arange")
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    return _C._arange(start, end, step, dtype, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    warnings.warn("torch.range is deprecated; use torch.arange instead", UserWarning, stacklevel=2)
    n = int((end - start) // step) + 1
    return _C._linspace(start, start + (n - 1) * step, n, dtype, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, **_):
    return _C._linspace(start, end, steps, dtype, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False, **_):
    return _C._logspace(start, end, steps, base, dtype, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, **_):
    return _C._eye(n, m, dtype, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **_):
    check_device(device, "rand")
    return _finish(_C._rand(_size(size), generator, dtype), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **_):
    check_device(device, "randn")
    return _finish(_C._randn(_size(size), generator, dtype), requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False, **_):
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    return _C._randint(low, high, list(size), generator, dtype)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, **_):
    return _C._randperm(n, generator, dtype)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, **_):
    return _finish(_C._rand(list(input.shape), None, _like(input, dtype)), requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, **_):
    return _finish(_C._randn(list(input.shape), None, _like(input, dtype)), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, **_):
    if high is None:
        low, high = 0, low
    return _C._randint(low, high, list(input.shape), None, _like(input, dtype))


def manual_seed(seed):
    seed = int(seed)
    _C.manual_seed(seed & 0xFFFFFFFFFFFFFFFF)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def bernoulli(input, p=None, *, generator=None):
    if p is not None:
        out = empty_like(input)
        _C._bernoulli_(out, float(p), generator)
        return out
    return _C._bernoulli(input, generator)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    return _C._multinomial(input, num_samples, replacement, generator)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, **_):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean if isinstance(mean, Tensor) else tensor(float(mean))
        s = std if isinstance(std, Tensor) else tensor(float(std))
        return _C._normal(m, s, generator)
    out = empty(*size, dtype=dtype)
    _C._normal_(out, float(mean), float(std), generator)
    return out
