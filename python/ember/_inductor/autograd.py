"""Autograd of fused kernels (Note [Fused region autograd]).

A pointwise kernel whose ops all have a rule in DERIV gets a generated backward kernel: it
recomputes the forward expression from the saved inputs and runs reverse-mode differentiation
over it in the same loop, writing d(loss)/d(load) for every load of an input that needs a
gradient; a load that broadcasts its whole input (identity, a bias, a transposed input) turns
into that input's gradient by a sum over the broadcast dimensions. Other kernels (reductions,
views that are not broadcasts, ops without a rule here) recompute their region with ember's
eager ops and differentiate that. Either way the rules are eager's own formulas, so gradients
equal eager's.
"""

from __future__ import annotations

from .codegen import CTYPE, flat_kernel
from .ir import Buffer, Const, Load, Op, walk
from .ops import _lit

_LN2, _LN10, _2_SQRTPI = 0.6931471805599453, 2.302585092994046, 1.1283791670955126


def _gelu(T, a, r, g, approximate="none"):
    if approximate == "none":
        cdf = f"{T}(0.5) * ({T}(1) + vm::fast_erf(({a}) * {T}(0.70710678118654752440)))"
        pdf = f"vm::fast_exp({T}(-0.5) * ({a}) * ({a})) * {T}(0.39894228040143267794)"
        return [f"({g}) * ({cdf} + ({a}) * {pdf})"]
    inner = f"{T}(0.79788456080286535588) * (({a}) + {T}(0.044715) * ({a}) * ({a}) * ({a}))"
    th = f"vm::fast_tanh({inner})"
    return [
        f"({g}) * ({T}(0.5) * ({T}(1) + {th}) + {T}(0.5) * ({a}) * ({T}(1) - {th} * {th}) * "
        f"{T}(0.79788456080286535588) * ({T}(1) + {T}(3) * {T}(0.044715) * ({a}) * ({a})))"
    ]


def _elu(T, a, r, g, alpha=1.0, scale=1.0, input_scale=1.0):
    neg = f"{_lit(T, input_scale * alpha * scale)} * vm::fast_exp(({a}) * {_lit(T, input_scale)})"
    return [f"(({a}) <= {T}(0) ? ({g}) * {neg} : ({g}) * {_lit(T, scale)})"]


def _softplus(T, a, r, g, beta=1.0, threshold=20.0):
    z = f"vm::fast_exp(({a}) * {_lit(T, beta)})"
    return [
        f"(({a}) * {_lit(T, beta)} > {_lit(T, threshold)} ? ({g}) : ({g}) * {z} / ({z} + {T}(1)))"
    ]


def _clamp(T, a, r, g, min=None, max=None):
    conds = []
    if min is not None:
        conds.append(f"({a}) >= {_lit(T, min)}")
    if max is not None:
        conds.append(f"({a}) <= {_lit(T, max)}")
    return [f"(({' && '.join(conds)}) ? ({g}) : {T}(0))"]


def _pow_scalar(T, a, r, g, exponent):
    if exponent == 0:
        return [f"{T}(0)"]
    return [f"({g}) * {_lit(T, exponent)} * std::pow({a}, {_lit(T, exponent - 1)})"]


def _sig(T, a):
    return f"vm::fast_sigmoid({a})"


