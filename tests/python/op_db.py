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
    INTS,
    INTS_FLOATS,
    NP_CARRIER,
    Dt,
    ErrorCase,
    OpInfo,
    Sample,
    T,
    accumulate,
    binary_samples,
    floating,
    func,
    is_float,
    make,
    method,
    promoted,
    quantize,
    reduction_samples,
    rng_for,
    same,
    special_values_samples,
    tensor,
    to_bool,
    to_int64,
    unary_samples,
    values_and_indices,
    with_indices_if_dim,
)
from op_db_refs import (  # noqa: F401
    _addmm_ref,
    _arg_ref,
    _argsort,
    _as_float64,
    _axis,
    _broadcast_to_ref,
    _chunk_ref,
    _clamp_ref,
    _cummax_ref,
    _div_ref,
    _histc_ref,
    _logcumsumexp_ref,
    _logsumexp_ref,
    _minmax_ref,
    _mode_ref,
    _nan_to_num_ref,
    _norm_ref,
    _np_erf,
    _np_erfc,
    _np_erfinv,
    _reduce,
    _reduced_pick,
    _sort_ref,
    _split_ref,
    _topk_canon,
    _topk_ref,
    _unique_canon,
    _unique_ref,
    _var_mean_ref,
    _var_ref,
    gather_indices,
)
from op_db_samples import (  # noqa: F401
    _einsum_dtype,
    _matrices,
    _with_nan,
    addc_samples,
    addmm_samples,
    bincount_samples,
    broadcast_to_samples,
    cat_samples,
    chunk_samples,
    clamp_samples,
    einsum_samples,
    flip_samples,
    histc_samples,
    hvstack_samples,
    kthvalue_samples,
    lerp_samples,
    median_samples,
    meshgrid_samples,
    mode_samples,
    movedim_samples,
    norm_samples,
    pow_samples,
    pow_scalar_base_samples,
    pow_scalar_exponent_samples,
    repeat_interleave_samples,
    repeat_samples,
    roll_samples,
    sort_samples,
    split_samples,
    stack_samples,
    tile_samples,
    topk_samples,
    unbind_samples,
    unique_samples,
    var_samples,
    where_samples,
)

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


def _reduction(**kw):
    return lambda op, d, r: reduction_samples(op, d, r, **kw)


