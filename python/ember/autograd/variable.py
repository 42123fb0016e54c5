"""torch.autograd.Variable: the pre-0.4 wrapper, kept for the tutorials that still call it.

Since 0.4 a Variable is a Tensor: ``isinstance(t, Variable)`` holds for every tensor, and
``Variable(t, requires_grad=...)`` gives a new tensor sharing t's data, outside t's graph, with
the requires_grad asked for (torch's _LegacyVariableBase)."""

import warnings

from .. import _C
from .._C import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data=None, requires_grad=False, volatile=False) -> Tensor

    data detached (an empty tensor without data), requiring grad when asked."""

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            from .._ops.creation import empty

            return empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            _C._set_requires_grad(out, True)
        return out
