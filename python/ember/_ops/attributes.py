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
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return False


def is_signed(input):
    return input.dtype.is_signed


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def is_inference(input):
    return input.is_inference()


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def numel(input):
    return input.numel()


def get_device(input):
    return -1
