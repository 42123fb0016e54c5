"""Batching rules of ember.func.vmap (Note [vmap levels] in _vmap.py): one function per family of
operations, each computing on the physical tensors with the batch dimensions in front.

RULES maps id(original ember function or Tensor method) to its rule; an operation on a
BatchedTensor without an entry raises "Batching rule not implemented for ..." (no loop fallback).

This module holds the registry and the shared helpers, and the rules of elementwise operations,
reductions and other dimension-taking operations, views, indexing, linear algebra and
factories; _batch_rules_nn.py registers the nn.functional and randomness rules into RULES
(_vmap imports both on the first batched call).
"""

import sys

from .. import fft as _fft
from .. import linalg as _linalg
from .. import overrides
from .. import special as _special
from .._C import Tensor
from ..nn import functional as F
from ._vmap import (
    BatchedTensor,
    _dim,
    _size_of,
    align,
    first_order,
    levels_of,
    logical_dim,
    wrap,
)

# Imported by _vmap on the first batched call, when the package is complete: the root namespace
# (whose functions get rules) is read from sys.modules rather than imported.
ember = sys.modules["ember"]

RULES = {}
_NAMES = {}  # id -> printable name
_KEEP = []
_MISSING = object()

_PREFIX = {
    "ember": "ember",
    "Tensor": "ember.Tensor",
    "F": "ember.nn.functional",
    "linalg": "ember.linalg",
    "fft": "ember.fft",
    "special": "ember.special",
}
_OWNERS = {
    "ember": ember,
    "Tensor": Tensor,
    "F": F,
    "linalg": _linalg,
    "fft": _fft,
    "special": _special,
}


def op_name(func):
    name = _NAMES.get(id(func))
    if name:
        return name
    short = getattr(func, "__name__", None) or repr(func)
    for prefix, owner in (
        ("ember.nn.functional", F),
        ("ember.linalg", _linalg),
        ("ember.fft", _fft),
        ("ember.special", _special),
        ("ember", ember),
        ("ember.Tensor", Tensor),
    ):
        obj = vars(owner).get(short) if owner is Tensor else getattr(owner, short, None)
        if obj is not None and overrides.original(obj) is func:
            return f"{prefix}.{short}"
    return getattr(func, "__qualname__", None) or short


def register(names, rule, owners=("ember", "Tensor", "F", "linalg", "special")):
    for name in names.split() if isinstance(names, str) else names:
        for owner in owners:
            mod = _OWNERS[owner]
            obj = vars(mod).get(name) if owner == "Tensor" else getattr(mod, name, None)
            if obj is None or isinstance(obj, (property, type)) or not callable(obj):
                continue
            obj = overrides.original(obj)
            RULES[id(obj)] = rule
            _NAMES[id(obj)] = f"{_PREFIX[owner]}.{name}"
            _KEEP.append(obj)


def _is_b(x):
    return type(x) is BatchedTensor


def _is_t(x):
    return isinstance(x, Tensor)


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _with(args, kwargs, i, name, value):
    if len(args) > i:
        return args[:i] + (value,) + args[i + 1 :], kwargs
    return args, {**kwargs, name: value}


def _pdim(d, nd, nb):
    lo, hi = (-nd, nd - 1) if nd else (-1, 0)
    if not lo <= d <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})"
        )
    return d % nd + nb if nd else nb


def _pdims(d, nd, nb):
    if isinstance(d, (tuple, list)):
        return type(d)(_pdim(x, nd, nb) for x in d)
    return _pdim(d, nd, nb)


def _batch_sizes(levels):
    return tuple(_size_of(lv) for lv in levels)


def _no_rule(func):
    raise RuntimeError(
        f"vmap: Batching rule not implemented for {op_name(func)}. ember has no per-example "
        "fallback loop; express the function with operations that have batching rules, or move "
        "this call out of vmap."
    )


# -- elementwise


def _pointwise(func, args, kwargs):
    tensors = [a for a in args if _is_t(a)] + [a for a in kwargs.values() if _is_t(a)]
    levels = levels_of(*tensors)
    rank = max(logical_dim(t) for t in tensors)

    def conv(a):
        if _is_b(a):
            if a._lv == levels and _dim(a._v) - len(levels) == rank:
                return a._v
            return align(a, levels, rank)
        return a

    out = func(*[conv(a) for a in args], **{k: conv(v) for k, v in kwargs.items()})
    return wrap(out, levels)


