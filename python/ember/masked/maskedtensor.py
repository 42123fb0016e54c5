"""MaskedTensor: a tensor whose elements are valid only where a boolean mask is True.

As torch's prototype, the object is a Tensor subclass holding a copy of the data and of the
mask; here its C++ tensor is the data itself, so dtype, shape, requires_grad and autograd are the
data's. Operations reach the class through ``__torch_function__`` (the subclass dispatch mode,
installed when the first MaskedTensor is made, as for ember.nested): elementwise ops run on the
data and keep the mask (two MaskedTensors must have equal masks), view ops run on both, the
reductions and softmaxes run torch.masked's ops (_ops.py) and reduce the mask with any().
"""

import builtins
import sys
import warnings

from .._C import Tensor
from . import _ops

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]

_UNARY = frozenset(
    "abs neg exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh "
    "asinh acosh atanh sigmoid relu gelu silu sqrt rsqrt square reciprocal floor ceil round trunc "
    "frac sign sgn erf erfc erfinv logit nan_to_num clamp clip clamp_min clamp_max "
    "logical_not bitwise_not positive to float double half bfloat16 int long bool type_as "
    "__neg__ __abs__ __invert__ __pos__".split()
)
_BINARY = frozenset(
    "add sub mul div true_divide floor_divide remainder fmod pow atan2 maximum minimum fmax fmin "
    "eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor "
    "__add__ __radd__ __sub__ __mul__ __rmul__ __truediv__ __floordiv__ __mod__ __pow__ __eq__ "
    "__ne__ __lt__ __le__ __gt__ __ge__ __and__ __or__ __xor__".split()
)
_VIEWS = frozenset(
    "view reshape t transpose permute unsqueeze squeeze flatten unflatten expand select narrow "
    "movedim __getitem__ clone contiguous detach unbind split chunk".split()
)
_REDUCTIONS = frozenset("sum mean amax amin prod argmax argmin norm var std all".split())
_SOFTMAXES = frozenset("softmax log_softmax softmin".split())
_PASSTHROUGH = frozenset(
    "__get__ __set__ dtype device requires_grad grad_fn is_leaf backward retain_grad dim size "
    "numel shape ndim is_floating_point element_size get_device ndimension __len__ layout "
    "requires_grad_".split()
)


def _ember():
    return sys.modules["ember"]


def _plain(t):
    """The data under a MaskedTensor typed a plain Tensor (one C++ tensor, one autograd
    identity)."""
    out = Tensor.__new__(Tensor)
    Tensor.__init__(out, t)
    return out


def is_masked_tensor(obj):
    """is_masked_tensor(obj) -> bool

    Whether obj is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)


def _check(data, mask):
    ember = _ember()
    if isinstance(data, MaskedTensor) or not isinstance(data, Tensor):
        raise TypeError("data must be a Tensor")
    if isinstance(mask, MaskedTensor) or not isinstance(mask, Tensor):
        raise TypeError("mask must be a Tensor")
    if data.layout is not mask.layout:
        raise TypeError("data and mask must have the same layout.")
    if mask.dtype is not ember.bool:
        raise TypeError("mask must have dtype bool.")
    allowed = (ember.float16, ember.float32, ember.float64, ember.bool) + (
        ember.int8,
        ember.int16,
        ember.int32,
        ember.int64,
    )
    if data.dtype not in allowed:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if tuple(data.shape) != tuple(mask.shape):
        raise ValueError("data.size() must equal mask.size()")


def _wrap(data, mask):
    """A MaskedTensor over ``data`` and ``mask`` as they are (no copy, no checks)."""
    from .._subclass_dispatch import register_overloading_subclass

    register_overloading_subclass(MaskedTensor)
    obj = Tensor.__new__(MaskedTensor)
    Tensor.__init__(obj, data)
    obj._masked_mask = mask
    return obj


class MaskedTensor(Tensor):
    """MaskedTensor(data, mask, requires_grad=False)

    data whose elements are valid only where mask (bool, the same shape) is True. Made by
    masked_tensor (a leaf holding copies) or as_masked_tensor (keeping data's history)."""

    def __new__(cls, data, mask, requires_grad=False):
        _check(data, mask)
        warnings.warn(
            "The PyTorch API of MaskedTensors is in prototype stage and will change in the near "
            "future. Please open a Github issue for features requests and see our documentation "
            "on the torch.masked module for further information about the project.",
            UserWarning,
            stacklevel=2,
        )
        if data.requires_grad:
            warnings.warn(
                "It is not recommended to create a MaskedTensor with a tensor that requires_grad. "
                "To avoid this, you can use data.detach().clone()",
                UserWarning,
                stacklevel=2,
            )
        obj = _wrap(data.detach().clone(), mask.clone())
        if requires_grad:
            obj.requires_grad_(True)
        return obj

    def __init__(self, *args, **kwargs):
        pass

    def get_data(self):
        """get_data() -> Tensor

        The data, masked-out elements included (differentiable)."""
        return _plain(self)

    def get_mask(self):
        """get_mask() -> Tensor

        The boolean mask: True where an element is valid."""
        return self._masked_mask

    def to_tensor(self, value):
        """to_tensor(value) -> Tensor

        The data with its masked-out elements replaced by value."""
        return _ember().where(self._masked_mask, _plain(self), value)

    @property
    def grad(self):
        g = _plain(self).grad
        return None if g is None else _wrap(g, self._masked_mask)

    @grad.setter
    def grad(self, value):
        _plain(self).grad = value.get_data() if isinstance(value, MaskedTensor) else value

    def __repr__(self):
        fmt = "{0:8.4f}"
        if self.dim() == 0:
            value = _plain(self).item()
            text = fmt.format(value) if isinstance(value, float) else str(value)
            valid = builtins.bool(self._masked_mask.item())
            return f"MaskedTensor({text if valid else '--'}, {valid})"
        body = _masked_str(_plain(self).detach(), self._masked_mask, fmt)
        return "MaskedTensor(\n" + "\n".join("  " + line for line in body.split("\n")) + "\n)"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        if name in _PASSTHROUGH:
            out = func(*_swap(args, _data), **_swap_kw(kwargs, _data))
            return args[0] if name == "requires_grad_" else out
        if name in _UNARY or name in _BINARY:
            return _elementwise(func, args, kwargs)
        if name in _VIEWS:
            return _view(func, args, kwargs)
        if name in _REDUCTIONS:
            return _reduce(name, args, kwargs)
        if name in _SOFTMAXES:
            return _softmax(name, args, kwargs)
        if name == "where":
            return _where(*args, **kwargs)
        if name.startswith("__r") and name.endswith("__"):
            op = {"__rsub__": "-", "__rtruediv__": "/", "__rdiv__": "/"}.get(name, name)
            raise TypeError(
                f"unsupported operand type(s) for {op}: '{type(args[1]).__name__}' and "
                "'MaskedTensor'"
            )
        if name.endswith("_") and name[:-1] in _UNARY | _BINARY:  # in place: data, mask kept
            func(*_swap(args, _data), **_swap_kw(kwargs, _data))
            return args[0]
        raise TypeError(f"{name} is not implemented for MaskedTensor (ember)")


def _data(a):
    return _plain(a) if isinstance(a, MaskedTensor) else a


def _mask(a):
    return a._masked_mask if isinstance(a, MaskedTensor) else a


def _swap(args, fn):
    return tuple(fn(a) for a in args)


def _swap_kw(kwargs, fn):
    return {k: fn(v) for k, v in kwargs.items()}


def _common_mask(args, kwargs):
    masks = [a._masked_mask for a in (*args, *kwargs.values()) if isinstance(a, MaskedTensor)]
    for m in masks[1:]:
        if tuple(m.shape) != tuple(masks[0].shape) or not _ember().equal(m, masks[0]):
            raise ValueError(
                "Input masks must match. If you need support for this, please open an issue on "
                "Github."
            )
    return masks[0]


def _elementwise(func, args, kwargs):
    mask = _common_mask(args, kwargs)
    out = func(*_swap(args, _data), **_swap_kw(kwargs, _data))
    return _wrap(out, mask) if isinstance(out, Tensor) else out


def _view(func, args, kwargs):
    out = func(*_swap(args, _data), **_swap_kw(kwargs, _data))
    mask = func(*_swap(args, _mask), **_swap_kw(kwargs, _mask))
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap(o, m) for o, m in zip(out, mask))
    return _wrap(out, mask)


