"""The pointwise primitives: for each, its C++ form (codegen) and its eager form (fallback and
the backward of fused regions, Note [Fused region autograd]).

`CPP[name](T, *args, **params)` gets the C++ type the op computes in and its operands as C++
expressions of that type; `EAGER[name](*tensors, **params)` computes the same with ember's ops.
float uses ember's vector math (csrc/ember/cpu/vmath.h, the functions eager's kernels use, so
compiled and eager results agree); double keeps libm.
"""

from __future__ import annotations

import math

from .. import _C


def _lit(T, v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) and T not in ("float", "double"):
        return f"{T}({v})"
    v = float(v)
    if math.isnan(v):
        return f"{T}(NAN)"
    if math.isinf(v):
        return f"{T}({'-' if v < 0 else ''}INFINITY)"
    return f"{T}({v!r})"


def _gelu_erf(T, a):
    """Exact gelu as eager's kernel on the contiguous buffers compiled code reads: NaN at +inf
    for float on an AVX-512 CPU (torch's vector erf there; torch.compile itself gives +inf),
    +inf for double and on other CPUs."""
    body = f"({T}(0.5) * ({a}) * ({T}(1) + vm::fast_erf(({a}) * {T}(0.70710678118654752440))))"
    if T == "float" and _C._get_cpu_capability() == "AVX512":
        return f"(({a}) == INFINITY ? {T}(NAN) : {body})"
    return body


def _softplus(T, a, beta=1.0, threshold=20.0):
    b = _lit(T, beta)
    big = f"({a}) * {b} > {_lit(T, threshold)}"
    return f"({big} ? ({a}) : vm::fast_log1p(vm::fast_exp(({a}) * {b})) / {b})"


CPP = {
    # unary
    "neg": lambda T, a: f"(-{a})",
    "abs": lambda T, a: f"std::abs({a})",
    "exp": lambda T, a: f"vm::fast_exp({a})",
    "log": lambda T, a: f"vm::fast_log({a})",
    "log1p": lambda T, a: f"vm::fast_log1p({a})",
    "tanh": lambda T, a: f"vm::fast_tanh({a})",
    "sigmoid": lambda T, a: f"vm::fast_sigmoid({a})",
    "erf": lambda T, a: f"vm::fast_erf({a})",
    "expm1": lambda T, a: f"std::expm1({a})",
    "exp2": lambda T, a: f"std::exp2({a})",
    "log2": lambda T, a: f"std::log2({a})",
    "log10": lambda T, a: f"std::log10({a})",
    "sqrt": lambda T, a: f"std::sqrt({a})",
    "rsqrt": lambda T, a: f"({T}(1) / std::sqrt({a}))",
    "sin": lambda T, a: f"std::sin({a})",
    "cos": lambda T, a: f"std::cos({a})",
    "tan": lambda T, a: f"std::tan({a})",
    "asin": lambda T, a: f"std::asin({a})",
    "acos": lambda T, a: f"std::acos({a})",
    "atan": lambda T, a: f"std::atan({a})",
    "sinh": lambda T, a: f"std::sinh({a})",
    "cosh": lambda T, a: f"std::cosh({a})",
    "erfc": lambda T, a: f"std::erfc({a})",
    "floor": lambda T, a: f"std::floor({a})",
    "ceil": lambda T, a: f"std::ceil({a})",
    "trunc": lambda T, a: f"std::trunc({a})",
    "round": lambda T, a: f"std::nearbyint({a})",
    "frac": lambda T, a: f"(({a}) - std::trunc({a}))",
    "reciprocal": lambda T, a: f"({T}(1) / ({a}))",
    "square": lambda T, a: f"(({a}) * ({a}))",
    "sign": lambda T, a: f"{T}(({T}(0) < ({a})) - (({a}) < {T}(0)))",
    "relu": lambda T, a: f"(({a}) < {T}(0) ? {T}(0) : ({a}))",
    "gelu": lambda T, a, approximate="none": (
        _gelu_erf(T, a)
        if approximate == "none"
        else f"({T}(0.5) * ({a}) * ({T}(1) + vm::fast_tanh({T}(0.79788456080286535588) * "
        f"(({a}) + {T}(0.044715) * ({a}) * ({a}) * ({a})))))"
    ),
    "silu": lambda T, a: f"(({a}) * vm::fast_sigmoid({a}))",
    "mish": lambda T, a: f"(({a}) * vm::fast_tanh({_softplus(T, a)}))",
    "softplus": _softplus,
    "logsigmoid": lambda T, a: (
        f"((({a}) < {T}(0) ? ({a}) : {T}(0)) - vm::fast_log1p(vm::fast_exp(-std::abs({a}))))"
    ),
    "elu": lambda T, a, alpha=1.0, scale=1.0, input_scale=1.0: (
        f"(({a}) > {T}(0) ? {_lit(T, scale)} * ({a}) : "
        f"{_lit(T, scale)} * {_lit(T, alpha)} * std::expm1(({a}) * {_lit(T, input_scale)}))"
    ),
    "leaky_relu": lambda T, a, negative_slope=0.01: (
        f"(({a}) > {T}(0) ? ({a}) : ({a}) * {_lit(T, negative_slope)})"
    ),
    "hardtanh": lambda T, a, min_val=-1.0, max_val=1.0: (
        f"(({a}) < {_lit(T, min_val)} ? {_lit(T, min_val)} : "
        f"(({a}) > {_lit(T, max_val)} ? {_lit(T, max_val)} : ({a})))"
    ),
    "hardsigmoid": lambda T, a: f"(std::min(std::max(({a}) + {T}(3), {T}(0)), {T}(6)) / {T}(6))",
    "hardswish": lambda T, a: (
        f"(({a}) * std::min(std::max(({a}) + {T}(3), {T}(0)), {T}(6)) / {T}(6))"
    ),
    "softsign": lambda T, a: f"(({a}) / ({T}(1) + std::abs({a})))",
    "tanhshrink": lambda T, a: f"(({a}) - vm::fast_tanh({a}))",
    "threshold": lambda T, a, threshold, value: (
        f"(({a}) <= {_lit(T, threshold)} ? {_lit(T, value)} : ({a}))"
    ),
    "clamp": lambda T, a, min=None, max=None: _clamp(T, a, min, max),
    "pow_scalar": lambda T, a, exponent: (
        f"(({a}) * ({a}))" if exponent == 2 else f"std::pow({a}, {_lit(T, exponent)})"
    ),
    "isnan": lambda T, a: f"(({a}) != ({a}))",
    "logical_not": lambda T, a: f"(!({a}))",
    "cast": lambda T, a: f"static_cast<{T}>({a})",
    # binary
    "add": lambda T, a, b, alpha=1: (
        f"(({a}) + ({b}))" if alpha == 1 else f"(({a}) + {_lit(T, alpha)} * ({b}))"
    ),
    "sub": lambda T, a, b, alpha=1: (
        f"(({a}) - ({b}))" if alpha == 1 else f"(({a}) - {_lit(T, alpha)} * ({b}))"
    ),
    "mul": lambda T, a, b: f"(({a}) * ({b}))",
    "div": lambda T, a, b: f"(({a}) / ({b}))",
    "pow": lambda T, a, b: f"std::pow({a}, {b})",
    "maximum": lambda T, a, b: f"((({a}) > ({b}) || ({a}) != ({a})) ? ({a}) : ({b}))",
    "minimum": lambda T, a, b: f"((({a}) < ({b}) || ({a}) != ({a})) ? ({a}) : ({b}))",
    "atan2": lambda T, a, b: f"std::atan2({a}, {b})",
    "hypot": lambda T, a, b: f"std::hypot({a}, {b})",
    "copysign": lambda T, a, b: f"std::copysign({a}, {b})",
    "fmod": lambda T, a, b: f"std::fmod({a}, {b})",
    "eq": lambda T, a, b: f"(({a}) == ({b}))",
    "ne": lambda T, a, b: f"(({a}) != ({b}))",
    "lt": lambda T, a, b: f"(({a}) < ({b}))",
    "le": lambda T, a, b: f"(({a}) <= ({b}))",
    "gt": lambda T, a, b: f"(({a}) > ({b}))",
    "ge": lambda T, a, b: f"(({a}) >= ({b}))",
    "logical_and": lambda T, a, b: f"(bool({a}) && bool({b}))",
    "logical_or": lambda T, a, b: f"(bool({a}) || bool({b}))",
    # ternary
    "where": lambda T, c, a, b: f"(({c}) ? ({a}) : ({b}))",
    # eager's two fused formulas, switching at |weight| = 0.5 (each exact at its end, one rounding)
    "lerp": lambda T, a, b, w: (
        f"(std::abs({w}) < {T}(0.5) ? std::fma({w}, ({b}) - ({a}), {a})"
        f" : std::fma(({w}) - {T}(1), ({b}) - ({a}), {b}))"
    ),
    "addcmul": lambda T, s, a, b, value=1: f"(({s}) + {_lit(T, value)} * (({a}) * ({b})))",
    "addcdiv": lambda T, s, a, b, value=1: f"(({s}) + {_lit(T, value)} * (({a}) / ({b})))",
}

