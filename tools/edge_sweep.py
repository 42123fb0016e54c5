"""A seeded random differential sweep of ember against torch at the edges the dtype sweep skips.

    .venv/bin/python tools/edge_sweep.py --seed 0 --cases 400 bcast views intdiv nan reduce
    .venv/bin/python tools/edge_sweep.py --seed 0 --cases 400 --detail value    # every case

Families (each case is a few Python statements over T, ember or torch, ending in `r = ...`):
  bcast   binary ops and operators over broadcast shapes (0-size dims, 0-d tensors, Python
          numbers of every kind: bool, int, float, complex) and every dtype; result_type
  views   transposed, step-sliced and expanded views as inputs, as out= targets and as in-place
          targets (the base tensor is compared, so a write that ignored the strides shows), and
          in-place or out= writes that overlap their inputs (torch's overlap errors)
  intdiv  integer division and remainder with negative and zero divisors, overflow, shifts
  nan     NaN, inf and -0.0 through min/max/clamp/sort/topk/unique/argmax and friends
  reduce  reductions over empty dims, dim tuples, negative and repeated dims, keepdim
Each case runs under torch and ember in a child process (a crash is recorded as CRASH and the
next worker resumes after it). Outcomes, worst first: CRASH; value (same dtype and shape,
different values: integers and bools exactly, floats within a few ulps, NaN where torch has NaN);
dtype; shape; stride (elementwise results and out= targets, whose strides torch documents to
follow the inputs' layout); ember_raises; torch_raises (ember computes where torch refuses);
exc_class; exc_msg (same class, torch's first message line not contained in ember's). The
summary prints one line per (outcome, op) with a count and the first case; --detail OUTCOME
prints every case of that outcome. Logs go to $TMPDIR/ember_edge_sweep/.
"""

import json
import math
import os
import random
import re
import sys
import tempfile
from collections import defaultdict

from dtype_sweep import run_resuming  # tools/ is the script's directory

LOG_DIR = os.path.join(tempfile.gettempdir(), "ember_edge_sweep")
FAMILIES = ("bcast", "views", "intdiv", "nan", "reduce")
ORDER = ("CRASH", "value", "dtype", "shape", "stride", "ember_raises", "torch_raises")
ORDER += ("exc_class", "exc_msg")

BOOL, INTS = ["bool"], ["uint8", "int8", "int16", "int32", "int64"]
FLOATS, COMPLEX = ["float16", "bfloat16", "float32", "float64"], ["complex64", "complex128"]
ALL = BOOL + INTS + FLOATS + COMPLEX
LIMITS = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-(2**15), 2**15 - 1)}
LIMITS |= {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
FLOAT_POOL = [0.0, -0.0, 0.5, -1.5, 2.25, 3.0, -7.0, 0.001, 100.0, -2.5, 1.0]
SPECIAL = [math.nan, math.inf, -math.inf]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (2, 0), (0, 3), (3, 1), (2, 1, 3), (1, 0, 2)]


def fmt(v):
    """A number as source text (nan and inf are names in the cases' namespace)."""
    if isinstance(v, complex):
        return f"complex({fmt(v.real)}, {fmt(v.imag)})"
    if isinstance(v, float) and not math.isfinite(v):
        return ("nan" if v != v else "inf") if not v < 0 else "-inf"
    return repr(v)


def value(rng, dtype, special=False, extreme=False):
    if dtype == "bool":
        return rng.random() < 0.5
    if dtype in INTS:
        lo, hi = LIMITS[dtype]
        if extreme and rng.random() < 0.3:
            return rng.choice([lo, hi, lo + 1, hi - 1])
        return rng.randint(max(lo, -9), min(hi, 9))
    f = rng.choice(FLOAT_POOL + (SPECIAL if special else []))
    if dtype in COMPLEX:
        return complex(f, rng.choice(FLOAT_POOL))
    return f


def nested(rng, dtype, shape, special, extreme):
    if not shape:
        return fmt(value(rng, dtype, special, extreme))
    return (
        "["
        + ", ".join(nested(rng, dtype, shape[1:], special, extreme) for _ in range(shape[0]))
        + "]"
    )


