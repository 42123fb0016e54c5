"""Fuzz families at PyTorch's edges (issue 19): keyword and overload forms, special values
(inf, nan, -0.0, float extremes, the ends of every integer range), Python scalars and bools
where a Tensor belongs, in-place ops, reductions and sorts over every layout, matmul,
activations and norms on special values, autograd (repeated and double backward) and
conversions to Python scalars.

Programs that are more than one call (autograd, conversions) are ``prog:<name>`` cases: the
function in PROGRAMS runs on either library with the case's realised arguments.
"""

from __future__ import annotations

import numpy as np
from harness import Case
from hypothesis import strategies as st
from op_db import ALL, Dt, T, is_float, quantize
from strategies import LAYOUTS, chance, dim_of, laid_out, shapes

NAN, INF = float("nan"), float("inf")
FLOAT_SPECIALS = (0.0, -0.0, 1.0, -1.0, 2.5, -0.5, INF, -INF, NAN, 1e38, -3e38, 3e38, 1e-45, 88.7)
# Where several elements are summed (reductions, matmul, norms, losses), finite values near the
# float max are left out: which partial sum overflows first depends on the order of accumulation
# (torch's vector lanes versus ember's), so inf + -inf = nan in one library and inf in the other
# is no semantic difference. Elementwise ops and activations get them.
SUMMED_SPECIALS = (0.0, -0.0, 1.0, -1.0, 2.5, -0.5, INF, -INF, NAN, 1e-45, 88.7, 1e4)
INT_LIMITS = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
# Python scalars a caller passes: ordinary, special, out of every integer range, and bools
SCALARS = (0, 1, -1, 2, 2.5, -1.75, True, False, INF, -INF, NAN, 300, -129, 2**31, 2**63 - 1, 1e40)
EDGE_DTYPES = ("float32",) * 5 + ("float64", "float64", "int64", "int64", "int32") + ALL


def _special_values(dtype, rng, shape, summed=False):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if is_float(dtype):
        pool = np.array(SUMMED_SPECIALS if summed else FLOAT_SPECIALS, dtype=np.float64)
        if dtype in ("float16", "bfloat16"):
            pool = np.where(np.abs(pool) > 6e4, np.sign(pool) * INF, pool)
        ordinary = rng.uniform(-3, 3, size=shape).round(2)
        pick = pool[rng.integers(0, pool.size, size=shape)]
        return np.where(rng.random(shape) < 0.35, pick, ordinary)
    lo, hi = INT_LIMITS[dtype]
    pool = np.array([lo, hi, lo + 1, hi - 1, 0, 1, 2, 7], dtype=object)
    ordinary = rng.integers(max(lo, -5), 6, size=shape).astype(object)
    pick = pool[rng.integers(0, pool.size, size=shape)]
    return np.where(rng.random(shape) < 0.35, pick, ordinary)