# torch's refusal of an in-place op whose `self` is vmapped over fewer levels than an argument
# depends on how its batching is written: these check the output shape first, these name
# "inplace arithmetic", fill_ names itself; the rest (its fallback) name the ATen op and level.
_REFUSED_BY_SHAPE = frozenset("add_ atan2_ bitwise_and_ bitwise_or_ copysign_ gcd_ lcm_".split())
_REFUSED_AS_ARITHMETIC = frozenset(
    "sub_ mul_ div_ true_divide_ copy_ clamp_min_ clamp_max_ masked_fill_ logical_and_".split()
)


def inplace_refusal(name, self, args, levels):
    """torch's RuntimeError for the in-place op `name` on a `self` not batched over `levels`."""
    if name in _REFUSED_BY_SHAPE:
        shapes = [tuple(a.shape) for a in args if _is_t(a)]
        return RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{[*_batch_sizes(levels), *ember.broadcast_shapes(tuple(self.shape), *shapes)]}"
        )
    own = self._lv if _is_b(self) else ()
    if name in _REFUSED_AS_ARITHMETIC or name == "fill_" or name.startswith("index_"):
        what, where = (
            ("inplace arithmetic" if name in _REFUSED_AS_ARITHMETIC else name),
            "in a vmap",
        )
    else:
        what = "aten::" + name
        where = f"at level {next(i for i, lv in enumerate(levels) if lv not in own) + 1}"
    return RuntimeError(
        f"vmap: {what}(self, *extra_args) is not possible because there exists a Tensor `other` "
        "in extra_args that has more elements than `self`. This happened due to `other` being "
        f"vmapped over but `self` not being vmapped over {where}. Please try to use out-of-place "
        f"operators instead of {what}. If said operator is being called inside the PyTorch "
        "framework, please file a bug report instead."
    )


def _inplace(func, args, kwargs):
    self = args[0]
    levels = levels_of(*args, *kwargs.values())
    if not _is_b(self) or self._lv != levels:
        name = op_name(func).rsplit(".", 1)[-1]
        raise inplace_refusal(name, self, (*args[1:], *kwargs.values()), levels)
    rank = logical_dim(self)

    def conv(a):
        return align(a, levels, rank) if _is_b(a) else a

    func(self._v, *[conv(a) for a in args[1:]], **{k: conv(v) for k, v in kwargs.items()})
    return self


def _inplace_kw(rule):
    """Functions with an `inplace=` flag (F.relu(x, inplace=True)) return their input."""

    def wrapped(func, args, kwargs):
        if kwargs.get("inplace") and _is_b(args[0]):
            out = rule(func, args, kwargs)
            return args[0] if _is_b(out) else out
        return rule(func, args, kwargs)

    return wrapped


POINTWISE = """
abs absolute acos arccos acosh arccosh add addcdiv addcmul angle asin arcsin asinh arcsinh atan
arctan atan2 arctan2 atanh arctanh bitwise_and bitwise_not bitwise_or bitwise_xor
bitwise_left_shift bitwise_right_shift ceil clamp clip clamp_min clamp_max conj copysign cos cosh
deg2rad div divide digamma eq equal erf erfc erfinv exp exp2 expm1 float_power floor floor_divide
fmax fmin fmod frac frexp ge greater_equal gt greater heaviside hypot i0 igamma igammac isclose
isfinite isinf isnan isneginf isposinf isreal lcm gcd ldexp le less_equal lerp lgamma log log10
log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logit lt less
maximum minimum mul multiply mvlgamma nan_to_num ne not_equal neg negative nextafter polygamma
positive pow rad2deg real imag reciprocal remainder round rsqrt sgn sigmoid sign signbit sin sinc
sinh sqrt square sub subtract rsub tan tanh true_divide trunc fix xlogy where masked_fill clone
detach contiguous float double half bfloat16 int long short bool byte char to type cpu cuda
relu relu6 gelu silu mish elu selu celu leaky_relu hardtanh hardsigmoid hardswish softplus
softsign tanhshrink logsigmoid threshold hardshrink softshrink expit erfcx ndtr ndtri log_ndtr
entr xlog1py i0e i1 i1e tril triu masked_scatter type_as
resolve_conj resolve_neg __add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__
__rtruediv__ __div__ __rdiv__ __floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__
__neg__ __pos__ __abs__ __invert__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __lshift__
__rlshift__ __rshift__ __rrshift__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__
""".split()

INPLACE_DUNDERS = (
    "__iadd__ __isub__ __imul__ __itruediv__ __idiv__ __ifloordiv__ __imod__ __ipow__ __iand__ "
    "__ior__ __ixor__ __ilshift__ __irshift__"
).split()