def tensor(rng, dtype, shape, layout="contig", special=False, extreme=False):
    """Source of a tensor of `shape` built as `layout` (a view of a larger or permuted base)."""
    return "".join(tensor_parts(rng, dtype, shape, layout, special, extreme))


def tensor_parts(rng, dtype, shape, layout="contig", special=False, extreme=False):
    """The base tensor's source and the view's suffix."""
    shape = tuple(shape)
    nd = len(shape)
    if layout == "t" and nd >= 2:
        base, suffix = (
            shape[::-1],
            ".t()"
            if nd == 2
            else ".permute(" + ", ".join(str(i) for i in range(nd - 1, -1, -1)) + ")",
        )
    elif layout == "step" and nd >= 1:
        base, suffix = shape[:-1] + (shape[-1] * 2,), "[..., ::2]"
    elif layout == "expand" and nd >= 1 and any(s > 1 for s in shape):
        k = rng.choice([i for i, s in enumerate(shape) if s > 1])
        base, suffix = shape[:k] + (1,) + shape[k + 1 :], f".expand{shape}"
    elif layout == "narrow" and nd >= 1:
        base, suffix = (shape[0] + 1,) + shape[1:], "[1:]"
    else:
        base, suffix = shape, ""
    if 0 in base:
        return f"T.zeros({base}, dtype=T.{dtype})", suffix
    return f"T.tensor({nested(rng, dtype, base, special, extreme)}, dtype=T.{dtype})", suffix


def bcast_partner(rng, shape):
    """A shape that broadcasts with `shape` (now and then one that does not)."""
    if rng.random() < 0.05 and shape:
        return shape[:-1] + (shape[-1] + 2,)
    out = list(shape[rng.randint(0, len(shape)) :])
    for i in range(len(out)):
        if rng.random() < 0.3:
            out[i] = 1
    return tuple(out)


def scalar(rng, kind=None):
    kind = kind or rng.choice(["bool", "int", "negint", "float", "complex", "zero", "nan"])
    return {
        "bool": rng.choice(["True", "False"]),
        "int": str(rng.randint(1, 5)),
        "negint": str(rng.randint(-5, -1)),
        "float": rng.choice(["2.5", "-0.5", "1e-3", "3.0"]),
        "complex": rng.choice(["1j", "(0.5-2j)", "complex(2, 0)"]),
        "zero": rng.choice(["0", "0.0"]),
        "nan": rng.choice(["nan", "inf", "-inf"]),
    }[kind]


def operand(rng, dtype, shape):
    r = rng.random()
    if r < 0.2:
        return scalar(rng)
    if r < 0.35:
        return tensor(rng, dtype, (), special=rng.random() < 0.2)
    lay = rng.choice(["contig", "contig", "t", "step", "expand", "narrow"])
    return tensor(rng, dtype, shape, lay, special=rng.random() < 0.2)


BINARY = """add sub mul div true_divide floor_divide remainder fmod pow maximum minimum fmax fmin eq
ne lt ge atan2 hypot copysign bitwise_and bitwise_or bitwise_xor logical_and logical_xor xlogy
nextafter float_power result_type""".split()
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<", "==", "<<", ">>"]


def case_bcast(rng):
    shape = rng.choice(SHAPES)
    other = bcast_partner(rng, shape)
    if rng.random() < 0.5:
        shape, other = other, shape
    da, db = rng.choice(ALL), rng.choice(ALL)
    a, b = operand(rng, da, shape), operand(rng, db, other)
    if not a.startswith("T.") and not b.startswith("T."):
        a = tensor(rng, da, shape)
    r = rng.random()
    if r < 0.45:
        op = rng.choice(OPERATORS)
        return f"o_{op}", f"r = ({a}) {op} ({b})", True
    if r < 0.55:
        c = operand(rng, rng.choice(ALL), rng.choice([shape, other, ()]))
        return "where", f"r = T.where({tensor(rng, 'bool', shape)}, {a}, {c})", True
    if r < 0.62:
        lo, hi = sorted(rng.sample([-1, 0, 1, 2], 2))
        x, bound = (a, b) if a.startswith("T.") else (b, a)
        args = f"{lo}, {hi}" if rng.random() < 0.3 else f"{rng.choice(['min', 'max'])}={bound}"
        return "clamp", f"r = T.clamp({x}, {args})", True
    op = rng.choice(BINARY)
    if not a.startswith("T."):
        a, b = b, a
    return op, f"r = T.{op}({a}, {b})", op != "result_type"


