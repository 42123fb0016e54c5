"""torch's `_foreach_*` functions: one op applied to each tensor of a list (EMA updates, optimizer
steps and gradient-norm code call them directly). torch fuses them into multi-tensor kernels on
accelerators and loops on the CPU; ember loops over its own ops, so results are those of the
per-tensor ops. Out-of-place forms return a tuple; in-place forms write each tensor and return
the list they were given, as torch's do."""

import numbers

from .. import _C
from .._C import Tensor
from ..linalg import vector_norm
from .creation import tensor

_UNARY = (
    "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 "
    "neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc"
).split()
# name -> (the per-tensor op's name, whether it takes alpha)
_BINARY = {
    "add": ("add", True),
    "sub": ("sub", True),
    "mul": ("mul", False),
    "div": ("div", False),
    "clamp_min": ("clamp_min", False),
    "clamp_max": ("clamp_max", False),
    "maximum": ("maximum", False),
    "minimum": ("minimum", False),
    "pow": ("pow", False),
}


def _check_list(tensors):
    if len(tensors) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")


def _check_same(a, b):
    if len(a) != len(b):
        raise RuntimeError(
            f"Tensor lists must have the same number of tensors, got {len(a)} and {len(b)}"
        )


def _operands(self, other):
    """The second operand for each tensor of self: a number, one of a list of numbers or of
    tensors, or one tensor for all."""
    _check_list(self)
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, numbers.Number) for o in other):
            if len(other) != len(self):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            return list(other)
        _check_same(self, other)
        return list(other)
    return [other] * len(self)


def _alpha(name, with_alpha, kwargs):
    """The keyword arguments for the per-tensor op: alpha where torch's signature has it."""
    extra = set(kwargs) - ({"alpha"} if with_alpha else set())
    if extra:
        raise TypeError(f"_foreach_{name}() got an unexpected keyword argument '{extra.pop()}'")
    return {} if kwargs.get("alpha", 1) == 1 else kwargs


def _binary(name, op, with_alpha):
    # maximum/minimum take tensors only: a number becomes a 0-dim tensor, which promotes as the
    # number would (an int tensor with 0.5 gives floats, as torch's _foreach_maximum).
    wrap = op in ("maximum", "minimum")

    def pairs(self, other):
        for t, o in zip(self, _operands(self, other)):
            yield t, (tensor(o) if wrap and isinstance(o, numbers.Number) else o)

    # Methods are looked up on each tensor when called (Tensor's table is filled after import).
    def out_of_place(self, other, **kwargs):
        kw = _alpha(name, with_alpha, kwargs)
        return tuple(getattr(t, op)(o, **kw) for t, o in pairs(self, other))

    def in_place(self, other, **kwargs):
        kw = _alpha(name, with_alpha, kwargs)
        for t, o in pairs(self, other):
            getattr(t, op + "_")(o, **kw)
        return self

    sig = "(self, other, *, alpha=1)" if with_alpha else "(self, other)"
    out_of_place.__doc__ = (
        f"_foreach_{name}{sig} -> tuple of Tensors\n\n{op} of each tensor of self with other "
        "(a number, a list of numbers or tensors, or one tensor)."
    )
    in_place.__doc__ = f"_foreach_{name}_{sig} -> list\n\nIn-place _foreach_{name}: returns self."
    return out_of_place, in_place


def _unary(name):
    def out_of_place(self):
        _check_list(self)
        return tuple(getattr(t, name)() for t in self)

    def in_place(self):
        _check_list(self)
        for t in self:
            getattr(t, name + "_")()
        return self

    out_of_place.__doc__ = f"_foreach_{name}(self) -> tuple of Tensors\n\n{name} of each tensor."
    in_place.__doc__ = f"_foreach_{name}_(self) -> list\n\nIn-place _foreach_{name}: returns self."
    return out_of_place, in_place


_FUNCTIONS = {}
for _name in _UNARY:
    _FUNCTIONS[f"_foreach_{_name}"], _FUNCTIONS[f"_foreach_{_name}_"] = _unary(_name)
for _name, (_op, _has_alpha) in _BINARY.items():
    _pair = _binary(_name, _op, _has_alpha)
    _FUNCTIONS[f"_foreach_{_name}"], _FUNCTIONS[f"_foreach_{_name}_"] = _pair
del _name, _op, _has_alpha, _pair

_pow_tensors = _FUNCTIONS["_foreach_pow"]


def _foreach_pow(self, exponent):
    """_foreach_pow(self, exponent) -> tuple of Tensors

    Each tensor of self raised to exponent (a number, a list of numbers or tensors, or one
    tensor); with a number as self, that number raised to each tensor of exponent."""
    if isinstance(self, numbers.Number):
        _check_list(exponent)
        return tuple(_C.pow(self, e) for e in exponent)
    return _pow_tensors(self, exponent)