# name -> f(T, *operands, result, adjoint, **params) -> one C++ expression (or None) per operand
DERIV = {
    "neg": lambda T, a, r, g: [f"(-({g}))"],
    "abs": lambda T, a, r, g: [f"({g}) * {T}((({a}) > {T}(0)) - (({a}) < {T}(0)))"],
    "exp": lambda T, a, r, g: [f"({g}) * ({r})"],
    "log": lambda T, a, r, g: [f"({g}) / ({a})"],
    "log1p": lambda T, a, r, g: [f"({g}) / (({a}) + {T}(1))"],
    "tanh": lambda T, a, r, g: [f"({g}) * ({T}(1) - ({r}) * ({r}))"],
    "sigmoid": lambda T, a, r, g: [f"({g}) * ({T}(1) - ({r})) * ({r})"],
    "erf": lambda T, a, r, g: [f"({g}) * {T}({_2_SQRTPI!r}) * vm::fast_exp(-({a}) * ({a}))"],
    "expm1": lambda T, a, r, g: [f"({g}) * (({r}) + {T}(1))"],
    "exp2": lambda T, a, r, g: [f"({g}) * ({r}) * {T}({_LN2!r})"],
    "log2": lambda T, a, r, g: [f"({g}) / (({a}) * {T}({_LN2!r}))"],
    "log10": lambda T, a, r, g: [f"({g}) / (({a}) * {T}({_LN10!r}))"],
    "sqrt": lambda T, a, r, g: [f"({g}) / ({T}(2) * ({r}))"],
    "rsqrt": lambda T, a, r, g: [f"{T}(-0.5) * ({g}) * ({r}) * ({r}) * ({r})"],
    "sin": lambda T, a, r, g: [f"({g}) * std::cos({a})"],
    "cos": lambda T, a, r, g: [f"-({g}) * std::sin({a})"],
    "floor": lambda T, a, r, g: [f"{T}(0)"],
    "ceil": lambda T, a, r, g: [f"{T}(0)"],
    "trunc": lambda T, a, r, g: [f"{T}(0)"],
    "round": lambda T, a, r, g: [f"{T}(0)"],
    "sign": lambda T, a, r, g: [f"{T}(0)"],
    "frac": lambda T, a, r, g: [f"({g})"],
    "reciprocal": lambda T, a, r, g: [f"-({g}) * ({r}) * ({r})"],
    "square": lambda T, a, r, g: [f"({g}) * {T}(2) * ({a})"],
    "relu": lambda T, a, r, g: [f"(({r}) > {T}(0) ? ({g}) : {T}(0))"],
    "silu": lambda T, a, r, g: [
        f"({g}) * {_sig(T, a)} * ({T}(1) + ({a}) * ({T}(1) - {_sig(T, a)}))"
    ],
    "gelu": _gelu,
    "elu": _elu,
    "softplus": _softplus,
    "leaky_relu": lambda T, a, r, g, negative_slope=0.01: [
        f"(({a}) > {T}(0) ? ({g}) : ({g}) * {_lit(T, negative_slope)})"
    ],
    "hardtanh": lambda T, a, r, g, min_val=-1.0, max_val=1.0: [
        f"(({a}) <= {_lit(T, min_val)} || ({a}) >= {_lit(T, max_val)} ? {T}(0) : ({g}))"
    ],
    "hardsigmoid": lambda T, a, r, g: [
        f"(({a}) > {T}(-3) && ({a}) < {T}(3) ? ({g}) / {T}(6) : {T}(0))"
    ],
    "hardswish": lambda T, a, r, g: [
        f"(({a}) < {T}(-3) ? {T}(0) : (({a}) <= {T}(3) ? ({g}) * (({a}) / {T}(3) + {T}(0.5)) "
        f": ({g})))"
    ],
    "softsign": lambda T, a, r, g: [
        f"({g}) / (({T}(1) + std::abs({a})) * ({T}(1) + std::abs({a})))"
    ],
    "threshold": lambda T, a, r, g, threshold, value: [
        f"(({a}) <= {_lit(T, threshold)} ? {T}(0) : ({g}))"
    ],
    "clamp": _clamp,
    "pow_scalar": _pow_scalar,
    "add": lambda T, a, b, r, g, alpha=1: [f"({g})", f"({g}) * {_lit(T, alpha)}"],
    "sub": lambda T, a, b, r, g, alpha=1: [f"({g})", f"-({g}) * {_lit(T, alpha)}"],
    "mul": lambda T, a, b, r, g: [f"({g}) * ({b})", f"({g}) * ({a})"],
    "div": lambda T, a, b, r, g: [f"({g}) / ({b})", f"-({g}) * ({a}) / (({b}) * ({b}))"],
    "where": lambda T, c, a, b, r, g: [
        None,
        f"(({c}) ? ({g}) : {T}(0))",
        f"(({c}) ? {T}(0) : ({g}))",
    ],
    "lerp": lambda T, a, b, w, r, g: [
        f"({g}) * ({T}(1) - ({w}))",
        f"({g}) * ({w})",
        f"({g}) * (({b}) - ({a}))",
    ],
    "addcmul": lambda T, s, a, b, r, g, value=1: [
        f"({g})",
        f"({g}) * {_lit(T, value)} * ({b})",
        f"({g}) * {_lit(T, value)} * ({a})",
    ],
    "addcdiv": lambda T, s, a, b, r, g, value=1: [
        f"({g})",
        f"({g}) * {_lit(T, value)} / ({b})",
        f"-({g}) * {_lit(T, value)} * ({a}) / (({b}) * ({b}))",
    ],
}
# ops whose operands get no gradient (comparisons, logical ops, isnan)
NONDIFF = {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "logical_and", "logical_or", "logical_not"}
FLOATS = ("float32", "float64")


