"""Tensor behaviour that is not an op: Python protocols (printing, truth value, conversion to
numbers, iteration, numpy, copy and pickle), dtype conversions, new_* factories and autograd
hooks. These are method implementations; _tensor_methods installs them on Tensor."""

import builtins
import math
import warnings
import weakref

from .. import _C
from .._C import Tensor, from_numpy
from .._device import CPU, check_device
from .._device import device as _device_type
from .._tensor_str import tensor_str
from .._warn_once import warn_once
from ..autograd._engine import backward as _backward
from ..autograd.grad_mode import no_grad
from ..autograd.graph import wrap_node
from . import creation

__all__ = []


def __repr__(self, *, tensor_contents=None):
    cls = builtins.type(self)
    if cls is Tensor or cls.__module__.split(".")[0] == "ember":
        return tensor_str(self)
    return tensor_str(self, prefix=cls.__name__ + "(")  # a program's subclass: named, as torch


def __format__(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def __hash__(self):
    return id(self)


def __bool__(self):
    if self.numel() != 1:
        what = "no values" if self.numel() == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return builtins.bool(self.item())


def _one_element(self):
    """The element of a one-element tensor; int(), float() and complex() raise ValueError (not
    item()'s RuntimeError) for any other size, as torch."""
    if self.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return self.item()


def _real_part_of(value, ctype, integral):
    """A complex element as int() or float() take it, torch's checked conversion: a nonzero
    (or NaN) imaginary part, or a real part an integer cannot hold, is an overflow."""
    if not isinstance(value, builtins.complex):
        return value
    bad = value.imag != 0 or (integral and not math.isfinite(value.real))
    if bad or (integral and not -(2.0**63) <= value.real < 2.0**63):
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
    return value.real


def __int__(self):
    return builtins.int(_real_part_of(_one_element(self), "int64_t", True))


def __float__(self):
    if self.requires_grad and _C.is_grad_enabled():  # torch's check (LBFGS reads under no_grad)
        warn_once(
            "float_requires_grad",
            "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
            "behavior.\nConsider using tensor.detach() first.",
        )
    return builtins.float(_real_part_of(_one_element(self), "double", False))


def __index__(self):
    if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(self.item())


def __complex__(self):
    return complex(_one_element(self))


def __iter__(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def __reversed__(self):
    return self.flip(0)


def __contains__(self, element):
    return builtins.bool((self == element).any().item())


def __array__(self, dtype=None, copy=None):
    a = self.numpy()  # as torch's: refuses a tensor that requires grad, with numpy()'s words
    return a if dtype is None else a.astype(dtype, copy=False)


def __array_wrap__(self, array, context=None, return_scalar=False):
    """A numpy ufunc applied to a tensor gives a tensor (bool results as uint8, as torch's)."""
    if array.dtype == bool:
        array = array.astype("uint8")
    return from_numpy(array)


def __deepcopy__(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    with no_grad():
        new = self.clone()
    if self.requires_grad:
        new.requires_grad_(True)
    if self.grad is not None:
        new.grad = self.grad.clone()
    new.__dict__.update({k: v for k, v in self.__dict__.items()})
    memo[id(self)] = new
    return new


def __reduce_ex__(self, proto):
    data = self.detach().numpy().copy()
    return (_rebuild, (data, repr(self.dtype).split(".")[1], self.requires_grad))


def _rebuild(array, dtype_name, requires_grad):
    t = creation.tensor(array, dtype=getattr(_C, dtype_name))
    if requires_grad:
        t.requires_grad_(True)
    return t


def to(self, *args, **kwargs):
    """to(*args, **kwargs) -> Tensor

    A tensor with the requested dtype (and device), or self when nothing changes."""
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    device = kwargs.pop("device", None)
    memory_format = kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, _C.dtype):
            dtype = a
        elif a is not None:
            device = a
    target = check_device(device, "to")
    here = self._device_str
    if device is not None and (here == "meta") != (target is not None and target.type == "meta"):
        if here == "meta":  # a meta tensor has nothing to copy
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        moved = _C._to_meta(self)  # shape, dtype and strides; nothing is copied
        if self.requires_grad:
            moved.requires_grad_(True)
        return moved if dtype is None or dtype == moved.dtype else _C._to_dtype(moved, dtype, False)
    if device is not None and (target is None) != (here == "cpu"):  # between cpu and a backend
        moved = _ToDevice.apply(self, str(target) if target is not None else "cpu")
        return moved if dtype is None or dtype == moved.dtype else _C._to_dtype(moved, dtype, False)
    if memory_format is not None:
        return _C._to_format(self, dtype, memory_format, copy)
    if dtype is None or (dtype == self.dtype and not copy):
        if copy:
            return self.clone()
        if _C._profiler_enabled():  # torch records aten::to even when it hands back self
            return _C._to_format(self, dtype, None, False)
        return self
    return _C._to_dtype(self, dtype, copy)


def type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return (
            "torch."
            + {
                "float32": "FloatTensor",
                "float64": "DoubleTensor",
                "float16": "HalfTensor",
                "bfloat16": "BFloat16Tensor",
                "int64": "LongTensor",
                "int32": "IntTensor",
                "int16": "ShortTensor",
                "int8": "CharTensor",
                "uint8": "ByteTensor",
                "bool": "BoolTensor",
            }[repr(self.dtype)[6:]]
        )
    return self.to(dtype)


def as_subclass(self, cls):
    """as_subclass(cls) -> Tensor

    self as an instance of the Tensor subclass cls: the same data (changes show in both) and
    the same place in the autograd graph: a tensor that requires grad gives a view of itself
    (not a leaf, its gradient flows back to self), as torch's alias does."""
    if not (isinstance(cls, builtins.type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): expected a subclass of Tensor; got {cls!r}")
    out = Tensor.__new__(cls)
    Tensor.__init__(out, _C._alias(self) if self.requires_grad else self)
    return out


def type_as(self, other):
    """type_as(tensor) -> Tensor

    self cast to the dtype of tensor."""
    return self.to(other.dtype)


def cpu(self, memory_format=None):
    """cpu(memory_format=torch.preserve_format) -> Tensor

    self when it lives on the CPU, else a copy there."""
    return self if self._device_str == "cpu" else self.to("cpu")


def _device(self):
    s = self._device_str
    return CPU if s == "cpu" else _device_type(s)


class _ToDevice:
    """A copy between the CPU and a PrivateUse1 device that autograd sees (ToCopyBackward0)."""

    @staticmethod
    def apply(x, where):
        out = _C._copy_to_device(x.detach(), where)
        if x.requires_grad and _C.is_grad_enabled():
            source = x._device_str

            def backward(grads):
                return (_C._copy_to_device(grads[0], source),)

            _C._attach_function("ToCopyBackward0", backward, [x], [out], [])
        return out


def cuda(self, device=None, non_blocking=False):
    """cuda(device=None, non_blocking=False, memory_format=torch.preserve_format) -> Tensor

    Raises an error, since ember has no CUDA device."""
    check_device("cuda", "cuda")


def _new(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        creation._check_keywords(f"new_{fn}", kwargs.keys() - {"size", "pin_memory"})
        return getattr(creation, fn)(
            *size,
            dtype=dtype or self.dtype,
            device=self.device if device is None else device,
            requires_grad=requires_grad,
            **kwargs,
        )

    filled = {"zeros": "A zero-filled", "ones": "A one-filled", "empty": "An uninitialized"}[fn]
    method.__doc__ = (
        f"new_{fn}(size, *, dtype=None, device=None, requires_grad=False, layout=torch.strided, "
        f"pin_memory=False) -> Tensor\n\n{filled} tensor of the given size, with self's dtype "
        "unless told otherwise."
    )
    return method


def new_full(
    self,
    size,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    **kwargs,
):
    """new_full(size, fill_value, *, dtype=None, device=None, requires_grad=False,
        layout=torch.strided, pin_memory=False) -> Tensor

    A tensor of the given size filled with fill_value, with self's dtype unless told otherwise."""
    creation._check_keywords("new_full", kwargs)
    return creation.full(
        size,
        fill_value,
        dtype=dtype or self.dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
        pin_memory=pin_memory,
    )


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """new_tensor(data, *, dtype=None, device=None, requires_grad=False, layout=torch.strided,
        pin_memory=False) -> Tensor

    A new tensor copied from data, with self's dtype unless told otherwise."""
    return creation.tensor(
        data,
        dtype=dtype or self.dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
    )


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """backward(gradient=None, retain_graph=None, create_graph=False, inputs=None)

    Accumulates the gradient of this tensor with respect to the graph's leaves into their .grad."""
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self, hook):
    """register_hook(hook)

    Registers hook(grad) to run when this tensor's gradient is computed; it may return a
    replacement gradient. The gradient that retain_grad() keeps is the one after every hook, as
    torch's (its retaining hook runs last)."""
    if self.grad_fn is None or not self.retains_grad:
        return _C.Tensor._register_hook(self, hook)
    # retain_grad() came first, so its hook runs before this one: correct what it kept by this
    # hook's replacement (exact for the first backward: r - g + out is out when r is g).
    ref = weakref.ref(self)

    def retained_last(grad):
        out = hook(grad)
        t = ref()
        if out is not None and t is not None and t.retains_grad:
            with no_grad():
                t.grad = t.grad - grad.detach() + out.detach()
        return out

    return _C.Tensor._register_hook(self, retained_last)


def _grad_fn(self):
    """grad_fn -> Node or None

    The autograd node that produced this tensor, or None for a leaf."""
    return wrap_node(self._grad_fn)


# Sparse gradients of dense tensors (Embedding(sparse=True)), kept beside the tensors because the
# engine accumulates dense ones: id(tensor) -> (weakref to it, gradient); ember/sparse/_grad.py
# fills it, Tensor.grad reads it first (a dict check while it is empty).
_SPARSE_GRADS = {}


def _grad_warning_getter(base):
    """Tensor.grad: the binding's property `base`, warning when read on a non-leaf that does not
    retain its gradient (as torch)."""
    getter = base.fget
    base_setter = base.fset

    def setter(self, value):
        if _SPARSE_GRADS:
            _SPARSE_GRADS.pop(id(self), None)
        if getattr(value, "_layout", None) is not None and not hasattr(self, "_layout"):
            from ..sparse._grad import store  # a sparse gradient for a dense tensor

            base_setter(self, None)
            store(self, value)
            return
        base_setter(self, value)

    def get(self):
        """grad -> Tensor or None

        The accumulated gradient of a leaf tensor, or None before any backward."""
        if _SPARSE_GRADS:
            entry = _SPARSE_GRADS.get(id(self))
            if entry is not None and entry[0]() is self:
                return entry[1]
        if not self.is_leaf and not self.retains_grad and self.requires_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
                "access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
                "more information.",
                UserWarning,
                stacklevel=2,
            )
        return getter(self)

    return property(get, setter)


def where(self, condition, other):
    """where(condition, y) -> Tensor

    Elements of self where condition holds, of y elsewhere."""
    return _C._where(condition, self, other)


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **_):
    """new_empty_strided(size, stride, dtype=None, device=None, requires_grad=False,
        layout=torch.strided, pin_memory=False) -> Tensor

    An uninitialized tensor of the given size and strides, with self's dtype unless told
    otherwise."""
    return creation.empty_strided(
        size,
        stride,
        dtype=dtype or self.dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
    )


def _apply_(self, callable):
    """apply_(callable) -> Tensor

    Replaces every element by callable(element), in place (slow: one Python call per element)."""
    values = [callable(v) for v in self.reshape(-1).tolist()]
    return self.copy_(creation.tensor(values, dtype=self.dtype).reshape(self.shape))


def _map_(self, other, callable):
    """map_(tensor, callable) -> Tensor

    Replaces each element by callable(element, other_element), with tensor broadcast to self, in
    place."""
    other = other.expand_as(self)
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other.reshape(-1).tolist())]
    return self.copy_(creation.tensor(values, dtype=self.dtype).reshape(self.shape))


