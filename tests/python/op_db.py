"""OpInfo-style table of ember's core tensor ops, consumed by test_ops.py.

Each ``OpInfo`` says how to call an op on a module (``ember``, or ``torch`` for comparisons),
how numpy computes the same thing, which dtypes the op supports (exactly those PyTorch
supports on CPU), how to generate inputs, which result dtype to expect, and which calls must
fail.  Nothing here imports ember or torch: samples describe tensors as ``T`` (numpy values +
a dtype name) so the same sample can be realised on either library and fed to numpy.

Conventions
-----------
* ``op(m, *args, **kwargs)`` calls the op on module ``m``.
* ``ref(*args, **kwargs)`` gets numpy arrays (floating tensors as float64, integer and bool
  tensors in their own dtype, so integer wrap-around matches) and the same kwargs, with
  ``Dt`` dtype arguments turned into numpy dtypes.  It returns an array or a tuple of arrays.
* ``out_dtype(dtype, sample)`` gives the expected result dtype name (or one per output);
  a single name applies to every output.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# ----------------------------------------------------------------------------- dtypes

BOOL = ("bool",)
INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
ALL = BOOL + INTS + FLOATS
INTS_FLOATS = INTS + FLOATS
BOOL_INTS = BOOL + INTS

# numpy has no bfloat16: bfloat16 values are carried as float32 (exactly representable ones)
NP_CARRIER = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "bfloat16": np.float32, "float32": np.float32,
    "float64": np.float64,
}

FLOAT_MAX = {
    "float16": 65504.0, "bfloat16": 3.3895313892515355e38,
    "float32": float(np.finfo(np.float32).max), "float64": float(np.finfo(np.float64).max),
}

# (rtol, atol) by *result* dtype; ops widen them through OpInfo.tol
DEFAULT_TOL = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def category(dtype: str) -> int:
    """bool < integer < floating: the order in which torch's type promotion ranks kinds."""
    return 0 if dtype == "bool" else 1 if dtype in INTS else 2


# ----------------------------------------------------------------------------- sample pieces


def quantize(values, dtype: str) -> np.ndarray:
    """Round values onto `dtype`'s grid so that building the tensor is exact."""
    values = np.asarray(values)
    if dtype == "bfloat16":  # keep the top 16 bits of float32 (truncation is exact to convert)
        bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        return bits.view(np.float32)
    return values.astype(NP_CARRIER[dtype])


@dataclass(frozen=True, eq=False)
class T:
    """A tensor in a sample: its values (exact in `dtype`) and how to lay it out in memory."""

    values: np.ndarray
    dtype: str
    layout: str = "contiguous"  # see test_ops.LAYOUTS

    @property
    def shape(self):
        return self.values.shape

    @property
    def ndim(self):
        return self.values.ndim

    def __repr__(self):
        extra = "" if self.layout == "contiguous" else f",{self.layout}"
        return f"T{list(self.shape)}:{self.dtype}{extra}"


@dataclass(frozen=True)
class Dt:
    """A dtype argument (e.g. sum(dtype=...)), resolved on whichever library runs the op."""

    name: str

    def __repr__(self):
        return self.name


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    grad_ok: bool = True  # False where gradcheck is meaningless (nan/inf inputs, ties, ...)

    def __repr__(self):
        kw = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"Sample({', '.join(map(repr, self.args))}{'; ' + kw if kw else ''})"


@dataclass
class ErrorCase:
    desc: str
    exc: type
    args: tuple
    kwargs: dict = field(default_factory=dict)


def tensor(values, dtype: str) -> T:
    return T(quantize(values, dtype), dtype)


def make(shape, dtype, rng, low=-3.0, high=3.0, *, nonzero=False, discrete=False) -> T:
    """Random tensor inside [low, high] (clipped to the dtype's range).

    discrete: floats on a 0.5 grid so that equal elements and zeros occur (comparisons,
    logical ops, ties); nonzero: no zeros (divisors).
    """
    if dtype == "bool":
        v = np.ones(shape, bool) if nonzero else rng.random(shape) < 0.5
    elif dtype in INTS:
        info = np.iinfo(dtype)
        lo, hi = max(math.ceil(low), info.min), min(math.floor(high), info.max)
        v = np.asarray(rng.integers(lo, hi + 1, size=shape)).astype(dtype)
        if nonzero:
            v[v == 0] = 1 if hi >= 1 else -1
    else:
        if discrete:
            v = np.asarray(rng.integers(math.ceil(2 * low), math.floor(2 * high) + 1, size=shape)) / 2.0
        else:
            v = np.asarray(rng.uniform(low, high, size=shape))
        if nonzero:
            v[np.abs(v) < 0.25] = 0.5
    return tensor(v, dtype)


def scalar_for(dtype, low=-3.0, high=3.0, *, nonzero=False):
    """A Python scalar of `dtype`'s kind (bool / int / float) inside [low, high]."""
    if dtype == "bool":
        return True
    if dtype in INTS:
        lo, hi = math.ceil(low), math.floor(high)
        if dtype == "uint8":
            lo = max(lo, 0)
        v = min(max(2, lo), hi)
        return 1 if nonzero and v == 0 else v
    return 1.5 if low <= 1.5 <= high else (low + high) / 2


def rng_for(*parts) -> np.random.Generator:
    """Deterministic per (op, dtype) generator: samples don't depend on test order."""
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


# ----------------------------------------------------------------------------- result dtypes


def same(dtype, sample):
    return dtype


def to_bool(dtype, sample):
    return "bool"


def to_int64(dtype, sample):
    return "int64"


def _python_scalars(sample, kw_names=()):
    scalars = [a for a in sample.args if isinstance(a, (bool, int, float))]
    return scalars + [sample.kwargs[k] for k in kw_names if isinstance(sample.kwargs.get(k), (bool, int, float))]


def promote_with_scalars(dtype, scalars):
    """torch's rule for a tensor with Python scalars: a scalar only matters if it is of a
    higher kind (bool < int < float); then the result is the default dtype of that kind."""
    top = max((0 if isinstance(s, bool) else 1 if isinstance(s, int) else 2 for s in scalars), default=-1)
    if top <= category(dtype):
        return dtype
    return "float32" if top == 2 else "int64"


def promoted(kw_names=()):
    """Elementwise ops: the (common) tensor dtype promoted with the Python scalar operands."""
    return lambda dtype, sample: promote_with_scalars(dtype, _python_scalars(sample, kw_names))


def as_float(dtype):
    return dtype if is_float(dtype) else "float32"


def floating(rule=same):
    """Ops that compute in floating point: integer and bool results become float32."""
    return lambda dtype, sample: as_float(rule(dtype, sample))


def accumulate(dtype, sample):
    """sum/prod/cumsum/cumprod: an explicit dtype= wins, integers and bool widen to int64."""
    if isinstance(sample.kwargs.get("dtype"), Dt):
        return sample.kwargs["dtype"].name
    return dtype if is_float(dtype) else "int64"


def with_indices_if_dim(dtype, sample):
    """max/min/median: a value for a full reduction, (values, int64 indices) along a dim."""
    return (dtype, "int64") if "dim" in sample.kwargs else dtype


def values_and_indices(dtype, sample):
    return (dtype, "int64")


# ----------------------------------------------------------------------------- OpInfo


@dataclass
class OpInfo:
    name: str
    op: Callable[..., Any]
    ref: Callable[..., Any]
    dtypes: tuple
    sample_inputs: Callable[..., Any]  # (op, dtype, rng) -> iterable of Sample
    differentiable: bool = False
    domain: tuple = (-3.0, 3.0)  # where inputs are drawn (first tensor; generators may add more)
    out_dtype: Callable = same
    tol: dict = field(default_factory=dict)  # result dtype -> (rtol, atol), over DEFAULT_TOL
    error_inputs: Callable[[], list] = lambda: []
    # maps outputs before comparison where several answers are right (tie-breaking indices,
    # unsorted results): (outputs as numpy arrays, ref args, kwargs) -> outputs
    canonicalize: Callable | None = None
    method: str | None = None  # the equivalent Tensor method, if torch has one
    ref_needs_dtype: bool = False  # ref also gets _dtype=<input dtype name>
    # (layout, sample) -> reason, for cases where the test is right but torch itself is wrong;
    # they are skipped only when the suite runs against torch
    torch_bug: Callable | None = None

    def samples(self, dtype):
        return list(self.sample_inputs(self, dtype, rng_for(self.name, dtype)))

    def tolerance(self, result_dtype):
        return self.tol.get(result_dtype, DEFAULT_TOL.get(result_dtype, (0.0, 0.0)))

    def expected_dtypes(self, dtype, sample, n_outputs):
        rule = self.out_dtype(dtype, sample)
        return (rule,) * n_outputs if isinstance(rule, str) else tuple(rule)

    def __repr__(self):
        return self.name