# -- dimension-taking operations


def _dimop(*specs, extra=0):
    """Rule for ops whose int / tuple-of-int arguments (pos, name, default) name logical
    dimensions of the first argument; `extra` widens the range (unsqueeze takes ndim + 1)."""

    def rule(func, args, kwargs):
        x = args[0]
        if not _is_b(x):
            return _no_rule(func)
        nb = len(x._lv)
        nd = x._v.dim() - nb + extra
        if nd == 0:
            # A 0-d example takes dim 0 / -1: compute on a size-1 dimension and drop it again.
            out = rule(func, (BatchedTensor(x._v.unsqueeze(-1), x._lv), *args[1:]), kwargs)
            return _drop_last(out, x._v.dim())
        args = (x._v, *args[1:])
        for pos, name, default in specs:
            d = _arg(args, kwargs, pos, name, _MISSING)
            if d is _MISSING or d is None:
                if default is _MISSING:
                    continue
                d = default
            args, kwargs = _with(args, kwargs, pos, name, _pdims(d, nd, nb))
        return wrap(func(*args, **kwargs), x._lv)

    return rule


def _drop_last(out, ndim):
    if type(out) is BatchedTensor:
        return BatchedTensor(out._v.squeeze(-1), out._lv) if out._v.dim() > ndim else out
    if isinstance(out, (tuple, list)):
        items = [_drop_last(o, ndim) for o in out]
        if type(out) in (tuple, list):
            return type(out)(items)
        try:
            return type(out)(*items)
        except TypeError:
            return type(out)(items)
    return out


def _reduction(dim_pos=1, dim_name="dim", values_only=False):
    """sum/mean/amax/...: dim=None reduces every logical dimension (one flattened dimension)."""
    specs = _dimop((dim_pos, dim_name, _MISSING))

    def rule(func, args, kwargs):
        x = args[0]
        if not _is_b(x):
            return _pointwise(func, args, kwargs)
        d = _arg(args, kwargs, dim_pos, dim_name, None)
        if d is not None and not (isinstance(d, (tuple, list)) and len(d) == 0):
            return specs(func, args, kwargs)
        nb = len(x._lv)
        nd = x._v.dim() - nb
        keep = kwargs.get("keepdim", False)
        kwargs = {k: v for k, v in kwargs.items() if k != "keepdim"}
        v = x._v.reshape(tuple(x._v.shape[:nb]) + (-1,))
        if len(args) > dim_pos:
            args = (v, *args[1:dim_pos], -1, *args[dim_pos + 1 :])
        else:
            args = (v, *args[1:])
            kwargs[dim_name] = -1
        out = func(*args, **kwargs)
        if values_only and isinstance(out, tuple):
            out = out[0]
        if keep:
            out = out.reshape(tuple(out.shape) + (1,) * nd)
        return wrap(out, x._lv)

    return rule


def _squeeze(func, args, kwargs):
    x = args[0]
    d = _arg(args, kwargs, 1, "dim", None)
    nb = len(x._lv)
    if d is None:
        dims = tuple(i + nb for i, s in enumerate(x.shape) if s == 1)
        return wrap(x._v.squeeze(dims) if dims else x._v.view(tuple(x._v.shape)), x._lv)
    return _dimop((1, "dim", _MISSING))(func, args, kwargs)


def _softmax_like(func, args, kwargs):
    x = args[0]
    d = _arg(args, kwargs, 1, "dim", None)
    if d is None:
        nd = logical_dim(x)
        d = 0 if nd in (0, 1, 3) else 1
        args, kwargs = _with(args, kwargs, 1, "dim", d)
    return _dimop((1, "dim", _MISSING))(func, args, kwargs)


def _shape_args(args, start):
    rest = args[start:]
    if (
        len(rest) == 1
        and isinstance(rest[0], (tuple, list))
        or (len(rest) == 1 and not isinstance(rest[0], int))
    ):
        return tuple(rest[0])
    return tuple(rest)


def _view(func, args, kwargs):
    x = args[0]
    if len(args) == 2 and not isinstance(args[1], (int, tuple, list)) and not _is_t(args[1]):
        if not hasattr(args[1], "__len__"):  # view(dtype)
            return wrap(func(x._v, args[1]), x._lv)
    shape = _shape_args(args, 1) if len(args) > 1 else tuple(kwargs.get("shape", ()))
    batch = tuple(x._v.shape[: len(x._lv)])
    return wrap(func(x._v, batch + tuple(shape)), x._lv)