# reductions may accumulate in another order (or in blocks) than numpy's float64 reference
_SUM_TOL = {"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 1e-1), "float32": (1e-5, 1e-5)}
_GATHER_REDUCED = gather_indices(reduced=True)

REDUCTION_OPS = [
    _op(
        "sum",
        _reduce(np.sum),
        ALL,
        _reduction(empty_ok=True, dtype_kw="float64"),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(
            _dim_oor(dim=2),
            _dim_oor(dim=(0, -3)),
            _err("repeated dim", RuntimeError, _f((3, 4)), dim=(0, 0)),
        ),
    ),
    _op(
        "mean",
        _reduce(np.mean),
        FLOATS,
        _reduction(dtype_kw="float64"),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(
            _err("mean of an integer tensor", RuntimeError, _f((3,), "int64")), _dim_oor(dim=-3)
        ),
    ),
    _op(
        "prod",
        _reduce(np.prod),
        ALL,
        _reduction(tuple_dims=False, empty_ok=True, dtype_kw="float64"),
        domain=(-2, 2),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "amax",
        _reduce(np.amax),
        ALL,
        _reduction(),
        differentiable=True,
        error_inputs=_errors(
            _dim_oor(dim=2), _err("reducing a zero-size dim", IndexError, _f((0, 3)), dim=0)
        ),
    ),
    _op(
        "amin",
        _reduce(np.amin),
        ALL,
        _reduction(),
        differentiable=True,
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "max",
        _minmax_ref(np.max, np.argmax),
        ALL,
        _reduction(tuple_dims=False),
        differentiable=True,
        out_dtype=with_indices_if_dim,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(
            _dim_oor(dim=2), _err("reducing a zero-size dim", IndexError, _f((0, 3)), dim=0)
        ),
    ),
    _op(
        "min",
        _minmax_ref(np.min, np.argmin),
        ALL,
        _reduction(tuple_dims=False),
        differentiable=True,
        out_dtype=with_indices_if_dim,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "argmax",
        _arg_ref(np.argmax),
        INTS_FLOATS,
        _reduction(tuple_dims=False),
        out_dtype=to_int64,
        canonicalize=gather_indices(reduced=True, default_dim=None, index_only=True),
        error_inputs=_errors(
            _dim_oor(dim=2), _err("argmax of bool", RuntimeError, _f((3,), "bool"))
        ),
    ),
    _op(
        "argmin",
        _arg_ref(np.argmin),
        INTS_FLOATS,
        _reduction(tuple_dims=False),
        out_dtype=to_int64,
        canonicalize=gather_indices(reduced=True, default_dim=None, index_only=True),
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "var",
        _var_ref(np.var),
        FLOATS,
        var_samples,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(
            _dim_oor(dim=2), _err("var of an integer tensor", RuntimeError, _f((3,), "int64"))
        ),
    ),
    _op(
        "std",
        _var_ref(np.std),
        FLOATS,
        var_samples,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_err("std of an integer tensor", RuntimeError, _f((3,), "int64"))),
    ),
    _op(
        "var_mean",
        _var_mean_ref,
        FLOATS,
        var_samples,
        method=None,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "norm",
        _norm_ref,
        FLOATS,
        norm_samples,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_err("norm of an integer tensor", RuntimeError, _f((3,), "int64"))),
    ),
    _op(
        "logsumexp",
        _as_float64(_logsumexp_ref),
        ALL,
        _reduction(dim_required=True),
        differentiable=True,
        out_dtype=floating(),
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "all",
        _reduce(np.all),
        ALL,
        _reduction(empty_ok=True, discrete=True),
        domain=(-1, 1),
        out_dtype=lambda d, s: "uint8" if d == "uint8" else "bool",
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "any",
        _reduce(np.any),
        ALL,
        _reduction(empty_ok=True, discrete=True),
        domain=(-1, 1),
        out_dtype=lambda d, s: "uint8" if d == "uint8" else "bool",
    ),
    _op(
        "count_nonzero",
        _reduce(np.count_nonzero),
        ALL,
        _reduction(keepdim=False, empty_ok=True, discrete=True),
        domain=(-1, 1),
        out_dtype=to_int64,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "cumsum",
        lambda a, dim, dtype=None: np.cumsum(a, axis=_axis(a, dim), dtype=dtype).reshape(a.shape),
        ALL,
        _reduction(
            dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True, dtype_kw="float64"
        ),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "cumprod",
        lambda a, dim, dtype=None: np.cumprod(a, axis=_axis(a, dim), dtype=dtype).reshape(a.shape),
        ALL,
        _reduction(
            dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True, dtype_kw="float64"
        ),
        domain=(-2, 2),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "logcumsumexp",
        _as_float64(_logcumsumexp_ref),
        FLOATS,
        _reduction(dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True),
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "cummax",
        _cummax_ref,
        ALL,
        _reduction(dim_required=True, tuple_dims=False, keepdim=False),
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=gather_indices(reduced=False),
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
]

SORTING_OPS = [
    _op(
        "sort",
        _sort_ref,
        ALL,
        sort_samples,
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=gather_indices(reduced=False),
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "argsort",
        _argsort,
        ALL,
        sort_samples,
        out_dtype=to_int64,
        canonicalize=gather_indices(reduced=False, index_only=True),
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "topk",
        lambda a, k, dim=-1, largest=True, sorted=True: _topk_ref(a, k, dim, largest),
        INTS_FLOATS,
        topk_samples,
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=_topk_canon,
        error_inputs=_errors(
            _err("k larger than the dim", RuntimeError, _f((3, 4)), 5), _dim_oor(2, dim=2)
        ),
    ),
    _op(
        "kthvalue",
        lambda a, k, dim=-1, keepdim=False: _reduced_pick(a, dim, keepdim, lambda n: k - 1),
        INTS_FLOATS,
        kthvalue_samples,
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(
            _err("k out of range", RuntimeError, _f((3, 4)), 5),
            _err("k = 0", RuntimeError, _f((3, 4)), 0),
        ),
    ),
    _op(
        "median",
        lambda a, dim=None, keepdim=False: (
            np.sort(a.reshape(-1))[(a.size - 1) // 2]
            if dim is None
            else _reduced_pick(a, dim, keepdim, lambda n: (n - 1) // 2)
        ),
        INTS_FLOATS,
        median_samples,
        differentiable=True,
        out_dtype=with_indices_if_dim,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=2)),
        torch_bug=lambda layout, s: (
            "torch 2.13 CPU median(dim) returns wrong values when reducing a "
            "stride-0 (expanded) dim"
            if layout == "expanded" and s.kwargs.get("dim") == 0
            else None
        ),
    ),
    # mode has a backward in torch, but nudging one of the repeated values changes the mode,
    # so finite differences can't check it
    _op(
        "mode",
        _mode_ref,
        ALL,
        mode_samples,
        out_dtype=values_and_indices,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=3)),
    ),
    _op(
        "unique",
        _unique_ref,
        ALL,
        unique_samples,
        canonicalize=_unique_canon,
        out_dtype=lambda d, s: (
            (d,)
            + ("int64",) * sum(bool(s.kwargs.get(k)) for k in ("return_inverse", "return_counts"))
        ),
    ),
    _op(
        "bincount",
        lambda a, weights=None, minlength=0: np.bincount(a.astype(np.int64), weights, minlength),
        INTS,
        bincount_samples,
        # no weights: int64; float32 weights stay float32; any other weights give float64
        out_dtype=lambda d, s: (
            "int64"
            if "weights" not in s.kwargs
            else ("float32" if s.kwargs["weights"].dtype == "float32" else "float64")
        ),
        error_inputs=_errors(
            _err("negative values", RuntimeError, tensor([1, -1], "int64")),
            _err("2-D input", RuntimeError, tensor(np.ones((2, 2)), "int64")),
            _err("float input", RuntimeError, _f((3,))),
        ),
    ),
    _op(
        "histc",
        _histc_ref,
        FLOATS,
        histc_samples,
        error_inputs=_errors(
            _err("histc of an integer tensor", RuntimeError, _f((3,), "int64")),
            _err("max < min", RuntimeError, _f((3,)), min=2, max=1),
        ),
    ),
]