class _RemovableHandle:
    """Returned by register_post_accumulate_grad_hook; remove() drops the hook (and so the
    reference to the tensor its closure held)."""

    def __init__(self, box):
        self._box = box

    def remove(self):
        self._box.clear()


def _register_post_accumulate_grad_hook(self, hook):
    """register_post_accumulate_grad_hook(hook)

    Registers hook(tensor) to run after this leaf's .grad has been accumulated; returns a handle
    with remove()."""
    box = [hook, self]

    def run():
        if box and box[0](box[1]) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    _C._register_post_accumulate_grad_hook(self, run)
    return _RemovableHandle(box)


def _warn_pin_device(method, device):
    if device is not None:
        warnings.warn(
            f"The argument 'device' of Tensor.{method}() is deprecated. Please do not pass this "
            "argument.",
            DeprecationWarning,
            stacklevel=3,
        )


def _pin_memory(self, device=None):
    """pin_memory() -> Tensor

    Pinned memory is an accelerator's: the CPU-only build has none, so this raises as torch's
    CPU build does."""
    _warn_pin_device("pin_memory", device)
    _warn_pin_device("is_pinned", device)  # torch asks is_pinned(device) first
    if device is not None and _device_type(device).type == "cpu":
        raise RuntimeError("CPU device type not an accelerator.")
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _is_pinned(self, device=None):
    """is_pinned() -> bool

    False: the CPU-only build has no pinned memory."""
    _warn_pin_device("is_pinned", device)
    return False