INPLACE = """add_ sub_ mul_ div_ floor_divide_ remainder_ fmod_ pow_ clamp_ copy_ maximum
lerp_ addcmul_ masked_fill_ abs_ neg_ zero_ fill_ sqrt_ bitwise_and_ logical_not_""".split()
UNARY_OUT = ["abs", "neg", "exp", "sin", "floor", "sqrt", "sigmoid", "round", "sign", "square"]
BINARY_OUT = ["add", "mul", "sub", "div", "maximum", "remainder", "pow", "atan2", "eq", "lt"]


def inplace_call(rng, op, shape, dtype):
    b = tensor(rng, dtype, bcast_partner(rng, shape) if rng.random() < 0.7 else (), special=True)
    if op in ("abs_", "neg_", "zero_", "sqrt_", "logical_not_"):
        return f"{op}()"
    if op == "fill_":
        return f"fill_({scalar(rng)})"
    if op == "clamp_":
        return f"clamp_({scalar(rng, 'negint')}, {scalar(rng, 'int')})"
    if op == "masked_fill_":
        return f"masked_fill_({tensor(rng, 'bool', bcast_partner(rng, shape))}, {scalar(rng)})"
    if op == "maximum":
        return f"maximum({b})"
    if op == "lerp_":
        return f"lerp_({b}, 0.25)"
    if op == "addcmul_":
        return f"addcmul_({b}, {b}, value=2)"
    if op == "copy_":
        return f"copy_({tensor(rng, rng.choice(ALL), bcast_partner(rng, shape))})"
    return f"{op}({b if rng.random() < 0.8 else scalar(rng)})"


OVERLAP = [
    "x = {x}; x[1:].add_(x[:-1]); r = x",
    "x = {x}; x[:-1].mul_(x[1:]); r = x",
    "x = {x}; T.add(x[:-1], 1, out=x[1:]); r = x",
    "x = {x}; T.neg(x[1:], out=x[:-1]); r = x",
    "x = {x}; x.add_(x); r = x",
    "x = {x}; T.mul(x, x, out=x); r = x",
    "x = {x}; x[::2].sub_(x[1::2]); r = x",
    "x = {x}; r = x[:1].expand(3, *x.shape[1:]).add_(1)",
    "x = {x}; r = x[:1].expand(3, *x.shape[1:]).copy_(T.ones(3, *x.shape[1:]))",
    "x = {x}; r = x[:1].expand(3, *x.shape[1:]).zero_()",
    "x = {x}; r = x[:1].expand(3, *x.shape[1:]).fill_(2)",
    "x = {x}; T.abs(x, out=x[:1].expand(3, *x.shape[1:])); r = x",
    "x = {x}; T.cat([x, x], out=x); r = x",
    "x = {x}; T.cat([x[:1], x[1:]], out=x[:1]); r = x",
    "x = {x}; x[1:].copy_(x[:-1]); r = x",
    "x = {x}; T.clamp(x[1:], 0, 1, out=x[:-1]); r = x",
    "x = {x}; T.where(x[1:] > 0, x[:-1], 0.0, out=x[1:]); r = x",
    "x = {x}; x[0].copy_(x[1]); r = x",
]