@st.composite
def special_tensors(
    draw, shape=None, dtype=None, min_dims=0, max_dims=3, layout=None, summed=False
):
    """A T holding special values (inf, nan, -0.0, extremes, integer limits) in a random layout;
    summed: no finite values near the float max (see SUMMED_SPECIALS)."""
    shape = tuple(draw(shapes(min_dims, max_dims)) if shape is None else shape)
    dtype = dtype or draw(st.sampled_from(EDGE_DTYPES))
    layout = layout or draw(st.sampled_from(LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = _special_values(dtype, rng, shape, summed)
    if not is_float(dtype) and dtype != "bool":
        values = np.array(values.tolist() if shape else values.item(), dtype=np.int64)
        if dtype == "uint8":
            values = values.astype(np.uint8)
    return laid_out(quantize(values, dtype), dtype, layout)


def scalars():
    return st.sampled_from(SCALARS)


# ----------------------------------------------------------------------------- creation


@st.composite
def creation_kw_cases(draw):
    """Creation functions with size= / dtype= keywords, varargs or sequence sizes, *_like with
    out-of-range fills and non-tensor inputs, deep nesting, integer arange on float bounds."""
    how = draw(
        st.sampled_from(
            ("ones", "zeros", "empty", "full", "like", "arange", "nested", "rand", "tensor_kw")
        )
    )
    size = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 3)))]
    dtype = {"dtype": Dt(draw(st.sampled_from(ALL)))} if chance(draw, 50) else {}
    form = draw(st.sampled_from(("kw", "kw_tuple", "seq", "varargs")))
    if how in ("ones", "zeros", "empty", "rand"):
        if how == "rand" and dtype and not is_float(dtype["dtype"].name):
            dtype = {}
        compare = "shape" if how in ("empty", "rand") else "values"
        if form == "kw":
            return Case(how, (), {"size": size, **dtype}, compare=compare)
        if form == "kw_tuple":
            return Case(how, (), {**dtype, "size": tuple(size)}, compare=compare)
        if form == "seq":
            return Case(how, (tuple(size),), dtype, compare=compare)
        return Case(how, tuple(size), dtype, compare=compare)
    if how == "full":
        value = draw(scalars())
        if form in ("kw", "kw_tuple"):
            return Case("full", (), {"size": size, "fill_value": value, **dtype})
        return Case("full", (size, value), dtype)
    if how == "like":
        fn = draw(st.sampled_from(("full_like", "ones_like", "zeros_like", "empty_like")))
        x = draw(special_tensors()) if chance(draw, 85) else draw(scalars())
        args = (x, draw(scalars())) if fn == "full_like" else (x,)
        return Case(fn, args, dtype, compare="shape" if fn == "empty_like" else "values")
    if how == "arange":
        end = draw(st.sampled_from((0.5, 2.5, -0.5, 3, 1e-9, 4.0)))
        if chance(draw, 50):
            return Case("arange", (end,), {"dtype": Dt(draw(st.sampled_from(("int64", "int32"))))})
        start = draw(st.sampled_from((0, 0.5, -1.5, 1)))
        return Case("arange", (start, end), {"step": draw(st.sampled_from((1, 0.5, 2, -1)))})
    if how == "nested":
        depth = draw(st.sampled_from((1, 5, 63, 64, 65, 100, 300)))
        data = 1.5
        for _ in range(depth):
            data = [data]
        if chance(draw, 50):  # printing or .numpy() of what was built
            return Case("prog:tensor_numpy", (data,), compare="shape")
        return Case("tensor", (data,), compare="shape")
    data = draw(st.sampled_from(([1, 2], [1.5, NAN], [[True, False]], [INF], 2**40, 3.0, True)))
    return Case("tensor", (data,), {**dtype} if chance(draw, 50) else {})


# ----------------------------------------------------------------------------- elementwise

UNARY = (
    "abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan tanh sinh cosh asin acos "
    "atan asinh acosh atanh sigmoid erf erfc ceil floor round trunc frac sign sgn reciprocal "
    "square isnan isinf isfinite isposinf isneginf signbit nan_to_num logical_not bitwise_not "
    "relu deg2rad rad2deg"
).split()
BINARY = (
    "add sub mul div true_divide floor_divide remainder fmod pow atan2 maximum minimum fmax fmin "
    "eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor "
    "hypot copysign lerp isclose allclose equal xlogy nextafter"
).split()


@st.composite
def elementwise_cases(draw):
    """Unary and binary ops on special values; the second operand a tensor, a 0-d tensor or a
    Python scalar (bools included), positional or as other=, as function or method."""
    x = draw(special_tensors())
    if chance(draw, 35):
        op = draw(st.sampled_from(UNARY))
        return Case(draw(st.sampled_from((op, f"Tensor.{op}"))), (x,))
    op = draw(st.sampled_from(BINARY))
    kind = draw(st.sampled_from(("same", "same", "scalar", "zero_d", "broadcast")))
    dt = x.dtype if chance(draw, 70) else draw(st.sampled_from(EDGE_DTYPES))
    if kind == "same":
        y = draw(special_tensors(shape=x.shape, dtype=dt))
    elif kind == "zero_d":
        y = draw(special_tensors(shape=(), dtype=dt))
    elif kind == "broadcast":
        y = draw(special_tensors(shape=x.shape[-1:], dtype=dt))
    else:
        y = draw(scalars())
    if op == "lerp":
        w = draw(scalars()) if chance(draw, 50) else draw(special_tensors(shape=(), dtype=x.dtype))
        return Case("lerp", (x, y, w))
    if op in ("isclose", "allclose"):
        return Case(op, (x, y), {"equal_nan": draw(st.booleans())})
    fn = draw(st.sampled_from((op, f"Tensor.{op}")))
    if chance(draw, 25) and op not in ("equal", "allclose"):
        key = "exponent" if op == "pow" else "other"
        return Case(fn, (x,), {key: y})
    return Case(fn, (x, y))


