"""The runtime ops behind control flow (csrc/ember/export/flow_ops.cpp): comparisons, logical
and bitwise ops, ``where``, ``item`` (torch's ``_local_scalar_dense``), ``_assert_scalar``
(torch's runtime assertion of a ``torch._check``), ``var`` and ``cond``.

``EXECUTORS`` are their Python executors (registered into ``_ops.ops``); ``functions()`` and
``METHODS`` map captured calls onto them as ``_ops.normalize`` does for the rest. ``cond`` is
not normalized here: its branches become graphs of their own when a program is saved
(``_cond.py``)."""

import operator
import sys

__all__ = ["EXECUTORS", "METHODS", "functions", "is_cond", "normalize_var"]


def _ember():
    return sys.modules["ember"]


def _is_tensor(v):
    return isinstance(v, _ember().Tensor)


def _tensor_pair(fn):
    """A logical op over tensors and numbers: numbers combine as Python truth values."""

    def run(a, b):
        if not _is_tensor(a) and not _is_tensor(b):
            return fn(bool(a), bool(b))
        e = _ember()
        a = a if _is_tensor(a) else e.tensor(a)
        b = b if _is_tensor(b) else e.tensor(b)
        return getattr(e, run.__name__)(a, b)

    return run


def _logical(name, py):
    fn = _tensor_pair(py)
    fn.__name__ = name
    return fn


def _logical_not(a):
    return _ember().logical_not(a) if _is_tensor(a) else not a


def _assert_scalar(cond, msg):
    # aten._assert_scalar's own function: once export's install() has run, that overload runs
    # this executor, so calling the overload here would recurse
    from .._aten_extra import _assert_scalar as check

    check(cond, msg)


def _cond(pred, true_fn, false_fn, operands, single):
    out = _ember().cond(pred, true_fn, false_fn, tuple(operands))
    if single:
        return out
    return list(out) if isinstance(out, (tuple, list)) else [out]  # read by getitem nodes


EXECUTORS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "logical_and": _logical("logical_and", lambda a, b: a and b),
    "logical_or": _logical("logical_or", lambda a, b: a or b),
    "logical_xor": _logical("logical_xor", lambda a, b: a != b),
    "logical_not": _logical_not,
    "bitwise_and": operator.and_,
    "bitwise_or": operator.or_,
    "bitwise_xor": operator.xor,
    "bitwise_not": operator.invert,
    "where": lambda c, x, y: _ember().where(c, x, y),
    "item": lambda x: x.item(),
    "_assert_scalar": _assert_scalar,
    "var": lambda x, dims, correction, keepdim: _ember().var(
        x, dims or None, correction=correction, keepdim=keepdim
    ),
    "cond": _cond,
}


def _pair(name):
    def norm(input, other):
        return name, [input, other]

    return norm


def _one(name):
    def norm(input):
        return name, [input]

    return norm


def _where(condition, input=None, other=None):
    if input is None or other is None:
        from ._ops import Unsupported

        raise Unsupported("where(condition) (its result's size depends on the data)")
    return "where", [condition, input, other]


def normalize_var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """var's (and std's) runtime arguments: input, dims ([] = all), correction, keepdim."""
    if isinstance(dim, bool):  # var(x, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = [] if dim is None else (list(dim) if isinstance(dim, (list, tuple)) else [dim])
    return [input, dims, float(correction), bool(keepdim)]


def _var(*args, **kwargs):
    return "var", normalize_var(*args, **kwargs)


_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
_BINARY = ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor")

METHODS = {name: _pair(name) for name in _COMPARE + _BINARY}
METHODS.update({f"__{name}__": _pair(name) for name in _COMPARE})
METHODS.update(
    {
        "__and__": _pair("bitwise_and"),
        "__or__": _pair("bitwise_or"),
        "__xor__": _pair("bitwise_xor"),
        "__invert__": _one("bitwise_not"),
        "bitwise_not": _one("bitwise_not"),
        "logical_not": _one("logical_not"),
        "item": _one("item"),
        "var": _var,
        "where": lambda self, condition, other: ("where", [condition, self, other]),
    }
)


def functions():
    """{callable: normalizer} for the public functions and Python operators."""
    e = _ember()
    table = {
        operator.eq: _pair("eq"),
        operator.ne: _pair("ne"),
        operator.lt: _pair("lt"),
        operator.le: _pair("le"),
        operator.gt: _pair("gt"),
        operator.ge: _pair("ge"),
        operator.and_: _pair("bitwise_and"),
        operator.or_: _pair("bitwise_or"),
        operator.xor: _pair("bitwise_xor"),
        operator.invert: _one("bitwise_not"),
        operator.not_: _one("logical_not"),
        e.where: _where,
        e.logical_not: _one("logical_not"),
        e.bitwise_not: _one("bitwise_not"),
        e.var: _var,
    }
    for name in _COMPARE + _BINARY:
        table[getattr(e, name)] = _pair(name)
    for alias, name in (
        ("greater", "gt"),
        ("greater_equal", "ge"),
        ("less", "lt"),
        ("less_equal", "le"),
        ("not_equal", "ne"),
    ):
        fn = getattr(e, alias, None)
        if fn is not None:
            table[fn] = _pair(name)
    return table


def is_cond(target):
    """Whether a call target is ember.cond (a function wrapping it, a tracing mode's routing
    wrapper of it, or the operator ember.ops.higher_order.cond)."""
    from .._higher_order_ops.cond import cond

    while target is not None:
        if target is cond or getattr(target, "_export_op", None) == "cond":
            return True
        target = getattr(target, "__wrapped__", None)
    return False
