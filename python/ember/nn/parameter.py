"""Parameter and Buffer: tensors that a Module registers by assignment."""

from .. import _C
from .._C import Tensor
from .._ops.creation import empty


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True)

    A Tensor that is a module parameter: a leaf sharing storage with `data`."""

    def __new__(cls, data=None, requires_grad=True):
        if hasattr(data, "_placements") and cls is Parameter:  # a DTensor stays one
            return data._as_parameter(requires_grad)
        return Tensor.__new__(cls)

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        # A fresh handle on the same storage, so `data` keeps its own autograd state.
        Tensor.__init__(self, data.detach())
        _C._set_requires_grad(self, requires_grad)  # torch's Parameter wording when refused

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__  # Tensor's own __str__ would skip the header, as print(param) shows it

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
    """Buffer(data=None, *, persistent=True)

    Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach()
        t.requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class _Uninitialized:
    """A placeholder of unknown shape until `materialize`, for the lazy modules."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Gives the placeholder storage of `shape` and makes it the plain class."""
        dtype = self.dtype if dtype is None else dtype
        self.data = empty(tuple(shape), dtype=dtype)
        self.__class__ = self.cls_to_become

    def _no_data(self, *args, **kwargs):
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {type(self).__name__}. This error "
            "happens when you are using a `LazyModule` or explicitly manipulating "
            "`torch.nn.parameter.Uninitialized*` objects. When using LazyModules, call "
            "`forward` with a dummy batch to initialize the parameters before calling torch "
            "functions"
        )

    numel = _no_data
    __len__ = _no_data
    __iter__ = _no_data
    tolist = _no_data
    numpy = _no_data

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        result = type(self)(self.requires_grad, dtype=self.dtype)
        memo[id(self)] = result
        return result


class UninitializedParameter(_Uninitialized, Parameter):
    """UninitializedParameter(requires_grad=True, device=None, dtype=None)

    A Parameter whose shape a lazy module fills in at its first forward."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Tensor.__new__(cls)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        Parameter.__init__(self, empty(0, dtype=dtype), requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True)

    A buffer whose shape a lazy module fills in at its first forward."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        return Tensor.__new__(cls)

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        Tensor.__init__(self, empty(0, dtype=dtype))
        _C._set_requires_grad(self, requires_grad)
        self.persistent = persistent


def is_lazy(param):
    """True for the placeholders of a lazy module that has not seen an input yet."""
    return isinstance(param, _Uninitialized)