# Comparisons and logical ops compute in their operands' type, not their (bool) result type.
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge", "isnan"}
LOGICAL = {"logical_and", "logical_or", "logical_not"}


def _clamp(T, a, lo, hi):
    out = f"({a})"
    if lo is not None:
        out = f"({out} < {_lit(T, lo)} ? {_lit(T, lo)} : {out})"
    if hi is not None:
        out = f"({out} > {_lit(T, hi)} ? {_lit(T, hi)} : {out})"
    return out


def eager_table():
    """name -> eager implementation (built lazily: ember must be fully imported)."""
    import ember
    from ember.nn import functional as F

    def pick(name):
        return getattr(ember, name, None) or getattr(F, name)

    table = {name: pick(name) for name in CPP if hasattr(ember, name) or hasattr(F, name)}
    table.update(
        {
            "elu": lambda a, alpha=1.0, scale=1.0, input_scale=1.0: (
                F.celu(a, alpha)
                if input_scale != 1.0
                else F.selu(a)
                if scale != 1.0
                else F.elu(a, alpha)
            ),
            "pow_scalar": lambda a, exponent: ember.pow(a, exponent),
            "cast": None,  # needs the dtype: evaluated by the caller
            "hardtanh": lambda a, min_val=-1.0, max_val=1.0: F.hardtanh(a, min_val, max_val),
            "threshold": lambda a, threshold, value: F.threshold(a, threshold, value),
            "gelu": lambda a, approximate="none": F.gelu(a, approximate=approximate),
            "softplus": lambda a, beta=1.0, threshold=20.0: F.softplus(a, beta, threshold),
            "leaky_relu": lambda a, negative_slope=0.01: F.leaky_relu(a, negative_slope),
            "clamp": lambda a, min=None, max=None: ember.clamp(a, min, max),
            "sigmoid": ember.sigmoid,
            "tanh": ember.tanh,
            "relu": ember.relu,
        }
    )
    return table