def _reshape_fn(func, args, kwargs):  # ember.reshape(input, shape)
    x = args[0]
    shape = _arg(args, kwargs, 1, "shape")
    batch = tuple(x._v.shape[: len(x._lv)])
    return wrap(func(x._v, batch + tuple(shape)), x._lv)


def _view_as(func, args, kwargs):
    x, other = args[0], args[1]
    if not _is_b(x):  # an unbatched tensor shaped like a batched one (a tangent's view_as)
        shape = tuple(other.shape)
        return x.view(shape) if getattr(func, "__name__", "") == "view_as" else x.reshape(shape)
    return _view(Tensor.reshape, (x, tuple(other.shape)), {})


def _expand(func, args, kwargs):
    x = args[0]
    sizes = _shape_args(args, 1) if len(args) > 1 else tuple(kwargs.get("size", ()))
    nb = len(x._lv)
    v = align(x, x._lv, len(sizes))
    return wrap(v.expand(*(tuple(v.shape[:nb]) + tuple(sizes))), x._lv)


def _expand_as(func, args, kwargs):
    x, other = args[0], args[1]
    levels = levels_of(x, other)
    v = align(x, levels, logical_dim(other), expand=True)
    return wrap(v.expand(*(_batch_sizes(levels) + tuple(other.shape))), levels)


def _permute(func, args, kwargs):
    x = args[0]
    dims = _shape_args(args, 1) if len(args) > 1 else tuple(kwargs.get("dims", ()))
    nb = len(x._lv)
    nd = x._v.dim() - nb
    return wrap(x._v.permute(*range(nb), *(_pdim(d, nd, nb) for d in dims)), x._lv)


def _repeat(func, args, kwargs):
    x = args[0]
    sizes = _shape_args(args, 1) if len(args) > 1 else tuple(kwargs.get("repeats", ()))
    nb = len(x._lv)
    if overrides.original(func) is _orig("Tensor", "repeat") or len(sizes) >= x.dim():
        v = align(x, x._lv, len(sizes))
        return wrap(v.repeat(*((1,) * nb + tuple(sizes))), x._lv)
    sizes = (1,) * (x.dim() - len(sizes)) + tuple(sizes)  # tile
    return wrap(x._v.repeat(*((1,) * nb + sizes)), x._lv)


def _t(func, args, kwargs):
    x = args[0]
    if x.dim() < 2:
        return x
    return wrap(x._v.transpose(-2, -1), x._lv)


def _flat_roll(func, args, kwargs):
    x = args[0]
    if _arg(args, kwargs, 2, "dims", None) is None:
        nb = len(x._lv)
        v = x._v.reshape(tuple(x._v.shape[:nb]) + (-1,))
        out = v.roll(_arg(args, kwargs, 1, "shifts"), -1).reshape(tuple(x._v.shape))
        return wrap(out, x._lv)
    return _dimop((2, "dims", _MISSING))(func, args, kwargs)


def _trace(func, args, kwargs):
    x = args[0]
    return wrap(x._v.diagonal(0, -2, -1).sum(-1), x._lv)


def _cat(func, args, kwargs, stack=False):
    tensors = list(_arg(args, kwargs, 0, "tensors"))
    d = _arg(args, kwargs, 1, "dim", 0)
    levels = levels_of(*tensors)
    rank = max(logical_dim(t) for t in tensors)
    phys = [
        align(t, levels, expand=True) if logical_dim(t) == rank or stack else align(t, levels)
        for t in tensors
    ]
    nd = rank + (1 if stack else 0)
    return wrap(func(phys, _pdim(d, nd, len(levels))), levels)


def _stack(func, args, kwargs):
    return _cat(func, args, kwargs, stack=True)


# torch's operator names in its "dynamic shape" error (unique is aten::_unique2 there)
_ATEN_DYNAMIC = {
    "nonzero": "aten::nonzero",
    "argwhere": "aten::nonzero",
    "unique": "aten::_unique2",
    "unique_consecutive": "aten::unique_consecutive",
}


def _dynamic(func, args, kwargs):
    name = getattr(func, "__name__", "")
    if name == "nonzero" and kwargs.get("as_tuple"):
        raise RuntimeError(
            "Batching rule not implemented for aten::nonzero_numpy. We could not generate a "
            "fallback."
        )
    raise RuntimeError(
        "vmap: We do not support batching operators that can output dynamic shape. Attempted to "
        f"vmap over {_ATEN_DYNAMIC.get(name, op_name(func))}. Please file an issue at "
        "https://github.com/pytorch/pytorch/issues if you need this feature."
    )


