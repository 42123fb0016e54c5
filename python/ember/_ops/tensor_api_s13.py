"""Tensor methods of torch's that the binding lacked (session 13): the reflected division under
its torch name (`__rdiv__`, the function torch's __torch_function__ sees for `2 / t`) and the
Python 2 spellings that torch still answers (`__div__`, `__idiv__`, `__nonzero__`, `__long__`).
_tensor_methods fills them into Tensor (METHODS: never over a binding's method)."""

from .._C import Tensor

__all__ = []

# The binding's own functions (never a mode's routing wrapper, which may stand in Tensor later).
_truediv = Tensor.__dict__["__truediv__"]
_itruediv = Tensor.__dict__["__itruediv__"]


def __rdiv__(self, other):
    """__rdiv__(other) -> Tensor

    other / self: as torch's, self's reciprocal times other (so `200 / t` rounds as
    `t.reciprocal() * 200`, not as a division); returns NotImplemented for an operand that is
    not a number or tensor, as torch's does."""
    try:
        return self.reciprocal() * other
    except TypeError:
        return NotImplemented


def __div__(self, other):
    """__div__(other) -> Tensor

    self / other: the Python 2 name of __truediv__."""
    return _truediv(self, other)


def __idiv__(self, other):
    """__idiv__(other) -> Tensor

    self /= other: the Python 2 name of __itruediv__."""
    return _itruediv(self, other)


def __nonzero__(self):
    """__nonzero__() -> bool

    The Python 2 name of __bool__: the truth of a one-element tensor."""
    return bool(self)


def __long__(self):
    """__long__() -> int

    The Python 2 name of __int__: the value of a one-element tensor as an int."""
    return int(self)


METHODS = {
    "__rdiv__": __rdiv__,
    "__div__": __div__,
    "__idiv__": __idiv__,
    "__nonzero__": __nonzero__,
    "__long__": __long__,
}