def _reduce(name, args, kwargs):
    self, *rest = args
    kwargs = dict(kwargs)
    if name == "all":
        data = _ember().where(self._masked_mask, _plain(self), True)
        out = data.all(*rest, **kwargs)
    else:
        op = getattr(_ops, name)
        out = op(_plain(self), *rest, mask=self._masked_mask, **kwargs)
    # the result's mask: whether any element reduced into it was valid
    if name == "norm":
        rest = rest[1:]
        kwargs.pop("ord", None)
    dim = rest[0] if rest else kwargs.get("dim")
    keepdim = builtins.bool(kwargs.get("keepdim", False))
    mask = self._masked_mask
    if dim is None:
        mask = mask.any()
        if keepdim:
            mask = mask.reshape((1,) * self.dim())
    else:
        for d in reversed(_ops._canonical_dim(dim, self.dim())):
            mask = mask.any(dim=d, keepdim=keepdim)
    return _wrap(out, mask)


def _softmax(name, args, kwargs):
    self, *rest = args
    kwargs = dict(kwargs)
    kwargs.pop("_stacklevel", None)
    dim = rest[0] if rest else kwargs.pop("dim")
    out = getattr(_ops, name)(_plain(self), dim, mask=self._masked_mask, **kwargs)
    return _wrap(out, self._masked_mask)


def _where(condition, input, other):
    ember = _ember()
    data = ember.where(_data(condition), _data(input), _data(other))
    mask = ember.where(
        _data(condition),
        input._masked_mask if isinstance(input, MaskedTensor) else True,
        other._masked_mask if isinstance(other, MaskedTensor) else True,
    )
    return _wrap(data, mask)


def _masked_str(data, mask, fmt):
    if data.dim() == 1:
        items = [(v, m) for v, m in zip(data.tolist(), mask.tolist())]
        texts = [fmt.format(v) if isinstance(v, float) else str(v) for v, _ in items]
        width = builtins.max(len(t) if m else 8 for t, (_, m) in zip(texts, items))
        return (
            "[" + ", ".join(t if m else "--".rjust(width) for t, (_, m) in zip(texts, items)) + "]"
        )
    parts = [_masked_str(d, m, fmt) for d, m in zip(data.unbind(0), mask.unbind(0))]
    parts = ["\n".join("  " + line for line in p.split("\n")) for p in parts]
    return "[\n" + ",\n".join(parts) + "\n]"


def masked_tensor(data, mask, requires_grad=False):
    """masked_tensor(data, mask, requires_grad=False) -> MaskedTensor

    A MaskedTensor (a leaf) holding copies of data and mask."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """as_masked_tensor(data, mask) -> MaskedTensor

    A MaskedTensor over data that keeps its autograd history (gradients flow back to data)."""
    _check(data, mask)
    return _wrap(data.clone(), mask.clone())