def _weights(self, weight):
    if isinstance(weight, Tensor) and weight.dim() == 1 and weight.numel() == len(self):
        return weight.tolist()  # one value per tensor, as torch's Tensor `scalars` form
    return _operands(self, weight)


def _foreach_lerp(self, tensors1, weight):
    """_foreach_lerp(self, tensors1, weight) -> tuple of Tensors

    lerp(self[i], tensors1[i], weight) for each i; weight is a number, a list of numbers or a
    list of tensors."""
    _check_list(self)
    _check_same(self, tensors1)
    return tuple(_C.lerp(s, e, w) for s, e, w in zip(self, tensors1, _operands(self, weight)))


def _foreach_lerp_(self, tensors1, weight):
    """_foreach_lerp_(self, tensors1, weight) -> list

    In-place _foreach_lerp: returns self."""
    _check_list(self)
    _check_same(self, tensors1)
    for s, e, w in zip(self, tensors1, _operands(self, weight)):
        s.lerp_(e, w)
    return self


def _addc(name):
    method = name + "_"

    def out_of_place(self, tensor1, tensor2, value=1):
        _check_list(self)
        _check_same(self, tensor1)
        _check_same(self, tensor2)
        vals = _weights(self, value)
        return tuple(
            getattr(s, name)(a, b, value=v) for s, a, b, v in zip(self, tensor1, tensor2, vals)
        )

    def in_place(self, tensor1, tensor2, value=1):
        _check_list(self)
        _check_same(self, tensor1)
        _check_same(self, tensor2)
        for s, a, b, v in zip(self, tensor1, tensor2, _weights(self, value)):
            getattr(s, method)(a, b, value=v)
        return self

    out_of_place.__doc__ = (
        f"_foreach_{name}(self, tensor1, tensor2, value=1) -> tuple of Tensors\n\n"
        f"{name} for each i; value is a number, a list of numbers or a 1-D tensor of them."
    )
    in_place.__doc__ = f"_foreach_{name}_(self, tensor1, tensor2, value=1) -> list\n\nIn place."
    return out_of_place, in_place


_foreach_addcmul, _foreach_addcmul_ = _addc("addcmul")
_foreach_addcdiv, _foreach_addcdiv_ = _addc("addcdiv")


def _foreach_norm(self, ord=2, dtype=None):
    """_foreach_norm(self, ord=2, dtype=None) -> tuple of Tensors

    The vector norm of each tensor (0-dim results)."""
    _check_list(self)
    return tuple(vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """_foreach_powsum(self, ord=2, dtype=None) -> tuple of Tensors

    sum(|t| ** ord) of each tensor: the norm before its root."""
    _check_list(self)
    return tuple(t.abs().pow(ord).sum(dtype=dtype) for t in self)


def _foreach_max(self):
    """_foreach_max(self) -> tuple of Tensors

    The largest element of each tensor."""
    _check_list(self)
    return tuple(t.max() for t in self)


def _foreach_zero_(self):
    """_foreach_zero_(self) -> list

    Fills each tensor with zeros; returns self."""
    _check_list(self)
    for t in self:
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """_foreach_copy_(self, src, non_blocking=False) -> list

    Copies src[i] into self[i]; returns self."""
    _check_list(self)
    _check_same(self, src)
    for t, s in zip(self, src):
        t.copy_(s, non_blocking)
    return self


def _foreach_clone(self):
    """_foreach_clone(self) -> tuple of Tensors

    A copy of each tensor."""
    _check_list(self)
    return tuple(t.clone() for t in self)


def _foreach_mm(self, mat2):
    """_foreach_mm(self, mat2) -> tuple of Tensors

    self[i] @ mat2[i] for each i."""
    _check_list(self)
    _check_same(self, mat2)
    return tuple(_C.mm(a, b) for a, b in zip(self, mat2))


_FUNCTIONS.update(
    {
        "_foreach_pow": _foreach_pow,
        "_foreach_lerp": _foreach_lerp,
        "_foreach_lerp_": _foreach_lerp_,
        "_foreach_addcmul": _foreach_addcmul,
        "_foreach_addcmul_": _foreach_addcmul_,
        "_foreach_addcdiv": _foreach_addcdiv,
        "_foreach_addcdiv_": _foreach_addcdiv_,
        "_foreach_norm": _foreach_norm,
        "_foreach_powsum": _foreach_powsum,
        "_foreach_max": _foreach_max,
        "_foreach_zero_": _foreach_zero_,
        "_foreach_copy_": _foreach_copy_,
        "_foreach_clone": _foreach_clone,
        "_foreach_mm": _foreach_mm,
    }
)
for _name, _fn in _FUNCTIONS.items():
    _fn.__name__ = _fn.__qualname__ = _name
del _name, _fn
globals().update(_FUNCTIONS)
__all__ = sorted(_FUNCTIONS)
