"""op_db's building blocks: dtypes, sample tensors, result-dtype rules, OpInfo and the generic
sample generators (op_db.py has the table)."""

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
    "bool": np.bool_,
    "uint8": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "bfloat16": np.float32,
    "float32": np.float32,
    "float64": np.float64,
}

FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": float(np.finfo(np.float32).max),
    "float64": float(np.finfo(np.float64).max),
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
        bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) & np.uint32(
            0xFFFF0000
        )
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
            v = (
                np.asarray(rng.integers(math.ceil(2 * low), math.floor(2 * high) + 1, size=shape))
                / 2.0
            )
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
    return scalars + [
        sample.kwargs[k] for k in kw_names if isinstance(sample.kwargs.get(k), (bool, int, float))
    ]


def promote_with_scalars(dtype, scalars):
    """torch's rule for a tensor with Python scalars: a scalar only matters if it is of a
    higher kind (bool < int < float); then the result is the default dtype of that kind."""
    top = max(
        (0 if isinstance(s, bool) else 1 if isinstance(s, int) else 2 for s in scalars), default=-1
    )
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
BINARY_SHAPES = (
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((), (3, 4)),
    ((0, 4), (4,)),
    ((), ()),
)


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


def binary_samples(
    op,
    dtype,
    rng,
    *,
    lhs_domain=None,
    rhs_domain=None,
    rhs_nonzero=False,
    discrete=False,
    scalar=True,
    float_scalar=False,
    kwargs_variants=({},),
):
    """Same shapes, broadcasting pairs, 0-d and zero-size operands, and a Python-scalar rhs.

    float_scalar: also an integer/bool tensor with a float scalar (promotes to float32).
    """
    lo, hi = lhs_domain or op.domain
    rlo, rhi = rhs_domain or op.domain
    for i, kw in enumerate(_variants(kwargs_variants, dtype)):
        for a, b in BINARY_SHAPES if i == 0 else BINARY_SHAPES[:2]:
            yield Sample(
                (
                    make(a, dtype, rng, lo, hi, discrete=discrete),
                    make(b, dtype, rng, rlo, rhi, nonzero=rhs_nonzero, discrete=discrete),
                ),
                dict(kw),
            )
        if scalar:
            s = scalar_for(dtype, rlo, rhi, nonzero=rhs_nonzero)
            yield Sample((make((3, 4), dtype, rng, lo, hi, discrete=discrete), s), dict(kw))
        if float_scalar and not is_float(dtype) and i == 0:
            yield Sample((make((3, 4), dtype, rng, lo, hi), 2.5), dict(kw))


def reduction_samples(
    op,
    dtype,
    rng,
    *,
    full=True,
    dim_required=False,
    tuple_dims=True,
    keepdim=True,
    empty_ok=False,
    dtype_kw=None,
    discrete=False,
    extra=(),
):
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
    return OpInfo(
        name=name,
        op=fn or func(name),
        ref=ref,
        dtypes=dtypes,
        sample_inputs=samples,
        method=name if method is _DEFAULT else method,
        **kw,
    )


# unary ops computed in floating point (integer and bool inputs give float32):
# (name, numpy ref, input domain -- log needs x > 0, acos |x| < 1, ...)


def _reduction(**kw):
    return lambda op, d, r: reduction_samples(op, d, r, **kw)


# reductions may accumulate in another order (or in blocks) than numpy's float64 reference
_SUM_TOL = {"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 1e-1), "float32": (1e-5, 1e-5)}