def case_views(rng):
    dt = rng.choice(ALL if rng.random() < 0.3 else FLOATS + INTS)
    r = rng.random()
    shape = rng.choice([(3, 4), (4, 3), (2, 3), (3, 3), (2, 1, 3), (4,), (3, 0)])
    lay = rng.choice(["t", "step", "expand", "narrow", "step"])
    if r < 0.35:
        op = rng.choice(UNARY_OUT + BINARY_OUT)
        a = tensor(rng, dt, shape, rng.choice(["contig", "t", "step", "expand"]), special=True)
        args = a if op in UNARY_OUT else f"{a}, {operand(rng, dt, bcast_partner(rng, shape))}"
        oshape = shape if rng.random() < 0.85 else (5,)
        odt = dt if rng.random() < 0.7 else rng.choice(ALL)
        src, view = tensor_parts(rng, odt, oshape, lay)
        return (
            "out_" + op,
            f"b = {src}; o = b{view}; q = T.{op}({args}, out=o); "
            "r = (q is o, b, o.shape, o.stride())",
            False,
        )
    if r < 0.75:
        op = rng.choice(INPLACE)
        src, view = tensor_parts(rng, dt, shape, lay, special=True)
        call = inplace_call(rng, op, shape, dt)
        return f"ip_{op}", f"b = {src}; v = b{view}; q = v.{call}; r = (q is v, b)", False
    i = rng.randrange(len(OVERLAP))
    x = tensor(rng, rng.choice(FLOATS + INTS), rng.choice([(3, 3), (4,), (3, 2)]))
    return f"overlap{i}", OVERLAP[i].format(x=x), False


INTDIV = [
    "T.floor_divide({a}, {b})",
    "T.div({a}, {b}, rounding_mode='floor')",
    "T.div({a}, {b}, rounding_mode='trunc')",
    "T.div({a}, {b})",
    "T.remainder({a}, {b})",
    "T.fmod({a}, {b})",
    "({a}) // ({b})",
    "({a}) % ({b})",
    "({a}).floor_divide_({b})",
    "({a}).remainder_({b})",
    "({a}).fmod_({b})",
    "({a}).div_({b}, rounding_mode='trunc')",
    "({a}) + ({b})",
    "({a}) - ({b})",
    "({a}) * ({b})",
    "({a}) ** ({b})",
    "T.bitwise_left_shift({a}, {b})",
    "T.bitwise_right_shift({a}, {b})",
]
INT_UNARY = ["-{a}", "T.abs({a})", "{a}.sum()", "{a}.prod()", "{a}.cumsum(0)", "T.square({a})"]
INT_UNARY += ["{a}.sum(dtype=T.int8)", "T.sign({a})", "{a}.mean()", "T.bitwise_not({a})"]


def case_intdiv(rng):
    dt = rng.choice(INTS + INTS + ["bool", "float32", "float16"])
    shape = rng.choice([(4,), (2, 3), ()])
    lay = rng.choice(["contig", "t", "step"])
    if rng.random() < 0.2:
        form = rng.choice(INT_UNARY)
        return label(form), "r = " + form.format(a=tensor(rng, dt, shape, lay, extreme=True)), False
    form = rng.choice(INTDIV)
    # INT_MIN / -1 traps (SIGFPE) in torch's own int32/int64 kernels: no extremes to divide there
    divides = any(k in form for k in ("div", "/", "%", "remainder", "fmod"))
    a = tensor(rng, dt, shape, lay, extreme=not (divides and dt in ("int32", "int64")))
    db = dt if rng.random() < 0.7 else rng.choice(INTS + ["bool", "float32"])
    if rng.random() < 0.4:
        b = rng.choice(["0", "-1", "-3", "2", "0.0", "-2.5", "True", "64", "8", "-1"])
    else:
        b = tensor(rng, db, shape if rng.random() < 0.7 else (), extreme=rng.random() < 0.3)
    return label(form), "r = " + form.format(a=a, b=b), False