def _key(ld):
    return (ld.buf.id, ld.offset, ld.strides)


def _broadcast_dims(ld, shape):
    """Dims to sum when `ld` reads its whole buffer broadcast (right-aligned) to `shape`."""
    buf = ld.buf
    if ld.offset != 0 or len(buf.shape) > len(shape):
        return None
    pad = len(shape) - len(buf.shape)
    dims = []
    for d, size in enumerate(shape):
        if size == 1:
            continue
        own = buf.shape[d - pad] if d >= pad else 1
        if own == 1:
            if ld.strides[d] != 0:
                return None
            dims.append(d)
        elif own != size or ld.strides[d] != buf.strides[d - pad]:
            return None
    return tuple(dims)


class Backward:
    """A generated backward kernel of one pointwise kernel: `code` (its pointers are the
    per-load gradients, then the output's gradient, then the forward's inputs) and, per load,
    the input it belongs to and the dims to sum."""

    def __init__(self, code, loads, gout):
        self.code, self.loads, self.gout = code, loads, gout
        self.address = None


def generate(step, name, inputs_needing):
    """The Backward of a pointwise KernelStep, or None where its rules do not cover it."""
    shape, expr = step.spec["shape"], step.spec["expr"]
    order = walk(expr)
    if expr.dtype not in FLOATS:
        return None
    for e in order:
        if isinstance(e, Op) and e.name != "cast" and e.name not in DERIV.keys() | NONDIFF:
            return None
        if isinstance(e, Op) and e.name == "cast" and any(a.dtype not in FLOATS for a in e.args):
            if any(isinstance(x, Load) and x.buf.id in inputs_needing for x in walk(e)):
                return None
    wanted = {}
    for e in order:
        if isinstance(e, Load) and e.buf.id in inputs_needing and e.dtype in FLOATS:
            if _broadcast_dims(e, shape) is None:
                return None
            wanted.setdefault(_key(e), e)
    if not wanted:
        return None
    keys = list(wanted)
    outs = [Buffer(shape, wanted[k].dtype, "kernel") for k in keys]
    gout = Buffer(shape, expr.dtype, "kernel")
    gload = Load(gout, 0, gout.strides)

    def body(load_fn):
        names = {}
        lines, res = _expr_lines_with(expr, load_fn, names)
        lines.append(f"const {CTYPE[expr.dtype]} g_root = {load_fn(gload)};")
        adj = {id(expr): "g_root"}
        count = 0
        for e in reversed(order):
            if not isinstance(e, Op) or id(e) not in adj or e.name in NONDIFF:
                continue
            T = CTYPE[e.dtype]
            g = adj[id(e)]
            if e.name == "cast":
                parts = [f"static_cast<{CTYPE[e.args[0].dtype]}>({g})"]
            else:
                parts = DERIV[e.name](
                    T, *[names[id(a)] for a in e.args], names[id(e)], g, **e.params
                )
            for a, part in zip(e.args, parts):
                if part is None or isinstance(a, Const) or a.dtype not in FLOATS:
                    continue
                if isinstance(a, Load) and _key(a) not in wanted:
                    continue
                Ta = CTYPE[a.dtype]
                if id(a) in adj:
                    lines.append(f"{adj[id(a)]} += static_cast<{Ta}>({part});")
                else:
                    count += 1
                    adj[id(a)] = f"d{count}"
                    lines.append(f"{Ta} d{count} = static_cast<{Ta}>({part});")
        for i, k in enumerate(keys):
            terms = [
                adj[id(e)] for e in order if isinstance(e, Load) and _key(e) == k and id(e) in adj
            ]
            if id(expr) == id(wanted[k]):  # the expression is a bare load
                terms = ["g_root"]
            lines.append(f"p{i}[ob + j] = {' + '.join(terms) or '0'};")
        return lines

    code = flat_kernel(name, shape, outs, [expr, gload], body)
    return Backward(code, [(wanted[k].buf, _broadcast_dims(wanted[k], shape)) for k in keys], gout)


def _expr_lines_with(expr, load_fn, names):
    from .codegen import _expr_lines

    return _expr_lines(expr, load_fn, "t", names)