SHAPE_OPS = [
    _op(
        "cat",
        lambda ts, dim=0: np.concatenate(ts, axis=dim),
        ALL,
        cat_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(
            _err("sizes differ outside dim", RuntimeError, [_f((3, 4)), _f((3, 5))]),
            _err("dim out of range", IndexError, [_f((3, 4)), _f((3, 4))], dim=2),
        ),
    ),
    _op(
        "stack",
        lambda ts, dim=0: np.stack(ts, axis=dim),
        ALL,
        stack_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(
            _err("shapes differ", RuntimeError, [_f((3, 4)), _f((4, 3))]),
            _err("dim out of range", IndexError, [_f((3, 4)), _f((3, 4))], dim=3),
        ),
    ),
    _op(
        "hstack",
        np.hstack,
        ALL,
        hvstack_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(_err("rows differ", RuntimeError, [_f((3, 4)), _f((2, 4))])),
    ),
    _op(
        "vstack",
        np.vstack,
        ALL,
        hvstack_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(_err("columns differ", RuntimeError, [_f((3, 4)), _f((3, 2))])),
    ),
    _op(
        "split",
        _split_ref,
        ALL,
        split_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("sizes don't add up", RuntimeError, _f((3, 4)), [1, 1]), _dim_oor(2, dim=2)
        ),
    ),
    _op(
        "chunk",
        _chunk_ref,
        ALL,
        chunk_samples,
        differentiable=True,
        error_inputs=_errors(_err("zero chunks", RuntimeError, _f((3, 4)), 0)),
    ),
    _op(
        "unbind",
        lambda a, dim=0: tuple(np.moveaxis(a, dim, 0)),
        ALL,
        unbind_samples,
        differentiable=True,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "flip",
        lambda a, dims: np.flip(a, axis=tuple(dims)) if a.ndim else a.copy(),
        ALL,
        flip_samples,
        differentiable=True,
        error_inputs=_errors(
            _dim_oor((2,)), _err("repeated dim", RuntimeError, _f((3, 4)), (0, 0))
        ),
    ),
    _op(
        "roll",
        lambda a, shifts, dims=None: np.roll(a, shifts, axis=dims),
        ALL,
        roll_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("shifts and dims differ in length", RuntimeError, _f((3, 4)), (1, 2), dims=(0,))
        ),
    ),
    _op(
        "repeat",
        lambda a, *reps: np.tile(a, reps),
        ALL,
        repeat_samples,
        fn=method("repeat"),
        differentiable=True,
        error_inputs=_errors(_err("fewer repeats than dims", RuntimeError, _f((3, 4)), 2)),
    ),
    _op("tile", lambda a, reps: np.tile(a, reps), ALL, tile_samples, differentiable=True),
    _op(
        "repeat_interleave",
        lambda a, repeats, dim=None: np.repeat(a, repeats, axis=dim),
        ALL,
        repeat_interleave_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("negative repeats", RuntimeError, _f((3,)), -1),
            _err(
                "repeats don't match the dim",
                RuntimeError,
                _f((3,)),
                tensor([1, 2], "int64"),
                dim=0,
            ),
        ),
    ),
    _op(
        "meshgrid",
        lambda *ts, indexing: tuple(np.meshgrid(*ts, indexing=indexing)),
        ALL,
        meshgrid_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(
            _err("unknown indexing", RuntimeError, _f((3,)), _f((2,)), indexing="ab")
        ),
    ),
    _op(
        "broadcast_to",
        _broadcast_to_ref,
        ALL,
        broadcast_to_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("incompatible shape", RuntimeError, _f((3, 4)), (3, 5)),
            _err("fewer dims than the input", RuntimeError, _f((3, 4)), (4,)),
        ),
    ),
    _op(
        "movedim",
        np.moveaxis,
        ALL,
        movedim_samples,
        differentiable=True,
        error_inputs=_errors(
            _dim_oor(2, 0), _err("repeated source dim", RuntimeError, _f((3, 4)), (0, 0), (0, 1))
        ),
    ),
]

