"""The runtime ops for elementwise math, the ``*_like`` factories, clamp and the reductions with
an index (csrc/ember/export/math_ops.cpp): ``x.sin()``, ``torch.zeros_like(x)``,
``x.clamp(0, 1)``, ``x.max(1)`` ...

``EXECUTORS`` are their Python executors (registered into ``_ops.ops``); ``functions()`` and
``METHODS`` map captured calls onto them as ``_ops.normalize`` does for the rest."""

import sys

__all__ = ["EXECUTORS", "METHODS", "functions"]

#: one-tensor elementwise ops: the runtime op, the public function and the Tensor method share
#: the name (selu/softsign/logsigmoid are nn.functional's)
UNARY = (
    "exp2 expm1 log2 log10 log1p sin cos tan asin acos atan sinh cosh asinh acosh atanh erfc "
    "erfinv reciprocal sinc sign floor ceil trunc frac square"
).split()
_NN_UNARY = ("selu", "softsign", "logsigmoid")


def _ember():
    return sys.modules["ember"]


def _is_tensor(v):
    """Whether an argument is a tensor: normalized calls see graph nodes, whose example value
    says (a node may also be a number read with item() or a size)."""
    from .. import fx

    if isinstance(v, fx.Node):
        if "val" not in v.meta:  # a loaded program's node (_serialize._returns_tensor)
            return bool(v.meta.get("is_tensor"))
        v = v.meta.get("val")
    return isinstance(v, _ember().Tensor)


def _unsupported(what):
    from ._ops import Unsupported

    return Unsupported(what)


def _unary_exec(name):
    def run(x):
        e = _ember()
        fn = getattr(e, name, None) or getattr(e.nn.functional, name)
        return fn(x)

    return run


def _dims(dims):
    return dims or None


EXECUTORS = {name: _unary_exec(name) for name in UNARY + list(_NN_UNARY)}
EXECUTORS.update(
    {
        "round": lambda x, decimals: _ember().round(x, decimals=decimals),
        "zeros_like": lambda x, dtype: _ember().zeros_like(x, dtype=dtype),
        "ones_like": lambda x, dtype: _ember().ones_like(x, dtype=dtype),
        "full_like": lambda x, value, dtype: _ember().full_like(x, value, dtype=dtype),
        "clamp": lambda x, lo, hi: _ember().clamp(x, lo, hi),
        "clamp_tensor": lambda x, lo, hi: _ember().clamp(x, lo, hi),
        "minimum": lambda a, b: _ember().minimum(a, b),
        "maximum": lambda a, b: _ember().maximum(a, b),
        "atan2": lambda a, b: _ember().atan2(a, b),
        "max_dim": lambda x, dim, keepdim: tuple(_ember().max(x, dim, keepdim)),
        "min_dim": lambda x, dim, keepdim: tuple(_ember().min(x, dim, keepdim)),
        "max_all": lambda x: _ember().max(x),
        "min_all": lambda x: _ember().min(x),
        "argmax": lambda x, dim, keepdim: _ember().argmax(x, dim, keepdim),
        "argmin": lambda x, dim, keepdim: _ember().argmin(x, dim, keepdim),
        "amin": lambda x, dims, keepdim: _ember().amin(x, dims, keepdim),
        "std": lambda x, dims, correction, keepdim: _ember().std(
            x, _dims(dims), correction=correction, keepdim=keepdim
        ),
        "cumsum": lambda x, dim: _ember().cumsum(x, dim),
        "tril": lambda x, diagonal: _ember().tril(x, diagonal),
        "triu": lambda x, diagonal: _ember().triu(x, diagonal),
    }
)


def _one(name):
    def norm(input, *, out=None):
        if out is not None:
            raise _unsupported(f"{name} with out=")
        return name, [input]

    return norm


def _nn_one(name):
    def norm(input, inplace=False):
        return name, [input]

    return norm


def _round(input, *, decimals=0):
    return "round", [input, decimals]


def _like(name):
    def norm(
        input,
        *,
        dtype=None,
        layout=None,
        device=None,
        pin_memory=None,
        requires_grad=False,
        memory_format=None,
    ):
        return name, [input, dtype]

    return norm


def _full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    requires_grad=False,
    memory_format=None,
):
    if _is_tensor(fill_value):
        raise _unsupported("full_like with a tensor fill value")
    return "full_like", [input, fill_value, dtype]


def _clamp(input, min=None, max=None):
    # both bounds are numbers or both tensors (torch's two overloads; eager refuses a mix)
    if _is_tensor(min) or _is_tensor(max):
        return "clamp_tensor", [input, min, max]
    return "clamp", [input, min, max]


def _clamp_min(input, min):
    return _clamp(input, min, None)


def _clamp_max(input, max):
    return _clamp(input, None, max)


def _tensors(name):
    def norm(input, other):
        if not (_is_tensor(input) and _is_tensor(other)):
            raise _unsupported(f"{name} of a number")
        return name, [input, other]

    return norm


def _extreme(name, elementwise):
    def norm(input, dim=None, keepdim=False):
        if dim is None:
            return f"{name}_all", [input]
        if _is_tensor(dim):
            return elementwise, [input, dim]
        return f"{name}_dim", [input, dim, bool(keepdim)]

    return norm


def _arg(name):
    def norm(input, dim=None, keepdim=False):
        return name, [input, dim, bool(keepdim)]

    return norm


def _amin(input, dim=(), keepdim=False):
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    return "amin", [input, dims, bool(keepdim)]


def _std(*args, **kwargs):
    from ._ops_flow import normalize_var

    return "std", normalize_var(*args, **kwargs)


def _cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        raise _unsupported("cumsum with dtype")
    return "cumsum", [input, dim]


def _tri(name):
    def norm(input, diagonal=0):
        return name, [input, diagonal]

    return norm


_SHARED = {
    "round": _round,
    "clamp": _clamp,
    "clip": _clamp,
    "clamp_min": _clamp_min,
    "clamp_max": _clamp_max,
    "minimum": _tensors("minimum"),
    "maximum": _tensors("maximum"),
    "atan2": _tensors("atan2"),
    "max": _extreme("max", "maximum"),
    "min": _extreme("min", "minimum"),
    "argmax": _arg("argmax"),
    "argmin": _arg("argmin"),
    "amin": _amin,
    "std": _std,
    "cumsum": _cumsum,
    "tril": _tri("tril"),
    "triu": _tri("triu"),
}

METHODS = {name: _one(name) for name in UNARY}
METHODS.update(_SHARED)


def functions():
    """{callable: normalizer} for the public functions."""
    e = _ember()
    table = {}
    for name in UNARY:
        fn = getattr(e, name, None)
        if fn is not None:
            table[fn] = _one(name)
    for name in _NN_UNARY:
        fn = getattr(e.nn.functional, name, None)
        if fn is not None:
            table[fn] = _nn_one(name)
    for name, norm in _SHARED.items():
        fn = getattr(e, name, None)
        if fn is not None:
            table[fn] = norm
    for name in ("zeros_like", "ones_like"):
        table[getattr(e, name)] = _like(name)
    table[e.empty_like] = _like("zeros_like")  # any value is an empty tensor's
    table[e.full_like] = _full_like
    return table
