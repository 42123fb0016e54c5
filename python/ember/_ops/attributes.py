"""Questions about a tensor rather than ops on its values: is it a tensor, its dtype's kind, its
size, its device, whether it is an inference tensor."""

import builtins

from .._C import Tensor

__all__ = [
    "is_tensor",
    "is_floating_point",
    "is_complex",
    "is_signed",
    "is_nonzero",
    "is_inference",
    "is_same_size",
    "numel",
    "get_device",
]


def is_tensor(obj):
    """is_tensor(obj) -> bool

    True if obj is an ember Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """is_floating_point(input: Tensor) -> bool

    True if input's dtype is a floating-point type."""
    return input.is_floating_point()


def is_complex(input):
    """is_complex(input: Tensor) -> bool

    True if input's dtype is a complex type (complex64, complex128)."""
    return input.is_complex()


def is_signed(input):
    """is_signed(input) -> bool

    True if input's dtype can hold negative values."""
    return input.dtype.is_signed


def is_nonzero(input):
    """is_nonzero(input) -> (bool)

    The truth value of a one-element tensor; raises for any other size."""
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def is_inference(input):
    """is_inference(input) -> (bool)

    True if input was created in inference mode."""
    return input.is_inference()


def is_same_size(input, other):
    """is_same_size(input, other) -> bool

    True if input and other have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def numel(input):
    """numel(input: Tensor) -> int

    The number of elements of input."""
    return input.numel()


def get_device(input):
    """get_device(input) -> int

    The device index of input: -1, as for every CPU tensor."""
    return -1