def _masked_select(func, args, kwargs):
    x, mask = _bind_masked_select(*args, **kwargs)
    if _is_b(mask):
        raise RuntimeError(
            "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot "
            "support this because for each batch this would return a differently shaped Tensor. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
            "feature."
        )
    # an unbatched mask selects the same positions of every example
    levels = x._lv
    sizes = tuple(_size_of(level) for level in levels)
    shape = ember.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    v = align(x, levels, rank=len(shape), expand=True).expand(sizes + shape)
    v = v.reshape(sizes + (-1,))
    return wrap(v[..., mask.expand(shape).reshape(-1)], levels)


def _bind_masked_select(input, mask):
    return input, mask


# -- indexing


def _index_parts(index):
    if not isinstance(index, tuple):
        index = (index,)
    return index


def _getitem(func, args, kwargs):
    v, idx, levels, move = _index_plan(args[0], args[1])
    out = v[idx]
    if move:
        out = out.movedim(*move)
    return wrap(out, levels)


def _index_plan(x, index):
    """(physical tensor, physical index, levels, movedim or None) for x[index] on logical x."""
    from .._ops.creation import arange

    parts = _index_parts(index)
    tensors = [p for p in parts if _is_t(p)]
    levels = levels_of(x, *tensors)
    nb = len(levels)
    if any(_is_t(p) and p.dtype == ember.bool for p in tensors):
        if any(_is_b(p) for p in tensors):
            raise RuntimeError(
                "vmap: We do not support batching operators that can support dynamic shape. "
                "Attempting to batch over indexing with a boolean mask."
            )
        new = []
        for p in parts:
            if _is_t(p) and p.dtype == ember.bool:
                new.extend(p.nonzero().unbind(1))
            else:
                new.append(p)
        parts = tuple(new)
        tensors = [p for p in parts if _is_t(p)]
    v = align(x, levels, expand=True)
    if not any(_is_b(p) for p in tensors):
        return v, (slice(None),) * nb + parts, levels, None
    # Batched index tensors: index the batch dimensions with aranges too, so all advanced
    # indices broadcast together (the batch dimensions come first in the result).
    adv = [i for i, p in enumerate(parts) if _is_t(p) or isinstance(p, int)]
    rank = max(logical_dim(p) for p in tensors)
    batch_idx = []
    for k, lv in enumerate(levels):
        shape = [1] * (nb + rank)
        shape[k] = _size_of(lv)
        batch_idx.append(arange(_size_of(lv)).reshape(shape))
    new = tuple(align(p, levels, rank) if _is_t(p) else p for p in parts)
    move = None
    # torch puts adjacent advanced indices where they stand; the aranges made them lead.
    contiguous = adv == list(range(adv[0], adv[-1] + 1))
    before = sum(1 for p in parts[: adv[0]] if isinstance(p, slice) or p is Ellipsis)
    if contiguous and before:
        if any(p is Ellipsis for p in parts[: adv[0]]):
            ell = logical_dim(x) - sum(1 for p in parts if p is not None and p is not Ellipsis)
            before = before - 1 + ell
        move = (tuple(range(nb, nb + rank)), tuple(range(nb + before, nb + before + rank)))
    return v, tuple(batch_idx) + new, levels, move


def _setitem(func, args, kwargs):
    x, index, value = args[0], args[1], args[2]
    parts = _index_parts(index)
    levels = levels_of(x, value, *[p for p in parts if _is_t(p)])
    if not _is_b(x) or x._lv != levels:
        return _inplace(func, args, kwargs)
    v, idx, levels, move = _index_plan(x, index)
    if _is_t(value):
        target = v[idx]
        if move:
            target = target.movedim(*move)
        value = align(value, levels, target.dim() - len(levels)).expand_as(target)
        if move:
            value = value.movedim(move[1], move[0])
    v[idx] = value
    return None


def _gather_like(index_pos, dim_pos=1, src_pos=None, inplace=False):
    def rule(func, args, kwargs):
        tensors = [a for a in (*args, *kwargs.values()) if _is_t(a)]
        levels = levels_of(*tensors)
        x = args[0]
        if inplace and (not _is_b(x) or x._lv != levels):
            return _inplace(func, args, kwargs)
        nd = logical_dim(x)
        nb = len(levels)
        new = []
        for a in args:
            if _is_t(a) and not (a is x and inplace):
                new.append(align(a, levels, expand=True) if a.dim() else align(a, levels))
            else:
                new.append(a._v if a is x and inplace else a)
        d = _arg(args, kwargs, dim_pos, "dim")
        new, kwargs = _with(tuple(new), kwargs, dim_pos, "dim", _pdim(d, nd, nb))
        kwargs = {k: (align(v, levels, expand=True) if _is_t(v) else v) for k, v in kwargs.items()}
        out = func(*new, **kwargs)
        return x if inplace else wrap(out, levels)

    return rule