NAN_OPS = [
    "T.max({x})",
    "T.min({x})",
    "T.max({x}, {d})",
    "T.min({x}, {d}, keepdim=True)",
    "T.amax({x}, {d})",
    "T.amin({x})",
    "T.argmax({x})",
    "T.argmin({x}, {d})",
    "T.argmax({x}, {d}, keepdim=True)",
    "T.clamp({x}, min={s})",
    "T.clamp({x}, {s}, {s2})",
    "T.clamp({x}, max={x2})",
    "T.sort({x}, {d})",
    "T.sort({x}, {d}, descending=True)",
    "T.sort({x}, stable=True, dim={d})",
    "T.argsort({x}, {d}, descending=True)",
    "T.topk({x}, 1, {d})",
    "T.topk({x}, 2, {d}, largest=False)",
    "T.unique({x})",
    "T.unique({x}, return_counts=True, return_inverse=True)",
    "T.unique({x}, dim={d})",
    "T.unique_consecutive({x}, return_counts=True)",
    "T.maximum({x}, {x2})",
    "T.minimum({x}, {x2})",
    "T.fmax({x}, {x2})",
    "T.fmin({x}, {x2})",
    "T.cummax({x}, {d})",
    "T.cummin({x}, {d})",
    "T.median({x})",
    "T.median({x}, {d})",
    "T.nanmedian({x}, {d})",
    "T.kthvalue({x}, 1, {d})",
    "T.msort({x})",
    "T.aminmax({x})",
    "T.mode({x}, {d})",
    "T.logsumexp({x}, {d})",
    "T.softmax({x}, {d})",
    "T.nansum({x}, {d})",
    "T.nanmean({x})",
    "T.sign({x})",
    "T.round({x})",
    "T.isclose({x}, {x2}, equal_nan=True)",
    "{x} == {x2}",
    "T.nan_to_num({x})",
    "T.max({x}, {x2})",
    "T.sort({x}).values.unique()",
    "T.searchsorted(T.sort({x}.reshape(-1)).values, {x2})",
    "T.histc({x}, 3)",
    "T.sum({x}, {d})",
    "T.prod({x}, {d})",
    "T.cumsum({x}, {d})",
    "T.std({x}, {d})",
    "T.var({x})",
    "T.norm({x})",
    "T.dist({x}, {x2})",
    "T.heaviside({x}, {x2})",
]


def case_nan(rng):
    dt = rng.choice(FLOATS + ["float32", "float64"])
    shape = rng.choice([(5,), (2, 3), (3, 2), (4, 1)])
    lay = rng.choice(["contig", "contig", "t", "step"])
    x, x2 = tensor(rng, dt, shape, lay, special=True), tensor(rng, dt, shape, special=True)
    form = rng.choice(NAN_OPS)
    d = rng.choice(range(-len(shape), len(shape)))
    s, s2 = rng.choice(["nan", "0.0", "-inf", "1", "-0.0"]), rng.choice(["nan", "2.0", "inf"])
    return label(form), "r = " + form.format(x=x, x2=x2, d=d, s=s, s2=s2), False


REDUCE = [
    "T.sum({x}{dim}{kd})",
    "T.prod({x}{d1}{kd})",
    "T.mean({x}{dim}{kd})",
    "T.nansum({x}{dim}{kd})",
    "T.nanmean({x}{dim}{kd})",
    "T.amax({x}{dim}{kd})",
    "T.amin({x}{dim}{kd})",
    "T.max({x}{d1}{kd})",
    "T.min({x}{d1}{kd})",
    "T.argmax({x}{d1}{kd})",
    "T.argmin({x}{d1}{kd})",
    "T.std({x}{dim}{kd})",
    "T.var({x}{dim}, correction=0{kd})",
    "T.logsumexp({x}{dim}{kd})",
    "T.all({x}{dim}{kd})",
    "T.any({x}{dim}{kd})",
    "T.norm({x}, 2{dim}{kd})",
    "T.count_nonzero({x}{dim})",
    "T.median({x}{d1}{kd})",
    "T.mode({x}{d1}{kd})",
    "T.aminmax({x}, dim={one}{kd})",
    "T.cumsum({x}{d1})",
    "T.cumprod({x}{d1})",
    "T.logcumsumexp({x}{d1})",
    "T.var_mean({x}{dim}{kd})",
    "T.std_mean({x}{dim}{kd})",
    "T.softmax({x}{d1})",
    "T.linalg.vector_norm({x}, 1{dim}{kd})",
    "{x}.sum({dimkw}{kd})",
    "T.max({x})",
    "T.min({x})",
    "T.argmax({x})",
    "T.median({x})",
    "T.amax({x})",
]


