"""Parameter and Buffer: tensors that a Module registers by assignment."""

import ember
from ember._C import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: a leaf sharing storage with `data`."""

    def __new__(cls, data=None, requires_grad=True):
        return Tensor.__new__(cls)

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = ember.empty(0)
        # A fresh handle on the same storage, so `data` keeps its own autograd state.
        Tensor.__init__(self, data.detach())
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        if self.grad is not None:
            result.grad = self.grad.clone()
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    # A Buffer is a plain tensor marked `_is_buffer`; isinstance reads the mark.
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = ember.empty(0)
        t = data.detach()
        t.requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param):
    """ember has no lazy modules."""
    return False