def _index_select(func, args, kwargs):
    x, d, index = args[0], _arg(args, kwargs, 1, "dim"), _arg(args, kwargs, 2, "index")
    if not _is_b(index):
        return _dimop((1, "dim", _MISSING))(func, args, kwargs)
    levels = levels_of(x, index)
    nb = len(levels)
    nd = logical_dim(x)
    pd = _pdim(d, nd, nb)
    v = align(x, levels, expand=True)
    idx = align(index, levels, expand=True)  # [B..., k]
    shape = [1] * (nb + nd)
    shape[:nb] = idx.shape[:nb]
    shape[pd] = idx.shape[-1]
    idx = idx.reshape(shape)
    want = list(v.shape)
    want[pd] = idx.shape[pd]
    return wrap(v.gather(pd, idx.expand(*want)), levels)


def _take_along_dim(func, args, kwargs):
    x, idx = args[0], _arg(args, kwargs, 1, "indices")
    d = _arg(args, kwargs, 2, "dim", None)
    levels = levels_of(x, idx)
    nb = len(levels)
    if d is None:
        v = align(x, levels, expand=True)
        v = v.reshape(tuple(v.shape[:nb]) + (-1,))
        i = align(idx, levels, expand=True)
        i = i.reshape(tuple(i.shape[:nb]) + (-1,))
        return wrap(func(v, i, -1), levels)
    rank = max(logical_dim(x), logical_dim(idx))
    v = align(x, levels, rank, expand=True)
    i = align(idx, levels, rank, expand=True)
    return wrap(func(v, i, _pdim(d, rank, nb)), levels)


# -- linear algebra


def _matmul_phys(a, b, levels):
    """matmul of logical a and b (torch's rules for 1-D operands) on physical tensors."""
    na, nbd = logical_dim(a), logical_dim(b)
    if na == 0 or nbd == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are 0D")
    pa = align(a, levels, expand=False)
    pb = align(b, levels, expand=False)
    nb = len(levels)
    if na == 1:
        pa = pa.unsqueeze(-2)
    if nbd == 1:
        pb = pb.unsqueeze(-1)
    ra, rb = pa.dim() - nb, pb.dim() - nb
    r = max(ra, rb)
    if ra < r:
        pa = pa.reshape(tuple(pa.shape[:nb]) + (1,) * (r - ra) + tuple(pa.shape[nb:]))
    if rb < r:
        pb = pb.reshape(tuple(pb.shape[:nb]) + (1,) * (r - rb) + tuple(pb.shape[nb:]))
    out = _matmul_fast(pa, pb, nb) if (_is_b(a) != _is_b(b)) else pa.matmul(pb)
    if na == 1:
        out = out.squeeze(-2)
    if nbd == 1:
        out = out.squeeze(-1)
    return out


def _matmul_fast(pa, pb, nb):
    # A batched left operand against an unbatched right one is one big 2-D matmul.
    if pb.dim() == nb + 2 and all(s == 1 for s in pb.shape[:nb]):
        w = pb.reshape(tuple(pb.shape[nb:]))
        return pa.matmul(w)
    return pa.matmul(pb)


def _check_rank(func, x, ranks, what):
    if logical_dim(x) not in ranks:
        raise RuntimeError(f"{op_name(func)}: expected {what}; got {logical_dim(x)}-D tensor")


def _matmul(func, args, kwargs):
    a, b = args[0], _arg(args, kwargs, 1, "other")
    name = op_name(func)
    if name.endswith("__rmatmul__"):
        a, b = b, a
    if name.endswith((".mm", ".bmm", ".mv", ".dot", ".vdot", ".inner")):
        want = {"mm": ((2,), (2,)), "bmm": ((3,), (3,)), "mv": ((2,), (1,)), "dot": ((1,), (1,))}
        w = want.get(name.rsplit(".", 1)[1])
        if w:
            _check_rank(func, a, w[0], f"{w[0][0]}-D tensor")
            _check_rank(func, b, w[1], f"{w[1][0]}-D tensor")
    levels = levels_of(a, b)
    return wrap(_matmul_phys(a, b, levels), levels)