def case_reduce(rng):
    dt = rng.choice(ALL)
    shape = rng.choice([(0,), (2, 0), (0, 3), (2, 0, 3), (), (3,), (2, 3), (1, 0)])
    x = tensor(rng, dt, shape, rng.choice(["contig", "t", "step"]))
    nd = max(len(shape), 1)
    one = rng.choice(list(range(-nd, nd)) + [nd, -nd - 1] * (rng.random() < 0.1))
    tup = rng.choice([(), (0,), (-1,), (0, -1), (-1, 0), (0, 0), (0, 1), (1, 2), (0, 1, 2)])
    form = rng.choice(REDUCE)
    dim = rng.choice(["", f", {one}", f", {tup}", f", {list(tup)}"])
    kd = rng.choice(["", ", keepdim=True", ", keepdim=False"])
    if "{d1}" in form and "{kd}" in form and rng.random() < 0.3:
        kd, d1 = "", ""
    else:
        d1 = f", {one}"
    if "{kd}" in form and not dim and "{dim}" in form:
        kd = ""  # no keepdim without a dim: a different overload
    text = form.format(x=x, dim=dim, d1=d1, kd=kd, one=one, dimkw=f"dim={tup}")
    return label(form), "r = " + text, False


GEN = {"bcast": case_bcast, "views": case_views, "intdiv": case_intdiv}
GEN |= {"nan": case_nan, "reduce": case_reduce}


def label(form):
    """The op a case template calls: `T.name(`, `.name(` or a binary operator."""
    m = re.search(r"T\.([\w.]+)\(|\}\)?\.(\w+)\(|\)? ([^\w\s(]+) \(?\{|^(-)\{", form)
    return next(g for g in m.groups() if g) if m else form


def cases(family, seed, n):
    out = []
    for i in range(n):
        rng = random.Random(f"{family}:{seed}:{i}")
        op, code, strides = GEN[family](rng)
        out.append((family + ":" + op, code, strides))
    return out


def run(T, code):
    env = {"T": T, "nan": math.nan, "inf": math.inf}
    exec(code, env)  # noqa: S102 -- the generator's own statements
    return env["r"]


def to_py(T, r):
    if isinstance(r, (tuple, list)) and not isinstance(r, T.Size):
        return ["seq", [to_py(T, v) for v in r]]
    if isinstance(r, T.Tensor):
        v = r.detach().resolve_conj().resolve_neg()
        dt = str(r.dtype).split(".")[-1]
        if v.is_complex():
            vals = [[z.real, z.imag] for z in v.to(T.complex128).reshape(-1).tolist()]
        elif v.dtype.is_floating_point:
            vals = v.to(T.float64).reshape(-1).tolist()
        else:
            vals = (
                v.to(T.int64).reshape(-1).tolist() if v.dtype != T.bool else v.reshape(-1).tolist()
            )
        return ["tensor", dt, list(r.shape), list(r.stride()), vals]
    if isinstance(r, T.dtype):
        return ["dtype", str(r).split(".")[-1]]
    if isinstance(r, (bool, int, float, complex)):
        return ["num", type(r).__name__, [complex(r).real, complex(r).imag]]
    return ["other", type(r).__name__, str(list(r)) if isinstance(r, T.Size) else str(r)[:80]]


ULPS = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 4e-6, "complex64": 4e-6}


def close(x, y, dtype):
    if dtype == "bool" or dtype in INTS:
        return x == y
    tol = ULPS.get(dtype, 1e-12)
    x, y = [float(v) for v in _flat(x)], [float(v) for v in _flat(y)]
    for a, b in zip(x, y):
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                return False
        elif math.isinf(a) or math.isinf(b):
            if a != b:
                return False
        elif abs(a - b) > tol * max(abs(a), abs(b)) + tol * 1e-3:
            return False
    return True


def _flat(v):
    return [w for p in v for w in (p if isinstance(p, list) else [p])]


def compare(e, t, strides):
    """The worst difference between ember's result `e` and torch's `t`, or None."""
    if e[0] != t[0]:
        return "value", f"kind {e[0]} vs {t[0]}"
    if e[0] == "seq":
        if len(e[1]) != len(t[1]):
            return "shape", f"{len(e[1])} results vs {len(t[1])}"
        found = [compare(a, b, strides) for a, b in zip(e[1], t[1])]
        found = [f for f in found if f]
        return min(found, key=lambda f: ORDER.index(f[0])) if found else None
    if e[0] == "tensor":
        if e[1] != t[1]:
            return "dtype", f"{e[1]} vs {t[1]}"
        if e[2] != t[2]:
            return "shape", f"{e[2]} vs {t[2]}"
        if not close(e[4], t[4], e[1]):
            return "value", f"{e[4][:6]} vs {t[4][:6]}"
        # a size-1 dim's stride is arbitrary (torch documents none); an empty tensor has no layout
        if strides and 0 not in e[2] and any(n > 1 and a != b for n, a, b in zip(e[2], e[3], t[3])):
            return "stride", f"{e[3]} vs {t[3]}"
        return None
    if e[0] == "num" and e[1] != t[1]:
        return "dtype", f"{e[1]} {e[2]} vs {t[1]} {t[2]}"
    if e[0] == "num" and not close(e[2], t[2], "float64"):
        return "value", f"{e[2]} vs {t[2]}"
    return None if e[0] == "num" or e == t else ("value", f"{e} vs {t}")