# ----------------------------------------------------------------------------- in-place

INPLACE = (
    "add_ sub_ mul_ div_ clamp_ copy_ fill_ masked_fill_ zero_ abs_ neg_ exp_ floor_ "
    "pow_ remainder_ maximum clamp_min_ clamp_max_ lerp_ logical_or_ sqrt_"
).split()


@st.composite
def inplace_cases(draw):
    x = draw(special_tensors(layout="contiguous"))
    op = draw(st.sampled_from(INPLACE))
    if op in ("zero_", "abs_", "neg_", "exp_", "floor_", "sqrt_"):
        return Case(f"Tensor.{op}", (x,))
    if op == "fill_" or op == "copy_" and chance(draw, 40):
        return Case(f"Tensor.{op}", (x, draw(scalars())))
    if op == "masked_fill_":
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        mask = T(rng.random(x.shape) < 0.5, "bool")
        return Case("Tensor.masked_fill_", (x, mask, draw(scalars())))
    if op == "clamp_":
        lo = draw(scalars()) if chance(draw, 50) else draw(special_tensors(shape=x.shape))
        hi = draw(scalars()) if chance(draw, 50) else draw(special_tensors(shape=x.shape))
        if chance(draw, 50):
            return Case(draw(st.sampled_from(("Tensor.clamp_", "clamp"))), (x,), {"min": lo})
        return Case(draw(st.sampled_from(("Tensor.clamp_", "clamp"))), (x, lo, hi))
    if op == "lerp_":
        y = draw(special_tensors(shape=x.shape, dtype=x.dtype))
        return Case("Tensor.lerp_", (x, y, draw(scalars())))
    other = draw(scalars()) if chance(draw, 50) else draw(special_tensors(shape=x.shape))
    return Case(f"Tensor.{op}", (x, other))


@st.composite
def setitem_value_cases(draw):
    """x[index] = value with values out of the dtype's range, lists, tensors of other dtypes."""
    x = draw(special_tensors(min_dims=1, layout="contiguous"))
    index = draw(st.sampled_from((Ellipsis, 0, slice(None, 2), slice(None), (Ellipsis, 0))))
    value = (
        draw(scalars())
        if chance(draw, 70)
        else draw(st.sampled_from(([1.0, 2.0], (3,), None, "abc")))
    )
    return Case("setitem", (x, index, value))


# ----------------------------------------------------------------------------- reductions

REDUCE = (
    "sum prod mean amax amin max min argmax argmin median nanmedian std var logsumexp norm "
    "cumsum cumprod sort argsort topk kthvalue mode all any nansum nanmean count_nonzero msort "
    "cummax cummin unique"
).split()
NEEDS_DIM = ("cumsum", "cumprod", "cummax", "cummin")


@st.composite
def reduction_cases(draw):
    """Reductions, scans and sorts over special values in every layout (stride-0 included),
    with dim as positional or keyword, keepdim, dim out of range."""
    x = draw(special_tensors(max_dims=3, summed=True))
    op = draw(st.sampled_from(REDUCE))
    nd = x.ndim
    compare = "first" if op in ("max", "min", "median", "nanmedian", "kthvalue", "mode") else None
    compare = compare or ("shape" if op in ("argmax", "argmin", "argsort") else "values")
    if op == "topk":
        k = draw(st.integers(0, 3))
        return Case("topk", (x, k), {"dim": dim_of(draw, nd)} if chance(draw, 50) else {}, "first")
    if op == "kthvalue":
        return Case("kthvalue", (x, draw(st.integers(0, 3))), {}, "first")
    if op in NEEDS_DIM or chance(draw, 60):
        d = dim_of(draw, nd)
        kw = {"dim": d} if chance(draw, 50) else {}
        args = (x,) if kw else (x, d)
        if op not in NEEDS_DIM + ("sort", "argsort", "msort", "count_nonzero", "unique"):
            if chance(draw, 40):
                kw["keepdim"] = True
        if op in ("msort", "unique"):
            args, kw = (x,), {}
        return Case(draw(st.sampled_from((op, f"Tensor.{op}"))), args, kw, compare)
    return Case(op, (x,), {}, compare)


# ----------------------------------------------------------------------------- matmul & nn


