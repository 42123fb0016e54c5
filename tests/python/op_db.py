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

import numpy as np
from op_db_core import (  # noqa: F401
    ALL,
    BOOL_INTS,
    FLOATS,
    INTS_FLOATS,
    NP_CARRIER,
    SHAPE_MISMATCH,
    Dt,
    Sample,
    T,
    _err,
    _errors,
    _f,
    _op,
    binary_samples,
    floating,
    func,
    is_float,
    make,
    method,
    promoted,
    quantize,
    rng_for,
    special_values_samples,
    tensor,
    to_bool,
    unary_samples,
)
from op_db_reduce import REDUCTION_OPS, SORTING_OPS
from op_db_refs import (  # noqa: F401
    _as_float64,
    _clamp_ref,
    _div_ref,
    _nan_to_num_ref,
    _np_erf,
    _np_erfc,
    _np_erfinv,
)
from op_db_samples import (  # noqa: F401
    _with_nan,
    addc_samples,
    clamp_samples,
    lerp_samples,
    pow_samples,
    pow_scalar_base_samples,
    pow_scalar_exponent_samples,
    where_samples,
)
from op_db_shape import LINALG_OPS, SHAPE_OPS

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
    _op(
        name,
        _as_float64(ref),
        ALL,
        unary_samples,
        domain=domain,
        differentiable=True,
        out_dtype=floating(),
    )
    for name, ref, domain in _FLOAT_UNARY
] + [
    _op(
        "reciprocal",
        _as_float64(lambda a: 1 / a),
        ALL,
        lambda op, d, r: unary_samples(op, d, r, nonzero=True),
        differentiable=True,
        out_dtype=floating(),
    ),
    _op(
        "abs",
        np.abs,
        INTS_FLOATS,
        unary_samples,
        differentiable=True,
        error_inputs=_errors(_err("abs of bool", RuntimeError, _f((3,), "bool"))),
    ),
    _op(
        "neg",
        np.negative,
        INTS_FLOATS,
        unary_samples,
        differentiable=True,
        error_inputs=_errors(_err("neg of bool", RuntimeError, _f((3,), "bool"))),
    ),
    _op(
        "sign",
        lambda a: a.copy() if a.dtype == bool else np.sign(a),
        ALL,
        unary_samples,
        differentiable=True,
    ),
    _op("floor", np.floor, INTS_FLOATS, unary_samples, differentiable=True),
    _op("ceil", np.ceil, INTS_FLOATS, unary_samples, differentiable=True),
    _op("trunc", np.trunc, INTS_FLOATS, unary_samples, differentiable=True),
    _op(
        "round",
        lambda a, decimals=0: np.round(a, decimals),
        INTS_FLOATS,
        differentiable=True,
        # decimals only where x * 10 is computed precisely enough to round like numpy
        samples=lambda op, d, r: unary_samples(
            op, d, r, kwargs_variants=[{}, {"decimals": 1}] if d in ("float32", "float64") else [{}]
        ),
        error_inputs=_errors(
            _err(
                "round(decimals=) of an integer tensor", RuntimeError, _f((3,), "int64"), decimals=1
            )
        ),
    ),
    _op(
        "frac",
        lambda a: a - np.trunc(a),
        FLOATS,
        unary_samples,
        differentiable=True,
        error_inputs=_errors(_err("frac of an integer tensor", RuntimeError, _f((3,), "int64"))),
    ),
    _op(
        "square",
        lambda a: a.astype(np.int64) ** 2 if a.dtype == bool else a * a,
        ALL,
        unary_samples,
        differentiable=True,
        out_dtype=lambda d, s: "int64" if d == "bool" else d,
    ),
    _op(
        "relu",
        lambda a: np.maximum(a, 0).astype(a.dtype),
        INTS_FLOATS,
        unary_samples,
        differentiable=True,
        error_inputs=_errors(_err("relu of bool", RuntimeError, _f((3,), "bool"))),
    ),
    _op("isnan", np.isnan, ALL, special_values_samples, out_dtype=to_bool),
    _op("isinf", np.isinf, ALL, special_values_samples, out_dtype=to_bool),
    _op("isfinite", np.isfinite, ALL, special_values_samples, out_dtype=to_bool),
    _op(
        "nan_to_num",
        _nan_to_num_ref,
        ALL,
        differentiable=True,
        ref_needs_dtype=True,
        samples=lambda op, d, r: special_values_samples(
            op,
            d,
            r,
            kwargs_variants=[{}, {"nan": 1.5, "posinf": 100.0, "neginf": -100.0}, {"posinf": 7.0}],
        ),
    ),
    _op("logical_not", np.logical_not, ALL, unary_samples, out_dtype=to_bool),
    _op(
        "bitwise_not",
        np.invert,
        BOOL_INTS,
        unary_samples,
        error_inputs=_errors(_err("bitwise_not of a float tensor", RuntimeError, _f((3,)))),
    ),
    _op(
        "clamp",
        _clamp_ref,
        INTS_FLOATS,
        clamp_samples,
        differentiable=True,
        out_dtype=promoted(("min", "max")),
        error_inputs=_errors(
            _err("clamp without min and max", RuntimeError, _f((3,))),
            _err("clamp bounds not broadcastable", RuntimeError, _f((3, 4)), min=_f((3,))),
        ),
    ),
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

BINARY_OPS = (
    [
        # (numpy turns 1 * bool into int: skip the multiplication when alpha is 1)
        _op(
            "add",
            lambda a, b, alpha=1: a + b if alpha == 1 else a + alpha * b,
            ALL,
            _binary(float_scalar=True, kwargs_variants=_alpha_variants),
            differentiable=True,
            out_dtype=promoted(),
            error_inputs=_errors(
                SHAPE_MISMATCH(),
                _err(
                    "float alpha with integer tensors",
                    RuntimeError,
                    _f((3,), "int64"),
                    _f((3,), "int64"),
                    alpha=0.5,
                ),
            ),
        ),
        _op(
            "sub",
            lambda a, b, alpha=1: a - alpha * b,
            INTS_FLOATS,
            _binary(float_scalar=True, kwargs_variants=_alpha_variants),
            differentiable=True,
            out_dtype=promoted(),
            error_inputs=_errors(
                SHAPE_MISMATCH(),
                _err("sub of bool tensors", RuntimeError, _f((3,), "bool"), _f((3,), "bool")),
            ),
        ),
        _op(
            "mul",
            lambda a, b: a * b,
            ALL,
            _binary(float_scalar=True),
            differentiable=True,
            out_dtype=promoted(),
            error_inputs=_errors(SHAPE_MISMATCH()),
        ),
        _op(
            "div",
            _div_ref,
            INTS_FLOATS,
            _binary(rhs_nonzero=True, float_scalar=True, kwargs_variants=_DIV_MODES),
            differentiable=True,
            out_dtype=_div_dtype,
            error_inputs=_errors(
                SHAPE_MISMATCH(),
                _err(
                    "unknown rounding_mode", RuntimeError, _f((3,)), _f((3,)), rounding_mode="round"
                ),
                _err(
                    "integer division by zero",
                    RuntimeError,
                    *_INT_ZERO_DIVISOR,
                    rounding_mode="trunc",
                ),
            ),
        ),
        _op(
            "true_divide",
            _as_float64(np.true_divide),
            INTS_FLOATS,
            _binary(rhs_nonzero=True, float_scalar=True),
            differentiable=True,
            out_dtype=floating(promoted()),
        ),
        # floor_divide has no derivative in torch
        _op(
            "floor_divide",
            np.floor_divide,
            INTS_FLOATS,
            _binary(rhs_nonzero=True, float_scalar=True),
            out_dtype=promoted(),
            error_inputs=_errors(
                _err("integer division by zero", RuntimeError, *_INT_ZERO_DIVISOR)
            ),
        ),
        _op(
            "remainder",
            np.remainder,
            INTS_FLOATS,
            _binary(rhs_nonzero=True, float_scalar=True),
            differentiable=True,
            out_dtype=promoted(),
            error_inputs=_errors(
                _err("integer remainder by zero", RuntimeError, *_INT_ZERO_DIVISOR)
            ),
        ),
        _op(
            "fmod",
            np.fmod,
            INTS_FLOATS,
            _binary(rhs_nonzero=True, float_scalar=True),
            differentiable=True,
            out_dtype=promoted(),
        ),
        _op(
            "pow",
            np.power,
            INTS_FLOATS,
            pow_samples,
            differentiable=True,
            out_dtype=promoted(),
            error_inputs=_errors(
                _err(
                    "integer tensor to a negative integer power",
                    RuntimeError,
                    _f((3,), "int64"),
                    -1,
                )
            ),
        ),
        _op(
            "pow_tensor_scalar",
            np.power,
            INTS_FLOATS,
            pow_scalar_exponent_samples,
            fn=func("pow"),
            method="pow",
            differentiable=True,
            out_dtype=promoted(),
        ),
        _op(
            "pow_scalar_tensor",
            np.power,
            INTS_FLOATS,
            pow_scalar_base_samples,
            fn=func("pow"),
            method=None,
            differentiable=True,
            out_dtype=promoted(),
        ),
    ]
    + [
        _op(
            name,
            ref,
            ALL,
            _binary(discrete=True, float_scalar=True),
            out_dtype=to_bool,
            error_inputs=_errors(SHAPE_MISMATCH()),
        )
        for name, ref in (
            ("eq", np.equal),
            ("ne", np.not_equal),
            ("lt", np.less),
            ("le", np.less_equal),
            ("gt", np.greater),
            ("ge", np.greater_equal),
        )
    ]
    + [
        _op(name, ref, ALL, _binary(discrete=True, scalar=False), out_dtype=to_bool)
        for name, ref in (
            ("logical_and", np.logical_and),
            ("logical_or", np.logical_or),
            ("logical_xor", np.logical_xor),
        )
    ]
    + [
        _op(
            name,
            ref,
            BOOL_INTS,
            _binary(),
            out_dtype=promoted(),
            error_inputs=_errors(
                _err(f"{name} of float tensors", RuntimeError, _f((3,)), _f((3,)))
            ),
        )
        for name, ref in (
            ("bitwise_and", np.bitwise_and),
            ("bitwise_or", np.bitwise_or),
            ("bitwise_xor", np.bitwise_xor),
        )
    ]
    + [
        _op(
            "minimum",
            np.minimum,
            ALL,
            lambda op, d, r: _with_nan(binary_samples(op, d, r, scalar=False), d, r),
            differentiable=True,
        ),
        _op(
            "maximum",
            np.maximum,
            ALL,
            lambda op, d, r: _with_nan(binary_samples(op, d, r, scalar=False), d, r),
            differentiable=True,
        ),
        _op(
            "atan2",
            _as_float64(np.arctan2),
            ALL,
            _binary(scalar=False),
            differentiable=True,
            out_dtype=floating(),
        ),
        _op(
            "hypot",
            np.hypot,
            FLOATS,
            _binary(scalar=False),
            differentiable=True,
            error_inputs=_errors(
                _err("hypot of integer tensors", RuntimeError, _f((3,), "int64"), _f((3,), "int64"))
            ),
        ),
        _op(
            "copysign",
            _as_float64(np.copysign),
            ALL,
            _binary(rhs_nonzero=True),
            differentiable=True,
            out_dtype=floating(promoted()),
        ),
        _op(
            "lerp",
            lambda s, e, w: s + w * (e - s),
            FLOATS,
            lerp_samples,
            differentiable=True,
            tol=_FUSED_TOL,
            error_inputs=_errors(
                _err(
                    "lerp of integer tensors",
                    RuntimeError,
                    _f((3,), "int64"),
                    _f((3,), "int64"),
                    0.5,
                )
            ),
        ),
        _op(
            "addcmul",
            lambda a, b, c, value=1: a + value * b * c,
            INTS_FLOATS,
            addc_samples,
            differentiable=True,
            tol=_FUSED_TOL,
        ),
        _op(
            "addcdiv",
            lambda a, b, c, value=1: a + value * b / c,
            FLOATS,
            lambda op, d, r: addc_samples(op, d, r, divide=True),
            differentiable=True,
            tol=_FUSED_TOL,
            error_inputs=_errors(
                _err("addcdiv of integer tensors", RuntimeError, *(_f((3,), "int64"),) * 3)
            ),
        ),
        _op(
            "where",
            np.where,
            ALL,
            where_samples,
            method=None,
            differentiable=True,
            out_dtype=promoted(),
            error_inputs=_errors(
                _err("non-bool condition", RuntimeError, _f((3,)), _f((3,)), _f((3,))),
                _err(
                    "shapes don't broadcast", RuntimeError, _f((3, 4), "bool"), _f((3, 4)), _f((5,))
                ),
            ),
        ),
    ]
)


OP_DB = UNARY_OPS + BINARY_OPS + REDUCTION_OPS + SORTING_OPS + SHAPE_OPS + LINALG_OPS
OPS_BY_NAME = {op.name: op for op in OP_DB}
assert len(OPS_BY_NAME) == len(OP_DB), "op names must be unique"