def outcome(T, code):
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", to_py(T, run(T, code)))
    except Exception as e:  # noqa: BLE001 -- the class is what is compared
        return ("exc", type(e).__name__, (str(e).strip().split("\n") or [""])[0][:200])


def judge(code, strides):
    import torch

    import ember

    te, ee = outcome(torch, code), outcome(ember, code)
    if te[0] == "exc" and ee[0] == "exc":
        if te[1] != ee[1]:
            return "exc_class", f"{ee[1]}: {ee[2]} | torch {te[1]}: {te[2]}"
        if te[2] and te[2] not in ee[2]:
            return "exc_msg", f"{ee[2]} | torch: {te[2]}"
        return None
    if te[0] == "exc":
        return "torch_raises", f"torch {te[1]}: {te[2]}"
    if ee[0] == "exc":
        return "ember_raises", f"{ee[1]}: {ee[2]}"
    return compare(ee[1], te[1], strides)


def worker(family, seed, n, start, logp):
    cs = cases(family, seed, n)
    with open(logp, "a") as log:
        for i in range(start, n):
            log.write(json.dumps({"i": i, "start": True}) + "\n")
            log.flush()
            log.write(json.dumps({"i": i, "res": judge(cs[i][1], cs[i][2])}) + "\n")
            log.flush()


def run_family(family, seed, n):
    os.makedirs(LOG_DIR, exist_ok=True)
    logp = os.path.join(LOG_DIR, f"log_{family}_{seed}.jsonl")
    return run_resuming(
        lambda start: [__file__, "--worker", family, str(seed), str(n), str(start), logp],
        logp,
        n,
        lambda i: {"i": i, "res": ["CRASH", ""]},
    )


def summary(family, seed, n, logp, detail=None):
    cs = cases(family, seed, n)
    rows = [json.loads(line) for line in open(logp)]
    rows = [r for r in rows if r.get("res")]
    by = defaultdict(list)
    for r in rows:
        by[(r["res"][0], cs[r["i"]][0])].append((cs[r["i"]][1], r["res"][1]))
    counts = defaultdict(int)
    for (kind, _), found in by.items():
        counts[kind] += len(found)
    line = ", ".join(f"{k} {counts[k]}" for k in ORDER if counts[k])
    print(f"{family} (seed {seed}): {len(rows)} of {n} cases differ: {line}")
    for (kind, op), found in sorted(by.items(), key=lambda kv: (ORDER.index(kv[0][0]), kv[0][1])):
        if detail is None:
            code, text = found[0]
            print(f"  {kind:12} {op:28} {len(found):4}  {code[:150]}\n{'':48}{text[:150]}")
        elif kind == detail:
            for code, text in found:
                print(f"  {op:28} {code}\n{'':32}{text[:200]}")


def main(argv):
    seed, n, detail = 0, 300, None
    for flag in ("--seed", "--cases", "--detail"):
        if flag in argv:
            k = argv.index(flag)
            val = argv[k + 1]
            argv = argv[:k] + argv[k + 2 :]
            seed, n, detail = (
                (int(val), n, detail)
                if flag == "--seed"
                else (seed, int(val), detail)
                if flag == "--cases"
                else (seed, n, val)
            )
    for family in argv or FAMILIES:
        summary(family, seed, n, run_family(family, seed, n), detail)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        a = sys.argv[2:]
        worker(a[0], int(a[1]), int(a[2]), int(a[3]), a[4])
    else:
        main(sys.argv[1:])
