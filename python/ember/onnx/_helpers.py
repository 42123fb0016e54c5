"""Helpers shared by the mappings: dtypes of operands, constants of the right dtype, dims."""

import numbers

from .. import _C
from ._graph import Value, is_floating
from .errors import SymbolicValueError


def out_dtype(g):
    """The dtype of the current node's result in the example run (its first tensor)."""
    ex = g.example
    while isinstance(ex, (tuple, list)):
        ex = ex[0]
    return getattr(ex, "dtype", None)


def _stand_in(x):
    """What ember's type promotion sees for an operand: a tensor of its dtype or the scalar."""
    import ember

    if isinstance(x, Value):
        # A 0-d tensor promotes like a scalar of its kind (torch's rule), so keep its rank.
        return ember.zeros((), dtype=x.dtype) if x.shape == () else ember.zeros((1,), dtype=x.dtype)
    return x


def common_dtype(*operands):
    """ember's result dtype for the operands (Values and Python scalars), torch's promotion:
    dimensioned tensors over 0-d tensors over scalars."""
    ops = [o for o in operands if o is not None]
    if not any(isinstance(o, Value) for o in ops):
        raise SymbolicValueError("ember.onnx.export: expected a tensor operand; got none")
    ops.sort(key=lambda o: (0 if o.shape != () else 1) if isinstance(o, Value) else 2)
    import ember

    acc = _stand_in(ops[0])
    for o in ops[1:]:
        acc = ember.zeros(tuple(acc.shape), dtype=_C.result_type(acc, _stand_in(o)))
    return acc.dtype


def operand(g, x, dtype):
    """`x` (a Value or a Python number) as a Value of `dtype`."""
    if isinstance(x, Value):
        return g.cast(x, dtype)
    if isinstance(x, (numbers.Number, bool)):
        return g.const(x, dtype)
    raise SymbolicValueError(f"ember.onnx.export: expected a tensor or a number; got {x!r}")


def norm_dim(dim, rank):
    return dim + rank if dim < 0 else dim


def dims_list(dim, rank):
    """A dim argument (int, sequence or None meaning all) as a list of non-negative dims."""
    if dim is None:
        return list(range(rank))
    if isinstance(dim, int):
        dim = [dim]
    return [norm_dim(d, rank) for d in dim]


def as_tuple(value, n):
    """An int or sequence argument (kernel_size, stride...) as a list of `n` ints."""
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    return value * n if len(value) == 1 else value


def varargs(args):
    """Sizes or dims given as ``f(a, b)`` or ``f((a, b))``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def floating(v):
    return v is not None and is_floating(v.dtype)