@st.composite
def matmul_cases(draw):
    dt = draw(st.sampled_from(("float32", "float32", "float64", "int64", "int32")))
    op = draw(st.sampled_from(("mm", "matmul", "bmm", "baddbmm", "addmm", "dot", "mv", "outer")))
    n, k, m = (draw(st.integers(0, 3)) for _ in range(3))
    shapes_ = {
        "mm": ((n, k), (k, m)),
        "matmul": ((n, k), (k,)),
        "bmm": ((2, n, k), (2, k, m)),
        "baddbmm": ((n, m), (2, n, k), (2, k, m)),
        "addmm": ((n, m), (n, k), (k, m)),
        "dot": ((k,), (k,)),
        "mv": ((n, k), (k,)),
        "outer": ((n,), (m,)),
    }[op]
    if chance(draw, 15):  # a rank too low or a dim that does not match
        shapes_ = tuple(s[1:] if len(s) > 1 and chance(draw, 50) else s for s in shapes_)
    ts = tuple(draw(special_tensors(shape=s, dtype=dt, summed=True)) for s in shapes_)
    return Case(op, ts)


ACTIVATIONS = (
    "gelu silu softplus elu selu celu mish logsigmoid hardtanh leaky_relu relu6 softsign "
    "hardswish hardsigmoid tanhshrink sigmoid tanh"
).split()


@st.composite
def nn_special_cases(draw):
    """Activations, softmax, norms, losses, convolutions on special values and stride-0 rows."""
    how = draw(st.sampled_from(("act", "act", "softmax", "norm", "loss", "conv", "normalize")))
    fdt = draw(st.sampled_from(("float32", "float32", "float64")))
    if how == "act":
        fn = draw(st.sampled_from(ACTIVATIONS))
        kw = {"approximate": "tanh"} if fn == "gelu" and chance(draw, 30) else {}
        return Case(f"F.{fn}", (draw(special_tensors(dtype=fdt)),), kw)
    if how == "softmax":
        x = draw(special_tensors(min_dims=1, dtype=fdt, summed=True))
        fn = draw(st.sampled_from(("softmax", "log_softmax", "softmin")))
        return Case(f"F.{fn}", (x, dim_of(draw, x.ndim)))
    if how == "norm":
        c = draw(st.integers(1, 3))
        x = draw(special_tensors(shape=(2, c), dtype=fdt, summed=True))
        w, b = (draw(special_tensors(shape=(c,), dtype=fdt, summed=True)) for _ in range(2))
        if chance(draw, 50):
            return Case("F.layer_norm", (x, (c,), w, b))
        mean = draw(special_tensors(shape=(c,), dtype=fdt, summed=True))
        var = T(np.abs(quantize(np.ones(c), fdt)), fdt)
        return Case("F.batch_norm", (x, mean, var, w, b), {"training": draw(st.booleans())})
    if how == "normalize":
        x = draw(special_tensors(min_dims=1, dtype=fdt, summed=True))
        return Case("F.normalize", (x,), {"dim": dim_of(draw, x.ndim)})
    if how == "loss":
        fn = draw(st.sampled_from(("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")))
        x = draw(special_tensors(dtype=fdt, summed=True))
        y = draw(special_tensors(shape=x.shape, dtype=fdt, summed=True))
        return Case(f"F.{fn}", (x, y))
    dt = draw(st.sampled_from((fdt, fdt, "int32", "int64")))
    x = draw(special_tensors(shape=(1, 1, 4), dtype=dt, summed=True))
    w = draw(special_tensors(shape=(1, 1, 2), dtype=dt, summed=True))
    return Case("F.conv1d", (x, w))


# ----------------------------------------------------------------------------- programs


def _leaf(m, x):
    return x.detach().clone().requires_grad_(True)


def backward_twice(m, x, op):
    """y = op(x).sum(); y.backward() twice: legal where the graph saved nothing."""
    x = _leaf(m, x)
    y = getattr(x, op)() if op else x
    y = y.sum()
    y.backward()
    y.backward()
    return x.grad


def backward_retain(m, x, op):
    x = _leaf(m, x)
    y = getattr(x, op)().sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


def double_backward(m, x, op):
    x = _leaf(m, x)
    (g,) = m.autograd.grad(getattr(x, op)().sum(), x, create_graph=True)
    (gg,) = m.autograd.grad(g.sum(), x, allow_unused=True)
    return g, gg


