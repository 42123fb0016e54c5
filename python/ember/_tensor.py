"""Tensor methods that are simpler in Python: conversions, printing, protocols, grad_fn."""

import builtins


from . import _C, return_types
from ._C import Tensor
from ._device import CPU, check_device
from ._tensor_str import tensor_str


def _patch(fn, name=None):
    setattr(Tensor, name or fn.__name__, fn)
    return fn


@_patch
def __repr__(self, *, tensor_contents=None):
    return tensor_str(self)


Tensor.__str__ = __repr__


@_patch
def __format__(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


@_patch
def __hash__(self):
    return id(self)


@_patch
def __bool__(self):
    if self.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(self.item())


@_patch
def __int__(self):
    return builtins.int(self.item())


@_patch
def __float__(self):
    return builtins.float(self.item())


@_patch
def __index__(self):
    if self.dtype.is_floating_point or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(self.item())


@_patch
def __complex__(self):
    return complex(self.item())


@_patch
def __iter__(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


@_patch
def __reversed__(self):
    return self.flip(0)


@_patch
def __contains__(self, element):
    return builtins.bool((self == element).any().item())


@_patch
def __array__(self, dtype=None, copy=None):
    a = self.detach().numpy()
    return a if dtype is None else a.astype(dtype)


@_patch
def __array_wrap__(self, array, context=None, return_scalar=False):
    """A numpy ufunc applied to a tensor gives a tensor (bool results as uint8, as torch's)."""
    import ember

    if array.dtype == bool:
        array = array.astype("uint8")
    return ember.from_numpy(array)


# numpy scalars defer their binary operators to the tensor's reflected ones (2.0 * t is a tensor).
Tensor.__array_priority__ = 1000


@_patch
def __deepcopy__(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    with _no_grad():
        new = self.clone()
    if self.requires_grad:
        new.requires_grad_(True)
    if self.grad is not None:
        new.grad = self.grad.clone()
    new.__dict__.update({k: v for k, v in self.__dict__.items()})
    memo[id(self)] = new
    return new


@_patch
def __reduce_ex__(self, proto):
    return (_rebuild, (self.detach().numpy().copy(), repr(self.dtype).split(".")[1], self.requires_grad))


def _rebuild(array, dtype_name, requires_grad):
    import ember

    t = ember.tensor(array, dtype=getattr(ember, dtype_name))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _no_grad():
    from .autograd.grad_mode import no_grad

    return no_grad()


Tensor.device = property(lambda self: CPU)
Tensor.is_cpu = property(lambda self: True)
Tensor.layout = property(lambda self: "torch.strided")
Tensor.itemsize = property(lambda self: self.element_size())
Tensor.nbytes = property(lambda self: self.numel() * self.element_size())


@_patch
def to(self, *args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, _C.dtype):
            dtype = a
        elif a is not None:
            device = a
    check_device(device, "to")
    if dtype is None or (dtype == self.dtype and not copy):
        return self.clone() if copy else self
    return _C._to_dtype(self, dtype, copy)


@_patch
def type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return "torch." + {
            "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
            "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
            "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
        }[repr(self.dtype)[6:]]
    return self.to(dtype)


def _caster(dtype_name):
    target = getattr(_C, dtype_name)

    def cast(self, memory_format=None):
        return self if self.dtype == target else _C._to_dtype(self, target, False)

    return cast


for _name, _dt in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                   ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"), ("short", "int16"),
                   ("char", "int8"), ("byte", "uint8"), ("bool", "bool")):
    setattr(Tensor, _name, _caster(_dt))


@_patch
def type_as(self, other):
    return self.to(other.dtype)


@_patch
def cpu(self, memory_format=None):
    return self


@_patch
def cuda(self, device=None, non_blocking=False):
    check_device("cuda", "cuda")


def _new(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        import ember

        return getattr(ember, fn)(*size, dtype=dtype or self.dtype, requires_grad=requires_grad, **kwargs)

    return method


Tensor.new_zeros = _new("zeros")
Tensor.new_ones = _new("ones")
Tensor.new_empty = _new("empty")


@_patch
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    import ember

    return ember.full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


@_patch
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    import ember

    return ember.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


# --- autograd -------------------------------------------------------------------------------

@_patch
def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    from . import autograd

    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


@_patch
def register_hook(self, hook):
    return _C.Tensor._register_hook(self, hook)


def _grad_fn(self):
    from .autograd.graph import wrap_node

    return wrap_node(self._grad_fn)


Tensor.grad_fn = property(_grad_fn)


def _grad_warning_getter():
    getter = Tensor.grad.fget
    setter = Tensor.grad.fset

    def get(self):
        if not self.is_leaf and not self.retains_grad and self.requires_grad:
            import warnings

            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return getter(self)

    return property(get, setter)


Tensor.grad = _grad_warning_getter()


# --- ops with several outputs or torch-style overloads --------------------------------------

def _method_from(fn_name):
    def method(self, *args, **kwargs):
        import ember

        return getattr(ember, fn_name)(self, *args, **kwargs)

    method.__name__ = fn_name
    return method


@_patch
def where(self, condition, other):
    return _C._where(condition, self, other)


for _fn in ("max", "min", "var", "std", "norm", "sort", "topk", "kthvalue", "median",
            "mode", "cummax", "cummin", "unique", "tril", "triu", "diag", "logsumexp"):
    setattr(Tensor, _fn, _method_from(_fn))


@_patch
def uniform_(self, a=0.0, b=1.0, *, generator=None):
    _C._uniform_(self, float(a), float(b), generator)
    return self


@_patch
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _C._normal_(self, float(mean), float(std), generator)
    return self


@_patch
def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        self.copy_(_C._bernoulli(p.expand_as(self), generator))
        return self
    _C._bernoulli_(self, float(p), generator)
    return self


@_patch
def bernoulli(self, p=None, *, generator=None):
    import ember

    return ember.bernoulli(self, p, generator=generator)


@_patch
def random_(self, from_=0, to=None, *, generator=None):
    if to is None and from_ != 0:
        from_, to = 0, from_
    _C._random_(self, from_, to, generator)
    return self


@_patch
def multinomial(self, num_samples, replacement=False, *, generator=None):
    return _C._multinomial(self, num_samples, replacement, generator)


@_patch
def exponential_(self, lambd=1.0, *, generator=None):
    _C._uniform_(self, 0.0, 1.0, generator)
    self.copy_(-(1 - self).log() / lambd)
    return self


del _fn, _name, _dt
_ = return_types


@_patch
def tril_(self, diagonal=0):
    return self.copy_(self.tril(diagonal))


@_patch
def triu_(self, diagonal=0):
    return self.copy_(self.triu(diagonal))


@_patch
def equal(self, other):
    import ember

    return ember.equal(self, other)


@_patch
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    import ember

    return ember.allclose(self, other, rtol, atol, equal_nan)


@_patch
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    import ember

    return ember.isclose(self, other, rtol, atol, equal_nan)


@_patch
def lerp_(self, end, weight):
    import ember

    return self.copy_(ember.lerp(self, end, weight))


@_patch
def clamp_min(self, min):
    return self.clamp(min=min)


@_patch
def clamp_max(self, max):
    return self.clamp(max=max)


@_patch
def clamp_min_(self, min):
    return self.clamp_(min=min)


@_patch
def clamp_max_(self, max):
    return self.clamp_(max=max)


# NumPy-style names torch keeps as aliases of its own methods.
for _alias, _name in (("arccos", "acos"), ("arcsin", "asin"), ("arctan", "atan"),
                      ("arccosh", "acosh"), ("arcsinh", "asinh"), ("arctanh", "atanh"),
                      ("arctan2", "atan2"), ("clip", "clamp"), ("absolute", "abs"),
                      ("negative", "neg"), ("multiply", "mul"), ("divide", "div"),
                      ("subtract", "sub"), ("greater", "gt"), ("greater_equal", "ge"),
                      ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne"), ("fix", "trunc")):
    for _suffix in ("", "_"):
        if hasattr(Tensor, _name + _suffix) and not hasattr(Tensor, _alias + _suffix):
            setattr(Tensor, _alias + _suffix, getattr(Tensor, _name + _suffix))