def _linear(func, args, kwargs):
    x, w = args[0], _arg(args, kwargs, 1, "weight")
    bias = _arg(args, kwargs, 2, "bias")
    if not _is_b(w) and not _is_b(bias):
        return wrap(_LINEAR(x._v, w, bias), x._lv)
    levels = levels_of(x, w, bias)
    if (
        _is_b(w)
        and first_order()
        and logical_dim(w) == 2
        and _shared(align(w, levels), len(levels))
    ):
        out = BatchedTensor(_linear_shared_weight(x, w, levels), levels)
    else:
        out = BatchedTensor(_matmul_phys(x, _Bt(w), levels), levels)
    if bias is not None:
        out = _pointwise(Tensor.__add__, (out, bias), {})
    return out


def _linear_shared_weight(x, w, levels):
    """linear with one weight expanded over the batch, first-order gradients only: one GEMM over
    the whole batch, each example's weight gradient by the zero-valued route (Note [Per-example
    conv weight gradients])."""
    nb = len(levels)
    sizes = _batch_sizes(levels)
    B = 1
    for s in sizes:
        B *= s
    pw = align(w, levels, expand=True)
    O, K = pw.shape[nb], pw.shape[nb + 1]
    w0 = pw[(0,) * nb].detach()
    px = align(x, levels, expand=True)
    lead = tuple(px.shape[nb:-1])
    xf = px.reshape(B, -1, K)  # [B, M, K]
    out = _LINEAR(xf, w0, None)  # [B, M, O]
    zero = _weight_grad_route().apply(pw.reshape(B, O, K), xf.detach().transpose(1, 2))
    out = out + zero.transpose(1, 2)
    return out.reshape(sizes + lead + (O,))


def _Bt(w):
    return BatchedTensor(w._v.transpose(-2, -1), w._lv) if _is_b(w) else w.transpose(-2, -1)


def _addmm(func, args, kwargs):
    inp, m1, m2 = args[0], args[1], args[2]
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    levels = levels_of(m1, m2)
    prod = BatchedTensor(_matmul_phys(m1, m2, levels), levels) if levels else m1.matmul(m2)
    if alpha != 1:
        prod = _pointwise(Tensor.__mul__, (prod, alpha), {})
    if beta == 0:
        return prod
    if beta != 1:
        inp = _pointwise(Tensor.__mul__, (inp, beta), {})
    return _pointwise(Tensor.__add__, (inp, prod), {})


def _outer(func, args, kwargs):
    a, b = args[0], args[1]
    ua = (
        _dimop((1, "dim", _MISSING), extra=1)(Tensor.unsqueeze, (a, -1), {})
        if _is_b(a)
        else a.unsqueeze(-1)
    )
    ub = (
        _dimop((1, "dim", _MISSING), extra=1)(Tensor.unsqueeze, (b, 0), {})
        if _is_b(b)
        else b.unsqueeze(0)
    )
    return _pointwise(Tensor.__mul__, (ua, ub), {})


def _einsum(func, args, kwargs):
    eq = args[0]
    ops = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    levels = levels_of(*ops)
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if not arrow:
        letters = [c for c in lhs if c.isalpha()]
        rhs = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1)
        )
    used = set(eq)
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    bl = "".join(free[: len(levels)])
    new_ins, phys = [], []
    for sub, op in zip(ins, ops):
        if _is_b(op):
            p = align(op, levels)
            keep = "".join(c for k, c in enumerate(bl) if levels[k] in op._lv)
            p = p.reshape(
                tuple(s for k, s in enumerate(p.shape[: len(levels)]) if levels[k] in op._lv)
                + tuple(p.shape[len(levels) :])
            )
            new_ins.append(keep + sub)
            phys.append(p)
        else:
            new_ins.append(sub)
            phys.append(op)
    return wrap(func(",".join(new_ins) + "->" + bl + rhs, *phys), levels)


# Shared with the convolution rule (Note [Per-example conv weight gradients] in
# _batch_rules_nn.py).


def _shared(pw, nb):
    """Whether the batched weight is one weight expanded (what grad inside vmap makes)."""
    return all(st == 0 for st in pw.stride()[:nb])


_ROUTE = []


def _weight_grad_route():
    """An autograd function whose value is zero (an expanded zero, no work) and whose backward
    gives the batched weight (B, O, CK) the gradient grad_output @ columns^T: each example's
    weight gradient without computing the product in the forward pass."""
    if not _ROUTE:
        from ..autograd.function import Function

        class PerExampleWeightGrad(Function):
            @staticmethod
            def forward(ctx, wf, cols):
                ctx.save_for_backward(cols)
                zero = ember.zeros((), dtype=wf.dtype)
                return zero.expand(wf.shape[0], wf.shape[1], cols.shape[2])

            @staticmethod
            def backward(ctx, grad):
                (cols,) = ctx.saved_tensors
                return grad.bmm(cols.transpose(1, 2)), None

        _ROUTE.append(PerExampleWeightGrad)
    return _ROUTE[0]