def binary_grad(m, a, b, op):
    a, b = _leaf(m, a), _leaf(m, b)
    getattr(m, op)(a, b).sum().backward()
    return a.grad, b.grad


def unary_grad(m, x, op):
    x = _leaf(m, x)
    getattr(x, op)().sum().backward()
    return x.grad


def backward_nonscalar(m, x):
    x = _leaf(m, x)
    (x * 2).backward()
    return x.grad


def tensor_numpy(m, data):
    return m.tensor(data).numpy().shape


def convert(m, x, how):
    if how == "item":
        return x.item()
    if how == "tolist":
        return x.tolist()
    if how == "len":
        return len(x)
    if how == "index":
        return [10, 20, 30][x]
    return {"float": float, "int": int, "bool": bool, "complex": complex}[how](x)


PROGRAMS = {
    f.__name__: f
    for f in (
        backward_twice,
        backward_retain,
        double_backward,
        binary_grad,
        unary_grad,
        backward_nonscalar,
        tensor_numpy,
        convert,
    )
}
GRAD_UNARY = "exp tanh sigmoid sqrt abs relu sin log square".split()
GRAD_BINARY = "maximum minimum fmax fmin mul div atan2 hypot pow".split()


@st.composite
def autograd_cases(draw):
    dt = draw(st.sampled_from(("float32", "float64", "float64")))
    x = draw(special_tensors(dtype=dt, max_dims=2) if chance(draw, 40) else _plain(dt))
    how = draw(st.sampled_from(tuple(PROGRAMS)[:-2]))
    if how == "backward_twice":
        op = draw(st.sampled_from((None, "clone", "neg", "exp", "view_as_self")))
        op = "flatten" if op == "view_as_self" else op
        return Case("prog:backward_twice", (x, op), compare="values")
    if how == "binary_grad":
        y = draw(special_tensors(shape=x.shape, dtype=dt))
        return Case("prog:binary_grad", (x, y, draw(st.sampled_from(GRAD_BINARY))))
    if how == "backward_nonscalar":
        return Case("prog:backward_nonscalar", (x,))
    return Case(f"prog:{how}", (x, draw(st.sampled_from(GRAD_UNARY))))


def _plain(dt):
    return st.builds(
        lambda s, seed: T(
            quantize(np.random.default_rng(seed).uniform(0.5, 2, size=s), dt), dt, "contiguous"
        ),
        shapes(0, 2),
        st.integers(0, 2**32 - 1),
    )


@st.composite
def conversion_cases(draw):
    x = draw(special_tensors(shape=draw(st.sampled_from(((), (1,), (2,), (0,), (1, 1))))))
    how = draw(
        st.sampled_from(("float", "int", "bool", "complex", "item", "tolist", "len", "index"))
    )
    return Case("prog:convert", (x, how))


@st.composite
def wrong_type_cases(draw):
    """Python bools, numbers and ints where torch requires a Tensor or a tuple of ints."""
    x = draw(special_tensors(min_dims=1, dtype=draw(st.sampled_from(("float32", "int64")))))
    s = draw(scalars())
    how = draw(
        st.sampled_from(
            (
                ("minimum", (x, s)),
                ("fmin", (x, s)),
                ("maximum", (x, s)),
                ("Tensor.logical_or", (x, s)),
                ("logical_and", (x, s)),
                ("equal", (x, s)),
                ("full_like", (s, s)),
                ("flip", (x, -1)),
                ("flip", (x, [0])),
                ("roll", (x, 1, 0)),
                ("permute", (x, 0)),
                ("index_select", (x, 0, s)),
                ("where", (T(np.array([True]), "bool"), x, s)),
                ("Tensor.copy_", (x, s)),
                ("Tensor.expand", (x, -1)),
                ("tensor_split", (x, [3, 1])),
                ("tensor_split", (x, 2)),
                ("Tensor.view", (x, -1)),
                ("Tensor.reshape", (x, (-1,))),
                ("Tensor.repeat", (x, 2)),
            )
        )
    )
    return Case(*how)


EDGE_STRATEGIES = (
    creation_kw_cases(),
    elementwise_cases(),
    elementwise_cases(),
    inplace_cases(),
    setitem_value_cases(),
    reduction_cases(),
    reduction_cases(),
    matmul_cases(),
    nn_special_cases(),
    autograd_cases(),
    conversion_cases(),
    wrong_type_cases(),
)