def func(name):
    """`m.<name>(...)`: the module-level function on ember or torch."""
    f = lambda m, *a, **k: getattr(m, name)(*a, **k)  # noqa: E731
    f.__name__ = name
    return f


def method(name):
    """`x.<name>(...)`: a Tensor method (for ops torch has only as methods, e.g. repeat)."""
    f = lambda m, x, *a, **k: getattr(x, name)(*a, **k)  # noqa: E731
    f.__name__ = "Tensor." + name
    return f


def _variants(v, dtype):
    return list(v(dtype)) if callable(v) else list(v)


# ----------------------------------------------------------------------------- generators

UNARY_SHAPES = ((3, 4), (5,), (), (0, 3))
BINARY_SHAPES = (((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (3, 4)), ((0, 4), (4,)), ((), ()))


def unary_samples(op, dtype, rng, *, nonzero=False, kwargs_variants=({},)):
    """Every shape with the first kwargs variant, the other variants on a 2-D input."""
    lo, hi = op.domain
    for i, kw in enumerate(_variants(kwargs_variants, dtype)):
        for shape in UNARY_SHAPES if i == 0 else ((3, 4),):
            yield Sample((make(shape, dtype, rng, lo, hi, nonzero=nonzero),), dict(kw))


def special_values_samples(op, dtype, rng, *, kwargs_variants=({},)):
    """unary_samples plus, for floating dtypes, nan/+inf/-inf in the input."""
    variants = _variants(kwargs_variants, dtype)
    yield from unary_samples(op, dtype, rng, kwargs_variants=variants)
    if is_float(dtype):
        v = make((3, 4), "float64", rng).values
        v[0, 0], v[1, 1], v[2, 2], v[2, 3] = np.nan, np.inf, -np.inf, 0.0
        for kw in variants:
            yield Sample((tensor(v, dtype),), dict(kw), grad_ok=False)


def binary_samples(op, dtype, rng, *, lhs_domain=None, rhs_domain=None, rhs_nonzero=False,
                   discrete=False, scalar=True, float_scalar=False, kwargs_variants=({},)):
    """Same shapes, broadcasting pairs, 0-d and zero-size operands, and a Python-scalar rhs.

    float_scalar: also an integer/bool tensor with a float scalar (promotes to float32).
    """
    lo, hi = lhs_domain or op.domain
    rlo, rhi = rhs_domain or op.domain
    for i, kw in enumerate(_variants(kwargs_variants, dtype)):
        for a, b in BINARY_SHAPES if i == 0 else BINARY_SHAPES[:2]:
            yield Sample((make(a, dtype, rng, lo, hi, discrete=discrete),
                          make(b, dtype, rng, rlo, rhi, nonzero=rhs_nonzero, discrete=discrete)), dict(kw))
        if scalar:
            s = scalar_for(dtype, rlo, rhi, nonzero=rhs_nonzero)
            yield Sample((make((3, 4), dtype, rng, lo, hi, discrete=discrete), s), dict(kw))
        if float_scalar and not is_float(dtype) and i == 0:
            yield Sample((make((3, 4), dtype, rng, lo, hi), 2.5), dict(kw))


def reduction_samples(op, dtype, rng, *, full=True, dim_required=False, tuple_dims=True, keepdim=True,
                      empty_ok=False, dtype_kw=None, discrete=False, extra=()):
    """Full reductions, int / negative / tuple dims, keepdim, 0-d and zero-size inputs.

    empty_ok: the op is defined when reducing a zero-size dim (sum, prod, all, ...).
    """
    lo, hi = op.domain

    def x(shape):
        return make(shape, dtype, rng, lo, hi, discrete=discrete)

    keep = {"keepdim": True} if keepdim else {}
    if full and not dim_required:
        yield Sample((x((3, 4)),))
        yield Sample((x(()),))
    yield Sample((x((3, 4)),), {"dim": 1})
    yield Sample((x((2, 3, 4)),), {"dim": -1, **keep})
    yield Sample((x(()),), {"dim": 0})
    yield Sample((x((0, 3)),), {"dim": 1})
    if tuple_dims:
        yield Sample((x((2, 3, 4)),), {"dim": (0, 2)})
        yield Sample((x((2, 3, 4)),), {"dim": (-1, 0), **keep})
    if empty_ok:
        yield Sample((x((0, 3)),), {"dim": 0})
        if full and not dim_required:
            yield Sample((x((0, 3)),))
    if dtype_kw:
        yield Sample((x((3, 4)),), {"dim": 0, "dtype": Dt(dtype_kw)})
    for kw in _variants(extra, dtype):
        yield Sample((x((2, 3, 4)),), dict(kw))


# ----------------------------------------------------------------------------- numpy helpers


def _as_float64(fn):
    """Reference computed in float64 whatever the input kind (int/bool -> float ops)."""

    def ref(*args, **kwargs):
        return fn(*[a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args], **kwargs)

    return ref


_np_erf = np.vectorize(math.erf, otypes=[np.float64])
_np_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _np_erfinv(y):
    """Inverse error function: Winitzki's approximation refined by Newton steps."""
    y = np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        a = 0.147
        ln = np.log1p(-y * y)
        t = 2 / (np.pi * a) + ln / 2
        x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
        for _ in range(4):
            x = np.where(np.isfinite(x), x - (_np_erf(np.where(np.isfinite(x), x, 0)) - y)
                         / (2 / np.sqrt(np.pi) * np.exp(-x * x)), x)
    return np.where(np.abs(y) == 1, np.sign(y) * np.inf, x)


def _logcumsumexp_ref(a, dim):
    return a if a.ndim == 0 else np.logaddexp.accumulate(a, axis=dim)


def _axis(a, dim):
    """torch accepts dim 0/-1 on a 0-d tensor; numpy needs axis=None there."""
    if a.ndim == 0 or dim is None:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _reduce(fn):
    """Adapt numpy's (axis, keepdims) reduction to torch's (dim, keepdim)."""

    def ref(a, dim=None, keepdim=False, **kw):
        out = fn(a, axis=_axis(a, dim), keepdims=keepdim and a.ndim > 0, **kw)
        return np.asarray(out)

    return ref


def _sort_key(a, descending):
    return -a.astype(np.float64) if descending else a


def _argsort(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return np.zeros((), np.int64)
    return np.argsort(_sort_key(a, descending), axis=dim, kind="stable")


def _sort_ref(a, dim=-1, descending=False, stable=False):
    idx = _argsort(a, dim, descending)
    return (a.copy(), idx) if a.ndim == 0 else (np.take_along_axis(a, idx, dim), idx)


def _reduced_pick(a, dim, keepdim, position):
    """(value, index) of the element at sorted `position` along dim (kthvalue/median)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = np.take(np.argsort(a, axis=dim, kind="stable"), [position(a.shape[dim])], axis=dim)
    vals = np.take_along_axis(a, idx, dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return vals, idx


def _topk_ref(a, k, dim, largest):
    idx = _argsort(a, dim, descending=largest)
    if a.ndim == 0:
        return a.copy(), idx
    idx = np.take(idx, np.arange(k), axis=dim)
    return np.take_along_axis(a, idx, dim), idx


def _minmax_ref(np_val, np_arg):
    def ref(a, dim=None, keepdim=False):
        if dim is None:
            return np.asarray(np_val(a))
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        return np_val(a, axis=dim, keepdims=keepdim), np_arg(a, axis=dim, keepdims=keepdim)

    return ref


def _arg_ref(np_arg):
    def ref(a, dim=None, keepdim=False):
        if dim is None or a.ndim == 0:
            return np.asarray(np_arg(a))
        return np_arg(a, axis=dim, keepdims=keepdim)

    return ref


def _cummax_ref(a, dim):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(a, dim, -1)
    best = np.maximum.accumulate(moved, axis=-1)
    # the running max only changes where an element equals it: the index is the latest such spot
    hits = np.where(moved == best, np.arange(moved.shape[-1]), 0)
    idx = np.maximum.accumulate(hits, axis=-1) if moved.size else hits
    return np.moveaxis(best, -1, dim), np.moveaxis(idx, -1, dim)


def _mode_ref(a, dim=-1, keepdim=False):
    def row_mode(row):
        vals, counts = np.unique(row, return_counts=True)
        best = vals[np.argmax(counts)]  # most frequent, smallest on ties
        return np.asarray(best), np.asarray(np.nonzero(row == best)[0][-1])

    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    dim = dim % a.ndim
    if a.size == 0:
        shape = a.shape[:dim] + ((1,) if keepdim else ()) + a.shape[dim + 1:]
        return np.zeros(shape, a.dtype), np.zeros(shape, np.int64)
    moved = np.moveaxis(a, dim, -1)
    rows = [row_mode(r) for r in moved.reshape(-1, moved.shape[-1])]
    vals = np.array([r[0] for r in rows], a.dtype).reshape(moved.shape[:-1])
    idx = np.array([r[1] for r in rows], np.int64).reshape(moved.shape[:-1])
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _gather(x, idx, dim, reduced, keepdim=False):
    """x's elements picked by idx along dim: turns an index output into the values it
    points at, so that any index of a tied element is accepted."""
    x, idx = np.asarray(x), np.asarray(idx).astype(np.int64)
    if x.ndim == 0:
        return np.where(idx == 0, x, np.nan)
    if dim is None:
        return x.reshape(-1)[idx]
    if reduced and not keepdim:
        return np.take_along_axis(x, np.expand_dims(idx, dim), dim).squeeze(dim)
    return np.take_along_axis(x, idx, dim)


def gather_indices(*, reduced, default_dim=-1, index_only=False):
    """canonicalize for ops returning indices into args[0] along kwargs['dim']."""

    def canon(outs, args, kwargs):
        dim = kwargs.get("dim", default_dim)
        if kwargs.get("stable") or (len(outs) < 2 and not index_only):
            return outs  # stable sorts define the exact indices; full max/min/median give no indices
        g = _gather(args[0], outs[-1], dim, reduced, kwargs.get("keepdim", False))
        return (g,) if index_only else (outs[0], g)

    return canon


def _topk_canon(outs, args, kwargs):
    values, gathered = gather_indices(reduced=False)(outs, args, kwargs)
    if kwargs.get("sorted", True):
        return values, gathered
    dim = kwargs.get("dim", -1)
    return np.sort(values, axis=dim), np.sort(gathered, axis=dim)


def _unique_ref(a, sorted=True, return_inverse=False, return_counts=False):
    vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True)
    out = [vals]
    if return_inverse:
        out.append(np.asarray(inv).reshape(a.shape))
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_canon(outs, args, kwargs):
    """Sorted uniques; the inverse as the values it reconstructs; counts in sorted order."""
    vals = np.asarray(outs[0])
    order = np.argsort(vals, kind="stable")
    canon = [vals[order]]
    rest = list(outs[1:])
    if kwargs.get("return_inverse"):
        canon.append(vals[np.asarray(rest.pop(0)).astype(np.int64)])
    if kwargs.get("return_counts"):
        canon.append(np.asarray(rest.pop(0))[order])
    return tuple(canon)


def _histc_ref(a, bins=100, min=0, max=0):
    lo, hi = (float(a.min()), float(a.max())) if min == max and a.size else (min, max)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(a, bins=bins, range=(lo, hi))[0]


def _norm_ref(a, p="fro", dim=None, keepdim=False):
    axis = _axis(a, dim)
    absval = np.abs(a)
    if p == "fro" or p == 2:
        return np.sqrt(np.sum(absval**2, axis=axis, keepdims=keepdim))
    if p == math.inf:
        return np.max(absval, axis=axis, keepdims=keepdim)
    return np.sum(absval**p, axis=axis, keepdims=keepdim) ** (1 / p)


def _logsumexp_ref(a, dim, keepdim=False):
    axis = _axis(a, dim)
    if a.size == 0:
        return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdim))
    m = np.max(a, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    return out if keepdim or a.ndim == 0 else np.squeeze(out, axis)


def _var_ref(np_fn):
    def ref(a, dim=None, *, correction=None, unbiased=None, keepdim=False):
        ddof = correction if correction is not None else (0 if unbiased is False else 1)
        return np_fn(a, axis=_axis(a, dim), ddof=ddof, keepdims=keepdim and a.ndim > 0)

    return ref


def _var_mean_ref(a, dim=None, *, correction=None, unbiased=None, keepdim=False):
    var = _var_ref(np.var)(a, dim, correction=correction, unbiased=unbiased, keepdim=keepdim)
    return var, _reduce(np.mean)(a, dim, keepdim)


def _split_ref(a, split_size_or_sections, dim=0):
    n = a.shape[dim]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        sizes = [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = list(split_size_or_sections)
    return tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim))


def _chunk_ref(a, chunks, dim=0):
    # torch.chunk uses chunks of ceil(n / chunks) and may return fewer than `chunks` pieces
    return _split_ref(a, -(-a.shape[dim] // chunks), dim)


def _broadcast_to_ref(a, shape):
    # -1 keeps the input's size in that (trailing-aligned) dim
    lead = len(shape) - a.ndim
    return np.broadcast_to(a, tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))).copy()


def _nan_to_num_ref(a, nan=0.0, posinf=None, neginf=None, *, _dtype):
    if not is_float(_dtype):
        return a.copy()
    big = FLOAT_MAX[_dtype]
    return np.nan_to_num(a, nan=nan, posinf=big if posinf is None else posinf,
                         neginf=-big if neginf is None else neginf)


def _clamp_ref(a, min=None, max=None):
    out = a
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)  # min > max gives max, as in torch
    return out


def _div_ref(a, b, rounding_mode=None):
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    q = np.true_divide(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return np.trunc(q) if rounding_mode == "trunc" else q


def _addmm_ref(inp, a, b, *, beta=1, alpha=1):
    prod = alpha * np.matmul(a, b)
    return prod if beta == 0 else beta * inp + prod  # beta=0 ignores input, nan included


# ----------------------------------------------------------------------------- special generators


def clamp_samples(op, dtype, rng):
    lo, hi = (-1.5, 1.5) if is_float(dtype) else (-1, 2)
    if dtype == "uint8":
        lo, hi = 1, 2
    x = lambda shape: make(shape, dtype, rng, -3, 3)  # noqa: E731
    for shape in UNARY_SHAPES:
        yield Sample((x(shape),), {"min": lo, "max": hi})
    yield Sample((x((3, 4)),), {"min": lo})
    yield Sample((x((3, 4)),), {"max": hi})
    # tensor bounds, broadcast against the input
    yield Sample((x((3, 4)),), {"min": make((4,), dtype, rng, -2, lo), "max": make((3, 1), dtype, rng, hi, 3)})
    yield Sample((x((3, 4)),), {"max": make((3, 4), dtype, rng, -3, 3)})
    if not is_float(dtype):  # float bounds promote an integer input to float32
        yield Sample((x((3, 4)),), {"min": 0.5})


def pow_samples(op, dtype, rng):
    # floats: positive bases keep results real; ints: non-negative exponents are required
    if is_float(dtype):
        return binary_samples(op, dtype, rng, lhs_domain=(0.5, 2.5), rhs_domain=(-2, 2), float_scalar=True)
    return binary_samples(op, dtype, rng, lhs_domain=(-3, 3), rhs_domain=(0, 3), float_scalar=True)


def pow_scalar_exponent_samples(op, dtype, rng):
    if is_float(dtype):
        exps, lo, hi = (2, 3, 0, 0.5, -1.5), 0.5, 2.5
    else:
        exps, lo, hi = (2, 3, 0, 2.5), -3, 3  # 2.5: integer ** float -> float32
    for e in exps:
        yield Sample((make((3, 4), dtype, rng, lo, hi), e))
    yield Sample((make((), dtype, rng, lo, hi), 2))
    yield Sample((make((0, 3), dtype, rng, lo, hi), 2))


def pow_scalar_base_samples(op, dtype, rng):
    lo, hi = (-2, 2) if is_float(dtype) else (0, 4)
    for base in (2, 3, 2.5):
        yield Sample((base, make((3, 4), dtype, rng, lo, hi)))
    yield Sample((2, make((), dtype, rng, lo, hi)))
    yield Sample((2, make((0, 3), dtype, rng, lo, hi)))


def lerp_samples(op, dtype, rng):
    m = lambda shape: make(shape, dtype, rng)  # noqa: E731
    w = lambda shape: make(shape, dtype, rng, 0, 1)  # noqa: E731
    yield Sample((m((3, 4)), m((3, 4)), 0.3))
    yield Sample((m((3, 4)), m((3, 4)), 0.7))  # torch switches formula at weight 0.5
    yield Sample((m((3, 4)), m((3, 4)), w((3, 4))))
    yield Sample((m((3, 1)), m((1, 4)), w((4,))))
    yield Sample((m(()), m(()), w(())))
    yield Sample((m((0, 4)), m((4,)), 0.5))


def addc_samples(op, dtype, rng, *, divide=False):
    value = 0.5 if is_float(dtype) else 2
    m = lambda shape, **k: make(shape, dtype, rng, **k)  # noqa: E731
    yield Sample((m((3, 4)), m((3, 4)), m((3, 4), nonzero=divide)))
    yield Sample((m((3, 4)), m((3, 4)), m((3, 4), nonzero=divide)), {"value": value})
    yield Sample((m((3, 4)), m((3, 1)), m((1, 4), nonzero=divide)), {"value": value})
    yield Sample((m(()), m(()), m((), nonzero=divide)))
    yield Sample((m((0, 4)), m((4,)), m((1, 4), nonzero=divide)))


def where_samples(op, dtype, rng):
    cond = lambda shape: make(shape, "bool", rng)  # noqa: E731
    m = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((cond((3, 4)), m((3, 4)), m((3, 4))))
    yield Sample((cond((3, 1)), m((1, 4)), m((4,))))
    yield Sample((cond(()), m((3,)), m(())))
    yield Sample((cond((0, 4)), m((4,)), m((0, 1))))
    yield Sample((cond((3, 4)), m((3, 4)), scalar_for(dtype)))
    yield Sample((cond((3, 4)), m((3, 4)), 0.5))  # float scalar promotes integer/bool to float32


def _with_nan(samples, dtype, rng):
    """minimum/maximum propagate nan (unlike fmin/fmax)."""
    yield from samples
    if is_float(dtype):
        a, b = make((3, 4), "float64", rng).values, make((3, 4), "float64", rng).values
        a[0, 0], b[1, 1] = np.nan, np.nan
        yield Sample((tensor(a, dtype), tensor(b, dtype)), grad_ok=False)


def var_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"dim": 1})
    yield Sample((x((2, 3, 4)),), {"dim": (0, 2), "keepdim": True})
    yield Sample((x((3, 4)),), {"dim": 1, "correction": 0})
    yield Sample((x((2, 3, 4)),), {"dim": -1, "unbiased": False})
    yield Sample((x((2, 3, 4)),), {"dim": (-1, 0), "correction": 2, "keepdim": True})
    yield Sample((x((3, 4)),), {"unbiased": False})
    yield Sample((x(()),), {"correction": 0})
    yield Sample((x((0, 3)),), {"dim": 1})


def norm_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    for kw in ({}, {"p": 1}, {"p": math.inf}, {"p": "fro"}, {"p": 3}):
        yield Sample((x((3, 4)),), kw)
    yield Sample((x((2, 3, 4)),), {"p": 2, "dim": 1, "keepdim": True})
    yield Sample((x((2, 3, 4)),), {"p": 1, "dim": (0, 2)})
    yield Sample((x((2, 3, 4)),), {"p": "fro", "dim": (-1, 0)})
    yield Sample((x((2, 3, 4)),), {"p": math.inf, "dim": -1})
    yield Sample((x(()),))
    yield Sample((x((0, 3)),), {"p": 2, "dim": 1})


def sort_samples(op, dtype, rng, *, argsort=False):
    x = lambda shape, **k: make(shape, dtype, rng, **k)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"dim": 0})
    yield Sample((x((2, 3, 4)),), {"dim": -1, "descending": True})
    yield Sample((x(()),))
    yield Sample((x((0, 3)),), {"dim": 1})
    # ties: stable sorts keep equal elements in input order (indices compared exactly)
    yield Sample((x((3, 6), discrete=True),), {"stable": True}, grad_ok=False)
    yield Sample((x((6, 3), discrete=True),), {"dim": 0, "descending": True, "stable": True}, grad_ok=False)


def topk_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 5)), 2))
    yield Sample((x((3, 5)), 2), {"dim": 0})
    yield Sample((x((2, 3, 5)), 3), {"largest": False})
    yield Sample((x((3, 5)), 3), {"sorted": False})
    yield Sample((x((5,)), 5))
    yield Sample((x((3, 5)), 0))


def kthvalue_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 5)), 2))
    yield Sample((x((3, 5)), 1), {"dim": 0})
    yield Sample((x((2, 3, 5)), 5), {"dim": -1, "keepdim": True})
    yield Sample((x(()), 1))


def median_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 5)),))
    yield Sample((x((3, 4)),))  # even count: torch returns the lower middle, not the mean
    yield Sample((x((3, 4)),), {"dim": 1})
    yield Sample((x((2, 3, 5)),), {"dim": 0, "keepdim": True})
    yield Sample((x(()),))
    yield Sample((x((0, 3)),), {"dim": 1})


def mode_samples(op, dtype, rng):
    """Rows with exactly one most-frequent value, so the mode value is unambiguous."""

    def rows(n_rows, n=5):
        if dtype == "bool":  # odd length: a strict majority always exists
            return rng.random((n_rows, n)) < 0.5
        start = 0 if dtype == "uint8" else -2
        out = []
        for _ in range(n_rows):
            distinct = rng.permutation(np.arange(start, start + n - 1))
            row = np.append(distinct, distinct[rng.integers(n - 1)])
            out.append(rng.permutation(row))
        scale = 0.5 if is_float(dtype) else 1
        return np.array(out) * scale

    yield Sample((tensor(rows(3), dtype),))
    yield Sample((tensor(rows(3).T, dtype),), {"dim": 0})
    yield Sample((tensor(rows(6).reshape(2, 3, 5), dtype),), {"dim": -1, "keepdim": True})
    yield Sample((make((), dtype, rng),))
    yield Sample((make((0, 5), dtype, rng),), {"dim": 1})


def unique_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng, -2, 2, discrete=True)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"return_inverse": True})
    yield Sample((x((3, 4)),), {"return_counts": True})
    yield Sample((x((2, 3, 4)),), {"sorted": True, "return_inverse": True, "return_counts": True})
    yield Sample((x((12,)),), {"sorted": False, "return_inverse": True, "return_counts": True})
    yield Sample((x(()),), {"return_inverse": True})
    yield Sample((x((0, 3)),), {"return_counts": True})


def bincount_samples(op, dtype, rng):
    x = lambda n: make((n,), dtype, rng, 0, 6)  # noqa: E731
    yield Sample((x(10),))
    yield Sample((x(10),), {"minlength": 10})
    yield Sample((x(8),), {"weights": make((8,), "float32", rng)})
    yield Sample((x(8),), {"weights": make((8,), "float64", rng), "minlength": 3})
    yield Sample((x(0),), {"minlength": 3})


def histc_samples(op, dtype, rng):
    # half-integers never on a bin edge (nor inside rounding distance of one)
    v = rng.integers(-3, 3, size=(3, 4)) + 0.5
    v[0, 0], v[0, 1] = -2.5, 2.5
    x = tensor(v, dtype)
    yield Sample((x,), {"bins": 4})  # min == max == 0: the data's own range, [-2.5, 2.5]
    yield Sample((x,), {"bins": 4, "min": -2, "max": 2})  # +-2.5 fall outside and are dropped
    yield Sample((x,), {"bins": 3, "min": -3, "max": 3})
    yield Sample((tensor(v[0], dtype),), {"bins": 7})


def cat_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample(([x((2, 3)), x((4, 3))],))
    yield Sample(([x((2, 3)), x((2, 1)), x((2, 2))],), {"dim": -1})
    yield Sample(([x((2, 3, 4)), x((2, 2, 4))],), {"dim": 1})
    yield Sample(([x((0, 3)), x((2, 3))],), {"dim": 0})
    yield Sample(([x((5,))],))


def stack_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample(([x((3, 4)), x((3, 4)), x((3, 4))],))
    yield Sample(([x((3, 4)), x((3, 4))],), {"dim": -1})
    yield Sample(([x((3, 4)), x((3, 4))],), {"dim": 1})
    yield Sample(([x(()), x(())],))
    yield Sample(([x((0, 2)), x((0, 2))],), {"dim": 2})


def hvstack_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample(([x((3,)), x((3,))],))
    yield Sample(([x((2, 3)), x((2, 3))],))
    yield Sample(([x(()), x(())],))
    vertical = op.name == "vstack"
    yield Sample(([x((2, 3)), x((1, 3) if vertical else (2, 1))],))
    yield Sample(([x((0, 3)), x((2, 3))] if vertical else [x((2, 0)), x((2, 3))],))


def split_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((5, 4)), 2))
    yield Sample((x((3, 5)), 2), {"dim": 1})
    yield Sample((x((3, 6)), [1, 0, 5]), {"dim": -1})
    yield Sample((x((4, 3)), 4))
    yield Sample((x((2, 3, 4)), 3), {"dim": 1})


def chunk_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((6, 4)), 3))
    yield Sample((x((6, 4)), 4))  # 4 chunks of 6 rows: torch gives 3 chunks of 2
    yield Sample((x((3, 5)), 2), {"dim": -1})
    yield Sample((x((3, 4)), 5))  # more chunks than rows: one row each
    yield Sample((x((2, 3, 4)), 2), {"dim": 2})


def unbind_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"dim": 1})
    yield Sample((x((2, 3, 4)),), {"dim": -1})
    yield Sample((x((0, 3)),), {"dim": 1})


def flip_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), (0,)))
    yield Sample((x((2, 3, 4)), (0, -1)))
    yield Sample((x((2, 3, 4)), [1]))
    yield Sample((x(()), ()))
    yield Sample((x((0, 3)), (1,)))


def roll_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), 1))  # no dims: rolls the flattened tensor
    yield Sample((x((3, 4)), -1), {"dims": 0})
    yield Sample((x((2, 3, 4)), (1, -2)), {"dims": (0, 2)})
    yield Sample((x((3, 4)), 6), {"dims": 1})  # shift larger than the dim wraps
    yield Sample((x((0, 3)), 1), {"dims": 1})


def repeat_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), 2, 1))
    yield Sample((x((3,)), 2, 2))  # more repeats than dims adds leading dims
    yield Sample((x((2, 3)), 1, 0))
    yield Sample((x(()), 3))


def tile_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), (2, 1)))
    yield Sample((x((2, 3)), (2,)))  # fewer reps than dims: leading reps are 1 (unlike repeat)
    yield Sample((x((3,)), (2, 2)))
    yield Sample((x(()), (3,)))


def repeat_interleave_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((2, 3)), 2))  # no dim: flattened
    yield Sample((x((2, 3)), 2), {"dim": 1})
    yield Sample((x((3, 2)), tensor([1, 0, 2], "int64")), {"dim": 0})
    yield Sample((x((2, 2)), tensor([1, 2, 0, 1], "int64")))
    yield Sample((x(()), 3))


def meshgrid_samples(op, dtype, rng):
    x = lambda n: make((n,), dtype, rng)  # noqa: E731
    yield Sample((x(3), x(4)), {"indexing": "ij"})
    yield Sample((x(3), x(4)), {"indexing": "xy"})
    yield Sample((x(2), x(3), x(4)), {"indexing": "ij"})
    yield Sample((x(2), x(3), x(4)), {"indexing": "xy"})
    yield Sample((x(0), x(2)), {"indexing": "ij"})


def broadcast_to_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 1)), (3, 4)))
    yield Sample((x((4,)), (2, 3, 4)))
    yield Sample((x((3, 1)), (2, -1, 4)))
    yield Sample((x(()), (2, 2)))
    yield Sample((x((1,)), (0,)))


def movedim_samples(op, dtype, rng):
    x = lambda: make((2, 3, 4), dtype, rng)  # noqa: E731
    yield Sample((x(), 0, 2))
    yield Sample((x(), -1, 0))
    yield Sample((x(), (0, 1), (2, 0)))
    yield Sample((x(), (-1, 0), (0, -1)))
    yield Sample((make((0, 3), dtype, rng), 0, 1))


def _matrices(pairs):
    def gen(op, dtype, rng):
        lo, hi = op.domain
        for shapes in pairs:
            yield Sample(tuple(make(s, dtype, rng, lo, hi) for s in shapes))

    return gen


def addmm_samples(op, dtype, rng, *, batched=False):
    lo, hi = op.domain
    m = lambda shape: make(shape, dtype, rng, lo, hi)  # noqa: E731
    b = (2,) if batched else ()
    scales = {"beta": 0.5, "alpha": 2.0} if is_float(dtype) else {"beta": 2, "alpha": 3}
    yield Sample((m(b + (3, 2)), m(b + (3, 4)), m(b + (4, 2))))
    yield Sample((m(b + (3, 2)), m(b + (3, 4)), m(b + (4, 2))), scales)
    yield Sample((m((2,)), m(b + (3, 4)), m(b + (4, 2))), scales)  # input broadcasts
    yield Sample((m(b + (0, 2)), m(b + (0, 4)), m(b + (4, 2))))
    if is_float(dtype):  # beta=0: the input is ignored, nan in it must not propagate
        nan_input = tensor(np.full(b + (3, 2), np.nan), dtype)
        yield Sample((nan_input, m(b + (3, 4)), m(b + (4, 2))), {"beta": 0}, grad_ok=False)


EINSUM_CASES = (
    ("ij,jk->ik", (3, 4), (4, 2)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
    ("ii->i", (3, 3)),
    ("ij->ji", (3, 4)),
    ("i,i->", (4,), (4,)),
    ("i,j->ij", (3,), (4,)),
    ("ij->", (3, 4)),
    ("ij->i", (3, 4)),
    ("...ij->...ji", (2, 3, 4)),
)


def _einsum_dtype(dtype, sample):
    """A single operand with summed-out subscripts ('ij->', 'ii->') is a torch.sum, which
    widens integers and bool to int64; contractions of several operands keep the dtype."""
    inputs, output = sample.args[0].split("->")
    summed = set(inputs) - set(output) - set(".,")
    return "int64" if "," not in inputs and summed and not is_float(dtype) else dtype


def einsum_samples(op, dtype, rng):
    lo, hi = op.domain
    for eq, *shapes in EINSUM_CASES:
        yield Sample((eq, *(make(s, dtype, rng, lo, hi) for s in shapes)))


# ----------------------------------------------------------------------------- error cases


def _f(shape, dtype="float32"):
    return make(shape, dtype, rng_for("errors", shape, dtype))


def _err(desc, exc, *args, **kwargs):
    return ErrorCase(desc, exc, args, kwargs)


def _errors(*cases):
    return lambda: list(cases)


SHAPE_MISMATCH = lambda: _err("broadcast (3,4) with (4,3)", RuntimeError, _f((3, 4)), _f((4, 3)))  # noqa: E731


def _dim_oor(*extra, **kw):
    return _err("dim out of range", IndexError, _f((3, 4)), *extra, **kw)


# ----------------------------------------------------------------------------- the table

_DEFAULT = object()


def _op(name, ref, dtypes, samples, *, fn=None, method=_DEFAULT, **kw):
    """One table entry; the op defaults to m.<name> with a Tensor method of the same name."""
    return OpInfo(name=name, op=fn or func(name), ref=ref, dtypes=dtypes, sample_inputs=samples,
                  method=name if method is _DEFAULT else method, **kw)


# unary ops computed in floating point (integer and bool inputs give float32):
# (name, numpy ref, input domain -- log needs x > 0, acos |x| < 1, ...)
_FLOAT_UNARY = (
    ("exp", np.exp, (-3, 3)),
    ("exp2", np.exp2, (-3, 3)),
    ("expm1", np.expm1, (-3, 3)),
    ("log", np.log, (0.1, 5)),
    ("log2", np.log2, (0.1, 5)),
    ("log10", np.log10, (0.1, 5)),
    ("log1p", np.log1p, (-0.9, 5)),
    ("sqrt", np.sqrt, (0.1, 5)),
    ("rsqrt", lambda a: 1 / np.sqrt(a), (0.1, 5)),
    ("sin", np.sin, (-3, 3)),
    ("cos", np.cos, (-3, 3)),
    ("tan", np.tan, (-1.4, 1.4)),
    ("asin", np.arcsin, (-0.9, 0.9)),
    ("acos", np.arccos, (-0.9, 0.9)),
    ("atan", np.arctan, (-3, 3)),
    ("sinh", np.sinh, (-3, 3)),
    ("cosh", np.cosh, (-3, 3)),
    ("tanh", np.tanh, (-3, 3)),
    ("asinh", np.arcsinh, (-3, 3)),
    ("acosh", np.arccosh, (1.1, 5)),
    ("atanh", np.arctanh, (-0.9, 0.9)),
    ("sigmoid", lambda a: 1 / (1 + np.exp(-a)), (-3, 3)),
    ("erf", _np_erf, (-3, 3)),
    ("erfc", _np_erfc, (-3, 3)),
    ("erfinv", _np_erfinv, (-0.9, 0.9)),
    ("sinc", np.sinc, (-3, 3)),
)

UNARY_OPS = [
    _op(name, _as_float64(ref), ALL, unary_samples, domain=domain, differentiable=True,
        out_dtype=floating())
    for name, ref, domain in _FLOAT_UNARY
] + [
    _op("reciprocal", _as_float64(lambda a: 1 / a), ALL, lambda op, d, r: unary_samples(op, d, r, nonzero=True),
        differentiable=True, out_dtype=floating()),
    _op("abs", np.abs, INTS_FLOATS, unary_samples, differentiable=True,
        error_inputs=_errors(_err("abs of bool", RuntimeError, _f((3,), "bool")))),
    _op("neg", np.negative, INTS_FLOATS, unary_samples, differentiable=True,
        error_inputs=_errors(_err("neg of bool", RuntimeError, _f((3,), "bool")))),
    _op("sign", lambda a: a.copy() if a.dtype == bool else np.sign(a), ALL, unary_samples, differentiable=True),
    _op("floor", np.floor, INTS_FLOATS, unary_samples, differentiable=True),
    _op("ceil", np.ceil, INTS_FLOATS, unary_samples, differentiable=True),
    _op("trunc", np.trunc, INTS_FLOATS, unary_samples, differentiable=True),
    _op("round", lambda a, decimals=0: np.round(a, decimals), INTS_FLOATS, differentiable=True,
        # decimals only where x * 10 is computed precisely enough to round like numpy
        samples=lambda op, d, r: unary_samples(
            op, d, r, kwargs_variants=[{}, {"decimals": 1}] if d in ("float32", "float64") else [{}]),
        error_inputs=_errors(
            _err("round(decimals=) of an integer tensor", RuntimeError, _f((3,), "int64"), decimals=1))),
    _op("frac", lambda a: a - np.trunc(a), FLOATS, unary_samples, differentiable=True,
        error_inputs=_errors(_err("frac of an integer tensor", RuntimeError, _f((3,), "int64")))),
    _op("square", lambda a: a.astype(np.int64) ** 2 if a.dtype == bool else a * a, ALL, unary_samples,
        differentiable=True, out_dtype=lambda d, s: "int64" if d == "bool" else d),
    _op("relu", lambda a: np.maximum(a, 0).astype(a.dtype), INTS_FLOATS, unary_samples, differentiable=True,
        error_inputs=_errors(_err("relu of bool", RuntimeError, _f((3,), "bool")))),
    _op("isnan", np.isnan, ALL, special_values_samples, out_dtype=to_bool),
    _op("isinf", np.isinf, ALL, special_values_samples, out_dtype=to_bool),
    _op("isfinite", np.isfinite, ALL, special_values_samples, out_dtype=to_bool),
    _op("nan_to_num", _nan_to_num_ref, ALL, differentiable=True, ref_needs_dtype=True,
        samples=lambda op, d, r: special_values_samples(
            op, d, r, kwargs_variants=[{}, {"nan": 1.5, "posinf": 100.0, "neginf": -100.0}, {"posinf": 7.0}])),
    _op("logical_not", np.logical_not, ALL, unary_samples, out_dtype=to_bool),
    _op("bitwise_not", np.invert, BOOL_INTS, unary_samples,
        error_inputs=_errors(_err("bitwise_not of a float tensor", RuntimeError, _f((3,))))),
    _op("clamp", _clamp_ref, INTS_FLOATS, clamp_samples, differentiable=True,
        out_dtype=promoted(("min", "max")),
        error_inputs=_errors(_err("clamp without min and max", RuntimeError, _f((3,))),
                             _err("clamp bounds not broadcastable", RuntimeError, _f((3, 4)), min=_f((3,))))),
]


def _alpha_variants(dtype):
    if dtype == "bool":
        return [{}]
    return [{}, {"alpha": 0.5 if is_float(dtype) else 2}]


def _div_dtype(dtype, sample):
    rule = promoted() if sample.kwargs.get("rounding_mode") else floating(promoted())
    return rule(dtype, sample)


_DIV_MODES = ({}, {"rounding_mode": "trunc"}, {"rounding_mode": "floor"})


def _binary(**kw):
    return lambda op, d, r: binary_samples(op, d, r, **kw)


# lerp/addcmul/addcdiv combine several operations: an implementation that rounds the
# intermediate results to float16/bfloat16 is off by more than one rounding
_FUSED_TOL = {"float16": (2e-3, 4e-3), "bfloat16": (2e-2, 6e-2)}

_INT_ZERO_DIVISOR = (_f((3,), "int64"), tensor([1, 0, 2], "int64"))

BINARY_OPS = [
    # (numpy turns 1 * bool into int: skip the multiplication when alpha is 1)
    _op("add", lambda a, b, alpha=1: a + b if alpha == 1 else a + alpha * b, ALL,
        _binary(float_scalar=True, kwargs_variants=_alpha_variants),
        differentiable=True, out_dtype=promoted(),
        error_inputs=_errors(SHAPE_MISMATCH(),
                             _err("float alpha with integer tensors", RuntimeError,
                                  _f((3,), "int64"), _f((3,), "int64"), alpha=0.5))),
    _op("sub", lambda a, b, alpha=1: a - alpha * b, INTS_FLOATS,
        _binary(float_scalar=True, kwargs_variants=_alpha_variants), differentiable=True, out_dtype=promoted(),
        error_inputs=_errors(SHAPE_MISMATCH(),
                             _err("sub of bool tensors", RuntimeError, _f((3,), "bool"), _f((3,), "bool")))),
    _op("mul", lambda a, b: a * b, ALL, _binary(float_scalar=True), differentiable=True, out_dtype=promoted(),
        error_inputs=_errors(SHAPE_MISMATCH())),
    _op("div", _div_ref, INTS_FLOATS, _binary(rhs_nonzero=True, float_scalar=True, kwargs_variants=_DIV_MODES),
        differentiable=True, out_dtype=_div_dtype,
        error_inputs=_errors(SHAPE_MISMATCH(),
                             _err("unknown rounding_mode", RuntimeError, _f((3,)), _f((3,)), rounding_mode="round"),
                             _err("integer division by zero", RuntimeError, *_INT_ZERO_DIVISOR, rounding_mode="trunc"))),
    _op("true_divide", _as_float64(np.true_divide), INTS_FLOATS, _binary(rhs_nonzero=True, float_scalar=True),
        differentiable=True, out_dtype=floating(promoted())),
    # floor_divide has no derivative in torch
    _op("floor_divide", np.floor_divide, INTS_FLOATS, _binary(rhs_nonzero=True, float_scalar=True),
        out_dtype=promoted(),
        error_inputs=_errors(_err("integer division by zero", RuntimeError, *_INT_ZERO_DIVISOR))),
    _op("remainder", np.remainder, INTS_FLOATS, _binary(rhs_nonzero=True, float_scalar=True),
        differentiable=True, out_dtype=promoted(),
        error_inputs=_errors(_err("integer remainder by zero", RuntimeError, *_INT_ZERO_DIVISOR))),
    _op("fmod", np.fmod, INTS_FLOATS, _binary(rhs_nonzero=True, float_scalar=True),
        differentiable=True, out_dtype=promoted()),
    _op("pow", np.power, INTS_FLOATS, pow_samples, differentiable=True, out_dtype=promoted(),
        error_inputs=_errors(_err("integer tensor to a negative integer power", RuntimeError, _f((3,), "int64"), -1))),
    _op("pow_tensor_scalar", np.power, INTS_FLOATS, pow_scalar_exponent_samples, fn=func("pow"), method="pow",
        differentiable=True, out_dtype=promoted()),
    _op("pow_scalar_tensor", np.power, INTS_FLOATS, pow_scalar_base_samples, fn=func("pow"), method=None,
        differentiable=True, out_dtype=promoted()),
] + [
    _op(name, ref, ALL, _binary(discrete=True, float_scalar=True), out_dtype=to_bool,
        error_inputs=_errors(SHAPE_MISMATCH()))
    for name, ref in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                      ("gt", np.greater), ("ge", np.greater_equal))
] + [
    _op(name, ref, ALL, _binary(discrete=True, scalar=False), out_dtype=to_bool)
    for name, ref in (("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor))
] + [
    _op(name, ref, BOOL_INTS, _binary(), out_dtype=promoted(),
        error_inputs=_errors(_err(f"{name} of float tensors", RuntimeError, _f((3,)), _f((3,)))))
    for name, ref in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor))
] + [
    _op("minimum", np.minimum, ALL, lambda op, d, r: _with_nan(binary_samples(op, d, r, scalar=False), d, r),
        differentiable=True),
    _op("maximum", np.maximum, ALL, lambda op, d, r: _with_nan(binary_samples(op, d, r, scalar=False), d, r),
        differentiable=True),
    _op("atan2", _as_float64(np.arctan2), ALL, _binary(scalar=False), differentiable=True, out_dtype=floating()),
    _op("hypot", np.hypot, FLOATS, _binary(scalar=False), differentiable=True,
        error_inputs=_errors(_err("hypot of integer tensors", RuntimeError, _f((3,), "int64"), _f((3,), "int64")))),
    _op("copysign", _as_float64(np.copysign), ALL, _binary(rhs_nonzero=True), differentiable=True,
        out_dtype=floating(promoted())),
    _op("lerp", lambda s, e, w: s + w * (e - s), FLOATS, lerp_samples, differentiable=True, tol=_FUSED_TOL,
        error_inputs=_errors(_err("lerp of integer tensors", RuntimeError, _f((3,), "int64"), _f((3,), "int64"), 0.5))),
    _op("addcmul", lambda a, b, c, value=1: a + value * b * c, INTS_FLOATS, addc_samples, differentiable=True,
        tol=_FUSED_TOL),
    _op("addcdiv", lambda a, b, c, value=1: a + value * b / c, FLOATS,
        lambda op, d, r: addc_samples(op, d, r, divide=True), differentiable=True, tol=_FUSED_TOL,
        error_inputs=_errors(_err("addcdiv of integer tensors", RuntimeError, *(_f((3,), "int64"),) * 3))),
    _op("where", np.where, ALL, where_samples, method=None, differentiable=True, out_dtype=promoted(),
        error_inputs=_errors(_err("non-bool condition", RuntimeError, _f((3,)), _f((3,)), _f((3,))),
                             _err("shapes don't broadcast", RuntimeError, _f((3, 4), "bool"), _f((3, 4)), _f((5,))))),
]


def _reduction(**kw):
    return lambda op, d, r: reduction_samples(op, d, r, **kw)


# reductions may accumulate in another order (or in blocks) than numpy's float64 reference
_SUM_TOL = {"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 1e-1), "float32": (1e-5, 1e-5)}
_GATHER_REDUCED = gather_indices(reduced=True)

REDUCTION_OPS = [
    _op("sum", _reduce(np.sum), ALL, _reduction(empty_ok=True, dtype_kw="float64"), differentiable=True,
        out_dtype=accumulate, tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2), _dim_oor(dim=(0, -3)),
                             _err("repeated dim", RuntimeError, _f((3, 4)), dim=(0, 0)))),
    _op("mean", _reduce(np.mean), FLOATS, _reduction(dtype_kw="float64"), differentiable=True,
        out_dtype=accumulate, tol=_SUM_TOL,
        error_inputs=_errors(_err("mean of an integer tensor", RuntimeError, _f((3,), "int64")), _dim_oor(dim=-3))),
    _op("prod", _reduce(np.prod), ALL, _reduction(tuple_dims=False, empty_ok=True, dtype_kw="float64"),
        domain=(-2, 2), differentiable=True, out_dtype=accumulate, tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2))),
    _op("amax", _reduce(np.amax), ALL, _reduction(), differentiable=True,
        error_inputs=_errors(_dim_oor(dim=2),
                             _err("reducing a zero-size dim", IndexError, _f((0, 3)), dim=0))),
    _op("amin", _reduce(np.amin), ALL, _reduction(), differentiable=True,
        error_inputs=_errors(_dim_oor(dim=-3))),
    _op("max", _minmax_ref(np.max, np.argmax), ALL, _reduction(tuple_dims=False), differentiable=True,
        out_dtype=with_indices_if_dim, canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=2),
                             _err("reducing a zero-size dim", IndexError, _f((0, 3)), dim=0))),
    _op("min", _minmax_ref(np.min, np.argmin), ALL, _reduction(tuple_dims=False), differentiable=True,
        out_dtype=with_indices_if_dim, canonicalize=_GATHER_REDUCED, error_inputs=_errors(_dim_oor(dim=2))),
    _op("argmax", _arg_ref(np.argmax), INTS_FLOATS, _reduction(tuple_dims=False), out_dtype=to_int64,
        canonicalize=gather_indices(reduced=True, default_dim=None, index_only=True),
        error_inputs=_errors(_dim_oor(dim=2), _err("argmax of bool", RuntimeError, _f((3,), "bool")))),
    _op("argmin", _arg_ref(np.argmin), INTS_FLOATS, _reduction(tuple_dims=False), out_dtype=to_int64,
        canonicalize=gather_indices(reduced=True, default_dim=None, index_only=True),
        error_inputs=_errors(_dim_oor(dim=-3))),
    _op("var", _var_ref(np.var), FLOATS, var_samples, differentiable=True, tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2), _err("var of an integer tensor", RuntimeError, _f((3,), "int64")))),
    _op("std", _var_ref(np.std), FLOATS, var_samples, differentiable=True, tol=_SUM_TOL,
        error_inputs=_errors(_err("std of an integer tensor", RuntimeError, _f((3,), "int64")))),
    _op("var_mean", _var_mean_ref, FLOATS, var_samples, method=None, differentiable=True, tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2))),
    _op("norm", _norm_ref, FLOATS, norm_samples, differentiable=True, tol=_SUM_TOL,
        error_inputs=_errors(_err("norm of an integer tensor", RuntimeError, _f((3,), "int64")))),
    _op("logsumexp", _as_float64(_logsumexp_ref), ALL, _reduction(dim_required=True), differentiable=True,
        out_dtype=floating(), tol=_SUM_TOL, error_inputs=_errors(_dim_oor(dim=2))),
    _op("all", _reduce(np.all), ALL, _reduction(empty_ok=True, discrete=True), domain=(-1, 1),
        out_dtype=lambda d, s: "uint8" if d == "uint8" else "bool", error_inputs=_errors(_dim_oor(dim=2))),
    _op("any", _reduce(np.any), ALL, _reduction(empty_ok=True, discrete=True), domain=(-1, 1),
        out_dtype=lambda d, s: "uint8" if d == "uint8" else "bool"),
    _op("count_nonzero", _reduce(np.count_nonzero), ALL, _reduction(keepdim=False, empty_ok=True, discrete=True),
        domain=(-1, 1), out_dtype=to_int64, error_inputs=_errors(_dim_oor(dim=2))),
    _op("cumsum", lambda a, dim, dtype=None: np.cumsum(a, axis=_axis(a, dim), dtype=dtype).reshape(a.shape),
        ALL, _reduction(dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True, dtype_kw="float64"),
        differentiable=True, out_dtype=accumulate, tol=_SUM_TOL, error_inputs=_errors(_dim_oor(dim=2))),
    _op("cumprod", lambda a, dim, dtype=None: np.cumprod(a, axis=_axis(a, dim), dtype=dtype).reshape(a.shape),
        ALL, _reduction(dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True, dtype_kw="float64"),
        domain=(-2, 2), differentiable=True, out_dtype=accumulate, tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=-3))),
    _op("logcumsumexp", _as_float64(_logcumsumexp_ref), FLOATS,
        _reduction(dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True),
        differentiable=True, tol=_SUM_TOL, error_inputs=_errors(_dim_oor(dim=2))),
    _op("cummax", _cummax_ref, ALL, _reduction(dim_required=True, tuple_dims=False, keepdim=False),
        differentiable=True, out_dtype=values_and_indices, canonicalize=gather_indices(reduced=False),
        error_inputs=_errors(_dim_oor(dim=2))),
]

SORTING_OPS = [
    _op("sort", _sort_ref, ALL, sort_samples, differentiable=True, out_dtype=values_and_indices,
        canonicalize=gather_indices(reduced=False), error_inputs=_errors(_dim_oor(dim=2))),
    _op("argsort", _argsort, ALL, sort_samples, out_dtype=to_int64,
        canonicalize=gather_indices(reduced=False, index_only=True), error_inputs=_errors(_dim_oor(dim=-3))),
    _op("topk", lambda a, k, dim=-1, largest=True, sorted=True: _topk_ref(a, k, dim, largest), INTS_FLOATS,
        topk_samples, differentiable=True, out_dtype=values_and_indices, canonicalize=_topk_canon,
        error_inputs=_errors(_err("k larger than the dim", RuntimeError, _f((3, 4)), 5), _dim_oor(2, dim=2))),
    _op("kthvalue", lambda a, k, dim=-1, keepdim=False: _reduced_pick(a, dim, keepdim, lambda n: k - 1),
        INTS_FLOATS, kthvalue_samples, differentiable=True, out_dtype=values_and_indices, canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_err("k out of range", RuntimeError, _f((3, 4)), 5),
                             _err("k = 0", RuntimeError, _f((3, 4)), 0))),
    _op("median", lambda a, dim=None, keepdim=False: (
            np.sort(a.reshape(-1))[(a.size - 1) // 2] if dim is None
            else _reduced_pick(a, dim, keepdim, lambda n: (n - 1) // 2)),
        INTS_FLOATS, median_samples, differentiable=True, out_dtype=with_indices_if_dim,
        canonicalize=_GATHER_REDUCED, error_inputs=_errors(_dim_oor(dim=2)),
        torch_bug=lambda layout, s: "torch 2.13 CPU median(dim) returns wrong values when reducing a "
        "stride-0 (expanded) dim" if layout == "expanded" and s.kwargs.get("dim") == 0 else None),
    # mode has a backward in torch, but nudging one of the repeated values changes the mode,
    # so finite differences can't check it
    _op("mode", _mode_ref, ALL, mode_samples, out_dtype=values_and_indices, canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=3))),
    _op("unique", _unique_ref, ALL, unique_samples, canonicalize=_unique_canon,
        out_dtype=lambda d, s: (d,) + ("int64",) * sum(bool(s.kwargs.get(k)) for k in ("return_inverse", "return_counts"))),
    _op("bincount", lambda a, weights=None, minlength=0: np.bincount(a.astype(np.int64), weights, minlength),
        INTS, bincount_samples,
        # no weights: int64; float32 weights stay float32; any other weights give float64
        out_dtype=lambda d, s: "int64" if "weights" not in s.kwargs else
        ("float32" if s.kwargs["weights"].dtype == "float32" else "float64"),
        error_inputs=_errors(_err("negative values", RuntimeError, tensor([1, -1], "int64")),
                             _err("2-D input", RuntimeError, tensor(np.ones((2, 2)), "int64")),
                             _err("float input", RuntimeError, _f((3,))))),
    _op("histc", _histc_ref, FLOATS, histc_samples,
        error_inputs=_errors(_err("histc of an integer tensor", RuntimeError, _f((3,), "int64")),
                             _err("max < min", RuntimeError, _f((3,)), min=2, max=1))),
]


SHAPE_OPS = [
    _op("cat", lambda ts, dim=0: np.concatenate(ts, axis=dim), ALL, cat_samples, method=None, differentiable=True,
        error_inputs=_errors(_err("sizes differ outside dim", RuntimeError, [_f((3, 4)), _f((3, 5))]),
                             _err("dim out of range", IndexError, [_f((3, 4)), _f((3, 4))], dim=2))),
    _op("stack", lambda ts, dim=0: np.stack(ts, axis=dim), ALL, stack_samples, method=None, differentiable=True,
        error_inputs=_errors(_err("shapes differ", RuntimeError, [_f((3, 4)), _f((4, 3))]),
                             _err("dim out of range", IndexError, [_f((3, 4)), _f((3, 4))], dim=3))),
    _op("hstack", np.hstack, ALL, hvstack_samples, method=None, differentiable=True,
        error_inputs=_errors(_err("rows differ", RuntimeError, [_f((3, 4)), _f((2, 4))]))),
    _op("vstack", np.vstack, ALL, hvstack_samples, method=None, differentiable=True,
        error_inputs=_errors(_err("columns differ", RuntimeError, [_f((3, 4)), _f((3, 2))]))),
    _op("split", _split_ref, ALL, split_samples, differentiable=True,
        error_inputs=_errors(_err("sizes don't add up", RuntimeError, _f((3, 4)), [1, 1]), _dim_oor(2, dim=2))),
    _op("chunk", _chunk_ref, ALL, chunk_samples, differentiable=True,
        error_inputs=_errors(_err("zero chunks", RuntimeError, _f((3, 4)), 0))),
    _op("unbind", lambda a, dim=0: tuple(np.moveaxis(a, dim, 0)), ALL, unbind_samples, differentiable=True,
        error_inputs=_errors(_dim_oor(dim=2))),
    _op("flip", lambda a, dims: np.flip(a, axis=tuple(dims)) if a.ndim else a.copy(), ALL, flip_samples,
        differentiable=True,
        error_inputs=_errors(_dim_oor((2,)), _err("repeated dim", RuntimeError, _f((3, 4)), (0, 0)))),
    _op("roll", lambda a, shifts, dims=None: np.roll(a, shifts, axis=dims), ALL, roll_samples, differentiable=True,
        error_inputs=_errors(_err("shifts and dims differ in length", RuntimeError, _f((3, 4)), (1, 2), dims=(0,)))),
    _op("repeat", lambda a, *reps: np.tile(a, reps), ALL, repeat_samples, fn=method("repeat"), differentiable=True,
        error_inputs=_errors(_err("fewer repeats than dims", RuntimeError, _f((3, 4)), 2))),
    _op("tile", lambda a, reps: np.tile(a, reps), ALL, tile_samples, differentiable=True),
    _op("repeat_interleave", lambda a, repeats, dim=None: np.repeat(a, repeats, axis=dim), ALL,
        repeat_interleave_samples, differentiable=True,
        error_inputs=_errors(_err("negative repeats", RuntimeError, _f((3,)), -1),
                             _err("repeats don't match the dim", RuntimeError,
                                  _f((3,)), tensor([1, 2], "int64"), dim=0))),
    _op("meshgrid", lambda *ts, indexing: tuple(np.meshgrid(*ts, indexing=indexing)), ALL, meshgrid_samples,
        method=None, differentiable=True,
        error_inputs=_errors(_err("unknown indexing", RuntimeError, _f((3,)), _f((2,)), indexing="ab"))),
    _op("broadcast_to", _broadcast_to_ref, ALL, broadcast_to_samples, differentiable=True,
        error_inputs=_errors(_err("incompatible shape", RuntimeError, _f((3, 4)), (3, 5)),
                             _err("fewer dims than the input", RuntimeError, _f((3, 4)), (4,)))),
    _op("movedim", np.moveaxis, ALL, movedim_samples, differentiable=True,
        error_inputs=_errors(_dim_oor(2, 0), _err("repeated source dim", RuntimeError, _f((3, 4)), (0, 0), (0, 1)))),
]

# small operands keep integer matmuls from overflowing; the float16/bfloat16 tolerances allow
# for a different accumulation order, as for reductions
_LINALG = dict(domain=(-2, 2), differentiable=True, tol={"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 5e-2)})

LINALG_OPS = [
    _op("matmul", np.matmul, INTS_FLOATS, _matrices([
        ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)), ((2, 1, 3, 4), (5, 4, 2)),
        ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((0, 4), (4, 2)), ((3, 0), (0, 2))]), **_LINALG,
        error_inputs=_errors(_err("inner dims differ", RuntimeError, _f((3, 4)), _f((3, 4))),
                             _err("0-d operand", RuntimeError, _f(()), _f((3, 4))),
                             _err("dtypes differ", RuntimeError, _f((3, 4)), _f((4, 2), "int64")))),
    _op("mm", np.matmul, INTS_FLOATS, _matrices([((3, 4), (4, 2)), ((0, 4), (4, 2)), ((3, 0), (0, 2))]), **_LINALG,
        error_inputs=_errors(_err("1-D operand", RuntimeError, _f((4,)), _f((4, 2))),
                             _err("inner dims differ", RuntimeError, _f((3, 4)), _f((3, 4))))),
    _op("bmm", np.matmul, INTS_FLOATS, _matrices([((2, 3, 4), (2, 4, 2)), ((0, 3, 4), (0, 4, 2))]), **_LINALG,
        error_inputs=_errors(_err("2-D operands", RuntimeError, _f((3, 4)), _f((4, 3))),
                             _err("batch sizes differ", RuntimeError, _f((2, 3, 4)), _f((3, 4, 2))))),
    _op("mv", np.matmul, INTS_FLOATS, _matrices([((3, 4), (4,)), ((0, 4), (4,))]), **_LINALG,
        error_inputs=_errors(_err("sizes differ", RuntimeError, _f((3, 4)), _f((3,))))),
    _op("dot", np.dot, INTS_FLOATS, _matrices([((4,), (4,)), ((0,), (0,))]), **_LINALG,
        error_inputs=_errors(_err("2-D operands", RuntimeError, _f((3, 4)), _f((3, 4))),
                             _err("lengths differ", RuntimeError, _f((4,)), _f((3,))),
                             _err("dtypes differ", RuntimeError, _f((4,)), _f((4,), "int64")))),
    _op("outer", np.outer, ALL, _matrices([((3,), (4,)), ((0,), (2,))]), **_LINALG),
    _op("addmm", _addmm_ref, INTS_FLOATS, addmm_samples, **_LINALG,
        error_inputs=_errors(_err("inner dims differ", RuntimeError, _f((3, 3)), _f((3, 4)), _f((3, 4))))),
    _op("baddbmm", _addmm_ref, INTS_FLOATS, lambda op, d, r: addmm_samples(op, d, r, batched=True), **_LINALG,
        error_inputs=_errors(_err("inner dims differ", RuntimeError, _f((1, 3, 3)), _f((1, 3, 4)), _f((1, 3, 4))))),
    _op("einsum", np.einsum, INTS_FLOATS, einsum_samples, method=None, out_dtype=_einsum_dtype, **_LINALG,
        error_inputs=_errors(_err("subscript sizes differ", RuntimeError, "ij,jk->ik", _f((3, 4)), _f((3, 4))),
                             _err("too few operands", RuntimeError, "ij,jk->ik", _f((3, 4))))),
]

OP_DB = UNARY_OPS + BINARY_OPS + REDUCTION_OPS + SORTING_OPS + SHAPE_OPS + LINALG_OPS
OPS_BY_NAME = {op.name: op for op in OP_DB}
assert len(OPS_BY_NAME) == len(OP_DB), "op names must be unique"