# small operands keep integer matmuls from overflowing; the float16/bfloat16 tolerances allow
# for a different accumulation order, as for reductions
_LINALG = dict(
    domain=(-2, 2), differentiable=True, tol={"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 5e-2)}
)

LINALG_OPS = [
    _op(
        "matmul",
        np.matmul,
        INTS_FLOATS,
        _matrices(
            [
                ((4,), (4,)),
                ((3, 4), (4,)),
                ((4,), (4, 2)),
                ((3, 4), (4, 2)),
                ((2, 1, 3, 4), (5, 4, 2)),
                ((2, 3, 4), (4,)),
                ((4,), (2, 4, 3)),
                ((0, 4), (4, 2)),
                ((3, 0), (0, 2)),
            ]
        ),
        **_LINALG,
        error_inputs=_errors(
            _err("inner dims differ", RuntimeError, _f((3, 4)), _f((3, 4))),
            _err("0-d operand", RuntimeError, _f(()), _f((3, 4))),
            _err("dtypes differ", RuntimeError, _f((3, 4)), _f((4, 2), "int64")),
        ),
    ),
    _op(
        "mm",
        np.matmul,
        INTS_FLOATS,
        _matrices([((3, 4), (4, 2)), ((0, 4), (4, 2)), ((3, 0), (0, 2))]),
        **_LINALG,
        error_inputs=_errors(
            _err("1-D operand", RuntimeError, _f((4,)), _f((4, 2))),
            _err("inner dims differ", RuntimeError, _f((3, 4)), _f((3, 4))),
        ),
    ),
    _op(
        "bmm",
        np.matmul,
        INTS_FLOATS,
        _matrices([((2, 3, 4), (2, 4, 2)), ((0, 3, 4), (0, 4, 2))]),
        **_LINALG,
        error_inputs=_errors(
            _err("2-D operands", RuntimeError, _f((3, 4)), _f((4, 3))),
            _err("batch sizes differ", RuntimeError, _f((2, 3, 4)), _f((3, 4, 2))),
        ),
    ),
    _op(
        "mv",
        np.matmul,
        INTS_FLOATS,
        _matrices([((3, 4), (4,)), ((0, 4), (4,))]),
        **_LINALG,
        error_inputs=_errors(_err("sizes differ", RuntimeError, _f((3, 4)), _f((3,)))),
    ),
    _op(
        "dot",
        np.dot,
        INTS_FLOATS,
        _matrices([((4,), (4,)), ((0,), (0,))]),
        **_LINALG,
        error_inputs=_errors(
            _err("2-D operands", RuntimeError, _f((3, 4)), _f((3, 4))),
            _err("lengths differ", RuntimeError, _f((4,)), _f((3,))),
            _err("dtypes differ", RuntimeError, _f((4,)), _f((4,), "int64")),
        ),
    ),
    _op("outer", np.outer, ALL, _matrices([((3,), (4,)), ((0,), (2,))]), **_LINALG),
    _op(
        "addmm",
        _addmm_ref,
        INTS_FLOATS,
        addmm_samples,
        **_LINALG,
        error_inputs=_errors(
            _err("inner dims differ", RuntimeError, _f((3, 3)), _f((3, 4)), _f((3, 4)))
        ),
    ),
    _op(
        "baddbmm",
        _addmm_ref,
        INTS_FLOATS,
        lambda op, d, r: addmm_samples(op, d, r, batched=True),
        **_LINALG,
        error_inputs=_errors(
            _err("inner dims differ", RuntimeError, _f((1, 3, 3)), _f((1, 3, 4)), _f((1, 3, 4)))
        ),
    ),
    _op(
        "einsum",
        np.einsum,
        INTS_FLOATS,
        einsum_samples,
        method=None,
        out_dtype=_einsum_dtype,
        **_LINALG,
        error_inputs=_errors(
            _err("subscript sizes differ", RuntimeError, "ij,jk->ik", _f((3, 4)), _f((3, 4))),
            _err("too few operands", RuntimeError, "ij,jk->ik", _f((3, 4))),
        ),
    ),
]

OP_DB = UNARY_OPS + BINARY_OPS + REDUCTION_OPS + SORTING_OPS + SHAPE_OPS + LINALG_OPS
OPS_BY_NAME = {op.name: op for op in OP_DB}
assert len(OPS_BY_NAME) == len(OP_DB), "op names must be unique"