# -- factories


def _new_factory(func, args, kwargs):
    return func(args[0]._v, *args[1:], **kwargs)


def _like(func, args, kwargs):
    x = args[0]
    return wrap(func(x._v, *args[1:], **kwargs), x._lv)


def _orig(owner, name):
    mod = _OWNERS[owner]
    obj = vars(mod).get(name) if owner == "Tensor" else getattr(mod, name, None)
    return overrides.original(obj)


_LINEAR = _orig("F", "linear")


# -- the table

register(POINTWISE, _inplace_kw(_pointwise))
register(
    [n + "_" for n in POINTWISE if not n.startswith("_")] + INPLACE_DUNDERS,
    _inplace,
    ("Tensor", "F", "ember"),
)
register(
    "copy_ fill_ zero_ masked_fill_ clamp_ clip_ lerp_ addcmul_ addcdiv_", _inplace, ("Tensor",)
)
register("sum nansum mean nanmean prod amax amin all any count_nonzero logsumexp", _reduction())
register("argmax argmin", _reduction())
register("max min median nanmedian", _reduction(values_only=True))
register("std var std_mean var_mean", _reduction())
register("norm", _reduction(2, "dim"))
register("vector_norm", _reduction(2, "dim"), ("linalg",))
register("softmax log_softmax softmin", _softmax_like)
register("cumsum cumprod cummax cummin logcumsumexp unbind", _dimop((1, "dim", 0)))
register("glu", _dimop((1, "dim", -1)))  # F.glu halves the last dimension by default
register("sort argsort", _dimop((1, "dim", -1)))
register("topk kthvalue", _dimop((2, "dim", -1)))
register("flip", _dimop((1, "dims", _MISSING)))
register("fliplr", _dimop((1, "dims", _MISSING)))
register("roll", _flat_roll)
register("unsqueeze", _dimop((1, "dim", _MISSING), extra=1))
register("squeeze", _squeeze)
register("transpose swapaxes swapdims", _dimop((1, "dim0", _MISSING), (2, "dim1", _MISSING)))
register("movedim moveaxis", _dimop((1, "source", _MISSING), (2, "destination", _MISSING)))
register("narrow select", _dimop((1, "dim", _MISSING)))
register("unfold", _dimop((1, "dimension", _MISSING)), ("Tensor",))  # its window dim goes last
register("chunk split tensor_split", _dimop((2, "dim", 0)))
register("flatten", _dimop((1, "start_dim", 0), (2, "end_dim", -1)))
register("unflatten", _dimop((1, "dim", _MISSING)))
register("diagonal", _dimop((2, "dim1", 0), (3, "dim2", 1)))
register("diff", _dimop((2, "dim", -1)))
register("cross", _dimop((2, "dim", -1)))
register("normalize", _dimop((2, "dim", 1)), ("F",))
register("repeat_interleave", _dimop((2, "dim", _MISSING)))
register("view reshape", _view, ("Tensor",))
register("reshape", _reshape_fn, ("ember",))
register("view_as reshape_as", _view_as, ("Tensor",))
register("expand broadcast_to", _expand)
register("expand_as", _expand_as)
register("permute", _permute)
register("repeat tile", _repeat)
register("t", _t)
register("trace", _trace)
register("cat concat concatenate", _cat, ("ember",))
register("stack", _stack, ("ember",))
register("nonzero argwhere unique unique_consecutive", _dynamic)
register("masked_select", _masked_select)
register("__getitem__", _getitem, ("Tensor",))
register("__setitem__", _setitem, ("Tensor",))
register("gather", _gather_like(2))
register("scatter scatter_add scatter_reduce", _gather_like(2))
register("scatter_ scatter_add_ scatter_reduce_", _gather_like(2, inplace=True), ("Tensor",))
register("index_select", _index_select)
register("take_along_dim", _take_along_dim)
register("matmul mm bmm mv dot inner __matmul__ __rmatmul__", _matmul)
register("linear", _linear, ("F", "ember"))
register("addmm", _addmm)
register("outer ger", _outer)
register("einsum", _einsum, ("ember",))
register("one_hot", _like, ("F",))
register("zeros_like ones_like empty_like full_like", _like, ("ember",))
register("new_zeros new_ones new_empty new_full new_tensor", _new_factory, ("Tensor",))
